"""Types shared by the video layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class VideoError(Exception):
    """A video (or frame folder) that cannot be decoded as asked.

    Attributes:
        path: the file or folder that failed.
        reason: a short human-readable reason (``"zero frames"``, ``"not a video file"``, ...).
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple[type[VideoError], tuple[str, str]]:
        # Keeps the error picklable across process-pool boundaries.
        return (VideoError, (str(self.path), self.reason))


@dataclass(frozen=True)
class VideoInfo:
    """What a container says about its main video stream, after rotation is applied."""

    path: Path
    width: int
    height: int
    fps: float
    frame_count: int | None
    duration: float | None
    rotation: int
    codec: str
    warnings: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class SampledFrames:
    """Frames picked from a video, in temporal order.

    Attributes:
        frames: ``(N, H, W, 3)`` uint8 RGB, or ``(N, H, W)`` uint8 when sampled in grayscale.
        timestamps: ``(N,)`` float64 presentation times in seconds, from the start of the stream.
        indices: ``(N,)`` int64 index of each frame among all decoded frames of the source.
        source_fps: average frame rate of the source.
        path: where the frames came from.
        warnings: what had to be assumed about the source, in words: a frame rate it does not give,
            time stamps that could not be used, frames missing from its end. Empty for a
            well-formed video.
    """

    frames: np.ndarray
    timestamps: np.ndarray
    indices: np.ndarray
    source_fps: float
    path: Path
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.frames.shape[0])
