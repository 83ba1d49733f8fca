"""What a tracker is given (a seed on the first frame) and what it returns (tracks)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Target:
    """One thing to follow through a video, as known on the first frame.

    A *region* target (an object) has a ``mask``; its track is the mask's centroid and bounding box.
    A *point* target (the end effector, a robot keypoint) has only ``point``; ``support`` optionally
    marks pixels that move with it (for example the robot's mask), where a tracker may pick features.

    Attributes:
        name: unique name within a seed (``"object"``, ``"ee"``, ``"kp:robot0:gripper_link"``).
        point: ``(u, v)`` pixel position on the first frame (mask centroid for a region target).
        mask: ``(H, W)`` bool mask on the first frame, or None for a point target.
        support: ``(H, W)`` bool pixels that move rigidly with a point target, or None.
        start: frame that ``point``, ``mask`` and ``support`` describe (0 unless the target is
            hidden on the first frame); the target is unknown before it.
    """

    name: str
    point: tuple[float, float]
    mask: np.ndarray | None = None
    support: np.ndarray | None = None
    start: int = 0

    @property
    def is_region(self) -> bool:
        return self.mask is not None


@dataclass(frozen=True)
class TrackSeed:
    """The first frame's targets for one video of ``size = (width, height)`` pixels."""

    targets: tuple[Target, ...]
    size: tuple[int, int]

    def __post_init__(self) -> None:
        names = [t.name for t in self.targets]
        if len(set(names)) != len(names):
            raise ValueError(f"target names must be unique, got {names}")
        w, h = self.size
        for t in self.targets:
            for what, arr in (("mask", t.mask), ("support", t.support)):
                if arr is not None and arr.shape != (h, w):
                    raise ValueError(f"target {t.name!r}: {what} has shape {arr.shape}, expected {(h, w)}")

    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)


@dataclass(frozen=True)
class Tracks:
    """Per-frame positions of a seed's targets in one video.

    Attributes:
        names: target names, in the seed's order.
        points: ``(T, N, 2)`` float64 ``(u, v)`` pixels; NaN where the target is lost or absent.
        boxes: ``(T, N, 4)`` float64 ``(x0, y0, x1, y1)`` pixels of region targets; NaN for point
            targets and where a region is lost.
        confidence: ``(T, N)`` float64 in [0, 1]; 0 where lost. Detection scores for AP.
        size: ``(width, height)`` of the frames the pixels refer to.
        info: small facts about the run (re-detections, frames lost), stored with scores.
        untracked: why the tracker did not follow a target at all (by name; for example, a seed
            frame on which the target cannot be told from the rest of the image); such a target is
            lost (NaN, confidence 0) on every frame.
    """

    names: tuple[str, ...]
    points: np.ndarray
    boxes: np.ndarray
    confidence: np.ndarray
    size: tuple[int, int]
    info: dict[str, int] = field(default_factory=dict)
    untracked: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t, n = self.points.shape[:2]
        if self.points.shape != (t, n, 2) or self.boxes.shape != (t, n, 4) or self.confidence.shape != (t, n):
            raise ValueError(
                f"inconsistent track arrays: points {self.points.shape}, boxes {self.boxes.shape}, "
                f"confidence {self.confidence.shape}"
            )
        if n != len(self.names):
            raise ValueError(f"{n} tracks but {len(self.names)} names")
        unknown = set(self.untracked) - set(self.names)
        if unknown:
            raise ValueError(f"untracked targets {sorted(unknown)} are not among tracks {list(self.names)}")

    def index(self, name: str) -> int:
        """Column of target ``name``; raises KeyError naming the known targets."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no track named {name!r}; tracks: {list(self.names)}") from None

    def normalized(self, name: str) -> np.ndarray:
        """``(T, 2)`` positions of ``name`` divided by (width, height): image coordinates in [0, 1]."""
        w, h = self.size
        return self.points[:, self.index(name)] / np.array([w, h], dtype=np.float64)
