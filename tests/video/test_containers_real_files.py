"""Frames of real users' containers, in display order, at the sampled rate, and not called truncated.

Found by an audit of 2026-12-06 with files made by ffmpeg:

* H.264 with B-frames in AVI (``ffmpeg -i clip.mp4 -c copy clip.avi``): the demuxer fills time stamps
  in decode order, and frames placed by their stamp's rank came out as 0, 1, 2, 3, 4, 5, 9, 7, 6, 8...
  ``data/bframes_in_avi.avi`` is such a file: 24 frames of 160x120, frame i showing i as an 8-bit bar
  code (black or white eighths of the middle third, bit 0 leftmost), encoded with
  ``-c:v libx264 -crf 18 -bf 3 -g 12`` and remuxed into AVI with ``-c copy``.
* H.264 without B-frames in AVI, the same way: ffmpeg's AVI muxer counts in half-frame ticks, so the
  file declares 60 fps and 48 frames for 24 frames at 30 fps. It was read as 60 fps (halving every
  per-second quantity and the rate a sampling is held against) and called truncated ("decoded 24 of
  48 declared frames"). ``data/avi_half_ticks.avi``: the same bar codes, ``-c:v libx264 -crf 18 -bf 0
  -g 12``, remuxed with ``-c copy``.
* A variable-frame-rate video whose average rate is below the requested rate (a GIF holding its last
  frame, a clip that stalls) kept every frame: the rate step compared with the average rate.
* A Matroska file whose stamps start after 0 (a segment of a split recording) was refused as
  truncated: its duration is the end time of its last frame.

Found by an audit of 2026-12-07 (codecs): a clip that stalls read at its declared rate in FLV, MPEG-TS,
NUT and ASF (and a GIF at FFmpeg's guess), not at its average as in MP4 and Matroska.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from robojudge.video import VideoError, probe_video, sample_frames

DATA = Path(__file__).parent / "data"


def _code(frame: np.ndarray) -> int:
    h, w = frame.shape[:2]
    bw = w // 8
    band = frame.mean(axis=2)[h // 3:2 * h // 3]
    return sum(1 << b for b in range(8) if band[:, b * bw + bw // 4:(b + 1) * bw - bw // 4].mean() > 128)


def _gray(level: int) -> np.ndarray:
    return np.full((32, 32, 3), level, np.uint8)


def _write(
    path: Path, stamps: list[int], rate: int = 30, fmt: str | None = None, codec: str = "libx264"
) -> None:
    """H.264 (or ``codec``) frames at ``stamps`` (in 1/rate s), frame k of gray level 6 k + 10
    (modulo 256)."""
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuv420p"
        stream.time_base = Fraction(1, rate)
        stream.options = {"crf": "10"} if codec == "libx264" else {"qscale": "2"}
        for k, pts in enumerate(stamps):
            frame = av.VideoFrame.from_ndarray(_gray((6 * k + 10) % 256), format="rgb24")
            frame.pts = pts
            frame.time_base = Fraction(1, rate)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def _levels(frames: np.ndarray) -> list[int]:
    return [int(round((f.mean() - 10) / 6)) for f in frames]


def test_b_frames_in_avi_come_out_in_display_order() -> None:
    got = sample_frames(DATA / "bframes_in_avi.avi", fps=None, max_frames=None)
    assert [_code(f) for f in got.frames] == list(range(24))
    # A judge's spread of 8 frames names the frames it shows.
    spread = sample_frames(DATA / "bframes_in_avi.avi", fps=None, max_frames=8)
    assert [_code(f) for f in spread.frames] == [int(i) for i in spread.indices]


def test_an_avi_counting_half_frame_ticks_is_read_at_its_stamps_rate() -> None:
    path = DATA / "avi_half_ticks.avi"
    with av.open(str(path)) as container:  # what the file declares
        stream = container.streams.video[0]
        assert (stream.average_rate, stream.frames) == (60, 48)
    said = ("the AVI header counts 2 ticks per frame: it declares 60 fps for a clip whose time stamps give "
            "30 fps; the time stamps' rate is used")
    info = probe_video(path)
    assert (info.fps, info.frame_count, info.frames, info.duration) == (30.0, 24, 24, 0.8)
    assert info.warnings == (said,)
    got = sample_frames(path, fps=None, max_frames=None)
    assert [_code(f) for f in got.frames] == list(range(24))
    assert got.source_fps == 30.0 and got.warnings == (said,)  # and not "truncated"
    # 8 fps: targets every 0.125 s. Frame k is at k / 30 s but the last, one 1/60 tick early at 0.75 s,
    # so the stamps scatter by a tick around an even grid and a frame up to that late counts as on
    # time (robojudge.video._timing.jitter_tolerance): frame 4 (0.133 s) for 0.125 s.
    assert sample_frames(path, fps=8, max_frames=None).indices.tolist() == [0, 4, 7, 11, 15, 19, 23]
    # the B-frame file, placed by order at its bitstream's 30 fps, covers its 0.8 s: not truncated
    bframes = sample_frames(DATA / "bframes_in_avi.avi", fps=None, max_frames=None)
    assert not any("truncated" in w for w in bframes.warnings)


def test_a_stalling_clip_keeps_its_average_rate_and_count_and_lost_frames_are_still_missed(
    tmp_path: Path,
) -> None:
    """The AVI rule must not reach other files. A review found it firing on ordinary variable-rate files
    (FFmpeg's average rate taken for a declared one: the count dropped, a warning, another source_fps),
    and a file missing most of its frames read as complete because its last frame reached the duration."""
    stall = tmp_path / "stall.mp4"  # 20 frames at 30 fps, 5 s held, 20 more
    _write(stall, [*range(20), *range(170, 190)])
    info = probe_video(stall)
    got = sample_frames(stall, fps=None, max_frames=None)
    assert info.frame_count == 40 and info.warnings == () and got.warnings == ()
    assert got.source_fps == info.fps and 6 < info.fps < 7  # FFmpeg's average: 40 frames over 6.3 s
    hold = tmp_path / "hold.gif"  # a GIF holding its last frame for 3 s
    frames = [Image.fromarray(_gray(10 + 6 * k)) for k in range(20)]
    frames[0].save(hold, save_all=True, append_images=frames[1:], duration=[50] * 19 + [3000], loop=0)
    assert probe_video(hold).warnings == () and probe_video(hold).frame_count == 20
    # MJPEG frames 5-54 of 60 zeroed in place (a sparse download): 10 of 60 decode, an error as before;
    # the file is whole and its packets undecodable, so it is called damaged, not truncated
    clip = tmp_path / "holes.mp4"
    with av.open(str(clip), "w") as out:
        stream = out.add_stream("mjpeg", rate=30)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuvj420p"
        for k in range(60):
            for packet in stream.encode(av.VideoFrame.from_ndarray(_gray(4 * k), format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    with av.open(str(clip)) as container:
        spans = [(p.pos, p.size) for p in container.demux(video=0) if p.size][5:55]
    data = bytearray(clip.read_bytes())
    for pos, size in spans:
        data[pos:pos + size] = bytes(size)
    clip.write_bytes(bytes(data))
    with pytest.raises(VideoError, match=r"damaged: decoded 10 of 60 declared frames"):
        sample_frames(clip, fps=None, max_frames=None)


def test_the_rate_step_thins_a_clip_that_stalls(tmp_path: Path) -> None:
    # Frame 0 held for 4 s, then 30 frames at 30 fps: the average rate (6.2 fps) is below 8 fps, yet
    # the last second holds 30 frames. At 8 fps: the held frame and 8 of the last second.
    path = tmp_path / "stall.mp4"
    _write(path, [0, *range(120, 150)])
    got = sample_frames(path, fps=8, max_frames=None)
    assert len(got.frames) == 9 and got.timestamps[:2].tolist() == [0.0, 4.0]
    steady = tmp_path / "steady.mp4"  # a video at 8 fps or less keeps every frame, as before
    _write(steady, list(range(0, 24, 4)))
    assert len(sample_frames(steady, fps=8, max_frames=None).frames) == 6


def test_a_gif_that_holds_its_last_frame_is_sampled_like_one_that_does_not(tmp_path: Path) -> None:
    images = [Image.fromarray(_gray(10 * k + 10)) for k in range(20)]
    for name, last in (("hold.gif", 3000), ("nohold.gif", 50)):
        images[0].save(tmp_path / name, save_all=True, append_images=images[1:],
                       duration=[50] * 19 + [last], loop=0)
    hold = sample_frames(tmp_path / "hold.gif", fps=8, max_frames=None)
    plain = sample_frames(tmp_path / "nohold.gif", fps=8, max_frames=None)
    assert len(hold.frames) == len(plain.frames) == 8
    assert hold.indices.tolist() == plain.indices.tolist()


def test_a_matroska_file_whose_stamps_start_late_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "part2.mkv"
    _write(path, list(range(60, 100)))  # starts at 2 s: a later segment of a split recording
    got = sample_frames(path, fps=None, max_frames=None)
    assert _levels(got.frames) == list(range(40))
    assert not any("truncated" in w for w in got.warnings)


def test_a_rate_just_above_a_matroska_videos_own_keeps_every_frame(tmp_path: Path) -> None:
    # 29.97 fps in Matroska's 1 ms stamps: gaps of 33 and 34 ms. Asking 30 fps of it dropped 7 of 150
    # frames (a 33 ms gap read as a rate above 30), where the same stream in MP4 kept them all.
    path = tmp_path / "ntsc.mkv"
    _write(path, [round(i * 1001 / 30) for i in range(40)], rate=1000)
    assert len(sample_frames(path, fps=30, max_frames=None).frames) == 40
    assert len(sample_frames(path, fps=10, max_frames=None).frames) < 20  # (well below: thinned)


# A clip that stalls: 30 frames stamped (in 1/30 s) 0-3, 10-13, 30-37 and 60-73, which last 74/30 s.
_STALL = [0, 1, 2, 3, 10, 11, 12, 13, *range(30, 38), *range(60, 74)]


@pytest.mark.parametrize("fmt", ["flv", "mpegts", "nut", "asf", "matroska"])
def test_a_clip_that_stalls_reads_at_its_average_rate_in_every_container(tmp_path: Path, fmt: str) -> None:
    # Audit (codecs F1): FLV, MPEG-TS, NUT and ASF gave their declared 30 fps as source_fps and probed
    # rate, where MP4 gives the average, 12.16 fps: the dynamic-degree stride was 4 there, 2 in MP4.
    mp4, other = tmp_path / "stall.mp4", tmp_path / f"stall.{fmt}"
    _write(mp4, _STALL)
    # (libavformat's ASF muxer stamps H.264 a frame late; MPEG-4 part 2 is what ASF usually holds)
    codec = "mpeg4" if fmt == "asf" else "libx264"
    _write(other, _STALL, fmt=fmt, codec=codec)
    ref = sample_frames(mp4, fps=None, max_frames=None)
    got = sample_frames(other, fps=None, max_frames=None)
    assert ref.source_fps == pytest.approx(30 / 74 * 30, rel=1e-9)
    # (FLV and ASF stamp in whole milliseconds: 2.467 s, not 74/30 s)
    assert got.source_fps == pytest.approx(ref.source_fps, rel=1e-3)
    assert probe_video(other).fps == pytest.approx(ref.source_fps, rel=1e-3)
    assert round(got.source_fps / 8) == round(ref.source_fps / 8) == 2  # mq_dynamic_degree's stride
    np.testing.assert_allclose(got.timestamps, ref.timestamps, atol=2e-3)
    assert np.abs(np.subtract(_levels(got.frames), range(30))).max() <= 1  # in order (MPEG-4 is lossier)
    assert not any("truncated" in w for w in got.warnings)
    assert len(got.warnings) == 1 and "declares 30 fps" in got.warnings[0]  # what was overruled
    # a clip of steady rate keeps its declared rate, with nothing to say
    steady = tmp_path / f"steady.{fmt}"
    _write(steady, list(range(40)), rate=25, fmt=fmt, codec=codec)
    plain = sample_frames(steady, fps=None, max_frames=None)
    assert plain.source_fps == 25.0 and plain.warnings == () and probe_video(steady).warnings == ()


def test_a_gif_of_uneven_delays_reads_at_its_average_rate(tmp_path: Path) -> None:
    # FFmpeg guessed 20 fps for 10 frames of 50 ms and 10 of 120 ms: sampling and probe gave that guess.
    path = tmp_path / "uneven.gif"
    images = [Image.fromarray(_gray(10 * k + 10)) for k in range(20)]
    images[0].save(path, save_all=True, append_images=images[1:], duration=[50] * 10 + [120] * 10, loop=0)
    got = sample_frames(path, fps=None, max_frames=None)
    # 10 gaps of 0.05 s and 9 of 0.12 s: 1.58 s from first to last, and the last frame lasts the usual
    # step (the median gap, 0.05 s): 20 frames over 1.63 s
    assert got.source_fps == pytest.approx(20 / 1.63)
    assert probe_video(path).fps == pytest.approx(20 / 1.63)
    assert got.warnings == ()  # a GIF declares no rate: FFmpeg's was a guess


@pytest.mark.parametrize(("fmt", "codec"), [("asf", "mpeg4"), ("nut", "libx264"), ("flv", "libx264")])
def test_a_file_whose_stamps_start_late_is_whole_in_every_end_time_container(
    tmp_path: Path, fmt: str, codec: str
) -> None:
    # Audit (codecs F2): ASF and NUT give the end time of the last frame as their duration, so a clip
    # whose stamps start at 5 s (a later segment of a recording) "covered 1.0 s of 6.0 s" and was refused.
    path = tmp_path / f"part2.{fmt}"
    _write(path, list(range(150, 180)), fmt=fmt, codec=codec)
    got = sample_frames(path, fps=None, max_frames=None)
    assert len(got.frames) == 30 and not any("truncated" in w for w in got.warnings)
    assert probe_video(path).duration == pytest.approx(1.0, abs=0.07)  # its own length, not its end time
    if fmt == "asf":
        return  # an ASF cut short loses its duration with its index: nothing to hold it against
    # The rule still catches a file cut short: the same segment, its last 60% of bytes gone.
    cut = tmp_path / f"cut.{fmt}"
    cut.write_bytes(path.read_bytes()[: int(path.stat().st_size * 0.4)])
    with pytest.raises(VideoError, match="truncated"):
        sample_frames(cut, fps=None, max_frames=None)


@pytest.mark.parametrize(("rate", "first"), [(24, 0), (25, 0), (30, 0), (24, 150), (30, 150)])
def test_an_flv_with_b_frames_is_not_called_truncated(tmp_path: Path, rate: int, first: int) -> None:
    # Audit (codecs F2): x264's B-frames delay the first stamp (83 ms at 24 fps) and FLV's duration runs
    # from the first decode stamp to the end of the last frame, so such a file of 60 frames warned
    # "truncated: decoded 60 frames covering 2.5 s of 2.6 s declared" (at 30 fps too), starting at 0 or
    # later (a segment of a recording).
    path = tmp_path / "bframes.flv"
    _write(path, list(range(first, first + 60)), rate=rate, fmt="flv")
    with av.open(str(path)) as container:
        assert container.start_time > 0  # the B-frame delay, or the late start
    got = sample_frames(path, fps=None, max_frames=None)
    assert len(got.frames) == 60 and got.warnings == ()


def test_a_clip_that_stalls_in_flv_is_not_called_truncated(tmp_path: Path) -> None:
    # Audit (codecs F2): "truncated: decoded 30 frames covering 2.5 s of 2.5 s declared": the last frame
    # was credited with 1 / the declared rate, not the step the muxer counted.
    path = tmp_path / "stall.flv"
    _write(path, _STALL, fmt="flv")
    assert not any("truncated" in w for w in sample_frames(path, fps=None, max_frames=None).warnings)
