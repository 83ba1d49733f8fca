"""Paired, stratified cluster bootstrap of judge-human agreement (RoboJudge App. E.1).

Each replicate draws, inside every stratum (source corpus), as many clusters (source clips) as the
stratum has, with replacement, and keeps every item of a drawn cluster as often as the cluster was
drawn. The same draw serves every judge, so differences between judges are paired. Intervals are
percentile intervals of the replicate statistics.

A replicate is represented by item weights (how often each item was drawn); see
:mod:`robojudge.meta._weighted` for how statistics are computed from weights for all replicates at
once.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED, PAPER_REPLICATES
from robojudge.meta._agreement import MIN_CORRELATION_PAIRS, FloatArray

IntMatrix = npt.NDArray[np.int32]

#: An interval needs scored items in at least this many clusters: with one or two, the replicates
#: can only recombine those few clusters and the percentile interval is (nearly) a point.
MIN_CLUSTERS = 3

#: A correlation's interval needs more. A replicate that draws fewer than 3 distinct clusters has no
#: correlation (:func:`few_clusters_drawn`); with three one-item clusters only the draws of all three are
#: left, each giving the point estimate, and with four a third of the draws go. With five 9.8% go
#: (docs/meta.md, "Paired cluster bootstrap").
MIN_CORRELATION_CLUSTERS = 5

#: Below this many clusters an interval that passes the gates is still only approximate: simulated at
#: 10-20 clusters, nominal 95% percentile intervals held the truth 88-91% of the time for the median
#: statistic but only 79-87% for the worst (MSE, within-one), MSE 65-78% over 10 one-item clusters, and
#: about 94% at 80 (docs/meta.md, "How far to trust an interval"). Tables mark such cells; the interval is
#: unchanged.
APPROXIMATE_CLUSTERS = 30

#: Why a cell whose defined replicates all give one value has no interval (:func:`interval_gate`), where
#: neither of the two causes below is known.
CONSTANT_WHY = ("every resample gives the same value (e.g. every clip agrees exactly, or the statistic sits "
                "at a bound), so the bootstrap cannot measure its uncertainty; no interval is shown, even "
                "where that value is exact")

#: :data:`CONSTANT_WHY` where the value is at the statistic's bound (r = 1, an accuracy of 0 or 1, an
#: error of 0).
AT_BOUND_WHY = ("every resample gives the same value (the statistic is at its bound on every clip), so the "
                "bootstrap cannot measure its uncertainty; no interval is shown, even where that value is "
                "exact")

#: :data:`CONSTANT_WHY` where every stratum holds a single cluster, so that every resample draws each
#: cluster once (:attr:`ClusterBootstrap.one_per_stratum`).
ONE_PER_STRATUM_WHY = ("each source holds one clip: a stratified resample is the sample itself, so the "
                       "bootstrap cannot measure the uncertainty; pass fewer strata or none")

def lone_clusters_note(n_lone: int, n_clusters: int) -> str:
    """The sentence under a table whose stratified bootstrap had ``n_lone`` of its ``n_clusters`` clips
    alone in their source (:attr:`ClusterBootstrap.n_lone_clusters`), or "" where none was.

    A stratum is resampled within itself, so its only clip is drawn once in every replicate: the interval
    then varies only the other clips and comes out narrower than the data support."""
    if n_lone <= 0:
        return ""
    what = ("clips is the only clip of its source: a stratified resample keeps it once, so the intervals "
            "leave out its" if n_lone == 1 else "clips are each the only clip of their source: a stratified "
            "resample keeps each of them once, so the intervals leave out their")
    return (f"{n_lone} of {n_clusters} {what} part of the uncertainty and are narrower than they should be "
            "(merge small sources, or give no strata)")


#: Every reason :func:`interval_gate` gives for a cell whose replicates all give one value.
CONSTANT_WHYS = (CONSTANT_WHY, AT_BOUND_WHY, ONE_PER_STRATUM_WHY)


def _codes(labels: npt.ArrayLike, n: int, name: str) -> npt.NDArray[np.intp]:
    arr = np.asarray(labels)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one entry per item ({n}), got shape {arr.shape}")
    _, codes = np.unique(arr, return_inverse=True)
    return codes.reshape(-1)


@dataclass(frozen=True)
class HeldClusters:
    """:meth:`ClusterBootstrap.held_clusters`: the distinct sets of clusters, as ``(n_clusters, u)``
    float32 indicator columns, and which of them each asked column holds (``inverse``)."""

    columns: npt.NDArray[np.float32]
    inverse: npt.NDArray[np.intp]


class ClusterBootstrap:
    """Cluster multiplicities for ``n_replicates`` stratified cluster resamples.

    Args:
        clusters: Cluster label per item (e.g. ``clip_id``).
        strata: Stratum label per item (e.g. ``source``); one stratum if None. A cluster must lie
            in a single stratum.
        n_replicates: Number of replicates ``B`` (default App. E.1's 10,000).
        seed: Seed for ``numpy.random.default_rng``; the default is RoboJudge App. E.1's
            (:data:`robojudge.DEFAULT_SEED`), so the same call draws the same replicates. None draws
            fresh ones from the operating system's entropy.

    Attributes:
        counts: ``(B, n_clusters)`` how many times each cluster was drawn in each replicate.
        item_cluster: Cluster index of each item.
        one_per_stratum: Every stratum holds exactly one cluster (e.g. every clip its own ``source``):
            each replicate then draws every cluster once and equals the sample.
        n_lone_clusters: Clusters alone in their stratum while other strata hold several (0 where every
            stratum holds one: ``one_per_stratum``). Every replicate draws each of them once, so the
            intervals leave out their share of the uncertainty (:func:`lone_clusters_note`).
        lone_cluster: ``(n_clusters,)``: which clusters those are.
    """

    def __init__(self, clusters: npt.ArrayLike, strata: npt.ArrayLike | None = None,
                 n_replicates: int = PAPER_REPLICATES, seed: int | None = DEFAULT_SEED) -> None:
        n = int(np.asarray(clusters).shape[0])
        if n_replicates < 1:
            raise ValueError(f"n_replicates must be >= 1, got {n_replicates}")
        self.item_cluster = _codes(clusters, n, "clusters")
        n_clusters = int(self.item_cluster.max()) + 1 if n else 0
        stratum_of_item = np.zeros(n, dtype=np.intp) if strata is None else _codes(strata, n, "strata")
        stratum_of_cluster = np.full(n_clusters, -1, dtype=np.intp)
        stratum_of_cluster[self.item_cluster] = stratum_of_item
        split = np.flatnonzero(stratum_of_cluster[self.item_cluster] != stratum_of_item)
        if split.size:
            i = int(split[0])
            c = self.item_cluster[i]
            other = np.flatnonzero((self.item_cluster == c) & (stratum_of_item == stratum_of_cluster[c]))
            a, b = sorted((i, int(other[0])))
            labels = np.asarray(clusters).tolist()
            layers = [0] * n if strata is None else np.asarray(strata).tolist()
            raise ValueError(f"cluster {labels[i]!r} spans more than one stratum: the items at positions {a} "
                             f"and {b} (0-based) are in strata {layers[a]!r} and {layers[b]!r}")
        rng = np.random.default_rng(seed)
        self.counts: IntMatrix = np.zeros((n_replicates, n_clusters), dtype=np.int32)
        for s in np.unique(stratum_of_cluster):
            members = np.flatnonzero(stratum_of_cluster == s)
            k = members.size
            self.counts[:, members] = rng.multinomial(k, np.full(k, 1.0 / k), size=n_replicates)
        self.n_replicates = n_replicates
        self.n_clusters = n_clusters
        self.n_strata = int(np.unique(stratum_of_cluster).size)
        self.one_per_stratum = n_clusters > 0 and self.n_strata == n_clusters
        sizes = np.bincount(stratum_of_cluster, minlength=1) if n_clusters else np.zeros(1, dtype=np.intp)
        self.lone_cluster: npt.NDArray[np.bool_] = (np.zeros(n_clusters, dtype=bool) if self.one_per_stratum
                                                    else sizes[stratum_of_cluster] == 1)
        self.n_lone_clusters = int(self.lone_cluster.sum())

    def count_strata(self, strata: npt.ArrayLike | None) -> None:
        """Count :attr:`n_strata` and the lone clusters against ``strata`` (one per item; one stratum if
        None), which the strata drawn within split further (:func:`group_bootstrap`): a cluster stays lone
        where it is alone in its stratum there, as in the draws, since only there is it drawn once in
        every replicate."""
        n = self.item_cluster.size
        of_item = np.zeros(n, dtype=np.intp) if strata is None else _codes(strata, n, "strata")
        of_cluster = np.zeros(self.n_clusters, dtype=np.intp)
        of_cluster[self.item_cluster] = of_item
        self.n_strata = int(np.unique(of_cluster).size) if self.n_clusters else 0
        sizes = np.bincount(of_cluster, minlength=1)
        alone = (np.zeros(self.n_clusters, dtype=bool) if self.n_strata == self.n_clusters
                 else sizes[of_cluster] == 1)
        self.lone_cluster = self.lone_cluster & alone
        self.n_lone_clusters = int(self.lone_cluster.sum())

    def count_chunks(self, chunk: int = 2000) -> Iterator[tuple[slice, IntMatrix]]:
        """Yield ``(rows, counts[rows])`` in blocks of at most ``chunk`` replicates."""
        for start in range(0, self.n_replicates, chunk):
            rows = slice(start, min(start + chunk, self.n_replicates))
            yield rows, self.counts[rows]

    def item_weights(self, counts: IntMatrix) -> FloatArray:
        """Item multiplicities ``(rows, n_items)`` for a block of cluster ``counts``."""
        return counts[:, self.item_cluster].astype(np.float64)

    def item_weights_t(self, counts: IntMatrix) -> FloatArray:
        """The transpose of :meth:`item_weights`, ``(n_items, rows)``, built contiguous."""
        return np.ascontiguousarray(counts.T)[self.item_cluster].astype(np.float64)

    def held_clusters(self, items: npt.NDArray[np.bool_]) -> HeldClusters:
        """The clusters holding an item of each column of ``items`` (``(n_items, k)`` booleans), for
        :meth:`distinct_drawn` to count in many blocks of replicates without finding them again."""
        held = self.cluster_sums(np.asarray(items, dtype=np.float32)) > 0
        # Columns with the same clusters (judges scored on the same items) share one product.
        cols, inverse = np.unique(held, axis=1, return_inverse=True)
        return HeldClusters(cols.astype(np.float32), inverse.reshape(-1))

    def distinct_drawn(self, counts: IntMatrix, items: npt.NDArray[np.bool_] | HeldClusters) -> IntMatrix:
        """``(rows, k)``: how many distinct clusters holding an item of each column of ``items``
        (``(n_items, k)`` booleans, or their :meth:`held_clusters`) each replicate of the block ``counts``
        drew."""
        held = items if isinstance(items, HeldClusters) else self.held_clusters(items)
        # float32 for BLAS: the sums are counts of clusters, small integers, so exact.
        drawn = ((counts > 0).astype(np.float32) @ held.columns).astype(np.int32)
        return drawn[:, held.inverse]

    def cluster_sums(self, per_item: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Sum the rows of an ``(n_items, k)`` matrix within clusters: ``(n_clusters, k)``.

        Then ``counts @ cluster_sums(V)`` equals ``item_weights(counts) @ V`` with fewer operations.
        """
        out = np.zeros((self.n_clusters, per_item.shape[1]), dtype=per_item.dtype)
        np.add.at(out, self.item_cluster, per_item)
        return out


#: Fewest clips a (source, generator) cell needs for :func:`group_bootstrap` to resample it on its own;
#: a generator with a smaller cell is resampled over all its sources at once.
MIN_CELL_CLUSTERS = 2


def group_bootstrap(clusters: npt.ArrayLike, groups: npt.ArrayLike, strata: npt.ArrayLike | None = None,
                    n_replicates: int = PAPER_REPLICATES, seed: int | None = DEFAULT_SEED
                    ) -> tuple[ClusterBootstrap, bool]:
    """The :class:`ClusterBootstrap` of means compared across ``groups`` (generators), and whether those
    groups are independent samples; the leaderboard, the report's overview and its RoboPhys-3D intervals
    all draw through it, so one seed gives them the same replicates.

    Where some cluster (clip) holds items of two groups, the clusters are drawn within ``strata`` only,
    as :class:`ClusterBootstrap` does, and the groups are compared on the same draws. Where none does (own
    clips, or items without ``clip_id``, each its own cluster) and two groups or more are present, the
    groups share nothing to pair, and each group's clusters are drawn among its own: a group keeps its
    number of clips in every replicate instead of a count that varies with the draw. Within a group the
    clusters are drawn per stratum where each of the group's strata holds at least
    :data:`MIN_CELL_CLUSTERS` of them; otherwise over all the group's strata at once, so that no
    (stratum, group) cell of one clip is held fixed in every replicate.

    ``n_strata``, ``lone_cluster`` and ``n_lone_clusters`` of the result count the caller's strata, not
    those internal cells: a lone cluster is alone in its stratum (source) and also drawn once in every
    replicate. ``one_per_stratum`` stays that of the draws.
    """
    cl = np.asarray(clusters)
    n = int(cl.shape[0]) if cl.ndim else 0
    cluster, group = _codes(cl, n, "clusters"), _codes(_as_labels(groups, n, "groups"), n, "groups")
    layer = [""] * n if strata is None else _as_labels(strata, n, "strata").tolist()
    n_groups = int(group.max()) + 1 if n else 0
    if not _independent(cluster, group):
        return ClusterBootstrap(cl, strata, n_replicates, seed), False
    cells: dict[tuple[int, str], set[int]] = {}
    for c, g, s in zip(cluster.tolist(), group.tolist(), layer, strict=True):
        cells.setdefault((g, s), set()).add(c)
    split = np.ones(n_groups, dtype=bool)
    for (g, _), members in cells.items():
        split[g] &= len(members) >= MIN_CELL_CLUSTERS
    # "g\x1fs" for a group drawn per stratum, "g\x1e" for one drawn over all its strata: never equal.
    drawn = [f"{g}\x1f{s}" if split[g] else f"{g}\x1e" for g, s in zip(group.tolist(), layer, strict=True)]
    boot = ClusterBootstrap(cl, drawn, n_replicates, seed)
    boot.count_strata(strata)
    return boot, True


def independent_groups(clusters: npt.ArrayLike, groups: npt.ArrayLike) -> bool:
    """Whether two groups or more are present and no cluster holds items of two of them: the rule by which
    :func:`group_bootstrap` draws each group's clusters among its own."""
    n = int(np.asarray(clusters).shape[0])
    return _independent(_codes(clusters, n, "clusters"), _codes(_as_labels(groups, n, "groups"), n, "groups"))


def _independent(cluster: npt.NDArray[np.intp], group: npt.NDArray[np.intp]) -> bool:
    if cluster.size == 0 or int(group.max()) < 1:
        return False
    pairs = np.unique(np.stack([cluster, group]), axis=1)
    return bool(pairs.shape[1] == int(cluster.max()) + 1)


def _as_labels(labels: npt.ArrayLike, n: int, name: str) -> npt.NDArray[Any]:
    arr = np.asarray(labels, dtype=object)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one entry per item ({n}), got shape {arr.shape}")
    return np.asarray([str(x) for x in arr.tolist()], dtype=object)


def summarize_replicates(replicates: FloatArray, level: float = 0.95
                         ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Percentile interval and standard error along the last axis, skipping NaN (undefined) replicates.

    The quantiles interpolate linearly between order statistics, as NumPy's default
    ``numpy.quantile`` method does; entries with no defined replicate give NaN.

    Returns:
        ``(low, high, se)``, each shaped like ``replicates.shape[:-1]``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    shape = replicates.shape[:-1]
    flat = np.sort(replicates.reshape(-1, replicates.shape[-1]), axis=1)  # NaN sorts last
    valid = (~np.isnan(flat)).sum(axis=1)
    rows = np.arange(flat.shape[0])
    last = np.maximum(valid - 1, 0)
    ends = []
    for q in ((1 - level) / 2, (1 + level) / 2):
        pos = last * q
        lo_i = np.floor(pos).astype(np.intp)
        frac = pos - lo_i
        v = flat[rows, lo_i] * (1 - frac) + flat[rows, np.minimum(lo_i + 1, last)] * frac
        ends.append(np.where(valid > 0, v, np.nan).reshape(shape))
    if np.all(valid == flat.shape[1]):
        se = flat.std(axis=1, ddof=1) if flat.shape[1] > 1 else np.full(flat.shape[0], np.nan)
    else:
        ok = ~np.isnan(flat)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(ok, flat, 0.0).sum(axis=1) / valid
            var = (np.where(ok, flat - mean[:, None], 0.0) ** 2).sum(axis=1) / (valid - 1)
        se = np.where(valid > 1, np.sqrt(var), np.nan)
    return ends[0], ends[1], se.reshape(shape)


def percentile_interval(replicates: FloatArray, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
    """Percentile interval along the last axis, ignoring NaN; see :func:`summarize_replicates`."""
    low, high, _ = summarize_replicates(replicates, level)
    return low, high


def constant_replicates(replicates: FloatArray) -> npt.NDArray[np.bool_]:
    """Whether all defined (non-NaN) replicates along the last axis are equal, per entry, up to rounding
    (relative and absolute ``1e-12``: a Pearson r of a judge equal to the labels comes out as 1 give or
    take a few ulps); False where none is defined. Such a percentile interval has zero width
    (:func:`interval_gate` withholds it)."""
    reps = np.asarray(replicates, dtype=np.float64)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row: no defined replicate
        top = np.nanmax(reps, axis=-1)
        bottom = np.nanmin(reps, axis=-1)
    out: npt.NDArray[np.bool_] = np.isfinite(top) & np.isclose(top, bottom, rtol=1e-12, atol=1e-12)
    return out


def constant_why(at_bound: bool = False, one_per_stratum: bool = False) -> str:
    """The reason a cell whose replicates all give one value has no interval (see :func:`interval_gate`)."""
    if one_per_stratum:
        return ONE_PER_STRATUM_WHY
    return AT_BOUND_WHY if at_bound else CONSTANT_WHY


def few_clusters_drawn(drawn: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.bool_]:
    """Replicates whose correlation is left undefined: they drew fewer than 3 distinct clusters
    (``drawn``, as :meth:`ClusterBootstrap.distinct_drawn` counts them). Two distinct one-item clusters
    give r = +-1 whatever the data, as two pairs do in the point estimate
    (:data:`~robojudge.meta._agreement.MIN_CORRELATION_PAIRS`)."""
    return np.asarray(drawn) < MIN_CORRELATION_PAIRS


def interval_gate(valid: npt.NDArray[np.int64], clusters: npt.NDArray[np.int64], n_replicates: int,
                  correlation: bool | npt.NDArray[np.bool_] = False,
                  constant: bool | npt.NDArray[np.bool_] = False,
                  at_bound: bool | npt.NDArray[np.bool_] = False, one_per_stratum: bool = False
                  ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.object_], npt.NDArray[np.object_]]:
    """Which bootstrapped cells may show an interval, why the others may not, and partial replicate counts.

    A cell needs scored items in at least :data:`MIN_CLUSTERS` clusters (a correlation, where
    ``correlation`` is true: :data:`MIN_CORRELATION_CLUSTERS`) and a defined statistic in at least half
    of the replicates. A cell that passes both but whose defined replicates all give one value
    (``constant``, from :func:`constant_replicates`) gets none either: its percentile interval would
    have zero width. Its reason is :data:`ONE_PER_STRATUM_WHY` where ``one_per_stratum`` (the
    bootstrap's :attr:`ClusterBootstrap.one_per_stratum`), else :data:`AT_BOUND_WHY` where ``at_bound``
    (the value is at the statistic's bound), else :data:`CONSTANT_WHY`. ``valid`` (replicates where the
    statistic is defined), ``clusters`` (clusters holding the cell's scored items), ``correlation``,
    ``constant`` and ``at_bound`` broadcast against each other.

    Returns:
        ``(keep, why, used)``: a boolean mask, the reason per cell (None where kept) and the replicates
        used per cell (None where all were, or where no interval is shown).
    """
    valid, clusters, corr, flat, bound = np.broadcast_arrays(np.asarray(valid), np.asarray(clusters),
                                                             np.asarray(correlation), np.asarray(constant),
                                                             np.asarray(at_bound))
    need = np.where(corr, MIN_CORRELATION_CLUSTERS, MIN_CLUSTERS)
    few_clusters = clusters < need
    few_reps = valid * 2 < n_replicates
    keep = ~few_clusters & ~few_reps & ~flat
    why = np.full(valid.shape, None, dtype=object)
    used = np.full(valid.shape, None, dtype=object)
    for idx in np.ndindex(valid.shape):
        if few_clusters[idx]:
            what = "a correlation's interval" if corr[idx] else "an interval"
            why[idx] = (f"scored items in {int(clusters[idx])} cluster(s); {what} needs at least "
                        f"{int(need[idx])}")
        elif few_reps[idx]:
            why[idx] = f"defined in {int(valid[idx])} of {n_replicates} replicates; an interval needs half"
        elif flat[idx]:
            why[idx] = constant_why(bool(bound[idx]), one_per_stratum)
        elif valid[idx] < n_replicates:
            used[idx] = int(valid[idx])
    return keep, why, used
