"""What a metric returns for one item."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field


class Score(BaseModel):
    """One metric's value for one item.

    ``value`` is in the metric's native range and direction (see ``MetricSpec.higher_is_better``);
    NaN means "unscored". ``details`` holds small extra facts (frames used, per-frame values summary)
    that are stored beside the value as JSON.
    """

    value: float
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def scored(self) -> bool:
        return not math.isnan(self.value)

    @classmethod
    def unscored(cls, reason: str, **details: Any) -> Score:
        """NaN with ``details["unscored_reason"] = reason`` and the other ``details`` (coverage facts)."""
        return cls(value=math.nan, details={"unscored_reason": reason, **details})
