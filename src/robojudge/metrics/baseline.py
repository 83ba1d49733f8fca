"""Reference baselines that use no video content."""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from robojudge.metrics._registry import Family, metric
from robojudge.metrics._score import Score
from robojudge.suite._schema import Item


class UniformRandomConfig(BaseModel):
    """Which axis the random score stands in for, and the seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    axis: Literal["pa", "ia"] = "pa"
    seed: int = 0


def uniform_score(item_id: str, axis: str, seed: int) -> int:
    """An integer in 1..5, uniform, fixed by (seed, axis, item id) so reruns and workers agree."""
    digest = hashlib.sha256(f"{seed}\0{axis}\0{item_id}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return int(rng.integers(1, 6))


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
    return Score(value=float(uniform_score(item.item_id, config.axis, config.seed)))
