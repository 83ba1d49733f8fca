"""Animated WebP files, read with Pillow.

FFmpeg's WebP decoder reads still images only: an animated WebP (a WebP whose extended header sets the
animation flag, with one ``ANMF`` chunk per frame) decodes to nothing there. Pillow composes its frames
(each frame drawn over the canvas as the file's blending and disposal say), so such a file is read here
instead, as a video whose frame ``i`` is shown at the sum of the durations of the frames before it.

Frames come out as RGB: an alpha channel is dropped, as it is for every other input. WebP stores
durations in milliseconds, which is the time base used when frame times are compared with the sampling
targets. A file whose frames all have zero duration has no timing: its frames are placed at 30 fps with
a warning, as for a frame folder without ``fps.txt``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from robojudge.video._filesample import AlphaCheck
from robojudge.video._folder import DEFAULT_FOLDER_FPS, over_pixel_limit
from robojudge.video._memory import check_frame_memory
from robojudge.video._post import PostProcess
from robojudge.video._select import pick_indices, thin_positions, time_tolerance
from robojudge.video._types import SampledFrames, VideoError, VideoInfo

__all__ = ["is_animated_webp", "probe_animated", "sample_animated"]

_TIME_BASE = 1e-3  # WebP frame durations are whole milliseconds


def is_animated_webp(path: Path) -> bool:
    """Whether ``path`` is a WebP file with the animation flag set (from its first 21 bytes)."""
    try:
        with open(path, "rb") as f:
            head = f.read(21)
    except OSError:
        return False
    # RIFF <size> WEBP VP8X <chunk size> <flags>: bit 1 of the flags byte is "animation"
    return (len(head) == 21 and head[:4] == b"RIFF" and head[8:12] == b"WEBP" and head[12:16] == b"VP8X"
            and bool(head[20] & 0x02))


def _timing(path: Path) -> tuple[list[float], float, tuple[str, ...], tuple[int, int]]:
    """Each frame's time (s, from the first), the duration of the whole, warnings, and (width, height),
    from the file's chunks (no pixel is decoded): the canvas size in ``VP8X``, one ``ANMF`` chunk per
    frame with its duration in milliseconds (24 bits, little-endian, at byte 12 of the chunk)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise VideoError(path, f"cannot read animated WebP: {exc}") from exc
    declared = int.from_bytes(data[4:8], "little") + 8
    if declared > len(data):  # libwebp's demuxer refuses a cut file whole: no prefix to give back
        raise VideoError(path, f"truncated: the file holds {len(data)} of the {declared} bytes its header "
                         "declares, and an animated WebP is read whole")
    size = (int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1)
    durations: list[int] = []  # milliseconds
    at = 12
    while at + 8 <= len(data):
        fourcc, length = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        if fourcc == b"ANMF":
            if length < 16 or at + 8 + length > len(data):
                raise VideoError(path, f"damaged: frame {len(durations)}'s chunk runs past the file's end")
            durations.append(int.from_bytes(data[at + 20:at + 23], "little"))
        at += 8 + length + (length & 1)
    if not durations:
        raise VideoError(path, "zero frames decoded")
    if any(durations):
        times = (np.concatenate([[0], np.cumsum(durations[:-1])]) / 1000).tolist()
        return times, sum(durations) / 1000, (), size
    warning = f"animated WebP gives no frame durations; rate assumed to be {DEFAULT_FOLDER_FPS:g} fps"
    return [i / DEFAULT_FOLDER_FPS for i in range(len(durations))], len(durations) / DEFAULT_FOLDER_FPS, \
        (warning,), size


def _rates(times: list[float], duration: float) -> tuple[float, float]:
    """The average rate, and the densest rate between two consecutive frames (the average for one frame)."""
    average = len(times) / duration if duration > 0 else DEFAULT_FOLDER_FPS
    steps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
    return average, max([1 / s for s in steps], default=average)


def probe_animated(path: Path) -> VideoInfo:
    """Describe an animated WebP; reads the frame headers, decodes no pixels."""
    times, duration, warnings, (width, height) = _timing(path)
    return VideoInfo(
        path=path,
        width=int(width),
        height=int(height),
        fps=_rates(times, duration)[0],
        frame_count=len(times),
        duration=duration,
        rotation=0,
        codec="webp (animated)",
        warnings=warnings,
    )


def sample_animated(
    path: Path, fps: float | None, max_frames: int | None, post: PostProcess, spread: str = "uniform"
) -> SampledFrames:
    """Sample an animated WebP; see :func:`robojudge.video.sample_frames` for the arguments."""
    times, duration, warnings, (width, height) = _timing(path)
    average, densest = _rates(times, duration)
    effective = None if fps is None or fps >= densest * (1 - 1e-9) else fps
    tolerance = time_tolerance(_TIME_BASE)
    picks = pick_indices(times, effective, tolerance)
    chosen = [picks[p] for p in thin_positions(len(picks), max_frames, spread)]
    check_frame_memory(path, [(len(chosen), post)], width, height)
    arrays: list[np.ndarray] = []
    alpha = AlphaCheck()  # the video files' transparency warning
    try:
        with Image.open(path) as img:
            for i in chosen:
                img.seek(i)  # Pillow composes the frame over the ones before it
                frame = img.convert("RGBA")
                alpha.see_lowest(int(np.asarray(frame.getchannel("A")).min()))
                arrays.append(post(np.asarray(frame.convert("RGB")), index=i))
    except Image.DecompressionBombError as exc:
        raise over_pixel_limit(path, "the animated WebP", exc, (width, height)) from None
    except (OSError, ValueError, EOFError) as exc:
        raise VideoError(path, f"cannot read animated WebP: {exc}") from exc
    warnings += alpha.warnings() + post.size_warnings()
    return SampledFrames(
        frames=np.ascontiguousarray(np.stack(arrays)),
        timestamps=np.asarray([times[i] for i in chosen], dtype=np.float64),
        indices=np.asarray(chosen, dtype=np.int64),
        source_fps=float(average),
        path=path,
        warnings=warnings,
        picked=len(picks),
        tolerance=tolerance,
    )
