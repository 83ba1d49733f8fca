"""Agreement among human raters: pairwise exact / within-one / mean absolute difference, weighted kappa
and Krippendorff's ordinal alpha.

Ratings come as a ``(n_units, n_raters)`` matrix with NaN where a rater did not rate a unit. (The
``krippendorff`` package on PyPI takes the transpose, raters by units.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import FloatArray


def _ratings_matrix(ratings: npt.ArrayLike) -> FloatArray:
    r = np.asarray(ratings, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"ratings must be 2-D (units x raters), got shape {r.shape}")
    return r


@dataclass(frozen=True)
class RaterAgreement:
    """Pairwise agreement pooled over every unit and every pair of raters who both rated it."""

    n_pairs: int
    exact: float
    within_one: float
    mean_abs_diff: float


def rater_agreement(ratings: npt.ArrayLike) -> RaterAgreement:
    """Exact, within-one and mean absolute difference as in RoboJudge App. A.1, Table 5.

    Every (unit, rater a, rater b) with both ratings present is one comparison, and the three
    statistics are means over all comparisons. To pool several axes (Table 5 pools PA and IA), stack
    their matrices row-wise first.

    Args:
        ratings: ``(n_units, n_raters)`` scores, NaN where missing.
    """
    r = _ratings_matrix(ratings)
    diffs = []
    for a, b in combinations(range(r.shape[1]), 2):
        d = r[:, a] - r[:, b]
        diffs.append(d[np.isfinite(d)])
    d = np.abs(np.concatenate(diffs)) if diffs else np.empty(0)
    if d.size == 0:
        return RaterAgreement(0, math.nan, math.nan, math.nan)
    return RaterAgreement(int(d.size), float(np.mean(d == 0)), float(np.mean(d <= 1)), float(d.mean()))


def quadratic_weighted_kappa(a: npt.ArrayLike, b: npt.ArrayLike,
                             labels: Sequence[float] | None = None) -> float:
    """Cohen's kappa of two raters with quadratic disagreement weights.

    With ordered categories ``labels[0] < ... < labels[K-1]``, the weight of a disagreement between
    categories ``i`` and ``j`` is ``((i - j) / (K - 1))**2`` (by position, not by value) and
    ``kappa = 1 - sum(w * observed) / sum(w * expected)``, where ``expected`` is the outer product of the
    two raters' marginal counts divided by the number of units. Units where either rating is NaN are
    dropped.

    Args:
        a: First rater's categories.
        b: Second rater's categories.
        labels: The categories in order; defaults to the sorted distinct values seen.

    Raises:
        ValueError: A rating is not one of ``labels``.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("a and b must be 1-D arrays of equal length")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    labs = np.unique(np.concatenate([x, y])) if labels is None else np.asarray(labels, dtype=np.float64)
    if labs.size < 2 or x.size == 0:
        return math.nan
    if np.any(np.diff(labs) <= 0):
        raise ValueError("labels must be increasing")
    xi = np.minimum(np.searchsorted(labs, x), labs.size - 1)
    yi = np.minimum(np.searchsorted(labs, y), labs.size - 1)
    if np.any(labs[xi] != x) or np.any(labs[yi] != y):
        raise ValueError("a rating is not one of the labels")
    k = labs.size
    observed = np.zeros((k, k))
    np.add.at(observed, (xi, yi), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / x.size
    idx = np.arange(k)
    w = ((idx[:, None] - idx[None, :]) / (k - 1)) ** 2
    denom = float((w * expected).sum())
    if denom == 0.0:
        return math.nan
    return 1.0 - float((w * observed).sum()) / denom


def krippendorff_alpha_ordinal(ratings: npt.ArrayLike) -> float:
    """Krippendorff's alpha with the ordinal difference function, for any number of raters.

    Built from the coincidence matrix ``o``: a unit with ``m >= 2`` ratings adds ``1 / (m - 1)`` to
    ``o[c, k]`` for every ordered pair of its ratings (from different raters) with values ``c`` and
    ``k``; units with fewer than two ratings are ignored. With ``n_c`` the row sums and ``n`` their
    total, the ordinal squared distance is ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)**2`` and
    ``alpha = 1 - (n - 1) * sum(o * d) / sum(n_c * n_k * d)``. Categories are the distinct values
    observed.

    Args:
        ratings: ``(n_units, n_raters)`` scores, NaN where missing.

    Returns:
        Alpha, or NaN if fewer than two pairable ratings or a single observed category.
    """
    r = _ratings_matrix(ratings)
    values = np.unique(r[np.isfinite(r)])
    if values.size < 2:
        return math.nan
    k = values.size
    # counts[u, c]: how many raters gave unit u category c.
    counts = np.zeros((r.shape[0], k))
    rows, cols = np.nonzero(np.isfinite(r))
    np.add.at(counts, (rows, np.searchsorted(values, r[rows, cols])), 1.0)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m = counts[pairable], m[pairable]
    if counts.shape[0] == 0:
        return math.nan
    inv = 1.0 / (m - 1.0)
    coincidence = (counts * inv[:, None]).T @ counts - np.diag((counts * inv[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    cum = np.cumsum(n_c)
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    # sum_{g=lo..hi} n_g = cum[hi] - cum[lo] + n_lo
    between = cum[hi] - cum[lo] + n_c[lo]
    dist = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    expected = float((np.outer(n_c, n_c) * dist).sum())
    if expected == 0.0:
        return math.nan
    return float(1.0 - (n - 1.0) * float((coincidence * dist).sum()) / expected)
