"""A video as KIVA reads it: the reader's small square frames and a reduced copy for the repeat checks.

The reader sees every frame squashed to ``size x size`` (32-128 px) and the repeated-frame check
(:func:`~robojudge.kiva._score.held_frames`) compares frames whose constants were measured on 64-256 px
clips, so neither needs the video at its own size: a 1080x1080 clip of 300 frames held 1.05 GB of native
frames for a reader that reads 300 frames of 32 px (audit realsize, F1). Both are sampled at their size as
the frames are decoded (one pass where a frame cache is open), or made from the native frames where the
frame cache already holds them for another metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from robojudge.video import (
    FileFingerprint,
    cached_frames,
    cell_of,
    prefetch_frames,
    probe_video,
    sample_frames,
)

HELD_SIDE = 256
"""Longer side (px) of the copy of a video that the repeated-frame check and the still check read: a video
larger than this is shrunk to it (``INTER_AREA``, aspect kept), a smaller one read at its own size. The
check's constants (``HELD_LEVELS``, ``HELD_NOISE``) were measured on 64-256 px clips."""


@dataclass(frozen=True)
class Clip:
    """One video's frames as KIVA reads them, with its own size."""

    #: ``(T, size, size, 3)`` what the reader reads, resized from each native frame with ``INTER_AREA``
    #: (as before this copy existed); ``None`` when no reader size was asked
    small: np.ndarray | None
    #: ``(T, h, w, 3)`` the video at a longer side of at most :data:`HELD_SIDE`
    check: np.ndarray
    #: the video's own (upright) frame size, which positions are scaled back to
    width: int
    height: int
    fps: float

    def __len__(self) -> int:
        return len(self.check)


def check_size(width: int, height: int) -> tuple[int, int]:
    """``(w, h)`` of the check copy of a ``width`` x ``height`` video: the longer side at most
    :data:`HELD_SIDE`, the aspect kept (rounded as :func:`~robojudge.video.sample_frames` rounds it).

    >>> check_size(1280, 720), check_size(256, 192)
    ((256, 144), (256, 192))
    """
    if max(width, height) <= HELD_SIDE:
        return width, height
    scale = HELD_SIDE / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def _samplings(size: int | None, width: int, height: int, cell: Any = None
               ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The :func:`sample_frames` arguments of the reader's frames and of the check copy. The reader's square
    is sampled at its size only where :func:`sample_frames` shrinks with ``INTER_AREA`` (fewer pixels), so it
    is the same square :func:`square_frames` makes; a smaller video is read at its own size and squared
    afterwards."""
    whole: dict[str, Any] = {"fps": None, "max_frames": None, "cell": cell}
    check = {**whole, "size": HELD_SIDE if max(width, height) > HELD_SIDE else None}
    if size is None:
        return None, check
    return {**whole, "size": (size, size) if size * size < width * height else None}, check


def square_frames(frames: np.ndarray, size: int) -> np.ndarray:
    """``(T, size, size, 3)``: each frame squashed to the reader's square with ``INTER_AREA``."""
    if frames.shape[1:3] == (size, size):
        return frames
    return np.stack([cv2.resize(f, (size, size), interpolation=cv2.INTER_AREA) for f in frames])


def check_frames(frames: np.ndarray) -> np.ndarray:
    """Native ``(T, H, W, 3)`` frames as the check copy (:func:`check_size`, ``INTER_AREA``: what
    :func:`sample_frames` gives at that size)."""
    h, w = frames.shape[1:3]
    tw, th = check_size(w, h)
    if (tw, th) == (w, h):
        return frames
    return np.stack([cv2.resize(f, (tw, th), interpolation=cv2.INTER_AREA) for f in frames])


def clip_of_frames(frames: np.ndarray, fps: float, size: int | None) -> Clip:
    """A :class:`Clip` of native ``(T, H, W, 3)`` frames already in memory."""
    h, w = frames.shape[1:3]
    small = None if size is None else square_frames(frames, size)
    return Clip(small, check_frames(frames), int(w), int(h), float(fps))


def sample_clip(video: str | Path, size: int | None) -> Clip:
    """``video`` (every frame) as a :class:`Clip` for a reader of ``size`` px (``None``: the check copy
    only), without holding its frames at their own size unless the open frame cache already does.

    With a frame cache open (every run has one) both samplings are decoded in one pass and cached, so the
    three KIVA metrics of an item decode it once; without one, each is a decode of its own. The native
    size is the probe's (the cell's, inside a :func:`~robojudge.video.read_cell` block).

    Raises:
        VideoError: The video cannot be read.
    """
    info = probe_video(video)
    cell = cell_of(Path(video))
    try:
        native = cached_frames(FileFingerprint.of(video), fps=None, max_frames=None, cell=cell)
    except OSError:
        native = None  # sample_frames reports the missing file
    if native is not None:
        return clip_of_frames(native.frames, float(native.source_fps), size)
    read, check = _samplings(size, info.width, info.height, cell)
    if read is not None and read != check:
        prefetch_frames(video, [read, check])
    checked = sample_frames(video, **check)
    small = None
    if read is not None:
        frames = checked.frames if read == check else sample_frames(video, **read).frames
        small = square_frames(frames, size) if size is not None else None
    return Clip(small, checked.frames, info.width, info.height, float(checked.source_fps))
