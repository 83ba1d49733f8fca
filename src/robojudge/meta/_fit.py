"""Agreement of a continuous score with a continuous target, as RoboPhys-3D App. D (Tables 18-19)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import (
    MIN_CORRELATION_PAIRS,
    FloatArray,
    paired,
    pearson,
    spearman,
    why_no_correlation,
)


@dataclass(frozen=True)
class FitAgreement:
    """Linear-fit agreement between a score and a target.

    Attributes:
        n: Pairs used (both values finite).
        pearson: Pearson r.
        spearman: Spearman rho.
        r2: Coefficient of determination of the least-squares line ``target ~ a + b * score``.
        slope: ``b`` of that line.
        intercept: ``a`` of that line.
        mae_fit: Mean absolute residual of that line, ``mean |target - (a + b * score)|``. This is the
            quantity RoboPhys-3D Tables 18-19 print as "MAE".
        mae_rescaled: ``mean |s' - t'|`` after rescaling score and target each to [0, 1] with
            ``(v - lo) / (hi - lo)``; ``lo, hi`` are the given ranges, or the observed minimum and
            maximum when no range is given.
        why: Why the correlations and the fit are NaN (fewer than
            :data:`~robojudge.meta._agreement.MIN_CORRELATION_PAIRS` pairs, a constant side); None when
            they are defined.
    """

    n: int
    pearson: float
    spearman: float
    r2: float
    slope: float
    intercept: float
    mae_fit: float
    mae_rescaled: float
    why: str | None = None


def _rescale(v: FloatArray, bounds: tuple[float, float] | None) -> FloatArray:
    lo, hi = (float(v.min()), float(v.max())) if bounds is None else bounds
    if not hi > lo:
        return np.full_like(v, np.nan)
    return (v - lo) / (hi - lo)


def fit_agreement(score: npt.ArrayLike, target: npt.ArrayLike,
                  score_range: tuple[float, float] | None = None,
                  target_range: tuple[float, float] | None = None) -> FitAgreement:
    """Pearson, Spearman, R^2 and two MAEs of ``score`` against ``target``; see :class:`FitAgreement`.

    Under 3 pairs the correlations and the line (R^2, slope, intercept, ``mae_fit``) are NaN: a line
    through two points fits them exactly, so r = +-1, R^2 = 1 and ``mae_fit`` = 0 say nothing.

    Args:
        score: The automatic score per sample.
        target: The reference (human rating or task success) per sample.
        score_range: Theoretical ``(min, max)`` of the score for ``mae_rescaled``; observed if None.
        target_range: The same for the target.

    Raises:
        ValueError: A range that is not two finite numbers with ``min < max``, or a value outside its
            range (a theoretical range holds every value; rescaled values would leave [0, 1]).
    """
    x, y = paired(score, target)
    for name, v, bounds in (("score", x, score_range), ("target", y, target_range)):
        if bounds is None:
            continue
        lo, hi = bounds
        if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
            raise ValueError(f"{name} range must be two finite numbers LOW < HIGH, got {bounds}")
        out = v[(v < lo) | (v > hi)]
        if out.size:
            raise ValueError(f"{out.size} {name} value(s) lie outside the {name} range [{lo:g}, {hi:g}] "
                             f"(for example {float(out[0]):g})")
    n = int(x.size)
    nan = math.nan
    why = why_no_correlation(x, y, ("scores", "targets"))
    if n < 2:
        return FitAgreement(n, nan, nan, nan, nan, nan, nan, nan, why)
    rescaled = float(np.mean(np.abs(_rescale(x, score_range) - _rescale(y, target_range))))
    dx = x - x.mean()
    sxx = float(dx @ dx)
    # x tested exactly: a constant's deviations from its mean are not 0.
    if n < MIN_CORRELATION_PAIRS or sxx == 0.0 or x.min() == x.max():
        return FitAgreement(n, nan, nan, nan, nan, nan, nan, rescaled, why)
    slope = float(dx @ (y - y.mean())) / sxx
    intercept = float(y.mean() - slope * x.mean())
    resid = y - (intercept + slope * x)
    sst = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / sst if sst > 0 and y.min() != y.max() else nan
    return FitAgreement(n, pearson(x, y), spearman(x, y), r2, slope, intercept,
                        float(np.mean(np.abs(resid))), rescaled, why)
