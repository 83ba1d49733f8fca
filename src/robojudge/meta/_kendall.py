"""Cluster-bootstrap interval for Kendall's tau-b, on the same draws as :func:`agreement_table`.

A replicate is a multiset of items (item ``i`` drawn ``w_i`` times). Its tau-b is the tau-b of the
expanded sample, computed without expanding: identical ``(pred, human)`` pairs are merged into cells
with weight ``W_c``, and

    S   = sum over cell pairs c < d of W_c W_d sign(x_c - x_d) sign(y_c - y_d)
    n0  = N (N - 1) / 2,  N = sum of W
    n_x = sum over x values g of T_g (T_g - 1) / 2,  T_g = weight of the cells with x = g (same for y)
    tau_b = S / sqrt((n0 - n_x) (n0 - n_y)),

which equals ``scipy.stats.kendalltau`` on the expanded sample (copies of one item form pairs tied
on both sides, counted in ``n_x`` and ``n_y``). The work per replicate is quadratic in the number of
cells, so this is fast for scores on a small scale and for a few thousand continuous scores; memory
grows with the cells times the replicates of a chunk (the sign matrix is made a block of rows at a
time).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED, PAPER_REPLICATES
from robojudge.meta._agreement import FloatArray, kendall, why_no_correlation
from robojudge.meta._bootstrap import (
    ClusterBootstrap,
    constant_replicates,
    few_clusters_drawn,
    interval_gate,
    summarize_replicates,
)
from robojudge.meta._report import Estimate

#: Cells per block of the sign matrix: its rows are made and used a block at a time, so memory grows
#: with the cells, not their square (the whole matrix was 2.6 GB at 4,000 pooled continuous scores).
_BLOCK_ENTRIES = 1 << 21


def _summed(inv: npt.NDArray[np.intp], n_groups: int, w: FloatArray) -> FloatArray:
    """``(n_groups, B)``: the weights of ``w`` (``(B, n)``) summed per group ``inv`` of each item."""
    out = np.zeros((n_groups, w.shape[0]))
    np.add.at(out, inv, w.T)
    return out


def weighted_kendall_tau_b(x: npt.ArrayLike, y: npt.ArrayLike, weights: npt.ArrayLike) -> FloatArray:
    """Tau-b of the sample in which pair ``i`` appears ``weights[..., i]`` times.

    Args:
        x: Predictions, finite, shape ``(n,)``.
        y: Human scores, finite, shape ``(n,)``.
        weights: Non-negative multiplicities, shape ``(n,)`` or ``(B, n)``.

    Returns:
        Tau-b per row of ``weights`` (NaN where one side is constant or fewer than two items).
    """
    xv = np.asarray(x, dtype=np.float64).ravel()
    yv = np.asarray(y, dtype=np.float64).ravel()
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if xv.size != yv.size or w.shape[1] != xv.size:
        raise ValueError(f"x, y and weights need one entry per item, got {xv.size}, {yv.size}, {w.shape}")
    cells, inv = np.unique(np.stack([xv, yv], axis=1), axis=0, return_inverse=True)
    cw = _summed(inv.reshape(-1), cells.shape[0], w)  # (cells, B)
    s = np.zeros(w.shape[0])
    step = max(1, _BLOCK_ENTRIES // max(1, cells.shape[0]))
    for lo in range(0, cells.shape[0], step):
        block = cells[lo : lo + step]
        sign = np.sign(block[:, None, 0] - cells[None, :, 0]) * np.sign(block[:, None, 1] - cells[None, :, 1])
        s += np.einsum("cb,cb->b", cw[lo : lo + step], sign @ cw)
    s *= 0.5
    total = cw.sum(axis=0)
    n0 = total * (total - 1) / 2
    _, xg = np.unique(cells[:, 0], return_inverse=True)
    _, yg = np.unique(cells[:, 1], return_inverse=True)
    tx = _summed(xg.reshape(-1), int(xg.max()) + 1 if xg.size else 0, cw.T)
    ty = _summed(yg.reshape(-1), int(yg.max()) + 1 if yg.size else 0, cw.T)
    nx = (tx * (tx - 1) / 2).sum(axis=0)
    ny = (ty * (ty - 1) / 2).sum(axis=0)
    denom = (n0 - nx) * (n0 - ny)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, s / np.sqrt(np.where(denom > 0, denom, 1.0)), np.nan)


def kendall_interval(pred: npt.ArrayLike, human: npt.ArrayLike, clusters: npt.ArrayLike | None = None,
                     strata: npt.ArrayLike | None = None, bootstrap: int = PAPER_REPLICATES,
                     seed: int | None = DEFAULT_SEED, level: float = 0.95, chunk: int = 1000) -> Estimate:
    """Kendall's tau-b with its paired cluster-bootstrap percentile interval (RoboJudge App. E.1).

    The draws are those of :class:`ClusterBootstrap` with the same ``clusters``, ``strata``,
    ``bootstrap`` and ``seed``, i.e. the draws :func:`agreement_table` uses for the other statistics.
    Items where either score is NaN are left out of every replicate, as in the point estimate.
    To pool axes (the Overall), concatenate the axes' scores and repeat ``clusters`` and ``strata``.
    The defaults are App. E.1's: 10,000 replicates and seed :data:`robojudge.DEFAULT_SEED`, so the same
    call gives the same interval (``seed=None``: fresh draws).

    Returns:
        An :class:`Estimate` (value, percentile interval and bootstrap standard error); an undefined tau
        says why in ``why``.
    """
    x = np.asarray(pred, dtype=np.float64).ravel()
    y = np.asarray(human, dtype=np.float64).ravel()
    if x.size != y.size:
        raise ValueError(f"pred and human must have the same length, got {x.size} and {y.size}")
    point = kendall(x, y)
    if (undefined := why_no_correlation(x, y)) is not None:
        return Estimate(point, why=undefined)
    if bootstrap <= 0:
        return Estimate(point)
    boot = ClusterBootstrap(np.arange(x.size) if clusters is None else clusters, strata, bootstrap, seed)
    ok = np.isfinite(x) & np.isfinite(y)
    reps = np.full(bootstrap, np.nan)
    for rows, counts in boot.count_chunks(chunk):
        reps[rows] = weighted_kendall_tau_b(x[ok], y[ok], boot.item_weights(counts)[:, ok])
        reps[rows][few_clusters_drawn(boot.distinct_drawn(counts, ok[:, None])[:, 0])] = np.nan
    # The rule of every other correlation's interval (interval_gate): scored items in at least
    # MIN_CORRELATION_CLUSTERS clusters, and a tau defined in at least half of the replicates.
    n_clusters = np.array(len(np.unique(boot.item_cluster[ok])))
    keep, why, used = interval_gate(np.array(int(np.isfinite(reps).sum())), n_clusters, bootstrap, True,
                                    constant_replicates(reps), abs(point) == 1.0, boot.one_per_stratum)
    if not keep:
        return Estimate(point, why=str(why[()]))
    low, high, se = summarize_replicates(reps[None, :], level)
    count = used[()]
    return Estimate(point, float(low[0]), float(high[0]), float(se[0]),
                    replicates=None if count is None else int(count))
