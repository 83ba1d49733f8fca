"""Frame preprocessing shared by metrics, so equal settings mean one decode per item."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import require_frames
from robojudge.metrics._registry import HASH_WHEN_SET, get_metric
from robojudge.suite._schema import Item
from robojudge.video import probe_video, sample_frames


class GrayPreprocess(BaseModel):
    """Decode rate and size of a grayscale frame sequence; defaults are RoboJudge App. B.3's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float = Field(default=8.0, gt=0, description="decode rate in frames per second")
    width: int = Field(default=256, gt=0, description="frames are resized to width x height")
    height: int = Field(default=256, gt=0)


def main_video_frames(
    item: Item,
    *,
    fps: float | None,
    max_frames: int | None = None,
    size: int | tuple[int, int] | None = None,
    gray: bool = False,
    least: int = 2,
) -> np.ndarray:
    """The item's main video sampled as :func:`robojudge.video.sample_frames` does, as an array.

    Raises:
        Unmeasurable: When the video gives fewer than ``least`` frames (the item is left unscored).
    """
    frames = sample_frames(item.video, fps=fps, max_frames=max_frames, size=size, gray=gray).frames
    require_frames(frames, least)
    return frames


def gray_sequence(item: Item, cfg: GrayPreprocess) -> np.ndarray:
    """The item's main video as ``(T, H, W)`` uint8 grayscale frames, at least two of them."""
    return main_video_frames(item, fps=cfg.fps, size=(cfg.width, cfg.height), gray=True)


class NativeFrames(BaseModel):
    """Which frames a metric defined "at native rate and size" reads; the defaults keep both.

    ``size`` gives every video the same evaluation size (the longer side scaled to it, up or down;
    ``robojudge score --size``), so values of generators of different resolutions can be compared.
    ``max_side`` only caps: a video whose longer side exceeds it is scaled down to it, smaller ones
    keep their size (``--max-side``; faster on large videos, but values at different sizes stay
    different). ``max_frames`` keeps the first frames only (``--max-frames``; the rate stays native,
    so consecutive frames stay consecutive). ``size`` wins over ``max_side``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int | None = Field(default=None, gt=0, description="resize so the longer side has this many px")
    max_side: int | None = Field(
        default=None, gt=0, description="downscale when the longer side exceeds this many px",
        json_schema_extra=HASH_WHEN_SET,
    )
    max_frames: int | None = Field(
        default=None, ge=2, description="read at most this many frames, from the start",
        json_schema_extra=HASH_WHEN_SET,
    )


def evaluation_size(item: Item, cfg: NativeFrames) -> int | None:
    """The ``size`` argument of :func:`sample_frames` that ``cfg`` asks for on ``item``'s video.

    ``None`` (native) when neither ``size`` nor a ``max_side`` below the video's longer side is set;
    the video is probed only for ``max_side``, so a video that already fits shares its decode with the
    metrics that read it at native size.
    """
    if cfg.size is not None:
        return cfg.size
    if cfg.max_side is None:
        return None
    info = probe_video(item.video)
    return cfg.max_side if max(info.width, info.height) > cfg.max_side else None


def native_rgb(item: Item, cfg: NativeFrames) -> tuple[np.ndarray, float]:
    """The main video's frames as ``cfg`` asks (every frame at native size by default), ``(T, H, W, 3)``
    uint8 RGB, and the source frame rate.

    Raises:
        Unmeasurable: When the video has fewer than two frames (the item is left unscored).
    """
    sampled = sample_frames(
        item.video, fps=None, max_frames=cfg.max_frames, size=evaluation_size(item, cfg),
        spread="head" if cfg.max_frames is not None else "uniform",
    )
    require_frames(sampled.frames, 2)
    return sampled.frames, sampled.source_fps


@dataclass(frozen=True)
class FrameOptions:
    """Run-wide settings for every metric that reads frames at native rate and size (``score --size``,
    ``--max-side``, ``--max-frames``): see :class:`NativeFrames`. A metric's own setting
    (``--set METRIC.size=N``) wins over the run-wide one."""

    size: int | None = None
    max_side: int | None = None
    max_frames: int | None = None

    def __post_init__(self) -> None:
        for name in ("size", "max_side"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise ValueError(f"{name} must be a positive number of pixels, got {v}")
        if self.max_frames is not None and self.max_frames < 2:
            raise ValueError(f"max_frames must be at least 2, got {self.max_frames}")

    def values(self) -> dict[str, Any]:
        """The options that are set, as config values."""
        return {k: v for k, v in (("size", self.size), ("max_side", self.max_side),
                                  ("max_frames", self.max_frames)) if v is not None}

    def __bool__(self) -> bool:
        return bool(self.values())


def takes_frame_options(metric_id: str) -> bool:
    """Whether a metric reads frames at native rate and size, so :class:`FrameOptions` apply to it."""
    return issubclass(get_metric(metric_id).config_type, NativeFrames)
