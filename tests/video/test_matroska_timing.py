"""A Matroska/WebM file is timed by its stamps, as MP4 is, and its length is the video track's own.

Found by an audit of 2026-12-06: FFmpeg's rate of a Matroska track is its declared default frame
duration, while MP4's is the average (frames over duration). The same frames and stamps read as 25 fps
from MKV and 16.2 fps from MP4 (a clip that stalls), and a 24 fps declaration over 30 fps stamps read
as 24 fps. With an audio track running longer than the video, the probed duration (and frame count)
was the container's, audio included.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from _videogen import levels_clip, textured_clip

from robojudge.video import VideoError, probe_video, sample_frames, write_video
from robojudge.video._decode import StreamMeta
from robojudge.video._timing import frame_times

# 24 frames 40 ms apart, a stall of one second, 24 more: 48 frames from 0 to 2.92 s, the last lasting
# the usual 40 ms: 48 / 2.96 = 16.216 fps on average (MP4's avg_frame_rate; Matroska declares 25).
TIMES = [0.04 * i for i in range(24)] + [2.0 + 0.04 * i for i in range(24)]
AVERAGE = 48 / 2.96


@pytest.mark.parametrize("suffix", [".mkv", ".webm"])
def test_the_same_frames_and_stamps_read_alike_in_matroska_and_mp4(tmp_path: Path, suffix: str) -> None:
    frames = textured_clip(48, width=64, height=48)
    mp4 = write_video(tmp_path / "gap.mp4", frames, fps=25, timestamps=TIMES)
    mkv = write_video(tmp_path / f"gap{suffix}", frames, fps=25, timestamps=TIMES)
    with av.open(str(mkv)) as container:  # what the file declares
        assert container.streams.video[0].average_rate == 25
    a, b = probe_video(mp4), probe_video(mkv)
    assert a.fps == pytest.approx(AVERAGE, rel=1e-9) and a.warnings == ()
    # it read 25 fps and 74 frames (2.96 s x 25)
    assert b.fps == pytest.approx(a.fps, rel=1e-12) and (b.frames, a.frames) == (48, 48)
    assert b.duration == pytest.approx(2.96)
    said = ("the Matroska/WebM track declares 25 fps (its default frame duration), at which its 48 frames "
            "would last 1.920 s, but their time stamps give 2.960 s: their average rate, 16.216 fps, is used")
    assert b.warnings == (said,)
    sa, sb = sample_frames(mp4, fps=None, max_frames=None), sample_frames(mkv, fps=None, max_frames=None)
    assert sb.source_fps == pytest.approx(sa.source_fps, rel=1e-12) and sb.warnings == (said,)
    np.testing.assert_allclose(sb.timestamps, sa.timestamps, atol=1e-9)
    np.testing.assert_allclose(sa.timestamps, TIMES, atol=1e-9)


def test_a_cfr_matroska_file_keeps_its_declared_rate(tmp_path: Path) -> None:
    # 30000/1001 fps in Matroska's whole milliseconds: stamps 33 or 34 ms apart, within their rounding
    path = write_video(tmp_path / "ntsc.mkv", levels_clip(61), fps=Fraction(30000, 1001))
    info = probe_video(path)
    assert info.fps == pytest.approx(30000 / 1001) and info.warnings == () and info.frames == 61
    assert sample_frames(path, fps=None, max_frames=None).source_fps == pytest.approx(30000 / 1001)


def _meta(fps: float) -> StreamMeta:
    return StreamMeta(Fraction(1, 1000), fps, None, None, "vp9", format="matroska,webm")


def test_matroska_stamps_that_contradict_the_declared_rate_give_way() -> None:
    # MediaRecorder-like: 24 fps declared, stamps 33/34 ms apart: 60 frames over 1.967 + 0.033 s
    pts = [round(i * 1000 / 30) for i in range(60)]
    timing = frame_times(pts, _meta(24.0))
    assert timing.fps == pytest.approx(30.0) and len(timing.warnings) == 1
    assert frame_times(pts, _meta(30.0)).warnings == ()  # 2.000 s either way
    # 4 frames over 0.133 s: 1.5 ms off is within the stamps' rounding (two ticks); 3.5 ms is not
    assert frame_times([0, 33, 67, 100], _meta(4 / 0.1315)).warnings == ()
    assert frame_times([0, 33, 67, 100], _meta(4 / 0.1365)).fps == pytest.approx(4 / 0.133)


def _with_audio(path: Path, seconds: float, video: int, first: str = "audio") -> Path:
    """``video`` frames at 30 fps beside ``seconds`` of silent AAC, the audio stream first."""
    with av.open(str(path), "w") as container:
        audio = container.add_stream("aac", rate=48000) if first == "audio" else None
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        audio = audio or container.add_stream("aac", rate=48000)
        for i, rgb in enumerate(levels_clip(video)):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 30)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
        for start in range(0, int(seconds * 48000), 1024):
            sound = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
            sound.sample_rate, sound.pts = 48000, start
            for packet in audio.encode(sound):
                container.mux(packet)
        for packet in audio.encode(None):
            container.mux(packet)
    return path


@pytest.mark.parametrize("first", ["audio", "video"])
def test_an_audio_track_longer_than_the_video_does_not_lengthen_it(tmp_path: Path, first: str) -> None:
    # 2 s of video beside 4 s of audio: it read 4.02 s, so 121 frames
    path = _with_audio(tmp_path / "talk.mkv", 4.0, 60, first)
    info = probe_video(path)
    assert info.duration == pytest.approx(2.0) and info.frames == 60 and info.fps == 30.0
    got = sample_frames(path, fps=None, max_frames=None)
    assert len(got) == 60 and got.warnings == ()
    mp4 = probe_video(_with_audio(tmp_path / "talk.mp4", 4.0, 60, first))  # as MP4 always said
    assert (mp4.duration, mp4.frames) == (pytest.approx(2.0), 60)


def test_a_matroska_video_cut_short_beside_its_audio_is_called_truncated(tmp_path: Path) -> None:
    # The track's DURATION tag (in the header, so a cut file keeps it) now says how long the video
    # should be; only the container's, audio included, was known, and it was not held against the video.
    data = _with_audio(tmp_path / "talk.mkv", 4.0, 60).read_bytes()
    cut = tmp_path / "cut.mkv"
    cut.write_bytes(data[: len(data) * 3 // 10])
    said = r"truncated: decoded \d+ frames covering 0\.\d s of 2\.0 s declared"
    with pytest.raises(VideoError, match=said):
        sample_frames(cut, fps=None, max_frames=None)
