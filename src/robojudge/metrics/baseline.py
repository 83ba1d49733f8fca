"""Reference baselines that use no video content."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from robojudge.metrics import functional as F
from robojudge.metrics._registry import Family, metric
from robojudge.metrics._score import Score
from robojudge.suite._schema import Item


class UniformRandomConfig(BaseModel):
    """Which axis the random score stands in for, and the seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    axis: Literal["pa", "ia"] = "pa"
    seed: int = 0


@metric(
    "uniform_random",
    family=Family.baseline,
    inputs=set(),
    higher_is_better=True,
    native_range=(1.0, 5.0),
    version="1",
    citation="RoboJudge: Multimodal Language Models as Judges for Embodied Video Generation, App. B.3 "
    "(Uniform Random)",
    description="A score drawn uniformly from {1, ..., 5} per item: the chance level of a judge.",
    config=UniformRandomConfig,
)
def uniform_random(item: Item, config: UniformRandomConfig) -> Score:
    """``s ~ Uniform{1, 2, 3, 4, 5}``, seeded per item (RoboJudge App. B.3)."""
    return Score(value=float(F.uniform_score(item.item_id, config.axis, config.seed)))
