"""Frame preprocessing shared by metrics, so equal settings mean one decode per item."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import require_frames
from robojudge.suite._schema import Item
from robojudge.video import sample_frames


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
