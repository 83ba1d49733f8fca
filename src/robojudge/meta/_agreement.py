"""Agreement between one judge's scores and human scores on a single axis, plus the pooled Overall.

Every function takes two equally long 1-D arrays, ``pred`` (the judge) and ``human`` (the reference),
and uses only the positions where both are finite: a NaN prediction is an unscored item and is left
out, never read as zero. A statistic that is undefined on what is left (no pairs; for a correlation,
fewer than :data:`MIN_CORRELATION_PAIRS` pairs or a constant side) is returned as NaN, and
:func:`why_no_correlation` says which.

Definitions follow RoboJudge (Sec. 5.2 and Table 2): Pearson r, exact-match accuracy and MSE per
axis, and an Overall that pools the axes for r and MSE but averages the axis accuracies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_SCALE: tuple[int, int] = (1, 5)

#: Pairs a correlation needs: through two points every line fits, so r and rho over two are +-1 whatever
#: the scores are worth. Every correlation in :mod:`robojudge.meta` is NaN below it.
MIN_CORRELATION_PAIRS = 3


def as_float_vector(values: npt.ArrayLike, name: str = "values") -> FloatArray:
    """``values`` as a 1-D float64 array; raises ``ValueError`` for any other shape."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    return arr


def paired(pred: npt.ArrayLike, human: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The positions where both arrays are finite, as two float arrays of equal length."""
    x = as_float_vector(pred, "pred")
    y = as_float_vector(human, "human")
    if x.shape != y.shape:
        raise ValueError(f"pred and human differ in length: {x.size} != {y.size}")
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def round_to_scale(values: npt.ArrayLike, scale: tuple[int, int] = DEFAULT_SCALE) -> FloatArray:
    """Round scores to the nearest integer of ``scale``, halves upward, then clip into the scale.

    ``2.5`` becomes 3 and ``-0.5`` becomes 0 (before clipping): the rule is ``floor(x + 0.5)``, not
    NumPy's round-half-to-even. NaN stays NaN.
    """
    lo, hi = scale
    if lo > hi:
        raise ValueError(f"scale must be (low, high) with low <= high, got {scale}")
    x = np.asarray(values, dtype=np.float64)
    return np.clip(np.floor(x + 0.5), lo, hi)


def why_no_correlation(x: npt.ArrayLike, y: npt.ArrayLike,
                       names: tuple[str, str] = ("judge scores", "human scores"),
                       pairs: str = "pairs") -> str | None:
    """Why Pearson, Spearman and Kendall are undefined on the jointly observed pairs, or None if they
    are not: ``"fewer than 3 pairs"``, ``"human scores are constant"`` and the like.

    ``names`` call the two sides (plural, they take "are") and ``pairs`` the pairs in the reason.
    """
    a, b = paired(x, y)
    if a.size < MIN_CORRELATION_PAIRS:
        return f"fewer than {MIN_CORRELATION_PAIRS} {pairs}"
    # Tested exactly: the deviations of seven copies of 0.1 from their rounded mean are not 0, and their
    # tiny sums would give r = 0 where r is undefined.
    flat = [name for name, v in zip(names, (a, b), strict=True) if v.min() == v.max()]
    return f"{' and '.join(flat)} are constant" if flat else None


def pearson(pred: npt.ArrayLike, human: npt.ArrayLike) -> float:
    """Pearson correlation on the jointly observed pairs (NaN with < 3 pairs or a constant side)."""
    x, y = paired(pred, human)
    return _pearson_clean(x, y)


def _pearson_clean(x: FloatArray, y: FloatArray) -> float:
    if x.size < MIN_CORRELATION_PAIRS or x.min() == x.max() or y.min() == y.max():
        return math.nan
    dx = x - x.mean()
    dy = y - y.mean()
    sxx = float(dx @ dx)
    syy = float(dy @ dy)
    if sxx <= 0.0 or syy <= 0.0:
        return math.nan
    return float(np.clip((dx @ dy) / math.sqrt(sxx * syy), -1.0, 1.0))


def spearman(pred: npt.ArrayLike, human: npt.ArrayLike) -> float:
    """Spearman's rho: Pearson correlation of the mid-ranks (ties share their average rank)."""
    x, y = paired(pred, human)
    if x.size < MIN_CORRELATION_PAIRS:
        return math.nan
    return _pearson_clean(stats.rankdata(x), stats.rankdata(y))


def kendall(pred: npt.ArrayLike, human: npt.ArrayLike) -> float:
    """Kendall's tau-b (tie-corrected), as ``scipy.stats.kendalltau``."""
    x, y = paired(pred, human)
    if x.size < MIN_CORRELATION_PAIRS or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    return float(stats.kendalltau(x, y).statistic)


def exact_accuracy(pred: npt.ArrayLike, human: npt.ArrayLike,
                   scale: tuple[int, int] = DEFAULT_SCALE) -> float:
    """Share of items whose rounded prediction equals the human score (RoboJudge Acc).

    Predictions go through :func:`round_to_scale` first; the human scores are rounded the same way,
    which changes nothing for integer labels.
    """
    x, y = paired(pred, human)
    if x.size == 0:
        return math.nan
    return float(np.mean(round_to_scale(x, scale) == round_to_scale(y, scale)))


def within_one_accuracy(pred: npt.ArrayLike, human: npt.ArrayLike,
                        scale: tuple[int, int] = DEFAULT_SCALE) -> float:
    """Share of items whose rounded prediction is at most one scale point from the human score."""
    x, y = paired(pred, human)
    if x.size == 0:
        return math.nan
    return float(np.mean(np.abs(round_to_scale(x, scale) - round_to_scale(y, scale)) <= 1))


def mse(pred: npt.ArrayLike, human: npt.ArrayLike) -> float:
    """Mean squared error of the raw (unrounded) predictions."""
    x, y = paired(pred, human)
    return float(np.mean((x - y) ** 2)) if x.size else math.nan


def mae(pred: npt.ArrayLike, human: npt.ArrayLike) -> float:
    """Mean absolute error of the raw (unrounded) predictions."""
    x, y = paired(pred, human)
    return float(np.mean(np.abs(x - y))) if x.size else math.nan


def mean_signed_error(pred: npt.ArrayLike, human: npt.ArrayLike) -> float:
    """Mean of ``pred - human``: positive when the judge scores too generously."""
    x, y = paired(pred, human)
    return float(np.mean(x - y)) if x.size else math.nan


def confusion_matrix(pred: npt.ArrayLike, human: npt.ArrayLike,
                     labels: Sequence[int] | None = None,
                     scale: tuple[int, int] = DEFAULT_SCALE) -> IntArray:
    """Counts with human scores as rows and rounded predictions as columns.

    Args:
        pred: Judge scores; rounded with :func:`round_to_scale`.
        human: Human scores, rounded the same way.
        labels: Increasing row and column labels; defaults to every integer of ``scale``.
        scale: Inclusive score range used for rounding and the default labels.

    Returns:
        An integer array of shape ``(len(labels), len(labels))``. Pairs whose value is not in
        ``labels`` are not counted.
    """
    x, y = paired(pred, human)
    labs = np.arange(scale[0], scale[1] + 1) if labels is None else np.asarray(labels, dtype=np.float64)
    if labs.ndim != 1 or labs.size == 0 or np.any(np.diff(labs) <= 0):
        raise ValueError("labels must be a non-empty increasing sequence")
    k = labs.size
    rx = round_to_scale(x, scale)
    ry = round_to_scale(y, scale)
    xi = np.minimum(np.searchsorted(labs, rx), k - 1)
    yi = np.minimum(np.searchsorted(labs, ry), k - 1)
    ok = (labs[xi] == rx) & (labs[yi] == ry)
    out = np.zeros((k, k), dtype=np.int64)
    np.add.at(out, (yi[ok], xi[ok]), 1)
    return out


@dataclass(frozen=True)
class AxisStats:
    """Point statistics of one judge on one axis (or pooled over axes for the Overall).

    ``no_correlation`` says why Pearson, Spearman and Kendall are NaN (None when they are defined).
    """

    n: int
    n_unscored: int
    pearson: float
    spearman: float
    kendall: float
    exact: float
    within_one: float
    mse: float
    mae: float
    bias: float
    no_correlation: str | None = None


def axis_stats(pred: npt.ArrayLike, human: npt.ArrayLike,
               scale: tuple[int, int] = DEFAULT_SCALE) -> AxisStats:
    """Every per-axis statistic at once; ``n_unscored`` counts human-labelled items with NaN ``pred``."""
    x = as_float_vector(pred, "pred")
    y = as_float_vector(human, "human")
    if x.shape != y.shape:
        raise ValueError(f"pred and human differ in length: {x.size} != {y.size}")
    labelled = np.isfinite(y)
    n_unscored = int(np.sum(labelled & ~np.isfinite(x)))
    return AxisStats(
        n=int(np.sum(labelled & np.isfinite(x))), n_unscored=n_unscored,
        pearson=pearson(x, y), spearman=spearman(x, y), kendall=kendall(x, y),
        exact=exact_accuracy(x, y, scale), within_one=within_one_accuracy(x, y, scale),
        mse=mse(x, y), mae=mae(x, y), bias=mean_signed_error(x, y), no_correlation=why_no_correlation(x, y),
    )


def overall(axes: Mapping[str, tuple[npt.ArrayLike, npt.ArrayLike]],
            scale: tuple[int, int] = DEFAULT_SCALE) -> AxisStats:
    """RoboJudge's Overall (Table 2) over several axes, each given as ``(pred, human)``.

    Correlations (Pearson, Spearman, Kendall) and the error means (MSE, MAE, bias) are computed on the
    concatenation of every axis's jointly observed pairs ("pool PA and IA as axis-level score
    predictions"). Exact and within-one accuracy are the unweighted mean of the per-axis accuracies
    ("Overall Acc is the average of PA and IA Acc"). If any axis has no scored pair the Overall is
    undefined and every statistic is NaN, as the paper leaves it blank for a judge missing an axis.

    The pooled correlations are NaN too when no axis has a defined one (every axis has fewer than
    :data:`MIN_CORRELATION_PAIRS` pairs or a constant side): what is left to correlate is then the
    offset between the axes' means, and a judge answering PA 2 and IA 5 to every item would get r = 1
    against humans who rate IA above PA.
    """
    if not axes:
        raise ValueError("overall needs at least one axis")
    return pooled_stats(axes, {name: axis_stats(p, h, scale) for name, (p, h) in axes.items()})


def pooled_stats(axes: Mapping[str, tuple[npt.ArrayLike, npt.ArrayLike]], per_axis: Mapping[str, AxisStats]
                 ) -> AxisStats:
    """:func:`overall` from the axes and their :func:`axis_stats`, for a caller that has them already."""
    n = sum(s.n for s in per_axis.values())
    n_unscored = sum(s.n_unscored for s in per_axis.values())
    nan = math.nan
    if any(s.n == 0 for s in per_axis.values()):
        return AxisStats(n, n_unscored, nan, nan, nan, nan, nan, nan, nan, nan)
    pairs = [paired(p, h) for p, h in axes.values()]
    x = np.concatenate([p[0] for p in pairs])
    y = np.concatenate([p[1] for p in pairs])
    why = overall_no_correlation({a: s.no_correlation for a, s in per_axis.items()})
    return AxisStats(
        n=n, n_unscored=n_unscored,
        pearson=nan if why else pearson(x, y), spearman=nan if why else spearman(x, y),
        kendall=nan if why else kendall(x, y),
        exact=float(np.mean([s.exact for s in per_axis.values()])),
        within_one=float(np.mean([s.within_one for s in per_axis.values()])),
        mse=mse(x, y), mae=mae(x, y), bias=mean_signed_error(x, y), no_correlation=why,
    )


def overall_no_correlation(per_axis: Mapping[str, str | None]) -> str | None:
    """Why the pooled correlations are undefined, from each axis's :attr:`AxisStats.no_correlation`:
    when no axis has a defined correlation, the axes with each reason; else None."""
    if not per_axis or any(why is None for why in per_axis.values()):
        return None
    axes: dict[str, list[str]] = {}
    for a, why in per_axis.items():
        axes.setdefault(str(why), []).append(str(a))
    return "no axis has a defined correlation; " + "; ".join(f"{', '.join(a)}: {w}" for w, a in axes.items())


def overall_from_axis_values(values: Sequence[float], counts: Sequence[int],
                             kind: str) -> float:
    """Combine per-axis Acc or MSE into the Overall without the item-level data.

    ``kind="mean_of_axes"`` averages the values (Overall Acc); ``kind="pooled"`` weights them by
    their item counts, which is what pooling the items gives for a mean such as MSE. Pooled Pearson r
    cannot be rebuilt from per-axis values and has no entry here.
    """
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    if kind == "mean_of_axes":
        return float(v.mean())
    if kind == "pooled":
        return float((v * c).sum() / c.sum())
    raise ValueError(f"kind must be 'mean_of_axes' or 'pooled', got {kind!r}")
