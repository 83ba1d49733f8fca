"""Agreement of several judges with human scores, per axis and Overall, with bootstrap intervals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED, PAPER_REPLICATES
from robojudge.meta._agreement import (
    DEFAULT_SCALE,
    AxisStats,
    FloatArray,
    as_float_vector,
    axis_stats,
    confusion_matrix,
    pooled_stats,
)
from robojudge.meta._bootstrap import (
    ClusterBootstrap,
    constant_replicates,
    few_clusters_drawn,
    interval_gate,
    summarize_replicates,
)
from robojudge.meta._weighted import (
    EXACT_RANK_WEIGHT,
    N_MOMENTS,
    RankCorrelation,
    StackedRanks,
    moment_columns,
    stats_from_sums,
)

#: Key of the pooled Overall next to the axis names.
OVERALL = "overall"
#: Statistics in a report, in order. Kendall's tau has a point estimate only.
STATISTICS = ("pearson", "spearman", "kendall", "exact", "within_one", "mse", "mae", "bias")
_BOOT = ("pearson", "spearman", "exact", "within_one", "mse", "mae", "bias")
_BOOT_COLS = [STATISTICS.index(k) for k in _BOOT]
#: Judge pairs whose replicate differences are held in memory at once.
_PAIR_BLOCK = 16
_CORRELATIONS = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap percentile interval and standard error (NaN if none).

    ``why`` says why a bootstrapped statistic has no interval (too few clusters, too few replicates
    where it is defined), or why a correlation has no value (too few pairs, a constant side);
    ``replicates`` is the number of replicates its interval rests on when that is fewer than were drawn
    (None: all of them, or no bootstrap).
    """

    value: float
    low: float = math.nan
    high: float = math.nan
    se: float = math.nan
    why: str | None = None
    replicates: int | None = None


@dataclass(frozen=True)
class CellReport:
    """One judge on one axis (or the Overall): counts, statistics and, per axis, the confusion matrix.

    ``n`` counts items with both a prediction and a human score; ``n_unscored`` counts human-labelled
    items the judge left unscored (NaN), which are excluded, not counted as wrong.
    """

    n: int
    n_unscored: int
    stats: dict[str, Estimate]
    confusion: list[list[int]] | None = None


@dataclass(frozen=True)
class AgreementReport:
    """Output of :func:`agreement_table`.

    Attributes:
        cells: ``cells[judge][axis or "overall"]``.
        differences: ``differences[(judge_a, judge_b)][axis or "overall"][statistic]``, the estimate
            of ``a - b`` on the items both judges scored, with the interval of the paired replicate
            differences.
        shared: ``shared[(judge_a, judge_b)][axis or "overall"]``, the items (Overall: pairs over the
            axes) both judges scored, on which their difference is taken.
        n_lone_clusters: Clips alone in their stratum (source) while others share theirs
            (:attr:`~robojudge.meta.ClusterBootstrap.n_lone_clusters`): the intervals are narrower than
            they should be (:func:`~robojudge.meta.lone_clusters_note`).
    """

    judges: tuple[str, ...]
    axes: tuple[str, ...]
    n_items: int
    n_replicates: int
    seed: int | None
    level: float
    n_clusters: int
    n_strata: int
    cells: dict[str, dict[str, CellReport]]
    differences: dict[tuple[str, str], dict[str, dict[str, Estimate]]] = field(default_factory=dict)
    shared: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    n_lone_clusters: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary; NaN becomes None."""
        def num(v: float) -> float | None:
            return None if math.isnan(v) else v

        def est(e: Estimate) -> dict[str, Any]:
            out: dict[str, Any] = {"value": num(e.value), "low": num(e.low), "high": num(e.high),
                                   "se": num(e.se)}
            if e.why is not None:
                out["why"] = e.why
            if e.replicates is not None:
                out["replicates"] = e.replicates
            return out

        return {
            "judges": list(self.judges), "axes": list(self.axes), "n_items": self.n_items,
            "bootstrap": {"replicates": self.n_replicates, "seed": self.seed, "level": self.level,
                          "clusters": self.n_clusters, "strata": self.n_strata,
                          "lone_clusters": self.n_lone_clusters},
            "cells": {j: {a: {"n": c.n, "n_unscored": c.n_unscored,
                              "stats": {k: est(v) for k, v in c.stats.items()},
                              **({"confusion": c.confusion} if c.confusion is not None else {})}
                          for a, c in per.items()} for j, per in self.cells.items()},
            "differences": [{"a": a, "b": b, "axes": {ax: {k: est(v) for k, v in st.items()}
                                                      for ax, st in per.items()},
                             **({"n": self.shared[a, b]} if (a, b) in self.shared else {})}
                            for (a, b), per in self.differences.items()],
        }


def _point(s: AxisStats) -> dict[str, float]:
    return {k: float(getattr(s, k)) for k in STATISTICS}


def _targets(xj: Mapping[str, FloatArray], h: Mapping[str, FloatArray], axes: tuple[str, ...],
             scale: tuple[int, int]) -> list[AxisStats]:
    """One judge's statistics per axis, then the pooled Overall (from the same per-axis statistics)."""
    per_axis = {a: axis_stats(xj[a], h[a], scale) for a in axes}
    return [*per_axis.values(), pooled_stats({a: (xj[a], h[a]) for a in axes}, per_axis)]


def _without(xj: Mapping[str, FloatArray], drop: Sequence[npt.NDArray[np.bool_]], axes: tuple[str, ...]
             ) -> dict[str, FloatArray] | None:
    """A judge's scores with the items ``drop[axis]`` left unscored; None when none is dropped."""
    if not any(m.any() for m in drop):
        return None
    return {a: np.where(m, np.nan, xj[a]) for a, m in zip(axes, drop, strict=True)}


def _clusters_by_target(boot: ClusterBootstrap, scored: Sequence[npt.NDArray[np.bool_]]) -> list[int]:
    """Clusters holding the ``scored`` items of each axis; the Overall counts those of its thinner axis, as
    the generator leaderboard does (one axis on one clip must not pass the gate on the other's clips)."""
    per = [int(np.unique(boot.item_cluster[m]).size) for m in scored]
    return [*per, min(per)]


def agreement_table(pred: Mapping[str, Mapping[str, npt.ArrayLike]],
                    human: Mapping[str, npt.ArrayLike],
                    clusters: npt.ArrayLike | None = None, strata: npt.ArrayLike | None = None,
                    bootstrap: int = PAPER_REPLICATES, seed: int | None = DEFAULT_SEED, level: float = 0.95,
                    scale: tuple[int, int] = DEFAULT_SCALE,
                    pairs: Sequence[tuple[str, str]] | None = None, rank_stats: bool = True,
                    chunk: int = 256) -> AgreementReport:
    """Per judge, per axis and Overall agreement with human scores, with paired cluster-bootstrap CIs.

    Args:
        pred: ``pred[judge][axis]`` is an array of scores aligned with ``human[axis]``; NaN marks an
            unscored item and an absent axis counts as all unscored.
        human: ``human[axis]`` is the human score per item (NaN = not labelled); all axes share items.
        clusters: Cluster per item (source clip); each item is its own cluster if None.
        strata: Stratum per item (source corpus); a single stratum if None.
        bootstrap: Replicates ``B``; 0 gives point estimates only. The default is App. E.1's 10,000.
        seed: Seed of the cluster draws (default App. E.1's, :data:`robojudge.DEFAULT_SEED`: the same
            call gives the same intervals; None: fresh draws).
        level: Coverage of the percentile intervals.
        scale: Inclusive score range for rounding (accuracy) and confusion matrices.
        pairs: Judge pairs whose differences to report; every pair in ``pred`` order if None.
        rank_stats: Bootstrap Spearman's rho too (exact, slower); if False its CI is NaN.
        chunk: Replicates per block, bounding memory at about ``chunk * n_items`` floats. Judges that
            scored different items also keep their rank cell weights for all ``B`` replicates: 4 bytes per
            replicate and distinct ``(pred, human)`` pair of each judge's axes and Overall (at most 75 per
            judge on a 1-5 scale with two axes: 90 MB for 30 judges and 10,000 replicates).

    Returns:
        An :class:`AgreementReport`. Kendall's tau carries a point estimate only.
    """
    axes = tuple(human)
    judges = tuple(pred)
    if not axes or not judges:
        raise ValueError("need at least one axis and one judge")
    if clash := [a for a in axes if str(a).strip().lower() == OVERALL]:
        raise ValueError(f"axis {clash[0]!r} has the name of the pooled Overall; rename the axis")
    h = {a: as_float_vector(human[a], f"human[{a}]") for a in axes}
    n = h[axes[0]].size
    if any(v.size != n for v in h.values()):
        raise ValueError("every human axis must have the same number of items")
    x: dict[str, dict[str, FloatArray]] = {}
    for j in judges:
        extra = set(pred[j]) - set(axes)
        if extra:
            raise ValueError(f"judge {j!r} has axes without human scores: {sorted(extra)}")
        x[j] = {a: as_float_vector(pred[j][a], f"pred[{j}][{a}]") if a in pred[j] else np.full(n, np.nan)
                for a in axes}
        if any(v.size != n for v in x[j].values()):
            raise ValueError(f"pred[{j!r}] arrays must have {n} items like human")
    pair_list = list(combinations(judges, 2)) if pairs is None else [tuple(p) for p in pairs]
    for p in pair_list:
        if p[0] not in x or p[1] not in x:
            raise ValueError(f"unknown judge in pair {p}")
    targets = (*axes, OVERALL)
    scored = {j: [np.isfinite(x[j][a]) & np.isfinite(h[a]) for a in axes] for j in judges}

    point = np.full((len(judges), len(targets), len(STATISTICS)), np.nan)
    counts: dict[tuple[int, int], tuple[int, int]] = {}
    no_correlation: dict[tuple[int, int], str | None] = {}
    confusions: dict[tuple[int, int], list[list[int]]] = {}
    for ji, j in enumerate(judges):
        for ti, s in enumerate(_targets(x[j], h, axes, scale)):
            point[ji, ti] = [_point(s)[k] for k in STATISTICS]
            counts[ji, ti] = (s.n, s.n_unscored)
            no_correlation[ji, ti] = s.no_correlation
        for ai, a in enumerate(axes):
            confusions[ji, ai] = confusion_matrix(x[j][a], h[a], scale=scale).tolist()

    low = np.full_like(point, np.nan)
    high = np.full_like(point, np.nan)
    se = np.full_like(point, np.nan)
    reps: FloatArray | None = None
    boot: ClusterBootstrap | None = None
    judge_cells = _JudgeCells()
    why = np.full(point.shape, None, dtype=object)
    used = np.full(point.shape, None, dtype=object)
    cell_clusters = np.zeros(point.shape[:2], dtype=np.int64)
    if bootstrap > 0:
        boot = ClusterBootstrap(np.arange(n) if clusters is None else clusters, strata, bootstrap, seed)
        # Judge pairs that scored different items need each judge's rank cells again (_ViewRanks).
        gaps = any((u ^ v).any() for a, b in pair_list for u, v in zip(scored[a], scored[b], strict=True))
        reps = _replicates(boot, judges, axes, x, h, scale, rank_stats, chunk,
                           keep=judge_cells if gaps and rank_stats else None)
        low[..., _BOOT_COLS], high[..., _BOOT_COLS], se[..., _BOOT_COLS] = summarize_replicates(reps, level)
        for ji, j in enumerate(judges):
            cell_clusters[ji] = _clusters_by_target(boot, scored[j])
        _gate(point, low, high, se, why, used, reps, cell_clusters, bootstrap, rank_stats,
              boot.one_per_stratum, bounds=True)
    for (ji, ti), reason in no_correlation.items():  # an undefined correlation says why, as a withheld CI
        for si in (STATISTICS.index(k) for k in _CORRELATIONS):
            if reason is not None and math.isnan(point[ji, ti, si]):
                why[ji, ti, si] = reason

    cells: dict[str, dict[str, CellReport]] = {}
    for ji, j in enumerate(judges):
        cells[j] = {}
        for ti, t in enumerate(targets):
            st = {k: Estimate(float(point[ji, ti, si]), float(low[ji, ti, si]), float(high[ji, ti, si]),
                              float(se[ji, ti, si]), why[ji, ti, si], used[ji, ti, si])
                  for si, k in enumerate(STATISTICS)}
            cells[j][t] = CellReport(*counts[ji, ti], st, confusions.get((ji, ti)))

    # A pair is compared on the items both judges scored: a judge that abstains on the hard items would
    # otherwise look better. A judge that scored items the other did not is taken again without them.
    idx = [(judges.index(a), judges.index(b)) for a, b in pair_list]
    both = [[u & v for u, v in zip(scored[a], scored[b], strict=True)] for a, b in pair_list]

    def dropped(pi: int, at: int) -> list[npt.NDArray[np.bool_]]:
        """Per axis, the items one side of a pair scored and the other did not."""
        return [u & ~m for u, m in zip(scored[pair_list[pi][at]], both[pi], strict=True)]

    def side(pi: int, at: int) -> dict[str, FloatArray] | None:
        return _without(x[pair_list[pi][at]], dropped(pi, at), axes)

    d_point = np.full((len(idx), len(targets), len(STATISTICS)), np.nan)
    shared: dict[tuple[str, str], dict[str, int]] = {}
    for pi, (a, b) in enumerate(pair_list):
        sides: list[FloatArray] = []
        for at, ji in enumerate(idx[pi]):
            view = side(pi, at)
            sides.append(point[ji] if view is None else
                         np.array([list(_point(t).values()) for t in _targets(view, h, axes, scale)]))
        d_point[pi] = sides[0] - sides[1]
        shared[a, b] = {**{ax: int(m.sum()) for ax, m in zip(axes, both[pi], strict=True)},
                        OVERALL: int(sum(m.sum() for m in both[pi]))}
    d_lo, d_hi, d_se = (np.full_like(d_point, np.nan) for _ in range(3))
    d_why = np.full(d_point.shape, None, dtype=object)
    d_used = np.full(d_point.shape, None, dtype=object)
    if reps is not None and boot is not None:
        # Blocks of pairs bound the memory of the replicate differences.
        for start in range(0, len(idx), _PAIR_BLOCK):
            block = range(start, min(start + _PAIR_BLOCK, len(idx)))
            # The block's judges taken without some items, bootstrapped together on the same draws.
            views = {f"{pi}:{at}": v for pi in block for at in (0, 1) if (v := side(pi, at)) is not None}
            # Each view's Spearman rho follows from its judge's cell weights, less the items it leaves out.
            bases = {f"{pi}:{at}": (idx[pi][at], dropped(pi, at)) for pi in block for at in (0, 1)}
            r = (dict(zip(views, _replicates(boot, tuple(views), axes, views, h, scale, rank_stats, chunk,
                                             views=bases, cells=judge_cells), strict=True)) if views else {})
            d = np.stack([r.get(f"{pi}:0", reps[idx[pi][0]]) - r.get(f"{pi}:1", reps[idx[pi][1]])
                          for pi in block])
            pair_clusters = np.array([_clusters_by_target(boot, both[pi]) for pi in block])
            sl = slice(start, start + len(block))
            d_lo[sl, ..., _BOOT_COLS], d_hi[sl, ..., _BOOT_COLS], d_se[sl, ..., _BOOT_COLS] = (
                summarize_replicates(d, level))
            _gate(d_point[sl], d_lo[sl], d_hi[sl], d_se[sl], d_why[sl], d_used[sl], d, pair_clusters,
                  bootstrap, rank_stats, boot.one_per_stratum)
    differences: dict[tuple[str, str], dict[str, dict[str, Estimate]]] = {}
    for pi, pair in enumerate(pair_list):
        differences[pair[0], pair[1]] = {
            t: {k: Estimate(float(d_point[pi, ti, si]), float(d_lo[pi, ti, si]), float(d_hi[pi, ti, si]),
                            float(d_se[pi, ti, si]), d_why[pi, ti, si], d_used[pi, ti, si])
                for si, k in enumerate(STATISTICS)}
            for ti, t in enumerate(targets)}

    return AgreementReport(judges, axes, n, bootstrap, seed, level,
                           boot.n_clusters if boot else 0, boot.n_strata if boot else 0, cells, differences,
                           shared, boot.n_lone_clusters if boot else 0)


def _at_bound(point: FloatArray) -> npt.NDArray[np.bool_]:
    """Which of ``point`` (``(..., len(_BOOT))``) sit at their statistic's bound: a correlation of -1 or
    1, an agreement rate of 0 or 1, an error of 0 (up to ``1e-12``). The bias has none."""
    def near(v: FloatArray, b: float) -> npt.NDArray[np.bool_]:
        return np.isclose(v, b, rtol=0, atol=1e-12)

    p = np.asarray(point)
    out = np.zeros(p.shape, dtype=bool)
    for bi, k in enumerate(_BOOT):
        v = p[..., bi]
        if k in _CORRELATIONS:
            out[..., bi] = near(np.abs(v), 1.0)
        elif k in ("exact", "within_one"):
            out[..., bi] = near(v, 0.0) | near(v, 1.0)
        elif k in ("mse", "mae"):
            out[..., bi] = near(v, 0.0)
    return out


def _gate(point: FloatArray, low: FloatArray, high: FloatArray, se: FloatArray, why: npt.NDArray[np.object_],
          used: npt.NDArray[np.object_], reps: FloatArray, clusters: npt.NDArray[np.int64], n_replicates: int,
          rank_stats: bool, one_per_stratum: bool, bounds: bool = False) -> None:
    """Blank the intervals :func:`interval_gate` refuses (in place), recording why and partial counts.

    ``reps`` is ``(..., targets, len(_BOOT), B)``; the other arrays are ``(..., targets, STATISTICS)``
    and ``clusters`` is ``(..., targets)``. A point estimate that is NaN has no interval to explain, and
    Spearman without ``rank_stats`` was not bootstrapped. ``bounds``: the points are statistics (not
    differences), so a constant one at its bound (:func:`_at_bound`) is said to be.
    """
    valid = np.isfinite(reps).sum(axis=-1)
    at_bound = _at_bound(point[..., _BOOT_COLS]) if bounds else False
    keep, reason, count = interval_gate(valid, clusters[..., None], n_replicates,
                                        np.isin(_BOOT, _CORRELATIONS), constant_replicates(reps), at_bound,
                                        one_per_stratum)
    for bi, si in enumerate(_BOOT_COLS):
        if STATISTICS[si] == "spearman" and not rank_stats:
            continue
        sel = (..., si)
        k = keep[..., bi]
        low[sel] = np.where(k, low[sel], np.nan)
        high[sel] = np.where(k, high[sel], np.nan)
        se[sel] = np.where(k, se[sel], np.nan)
        undefined = ~np.isfinite(point[sel])
        r, c = reason[..., bi].copy(), count[..., bi].copy()
        r[undefined] = None
        c[undefined] = None
        why[sel] = r
        used[sel] = c


#: A judge taken on part of its items: the judge's index among those bootstrapped first, and per axis the
#: items it scored that are left out.
_Leaves = tuple[int, Sequence[npt.NDArray[np.bool_]]]


class _JudgeCells:
    """What the judges' own bootstrap leaves for the judges taken again on a pair's shared items: each
    rank key's cells and their weights in every replicate (keys with few cells only), the items each judge
    scored per axis, and whether the rank sums of their views are exact (:class:`StackedRanks`)."""

    def __init__(self) -> None:
        self.ranks: dict[tuple[int, int], RankCorrelation] = {}
        self.start: dict[tuple[int, int], int] = {}
        self.weights: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self.items: dict[int, list[npt.NDArray[np.intp]]] = {}
        self.exact = False


class _ViewRanks:
    """Spearman rho of judges taken on part of their items, from their judges' kept cell weights.

    ``views`` maps a judge's index in this call to the index of its judge in the call that filled
    ``cells`` and the items it leaves out per axis. A view's cell weights are its judge's less those of the
    pairs it leaves out (a sparse ``(cells, n_clusters)`` 0/1 matrix times the cluster counts): whole
    numbers, computed exactly whatever the order, so rho is what ranking the view again gives, bit for bit
    (:class:`StackedRanks`). Keys whose judge has no kept cells are left out of :attr:`keys`.
    """

    def __init__(self, boot: ClusterBootstrap, views: Mapping[int, _Leaves], cells: _JudgeCells,
                 n_a: int) -> None:
        from scipy import sparse

        self.keys: list[tuple[int, int]] = []
        stack: list[RankCorrelation] = []
        pairs: list[int] = []
        base_rows: list[npt.NDArray[np.intp]] = []
        rows: list[npt.NDArray[np.intp]] = [np.zeros(0, dtype=np.intp)]
        cols: list[npt.NDArray[np.intp]] = [np.zeros(0, dtype=np.intp)]
        offset = 0
        for vi, (base, drop) in views.items():
            items = cells.items[base]
            for ti in range(n_a + 1):
                rc = cells.ranks.get((base, ti))
                if rc is None or rc.n_cells == 0:  # no scored pair: rho stays undefined
                    continue
                parts = range(n_a) if ti == n_a else [ti]
                # Pairs in the key's order: one part per axis, each the judge's scored items on it.
                left = np.concatenate([drop[a][items[a]] for a in parts])
                self.keys.append((vi, ti))
                stack.append(rc)
                pairs.append(int(left.size - left.sum()))
                base_rows.append(cells.start[base, ti] + np.arange(rc.n_cells))
                rows.append(offset + rc._cell_of_pair[left])
                cols.append(boot.item_cluster[np.concatenate([items[a][drop[a][items[a]]] for a in parts])])
                offset += rc.n_cells
        self._cells = cells
        self._ranks = StackedRanks(stack, pairs) if stack else None
        self._base_rows = np.concatenate(base_rows) if base_rows else np.zeros(0, dtype=np.intp)
        r, c = np.concatenate(rows), np.concatenate(cols)
        self._take_off = sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(offset, boot.n_clusters))

    def __call__(self, rows: slice, counts_t: FloatArray) -> FloatArray:
        """``(len(keys), rows)`` rho for the replicates ``rows``, whose cluster counts are ``counts_t``
        (``(n_clusters, rows)``)."""
        if self._ranks is None:
            return np.zeros((0, counts_t.shape[1]))
        view_w = self._cells.weights[self._base_rows, rows].astype(np.float64) - self._take_off @ counts_t
        return self._ranks(view_w)


def _replicates(boot: ClusterBootstrap, judges: tuple[str, ...], axes: tuple[str, ...],
                x: Mapping[str, Mapping[str, FloatArray]], h: Mapping[str, FloatArray],
                scale: tuple[int, int], rank_stats: bool, chunk: int, *,
                keep: _JudgeCells | None = None,
                views: Mapping[str, _Leaves] | None = None,
                cells: _JudgeCells | None = None) -> FloatArray:
    """``(n_judges, n_axes + 1, len(_BOOT), B)`` replicate statistics; the last target is Overall.

    Replicates run along the last axis so that each statistic's replicates are contiguous for sorting.
    ``keep`` is filled with what judges taken on part of their items need later: there, ``views`` names
    for such a judge the index of the judge it is in the call that filled ``cells`` and the items it
    leaves out per axis, and its Spearman rho follows from that judge's cell weights instead of being
    ranked again. Every replicate is the same, bit for bit, as without them.
    """
    n_j, n_a = len(judges), len(axes)
    n = h[axes[0]].size
    v = np.empty((n, n_j, n_a, N_MOMENTS))
    ranks: dict[tuple[int, int], RankCorrelation] = {}
    stacked: dict[int, _Leaves] = {}
    for ji, j in enumerate(judges):
        masks = {a: np.isfinite(x[j][a]) & np.isfinite(h[a]) for a in axes}
        px = np.concatenate([x[j][a][masks[a]] for a in axes])
        py = np.concatenate([h[a][masks[a]] for a in axes])
        # One centre per judge for all axes keeps the pooled Overall moments consistent.
        cx = float(px.mean()) if px.size else 0.0
        cy = float(py.mean()) if py.size else 0.0
        # Keys of a view whose judge's cells were kept are taken from them (_view_ranks).
        view = views.get(j) if views is not None and cells is not None and cells.exact else None
        from_cells = set() if view is None or cells is None else {t for b, t in cells.ranks if b == view[0]}
        if rank_stats and view is not None:
            stacked[ji] = view
        parts = []
        for ai, a in enumerate(axes):
            v[:, ji, ai] = moment_columns(x[j][a], h[a], cx, cy, scale)
            idx = np.flatnonzero(masks[a])
            parts.append((idx, x[j][a][idx], h[a][idx]))
            if rank_stats and ai not in from_cells:
                ranks[ji, ai] = RankCorrelation([parts[-1]], n)
        if rank_stats and n_a not in from_cells:
            ranks[ji, n_a] = RankCorrelation(parts, n)
        if keep is not None:
            keep.items[ji] = [p[0] for p in parts]
    v_clusters = boot.cluster_sums(v.reshape(n, -1))
    # Keys with few distinct (pred, human) pairs share one float32 product for their cell weights:
    # counts and cell sizes are small integers, so float32 sums are exact.
    few = [key for key, rc in ranks.items() if rc.few_cells]
    many = [key for key, rc in ranks.items() if not rc.few_cells]
    bounds = np.cumsum([0] + [ranks[key].n_cells for key in few])
    cells_clusters = boot.cluster_sums(
        np.hstack([ranks[key].cell_matrix(np.float32) for key in few]) if few
        else np.zeros((n, 0), dtype=np.float32))
    if keep is not None:
        keep.ranks = {key: ranks[key] for key in few}
        keep.start = {key: int(bounds[i]) for i, key in enumerate(few)}
        keep.weights = np.empty((int(bounds[-1]), boot.n_replicates), dtype=np.float32)
        sizes = np.bincount(boot.item_cluster, minlength=boot.n_clusters).astype(np.int64)
        keep.exact = int((boot.counts.astype(np.int64) @ sizes).max(initial=0)) * n_a <= EXACT_RANK_WEIGHT
    view_ranks = _ViewRanks(boot, stacked, cells, n_a) if stacked and cells is not None else None
    axis_has_items = v[:, :, :, 0].sum(axis=0) > 0  # (n_j, n_a)
    held = boot.held_clusters(v[:, :, :, 0].reshape(n, -1) > 0)
    out = np.full((n_j, n_a + 1, len(_BOOT), boot.n_replicates), np.nan)
    k = {name: i for i, name in enumerate(_BOOT)}
    for rows, counts in boot.count_chunks(chunk):
        counts_t = counts.T.astype(np.float64)
        # (n_j, n_a, N_MOMENTS, rows): replicates last.
        sums = (v_clusters.T @ counts_t).reshape(n_j, n_a, N_MOMENTS, -1)
        sums = np.moveaxis(sums, 2, -1)
        per_axis = stats_from_sums(sums)  # each (n_j, n_a, rows)
        pooled = stats_from_sums(sums.sum(axis=1))  # each (n_j, rows)
        for name, arr in per_axis.items():
            out[:, :n_a, k[name], rows] = arr
        for name in ("pearson", "mse", "mae", "bias"):
            out[:, n_a, k[name], rows] = pooled[name]
        for name in ("exact", "within_one"):
            out[:, n_a, k[name], rows] = per_axis[name].mean(axis=1)
        if few:
            cell_w32 = cells_clusters.T @ counts.T.astype(np.float32)
            if keep is not None:
                keep.weights[:, rows] = cell_w32
            cell_w = cell_w32.astype(np.float64)
            for i, (ji, ti) in enumerate(few):
                out[ji, ti, k["spearman"], rows] = ranks[ji, ti].from_cell_weights_t(
                    cell_w[bounds[i]:bounds[i + 1]])
        if many:
            w_t = boot.item_weights_t(counts)
            for ji, ti in many:
                rc = ranks[ji, ti]
                out[ji, ti, k["spearman"], rows] = rc.from_cell_weights_t(rc.cell_weights_t(w_t))
        if view_ranks is not None:
            rho = view_ranks(rows, counts_t)
            for i, (ji, ti) in enumerate(view_ranks.keys):
                out[ji, ti, k["spearman"], rows] = rho[i]
        # A correlation is undefined on a replicate of fewer than 3 distinct clusters, and the pooled
        # Overall's where no axis has one (as in the point estimates).
        thin = few_clusters_drawn(boot.distinct_drawn(counts, held)).T.reshape(n_j, n_a, -1)
        for name in ("pearson", "spearman"):
            per = out[:, :n_a, k[name], rows]
            per[thin] = np.nan
            out[:, n_a, k[name], rows][np.isnan(per).all(axis=1)] = np.nan
    # The Overall is undefined for a judge with an axis it never scored (as in the point estimate).
    out[~axis_has_items.all(axis=1), n_a] = np.nan
    return out
