"""A cover picture is not the video.

An MP4/M4V or Matroska file may carry a still image, its cover art, which FFmpeg lists as a video stream
of one frame marked ``attached_pic``. Before, the first video stream was read whatever it was: a file
whose cover came first was probed, sampled and judged as one 32x32 PNG frame ("the stream gives no rate",
then "truncated: decoded 1 frames"), and a cover beside the video counted as another stream, so a
Matroska file without a ``DURATION`` tag had no length.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _videogen import levels_clip, textured_clip

from _covers import write_audio_with_cover, write_mkv_with_cover, write_mp4_with_cover
from robojudge.video import VideoError, measured_duration, probe_video, sample_frames, stream_format

FRAMES = levels_clip(20, 64, 48, step=10)


@pytest.mark.parametrize("name", ["clip.mp4", "clip.m4v"])
@pytest.mark.parametrize("cover_first", [True, False])
def test_a_cover_picture_is_passed_over_by_every_read(tmp_path: Path, name: str, cover_first: bool) -> None:
    path = write_mp4_with_cover(tmp_path / name, FRAMES, fps=10, cover_first=cover_first)
    info = probe_video(path)
    assert (info.codec, info.width, info.height) == ("h264", 64, 48)
    assert (info.fps, info.frame_count, info.warnings) == (10.0, 20, ())
    assert info.duration == pytest.approx(2.0)
    assert stream_format(path).codec == "h264"
    assert measured_duration(path) == pytest.approx(2.0)
    whole = sample_frames(path, fps=None, max_frames=None)
    assert whole.frames.shape == (20, 48, 64, 3) and whole.source_fps == 10.0 and not whole.warnings
    assert np.abs(whole.frames.astype(int) - FRAMES).max() <= 3  # the video's levels, not the cover's 200
    assert sample_frames(path, fps=2.0, max_frames=8).frames.shape[0] == 4


def test_a_cover_beside_the_video_does_not_hide_a_truncation(tmp_path: Path) -> None:
    # no DURATION tag on the track: only the segment's duration tells how long the video should last,
    # and it speaks for the video when nothing else plays beside it (a cover does not play)
    path = write_mkv_with_cover(tmp_path / "clip.mkv", textured_clip(40, 64, 48), fps=10, duration_tags=False)
    whole = sample_frames(path, fps=None, max_frames=None)
    assert whole.frames.shape[0] == 40 and not whole.warnings
    assert probe_video(path).duration == pytest.approx(4.0) and stream_format(path).codec == "h264"
    data = path.read_bytes()
    cut = tmp_path / "cut.mkv"
    cut.write_bytes(data[: int(len(data) * 0.8)])  # the download stopped: the header still says 4 s
    read = sample_frames(cut, fps=None, max_frames=None)
    assert read.warnings == ("truncated: decoded 32 frames covering 3.2 s of 4.0 s declared",)


@pytest.mark.parametrize("fn", [probe_video, sample_frames, stream_format, measured_duration])
def test_audio_with_cover_art_is_not_a_video(tmp_path: Path, fn: object) -> None:
    path = write_audio_with_cover(tmp_path / "song.m4a")
    with pytest.raises(VideoError) as info:
        fn(path)  # type: ignore[operator]
    assert info.value.path == path
    assert info.value.reason == "no video stream (only 1 attached cover picture)"
