"""Confidence intervals for a mean."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class MeanCI:
    """Sample mean with a two-sided Student-t confidence interval."""

    n: int
    mean: float
    std: float
    low: float
    high: float
    level: float


def mean_confidence_interval(values: Sequence[float] | np.ndarray, level: float = 0.95) -> MeanCI:
    """Mean of ``values`` and its Student-t interval ``mean +- t_{(1+level)/2, n-1} * s / sqrt(n)``.

    NaNs are dropped first. With one value the interval is undefined and returned as NaN; with none,
    every field but ``n`` is NaN.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return MeanCI(0, math.nan, math.nan, math.nan, math.nan, level)
    mean = float(x.mean())
    if n == 1:
        return MeanCI(1, mean, math.nan, math.nan, math.nan, level)
    std = float(x.std(ddof=1))
    half = float(stats.t.ppf((1 + level) / 2, df=n - 1)) * std / math.sqrt(n)
    return MeanCI(n, mean, std, mean - half, mean + half, level)
