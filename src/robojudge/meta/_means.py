"""Means of many value columns per group, with stratified cluster-bootstrap percentile intervals.

The report's overview gives each stored metric's mean per generator. A Student-t interval there runs
outside the metric's range when values sit at an end of it or n is small (a 0/1 metric over three
items gets [-0.77, 2.10]). A percentile interval of bootstrap means cannot: every replicate mean
lies between the smallest and largest observed value, hence inside any range the values respect. The
draws are the same clip resamples as everywhere else in the report (:class:`ClusterBootstrap`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import FloatArray
from robojudge.meta._bootstrap import (
    ClusterBootstrap,
    constant_replicates,
    group_bootstrap,
    interval_gate,
    summarize_replicates,
)


@dataclass(frozen=True)
class GroupMean:
    """One column's mean over one group's items.

    Attributes:
        n: Items with a value.
        n_clusters: Distinct clusters (clips) among those items.
        mean: Their mean (NaN when ``n`` is 0).
        low: Lower end of the percentile interval (NaN without bootstrap or values, or withheld).
        high: Upper end.
        why: Why a mean with replicates has no interval, else None: its items lie in fewer than
            :data:`~robojudge.meta.MIN_CLUSTERS` clusters, fewer than half of the replicates drew one of
            them, or every replicate gives the same mean (:data:`~robojudge.meta.CONSTANT_WHY`); the rule
            of :func:`~robojudge.meta.interval_gate`, as everywhere else.
        n_lone_clusters: Those clusters that are alone in their stratum while other strata hold several
            (:attr:`~robojudge.meta.ClusterBootstrap.n_lone_clusters`): every replicate draws them once,
            so a shown interval is narrower than it should be (:func:`~robojudge.meta.lone_clusters_note`).
    """

    n: int
    n_clusters: int
    mean: float
    low: float = math.nan
    high: float = math.nan
    why: str | None = None
    n_lone_clusters: int = 0


def group_codes(groups: Sequence[str], n: int) -> tuple[list[str], npt.NDArray[np.intp]]:
    """The sorted group names and each item's index among them.

    Raises:
        ValueError: ``groups`` does not have one entry per item.
    """
    if len(groups) != n:
        raise ValueError(f"groups must have one entry per item ({n}), got {len(groups)}")
    names = sorted(set(groups))
    index = {g: i for i, g in enumerate(names)}
    return names, np.array([index[g] for g in groups], dtype=np.intp).reshape(n)


@dataclass(frozen=True)
class GroupSums:
    """Sums and counts of the values of one group's items, on the sample and on each replicate.

    Attributes:
        members: Indices of the group's items.
        point: ``(columns, 2)``: the sum of the finite values of each column, and their count.
        replicates: ``(B, columns, 2)``: the same on each bootstrap replicate (None without bootstrap).
    """

    members: npt.NDArray[np.intp]
    point: FloatArray
    replicates: FloatArray | None


def group_sums(values: FloatArray, code: npt.NDArray[np.intp], n_groups: int,
               boot: ClusterBootstrap | None = None,
               weights: FloatArray | None = None) -> Iterator[GroupSums]:
    """:class:`GroupSums` of each group in turn, from ``(items, columns)`` values (NaN: no value).

    One group at a time: an item belongs to one group, so an ``(items, groups, columns)`` layout
    would be mostly zeros; here the memory is that of one group's items and one group's replicates.
    A replicate's sums come from the counts of the group's clusters only (the others add nothing).
    ``weights``: ``(items, columns)`` weights of the values (the sums are then weighted sums and the
    counts sums of weights); every value weighs 1 if None.
    """
    ok = np.isfinite(values)
    filled = np.where(ok, values, 0.0)
    if weights is not None:
        w = np.where(ok, weights, 0.0)
        filled, ok = filled * w, w
    k = values.shape[1]
    for g in range(n_groups):
        members = np.flatnonzero(code == g)
        per_item = np.stack([filled[members], ok[members]], axis=-1).reshape(members.size, 2 * k)
        reps = None
        if boot is not None:
            clusters, inverse = np.unique(boot.item_cluster[members], return_inverse=True)
            sums = np.zeros((clusters.size, 2 * k))
            np.add.at(sums, inverse.reshape(-1), per_item)
            reps = (boot.counts[:, clusters].astype(np.float64) @ sums).reshape(-1, k, 2)
        yield GroupSums(members, per_item.sum(axis=0).reshape(k, 2), reps)


def ratio(sums: FloatArray) -> FloatArray:
    """Means from ``(..., 2)`` sums and counts; NaN where the count is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(sums[..., 1] > 0, sums[..., 0] / sums[..., 1], np.nan)
    return out


def group_means(values: npt.ArrayLike, groups: Sequence[str], clusters: Sequence[str] | None = None,
                strata: Sequence[str] | None = None, *, bootstrap: int = 2000, seed: int | None = 0,
                level: float = 0.95) -> dict[str, list[GroupMean]]:
    """Mean of each column of ``values`` per group, with a cluster-bootstrap percentile interval.

    Args:
        values: ``(items, columns)`` values; NaN = no value (left out, not counted).
        groups: Group per item (for example the generator).
        clusters: Cluster per item (clip); each item is its own cluster if None.
        strata: Stratum per item (source); one stratum if None. Where no cluster holds items of two
            groups, each group's clusters are drawn among its own (:func:`~robojudge.meta.group_bootstrap`).
        bootstrap: Replicates; 0 gives means without intervals.
        seed: Seed of the draws.
        level: Interval coverage.

    Returns:
        ``out[group][column]``. Replicates that drew none of a group's items for a column are
        skipped for that cell. A cell has no interval, and says why (``GroupMean.why``), where
        :func:`~robojudge.meta.interval_gate` withholds it: values in fewer than
        :data:`~robojudge.meta.MIN_CLUSTERS` clusters (one or two clips can only be recombined), defined
        in fewer than half of the replicates, or all alike (every replicate gives one mean).
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    n, k = x.shape
    names, code = group_codes(groups, n)
    ok = np.isfinite(x)
    cl = np.asarray(clusters if clusters is not None else [str(i) for i in range(n)], dtype=object)
    # Groups sharing no clip are drawn each among its own clips, as on the leaderboard (group_bootstrap).
    boot = group_bootstrap(cl, list(groups), strata, bootstrap, seed)[0] if bootstrap > 0 and n else None
    out: dict[str, list[GroupMean]] = {}
    for g, sums in zip(names, group_sums(x, code, len(names), boot), strict=True):
        mean = ratio(sums.point)
        low = high = np.full(k, np.nan)
        why: list[str | None] = [None] * k
        held = [sums.members[ok[sums.members, c]] for c in range(k)]  # each column's items with a value
        n_clusters = np.array([len(set(cl[mine])) for mine in held])
        lone = np.zeros(k, dtype=np.intp)
        if sums.replicates is not None and boot is not None:
            reps = ratio(sums.replicates).T
            low, high, _ = summarize_replicates(reps, level)
            # One or two clips, a cell most replicates miss, or every value alike (all 1 on a 0/1 metric):
            # no interval, by the rule of every other interval (interval_gate). A column without values
            # has no mean either, so no reason is given there.
            keep, reasons, _ = interval_gate(np.isfinite(reps).sum(axis=1), n_clusters, boot.n_replicates,
                                             constant=constant_replicates(reps),
                                             one_per_stratum=boot.one_per_stratum)
            low, high = (np.where(keep, x, np.nan) for x in (low, high))
            why = [None if mine.size == 0 else r for mine, r in zip(held, reasons, strict=True)]
            lone = np.array([int(boot.lone_cluster[np.unique(boot.item_cluster[mine])].sum())
                             for mine in held])
        out[g] = [GroupMean(int(held[c].size), int(n_clusters[c]), float(mean[c]), float(low[c]),
                            float(high[c]), why[c], int(lone[c])) for c in range(k)]
    return out
