"""RoboPhys-3D aesthetic quality by the HPSv3 human-preference reward (``aq_hpsv3``).

RoboPhys-3D App. B.1.2 lists HPSv3 on ``[0, 1]`` (higher is better) as "wide-spectrum human preference
using the human preference score v3 (HPSv3) reward model, percentile-normalized across the evaluated
model pool". The paper gives no frame protocol and no prompt; robojudge's choices, stated here:

* frames: ``max_frames`` (4 by default) spread evenly over the whole video, first and last included,
  at native size (HPSv3's own resize brings each to about 256 x 28 x 28 pixels);
* prompt: the item's instruction, as HPSv3's ``text_prompt`` (the text the video was generated from);
* value: the mean over frames of HPSv3's ``mu`` (``rewards[:, 0]`` in the official inference code), the
  raw reward, unbounded; ``sigma`` (its uncertainty) is reported in the details.

The raw reward is not on ``[0, 1]``: App. B.5 maps it there by its percentile among the evaluated
models' values, which is a property of the pool and so belongs to the aggregate layer, not to one
item's score. The network is robojudge's port of HPSv3 onto transformers 5
(:func:`robojudge.models.load_hpsv3`); it runs in bfloat16 as HPSv3 does unless ``dtype`` says otherwise.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import require_motion
from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._frames import main_video_frames
from robojudge.metrics._registry import Family, Input, Provider
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.models import HPSV3, QWEN2_VL_7B_INSTRUCT
from robojudge.suite._schema import Item

METRIC = "aq_hpsv3"


class HPSv3Sampling(BaseModel):
    """Which frames HPSv3 scores, and how. The paper gives no frame protocol (robojudge's choice)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_frames: int = Field(default=4, ge=1, description="frames spread evenly over the video, ends included")
    batch_size: int = Field(default=4, ge=1, description="frames per forward pass")
    dtype: Literal["bfloat16", "float16", "float32"] = Field(
        default="bfloat16", description="backbone precision (HPSv3 runs in bfloat16; the head is float32)"
    )


def instruction_of(item: Item) -> str:
    """The item's instruction, HPSv3's text prompt.

    Raises:
        MetricInputError: The item has none (names the item).
    """
    if not item.instruction or not item.instruction.strip():
        raise MetricInputError(f"item {item.item_id!r} has no instruction: {METRIC} scores the frames "
                               "against it as HPSv3's text prompt (set 'instruction' in the manifest)")
    return item.instruction


@robophys_metric(
    METRIC,
    family=Family.quality,
    inputs={Input.video, Input.instruction},
    description=(
        "HPSv3 reward (Qwen2-VL-7B reward model, robojudge's port to transformers 5): mean mu over frames "
        "spread evenly over the video (4 by default), each scored against the item's instruction; raw "
        "reward, to be percentile-normalised over the evaluated pool (App. B.1.2)."
    ),
    provider=Provider.model,
    config=HPSv3Sampling,
    note="Ma et al., HPSv3, ICCV 2025 (MizzenAI/HPSv3); frames and prompt are robojudge's choice",
    weights=(QWEN2_VL_7B_INSTRUCT.name, HPSV3.name),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
)
def aq_hpsv3(item: Item, config: HPSv3Sampling) -> Score:
    """RoboPhys-3D HPSv3: ``mean_t mu(I_t, instruction)`` over the sampled frames (see the module doc)."""
    from robojudge.models import hpsv3_rewards, load_hpsv3

    prompt = instruction_of(item)
    # A one-frame or still video is unscored before the 7B network loads: its frames could earn the
    # reward a good rollout earns.
    frames = main_video_frames(item, fps=None, max_frames=config.max_frames)
    require_motion(frames)
    net = load_hpsv3(metric=METRIC, dtype=config.dtype)
    rewards = hpsv3_rewards(net, list(frames), [prompt] * len(frames), batch_size=config.batch_size)
    mu, sigma = rewards[:, 0], rewards[:, 1]
    return Score(value=float(np.mean(mu)), details={
        "frames": len(mu), "sigma_mean": float(np.mean(sigma)), "min_frame": float(mu.min()),
        "max_frame": float(mu.max()),
    })


__all__ = ["HPSv3Sampling", "aq_hpsv3", "instruction_of"]
