"""Means of many value columns per group, with stratified cluster-bootstrap percentile intervals.

The report's overview gives each stored metric's mean per generator. A Student-t interval there runs
outside the metric's range when values sit at an end of it or n is small (a 0/1 metric over three
items gets [-0.77, 2.10]). A percentile interval of bootstrap means cannot: every replicate mean
lies between the smallest and largest observed value, hence inside any range the values respect. The
draws are the same clip resamples as everywhere else in the report (:class:`ClusterBootstrap`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import FloatArray
from robojudge.meta._bootstrap import ClusterBootstrap, summarize_replicates


@dataclass(frozen=True)
class GroupMean:
    """One column's mean over one group's items.

    Attributes:
        n: Items with a value.
        n_clusters: Distinct clusters (clips) among those items.
        mean: Their mean (NaN when ``n`` is 0).
        low: Lower end of the percentile interval (NaN without bootstrap or values).
        high: Upper end.
    """

    n: int
    n_clusters: int
    mean: float
    low: float = math.nan
    high: float = math.nan


def group_means(values: npt.ArrayLike, groups: Sequence[str], clusters: Sequence[str] | None = None,
                strata: Sequence[str] | None = None, *, bootstrap: int = 2000, seed: int | None = 0,
                level: float = 0.95) -> dict[str, list[GroupMean]]:
    """Mean of each column of ``values`` per group, with a cluster-bootstrap percentile interval.

    Args:
        values: ``(items, columns)`` values; NaN = no value (left out, not counted).
        groups: Group per item (for example the generator).
        clusters: Cluster per item (clip); each item is its own cluster if None.
        strata: Stratum per item (source); one stratum if None.
        bootstrap: Replicates; 0 gives means without intervals.
        seed: Seed of the draws.
        level: Interval coverage.

    Returns:
        ``out[group][column]``. Replicates that drew none of a group's items for a column are
        skipped for that cell.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    n, k = x.shape
    if len(groups) != n:
        raise ValueError(f"groups must have one entry per item ({n}), got {len(groups)}")
    names = sorted(set(groups))
    code = np.array([names.index(g) for g in groups], dtype=np.intp)
    ok = np.isfinite(x)
    per_item = np.zeros((n, len(names), k, 2))
    rows = np.arange(n)
    per_item[rows, code, :, 0] = np.where(ok, x, 0.0)
    per_item[rows, code, :, 1] = ok
    flat = per_item.reshape(n, -1)
    totals = flat.sum(axis=0).reshape(len(names), k, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(totals[..., 1] > 0, totals[..., 0] / totals[..., 1], np.nan)
    cl = np.asarray(clusters if clusters is not None else [str(i) for i in range(n)], dtype=object)
    low = np.full_like(mean, np.nan)
    high = np.full_like(mean, np.nan)
    if bootstrap > 0 and n:
        boot = ClusterBootstrap(cl, strata, bootstrap, seed)
        sums = (boot.counts.astype(np.float64) @ boot.cluster_sums(flat)).reshape(-1, len(names), k, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps: FloatArray = np.where(sums[..., 1] > 0, sums[..., 0] / sums[..., 1], np.nan)
        low, high, _ = summarize_replicates(np.moveaxis(reps, 0, -1), level)
    out: dict[str, list[GroupMean]] = {}
    for gi, g in enumerate(names):
        cells = []
        for c in range(k):
            mask = (code == gi) & ok[:, c]
            cells.append(GroupMean(int(mask.sum()), len(set(cl[mask])), float(mean[gi, c]),
                                   float(low[gi, c]), float(high[gi, c])))
        out[g] = cells
    return out
