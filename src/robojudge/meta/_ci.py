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


def clustered_mean_interval(clusters: Sequence[Sequence[float]], level: float = 0.95) -> MeanCI:
    """Mean of all values of ``clusters`` (one sequence of values per cluster, e.g. a clip's rollouts) and
    a Student-t interval centred on it with a cluster-robust (CR1) standard error:

    ``se = sqrt(k / (k - 1) * sum_c (sum_{i in c} (x_i - mean))^2) / n`` over ``n`` values in ``k``
    clusters, and ``mean +- t_{(1+level)/2, k-1} * se``.

    With one value per cluster this is :func:`mean_confidence_interval`; with clusters of equal size it
    is the t-interval of the cluster means. Unlike that one it stays centred on the mean of the values
    when clusters hold different numbers of values. NaNs are dropped; a cluster left empty does not
    count. ``std`` is that of the values. Fewer than two clusters give a NaN interval.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    parts = [x[~np.isnan(x)] for x in (np.asarray(c, dtype=float) for c in clusters)]
    parts = [x for x in parts if x.size]
    every = np.concatenate(parts) if parts else np.zeros(0)
    n, k = int(every.size), len(parts)
    if n == 0:
        return MeanCI(0, math.nan, math.nan, math.nan, math.nan, level)
    mean = float(every.mean())
    std = float(every.std(ddof=1)) if n > 1 else math.nan
    if k < 2:
        return MeanCI(n, mean, std, math.nan, math.nan, level)
    totals = np.array([float((x - mean).sum()) for x in parts])
    se = math.sqrt(k / (k - 1) * float((totals ** 2).sum())) / n
    half = float(stats.t.ppf((1 + level) / 2, df=k - 1)) * se
    return MeanCI(n, mean, std, mean - half, mean + half, level)
