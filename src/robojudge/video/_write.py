"""Writing uint8 RGB frame arrays to video files or frame folders.

The writer exists mainly for tests, benchmarks and the demo suite, so it favours exact sizes and
reproducible output over small files. Encoder choices per suffix:

* ``.mp4`` / ``.mov`` / ``.mkv``: libx264, crf 18, preset "fast", macroblock-tree rate control off
  (see "Determinism"); yuv420p for even sizes,
  yuv444p (High 4:4:4 profile) for odd sizes; mp4/mov get ``faststart`` (index before the data,
  so a cut-off file stays partly decodable).
* ``.webm``: libvpx-vp9, crf 30 (``codec="libvpx"`` gives VP8).
* ``.avi``: mjpeg at fixed quantiser 2 (``codec="mpeg4"`` gives MPEG-4 part 2).
* ``.gif``: exact palette if a frame has at most 256 colours, else a 6x6x6 colour cube (lossy).
* no known suffix: a folder of ``frame_00000.png``, ... plus ``fps.txt``.

libx264 cannot encode odd widths or heights in 4:2:0, so odd-sized frames are written in 4:4:4
rather than padded or cropped: the decoded video has exactly the input size.

Determinism: encoders run single-threaded with ``bitexact`` flags, and the muxers get
``fflags=+bitexact`` (no random Matroska UIDs, no encoder version strings), so writing the same
frames twice gives byte-identical files with the same FFmpeg build, in any process. libx264's
macroblock-tree rate control (``mbtree``) is switched off: its AVX-512 code reads past the end of
its buffers, so with it on the bitstream depended on whatever the heap held before (a long-running
process that had rendered and freed other frames wrote different files from a fresh one; seen with
the libx264 in PyAV 18's wheels). ``tests/video/test_formats.py`` checks this across processes with
different heap contents.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np
from av.video.stream import VideoStream

from robojudge.video._types import VideoError

__all__ = ["VIDEO_SUFFIXES", "write_video"]

VIDEO_SUFFIXES = frozenset({".mp4", ".mov", ".mkv", ".webm", ".avi", ".gif"})

_DEFAULT_CODEC = {
    ".mp4": "libx264",
    ".mov": "libx264",
    ".mkv": "libx264",
    ".webm": "libvpx-vp9",
    ".avi": "mjpeg",
    ".gif": "gif",
}


def write_video(
    path: str | Path,
    frames: np.ndarray | Sequence[np.ndarray],
    fps: float | Fraction = 30.0,
    codec: str | None = None,
    timestamps: Sequence[float] | np.ndarray | None = None,
) -> Path:
    """Write RGB frames to a video file, or to a folder of PNG images.

    Args:
        path: destination. Its suffix picks the container (see the module docstring); a path
            without a known video suffix becomes a frame folder holding ``frame_00000.png``, ...
            and an ``fps.txt`` with the frame rate, which :func:`sample_frames` reads back.
        frames: ``(N, H, W, 3)`` uint8 RGB array (or a sequence of ``(H, W, 3)`` arrays).
            ``(N, H, W)`` grayscale input is accepted and written as gray RGB.
        fps: constant frame rate of the output.
        codec: FFmpeg encoder name overriding the default for the suffix (e.g. ``"mpeg4"`` for
            .avi, ``"libvpx"`` for VP8 .webm).
        timestamps: each frame's presentation time in seconds, for a video whose frames last unequal
            times (a GIF's, an animated WebP's): stored in milliseconds, so they must increase by at
            least 1 ms; ``fps`` then only sets the stream's nominal rate. Not for frame folders.

    Returns:
        The path written.

    Raises:
        VideoError: if the frames are malformed or the encoder fails.
    """
    path = Path(path)
    arr = _as_rgb_stack(path, frames)
    if fps <= 0:
        raise VideoError(path, f"fps must be positive, got {fps}")
    suffix = path.suffix.lower()
    pts = None if timestamps is None else _millis(path, timestamps, len(arr))
    if suffix not in VIDEO_SUFFIXES:
        if pts is not None:
            raise VideoError(path, "a frame folder has one rate (fps.txt): timestamps need a video file")
        _write_folder(path, arr, float(fps))
        return path
    rate = Fraction(fps).limit_denominator(100_000)
    try:
        _encode(path, arr, rate, codec or _DEFAULT_CODEC[suffix], pts)
    except (av.error.FFmpegError, ValueError, TypeError) as exc:
        raise VideoError(path, f"encoding failed: {exc}") from exc
    return path


def _as_rgb_stack(path: Path, frames: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
    arr = np.asarray(frames)
    if arr.ndim == 3:
        arr = np.repeat(arr[..., None], 3, axis=3)
    if arr.ndim != 4 or arr.shape[3] != 3 or arr.shape[0] == 0:
        raise VideoError(path, f"expected (N, H, W, 3) frames with N >= 1, got shape {arr.shape}")
    if arr.dtype != np.uint8:
        raise VideoError(path, f"expected uint8 frames, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _write_folder(path: Path, arr: np.ndarray, fps: float) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for i, rgb in enumerate(arr):
        target = path / f"frame_{i:05d}.png"
        if not cv2.imwrite(str(target), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)):
            raise VideoError(path, f"could not write {target.name}")
    (path / "fps.txt").write_text(f"{fps!r}\n")


_MILLI = Fraction(1, 1000)


def whole_milliseconds(timestamps: Sequence[float] | np.ndarray) -> list[int] | None:
    """Frame times in whole milliseconds from the first frame, as :func:`write_video` stores them, or
    None when they cannot be kept so (two frames under 1 ms apart).

    >>> whole_milliseconds([0.5, 0.6, 0.9]), whole_milliseconds([0.0, 0.0002])
    ([0, 100, 400], None)
    """
    t = np.asarray(timestamps, dtype=np.float64)
    ms = np.rint((t - t[0]) * 1000).astype(np.int64) if t.size else np.zeros(0, np.int64)
    return ms.tolist() if bool((np.diff(ms) >= 1).all()) else None


def _millis(path: Path, timestamps: Sequence[float] | np.ndarray, n: int) -> list[int]:
    """:func:`whole_milliseconds`, refused unless one per frame, finite and at least 1 ms apart."""
    t = np.asarray(timestamps, dtype=np.float64)
    if t.shape != (n,) or not np.isfinite(t).all():
        raise VideoError(path, f"timestamps: need {n} finite times, one per frame, got shape {t.shape}")
    ms = whole_milliseconds(t)
    if ms is None:
        raise VideoError(path, "timestamps must increase by at least 1 ms from frame to frame")
    return ms


def _encode(path: Path, arr: np.ndarray, rate: Fraction, codec: str, pts: list[int] | None = None) -> None:
    height, width = int(arr.shape[1]), int(arr.shape[2])
    odd = width % 2 == 1 or height % 2 == 1
    options: dict[str, str] = {}
    if codec in ("libx264", "h264"):
        codec = "libx264"
        pix_fmt = "yuv444p" if odd else "yuv420p"
        options = {"crf": "18", "preset": "fast", "x264-params": "mbtree=0"}
    elif codec in ("libvpx-vp9", "vp9"):
        codec, pix_fmt = "libvpx-vp9", "yuv420p"
        options = {"crf": "30", "b": "0", "deadline": "good", "cpu-used": "4", "row-mt": "0"}
    elif codec in ("libvpx", "vp8"):
        codec, pix_fmt = "libvpx", "yuv420p"
        options = {"crf": "10", "b": "2M", "deadline": "good", "cpu-used": "4"}
    elif codec == "mjpeg":
        pix_fmt = "yuvj444p" if odd else "yuvj420p"
    elif codec == "gif":
        pix_fmt = "pal8"
    else:
        pix_fmt = "yuv420p"

    muxer_options = {"fflags": "+bitexact"}
    if path.suffix.lower() in (".mp4", ".mov"):
        muxer_options["movflags"] = "+faststart"  # index first: a cut-off file stays decodable
    with av.open(str(path), "w", options=muxer_options) as container:
        stream = container.add_stream(codec, rate=rate, options=options)
        assert isinstance(stream, VideoStream)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.thread_count = 1
        stream.codec_context.flags |= av.codec.context.Flags.bitexact
        if codec == "mjpeg":
            stream.codec_context.qscale = True  # fixed quantiser (qmin/qmax) rather than a bitrate
            stream.codec_context.qmin = 2
            stream.codec_context.qmax = 2
        elif codec not in ("libx264", "libvpx-vp9", "libvpx", "gif"):
            stream.bit_rate = max(2_000_000, width * height * int(rate) * 2)
        if pts is not None:
            stream.codec_context.time_base = _MILLI
        for i, rgb in enumerate(arr):
            frame = _to_frame(rgb, pix_fmt)
            frame.pts = i if pts is None else pts[i]
            frame.time_base = 1 / rate if pts is None else _MILLI
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)


def _to_frame(rgb: np.ndarray, pix_fmt: str) -> av.VideoFrame:
    if pix_fmt == "pal8":
        indexed, palette = _palettize(rgb)
        return av.VideoFrame.from_ndarray((indexed, palette), format="pal8")  # type: ignore[arg-type]
    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
    return frame.reformat(format=pix_fmt)


def _palettize(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map an RGB frame to 8-bit palette indices and a ``(256, 4)`` ARGB palette."""
    packed = (rgb[..., 0].astype(np.uint32) << 16) | (rgb[..., 1].astype(np.uint32) << 8) | rgb[..., 2]
    colours, inverse = np.unique(packed.ravel(), return_inverse=True)
    palette = np.zeros((256, 4), dtype=np.uint8)
    palette[:, 0] = 255
    if colours.size <= 256:
        palette[: colours.size, 1] = (colours >> 16) & 0xFF
        palette[: colours.size, 2] = (colours >> 8) & 0xFF
        palette[: colours.size, 3] = colours & 0xFF
        return inverse.reshape(rgb.shape[:2]).astype(np.uint8), palette
    # Too many colours: a uniform 6x6x6 cube (216 entries), nearest level per channel.
    levels = np.round(np.arange(6) * 51).astype(np.uint8)
    r, g, b = np.meshgrid(levels, levels, levels, indexing="ij")
    palette[:216, 1], palette[:216, 2], palette[:216, 3] = r.ravel(), g.ravel(), b.ravel()
    q = ((rgb.astype(np.uint16) + 25) // 51).astype(np.uint8)
    indexed = q[..., 0] * 36 + q[..., 1] * 6 + q[..., 2]
    return np.ascontiguousarray(indexed), palette
