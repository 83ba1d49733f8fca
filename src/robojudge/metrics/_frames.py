"""Frame preprocessing shared by metrics, so equal settings mean one decode per item."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._errors import MetricInputError
from robojudge.suite._schema import Item
from robojudge.video import sample_frames


class GrayPreprocess(BaseModel):
    """Decode rate and size of a grayscale frame sequence; defaults are RoboJudge App. B.3's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float = Field(default=8.0, gt=0, description="decode rate in frames per second")
    width: int = Field(default=256, gt=0, description="frames are resized to width x height")
    height: int = Field(default=256, gt=0)


def gray_sequence(item: Item, cfg: GrayPreprocess) -> np.ndarray:
    """The item's main video as ``(T, H, W)`` uint8 grayscale frames, at least two of them."""
    frames = sample_frames(item.video, fps=cfg.fps, max_frames=None, size=(cfg.width, cfg.height), gray=True)
    if len(frames) < 2:
        raise MetricInputError(f"needs at least 2 frames, the video gave {len(frames)}")
    return frames.frames
