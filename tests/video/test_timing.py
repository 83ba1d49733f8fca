"""Honest frame times: broken time bases, raw streams, rounded GIF delays, assumed rates."""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from _videogen import levels_clip

from _encode import mux_frames
from robojudge.video import probe_video, sample_frames, write_video
from robojudge.video._decode import StreamMeta
from robojudge.video._timing import ASSUMED_FPS, check_complete, frame_times, jitter_tolerance

N = 24  # 3 s at 8 fps
FAST = Fraction(1, 100_000)


@pytest.fixture
def frames() -> np.ndarray:
    return levels_clip(N, step=10)


@pytest.fixture
def proper(tmp_path: Path, frames: np.ndarray) -> Path:
    return write_video(tmp_path / "proper.mp4", frames, fps=8)


def _zero_timescale(src: Path, dst: Path) -> Path:
    """Copy of an mp4 whose media header (mdhd) says the track's time scale is 0."""
    data = bytearray(src.read_bytes())
    at = data.index(b"mdhd")
    version = data[at + 4]
    field = at + 8 + (16 if version == 1 else 8)  # after version/flags and the two dates
    assert struct.unpack(">I", data[field : field + 4])[0] > 0
    data[field : field + 4] = b"\0\0\0\0"
    dst.write_bytes(bytes(data))
    return dst


def _encode(path: Path, frames: np.ndarray, fmt: str, codec: str, pix: str = "yuv420p") -> Path:
    with av.open(str(path), "w", format=fmt) as container:
        stream = container.add_stream(codec, rate=8)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], pix
        mux_frames(container, stream, (av.VideoFrame.from_ndarray(rgb, format="rgb24") for rgb in frames))
    return path


def _gif(path: Path, frames: np.ndarray, delays_cs: list[int]) -> Path:
    """A GIF whose frame ``i`` is shown for ``delays_cs[i]`` centiseconds."""
    with av.open(str(path), "w", format="gif") as container:
        stream = container.add_stream("gif", rate=8)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "rgb8"
        stream.codec_context.time_base = Fraction(1, 100)
        t = 0
        for rgb, delay in zip(frames, delays_cs, strict=True):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = t, Fraction(1, 100)
            t += delay
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


def _levels(s: object) -> list[int]:
    """The level each sampled frame was drawn with (levels_clip: frame i is 10 * i)."""
    arr = s.frames  # type: ignore[attr-defined]
    return [round(float(f.mean()) / 10) for f in arr]


# ---------------------------------------------------------------------------------- broken time bases


def test_zero_time_scale_mp4_falls_back_to_frame_order(tmp_path: Path, proper: Path) -> None:
    broken = _zero_timescale(proper, tmp_path / "ts0.mp4")
    good = sample_frames(proper, fps=4)
    assert good.indices.tolist() == list(range(0, N, 2)) and good.warnings == ()
    got = sample_frames(broken, fps=4)
    assert got.indices.tolist() == good.indices.tolist()
    np.testing.assert_allclose(got.timestamps, good.timestamps)
    np.testing.assert_array_equal(got.frames, good.frames)
    assert got.source_fps == 8.0
    (warning,) = got.warnings
    assert warning.startswith("time stamps imply") and "frames placed by order at 8 fps" in warning
    assert "codec bitstream" in warning
    assert len(sample_frames(broken, fps=8, max_frames=None)) == N
    info = probe_video(broken)
    assert info.fps == 8.0 and info.frame_count == N
    (warning,) = info.warnings
    assert warning == "the stream's rate 0.000488 fps is unusable; rate 8 fps (rate from the codec bitstream)"
    assert probe_video(proper).warnings == ()


def test_raw_h264_named_mp4_uses_the_bitstream_rate(tmp_path: Path, frames: np.ndarray, proper: Path) -> None:
    # FFmpeg reads a bare H.264 stream at an assumed 25 fps; its own timing info says 8.
    raw = _encode(tmp_path / "raw.mp4", frames, "h264", "libx264")
    good = sample_frames(proper, fps=4)
    got = sample_frames(raw, fps=4)
    assert got.indices.tolist() == good.indices.tolist()
    assert _levels(got) == _levels(good) == list(range(0, N, 2))
    assert got.source_fps == 8.0
    assert got.warnings == (
        "no container time stamps (h264 stream); frames placed by order at 8 fps "
        "(rate from the codec bitstream)",
    )
    assert probe_video(raw).fps == 8.0


def test_raw_stream_without_any_rate_is_read_at_an_assumed_rate(tmp_path: Path, frames: np.ndarray) -> None:
    raw = _encode(tmp_path / "clip.mjpeg", frames, "mjpeg", "mjpeg", pix="yuvj420p")
    got = sample_frames(raw, fps=None, max_frames=None)
    assert len(got) == N and got.source_fps == ASSUMED_FPS
    np.testing.assert_allclose(got.timestamps, np.arange(N) / ASSUMED_FPS)
    (warning,) = got.warnings
    assert warning == (
        f"no container time stamps (mjpeg stream); frames placed by order at {ASSUMED_FPS:g} fps "
        "(assumed: the file gives no usable rate)"
    )


# ------------------------------------------------------------------------------------------- jitter


@pytest.mark.parametrize("first", [13, 12])
def test_gif_with_rounded_delays_keeps_every_frame_at_its_own_rate(
    tmp_path: Path, frames: np.ndarray, first: int
) -> None:
    # 8 fps is 12.5 cs a frame; GIF stores whole centiseconds, so the delays alternate 13/12 (or
    # 12/13) and every other frame sits 0.5 cs off the 8 fps grid.
    other = 25 - first
    gif = _gif(tmp_path / "jitter.gif", frames, [first if i % 2 == 0 else other for i in range(N)])
    every = sample_frames(gif, fps=8, max_frames=None)
    assert every.indices.tolist() == list(range(N)) and _levels(every) == list(range(N))
    assert every.warnings == ()
    half = sample_frames(gif, fps=4, max_frames=None)
    assert half.indices.tolist() == list(range(0, N, 2))


def test_jitter_tolerance_is_the_scatter_around_an_even_grid() -> None:
    times = [(12.5 * i + (0.5 if i % 2 else 0.0)) / 100 for i in range(N)]
    tol = jitter_tolerance(times)
    assert 0.005 <= tol < 0.0125 / 2 + 0.005
    assert jitter_tolerance([i / 30 for i in range(90)]) == pytest.approx(0.0, abs=1e-12)
    # Frames at 0, 0.1, 0.15, 0.5, ...: a variable rate, not jitter around a constant one.
    assert jitter_tolerance([0.0, 0.1, 0.15, 0.5, 0.55, 0.6, 1.0, 1.3]) == 0.0
    assert jitter_tolerance([0.0, 0.5]) == 0.0


def test_regular_ntsc_timestamps_keep_the_strict_rule() -> None:
    # 30000/1001 fps: frame 30 sits 1 ms after the 1 s target. Exact time stamps have no scatter,
    # so the target still takes frame 29 (the latest frame not after it).
    meta = StreamMeta(Fraction(1, 30000), 30000 / 1001, 60, None, "h264")
    timing = frame_times([1001 * i for i in range(60)], meta)
    assert timing.warnings == () and timing.tolerance < 1e-4
    from robojudge.video._select import pick_indices

    assert pick_indices(timing.times, 4.0, timing.tolerance)[4] == 29


# ----------------------------------------------------------------------------- frame_times decisions


def _meta(**kw: object) -> StreamMeta:
    base: dict[str, object] = {"time_base": Fraction(1, 1000), "fps": 10.0, "frame_count": None,
                               "duration": None, "codec": "h264"}  # fmt: skip
    base.update(kw)
    return StreamMeta(**base)  # type: ignore[arg-type]


def test_good_time_stamps_are_used_as_they_are() -> None:
    t = frame_times([100, 200, 300, 450], _meta())
    assert t.times == [0.0, 0.1, 0.2, 0.35] and t.fps == 10.0 and t.warnings == ()


@pytest.mark.parametrize(
    ("pts", "meta", "reason"),
    [
        ([0, 0, 0, 0], _meta(), "repeated or decreasing time stamps"),
        ([0, 200, 100, 300], _meta(), "repeated or decreasing time stamps"),
        ([0, 100, None, 300], _meta(), "frames without time stamps"),
        ([0, 100, 200, 300], _meta(time_base=None), "no time base"),
        ([0, 100, 200, 300], _meta(time_base=Fraction(1000)), "time stamps imply 1e-05 fps (time base 1000)"),
        ([0, 1, 2, 3], _meta(time_base=FAST), "time stamps imply 1e+05 fps (time base 1/100000)"),
    ],
)
def test_unusable_time_stamps_fall_back_to_frame_order(
    pts: list[int | None], meta: StreamMeta, reason: str
) -> None:
    t = frame_times(pts, meta)
    np.testing.assert_allclose(t.times, [0, 0.1, 0.2, 0.3])
    assert t.fps == 10.0
    (warning,) = t.warnings
    assert warning == f"{reason}; frames placed by order at 10 fps (the stream's nominal rate)"


def test_time_stamps_far_longer_than_the_container_are_unusable() -> None:
    # 3 s of stamps in a container that says it lasts 0.4 s: the time base is wrong, not the container.
    t = frame_times([0, 1000, 2000, 3000], _meta(container_duration=0.4))
    np.testing.assert_allclose(t.times, [0, 0.1, 0.2, 0.3])
    assert t.warnings == (
        "time stamps span 3.0 s but the container lasts 0.4 s; frames placed by order at 10 fps "
        "(rate from the container's duration)",
    )


def test_fallback_rate_prefers_the_bitstream_then_the_container_duration() -> None:
    bad = Fraction(1000)  # implies 0.001 fps
    t = frame_times([0, 1, 2, 3], _meta(time_base=bad, codec_fps=8.0, container_duration=2.0))
    assert t.fps == 8.0 and "codec bitstream" in t.warnings[0]
    t = frame_times([0, 1, 2, 3], _meta(time_base=bad, fps=0.001, container_duration=2.0))
    assert t.fps == 2.0 and "container's duration" in t.warnings[0]
    t = frame_times([0, 1, 2, 3], _meta(time_base=bad, fps=None))
    assert t.fps == ASSUMED_FPS and "assumed" in t.warnings[0]


def test_a_short_file_names_two_lengths_that_differ() -> None:
    # Audit (codecs F2): "covering 2.5 s of 2.5 s declared" named one length twice.
    meta = StreamMeta(Fraction(1, 1000), 100.0, None, 1.03, "h264", container_duration=1.03, format="nut")
    timing = frame_times(list(range(0, 1000, 10)), meta)  # 100 frames of 10 ms: 1.00 s
    assert check_complete(Path("x.nut"), 100, timing, meta) == (
        "truncated: decoded 100 frames covering 1.00 s of 1.03 s declared",)
