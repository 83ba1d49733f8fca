"""Distances between sets of feature vectors: Frechet distance, Inception Score, MMD (numpy/scipy only).

These are the set-level statistics behind FVD and the Inception Score (RoboPhys-3D App. B.1.1) and
the JEPA similarity (App. B.1.3, MMD of V-JEPA features). Networks produce the features elsewhere;
everything here is plain arithmetic on arrays, so it is tested against scipy and hand-worked values.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]


class SmallSampleWarning(UserWarning):
    """A set statistic was computed from fewer samples than it needs to be stable."""


@dataclass(frozen=True)
class Gaussian:
    """Mean and covariance fitted to a set of feature vectors."""

    mean: np.ndarray
    cov: np.ndarray
    n: int


def fit_gaussian(features: np.ndarray) -> Gaussian:
    """Sample mean and unbiased (``n - 1``) covariance of ``(n, d)`` features, as FID/FVD code does.

    Raises:
        ValueError: When ``features`` is not 2-D or has fewer than 2 rows.
    """
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"need (n >= 2, d) features to fit a Gaussian, got shape {x.shape}")
    return Gaussian(mean=x.mean(axis=0), cov=np.atleast_2d(np.cov(x, rowvar=False)), n=x.shape[0])


def _psd_sqrt(a: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh((a + a.T) / 2)
    root: np.ndarray = (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T
    return root


def frechet_distance(mu1: np.ndarray, cov1: np.ndarray, mu2: np.ndarray, cov2: np.ndarray) -> float:
    """Squared Frechet (2-Wasserstein) distance between ``N(mu1, cov1)`` and ``N(mu2, cov2)``.

    ``d^2 = |mu1 - mu2|^2 + tr(cov1 + cov2 - 2 (cov1^(1/2) cov2 cov1^(1/2))^(1/2))`` (Dowson and Landau,
    1982), the quantity FID and FVD report. The trace of the matrix root is taken as the sum of square
    roots of the eigenvalues of the symmetric matrix ``cov1^(1/2) cov2 cov1^(1/2)``; it equals
    ``tr sqrtm(cov1 cov2)`` but stays real and finite for singular (rank-deficient) covariances, where
    the usual ``scipy.linalg.sqrtm`` route needs an epsilon fix-up. Tiny negative results from
    rounding are clipped to 0.
    """
    mu1, mu2 = np.atleast_1d(np.asarray(mu1, np.float64)), np.atleast_1d(np.asarray(mu2, np.float64))
    c1, c2 = np.atleast_2d(np.asarray(cov1, np.float64)), np.atleast_2d(np.asarray(cov2, np.float64))
    if mu1.shape != mu2.shape or c1.shape != c2.shape or c1.shape != (mu1.size, mu1.size):
        raise ValueError(
            f"shape mismatch: means {mu1.shape}, {mu2.shape}; covariances {c1.shape}, {c2.shape}"
        )
    root1 = _psd_sqrt(c1)
    middle = root1 @ c2 @ root1
    tr_root = float(np.sqrt(np.clip(np.linalg.eigvalsh((middle + middle.T) / 2), 0.0, None)).sum())
    diff = mu1 - mu2
    value = float(diff @ diff) + float(np.trace(c1)) + float(np.trace(c2)) - 2.0 * tr_root
    return max(value, 0.0)


def min_stable_samples(dim: int) -> int:
    """Fewest samples per set for which a ``dim``-dimensional sample covariance can be full rank.

    With ``n`` samples the covariance has rank at most ``n - 1``; below ``dim + 1`` the fitted
    Gaussian is degenerate and the Frechet distance is dominated by estimator bias, which shrinks
    only like ``1/n``. RoboWorM (Fig. B3) shows FVD rankings changing with the number of clips at
    small sample sizes. For I3D's 400-d features this is 401 videos per set.
    """
    return dim + 1


def frechet_feature_distance(generated: np.ndarray, reference: np.ndarray, *, warn: bool = True) -> float:
    """Frechet distance between Gaussians fitted to two ``(n, d)`` feature sets (FVD on I3D features).

    Warns with :class:`SmallSampleWarning` when either set has fewer than :func:`min_stable_samples`
    rows: the value is still computed, but it is biased upward and unstable across resamples.
    """
    g, r = fit_gaussian(generated), fit_gaussian(reference)
    dim = g.mean.size
    if warn and min(g.n, r.n) < min_stable_samples(dim):
        warnings.warn(
            f"Frechet distance from {g.n} generated and {r.n} reference samples of {dim}-d features: "
            f"below {min_stable_samples(dim)} per set the covariance is rank-deficient and the estimate "
            "is biased and unstable; compare values only at equal sample sizes",
            SmallSampleWarning,
            stacklevel=2,
        )
    return frechet_distance(g.mean, g.cov, r.mean, r.cov)


def inception_score(probs: np.ndarray, splits: int = 10) -> tuple[float, float]:
    """Inception Score ``exp(E_x KL(p(y|x) || p(y)))`` (Salimans et al., 2016), mean and std over splits.

    ``probs`` is ``(n, classes)`` class probabilities (rows sum to 1). The rows are cut into ``splits``
    contiguous, near-equal parts (``numpy.array_split``); in each part ``p(y)`` is the mean row and the
    score is ``exp`` of the mean KL divergence; the result is the mean and population std of the
    per-part scores. It lies in ``[1, classes]``.

    Raises:
        ValueError: On a bad shape, rows that are not distributions, or fewer rows than splits.
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or splits < 1 or p.shape[0] < splits:
        raise ValueError(
            f"need (n >= splits, classes) probabilities with splits >= 1, got {p.shape}, {splits}"
        )
    if (p < 0).any() or not np.allclose(p.sum(axis=1), 1.0, atol=1e-4):
        raise ValueError("each row of probs must be a probability distribution (non-negative, sum 1)")
    scores = []
    for part in np.array_split(p, splits):
        marginal = part.mean(axis=0, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(part > 0, part * (np.log(part) - np.log(marginal)), 0.0)
        # A KL divergence is never negative; rounding can make the mean of near-zero ones -1e-16, which
        # would put the score below its bound of 1.
        scores.append(math.exp(max(0.0, float(terms.sum(axis=1).mean()))))
    return float(np.mean(scores)), float(np.std(scores))


def polynomial_kernel(degree: int = 3, gamma: float | None = None, coef0: float = 1.0) -> Kernel:
    """``k(x, y) = (gamma x.y + coef0)^degree``; ``gamma`` defaults to ``1/d`` (the KID kernel)."""

    def kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        g = 1.0 / x.shape[1] if gamma is None else gamma
        result: np.ndarray = (g * (x @ y.T) + coef0) ** degree
        return result

    return kernel


def rbf_kernel(bandwidth: float) -> Kernel:
    """Gaussian kernel ``k(x, y) = exp(-|x - y|^2 / (2 bandwidth^2))``."""
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be positive, got {bandwidth}")

    def kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        sq = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2.0 * (x @ y.T)
        result: np.ndarray = np.exp(-np.clip(sq, 0.0, None) / (2.0 * bandwidth**2))
        return result

    return kernel


def median_bandwidth(x: np.ndarray, y: np.ndarray) -> float:
    """The median heuristic: median pairwise Euclidean distance over the pooled samples (off-diagonal)."""
    z = np.concatenate([np.asarray(x, np.float64), np.asarray(y, np.float64)])
    sq = (z * z).sum(1)[:, None] + (z * z).sum(1)[None, :] - 2.0 * (z @ z.T)
    off = np.sqrt(np.clip(sq[~np.eye(len(z), dtype=bool)], 0.0, None))
    return float(np.median(off))


def mmd2_unbiased(x: np.ndarray, y: np.ndarray, kernel: Kernel | None = None) -> float:
    """Unbiased estimate of the squared maximum mean discrepancy (Gretton et al., 2012, eq. 3).

    ``MMD^2_u = sum_{i!=j} k(x_i, x_j) / (m(m-1)) + sum_{i!=j} k(y_i, y_j) / (n(n-1))
    - 2 sum_{i,j} k(x_i, y_j) / (mn)``. It can be slightly negative when the sets agree. ``kernel``
    defaults to :func:`polynomial_kernel` (degree 3, the KID kernel). This is the estimator behind
    RoboPhys-3D's JEPA similarity (App. B.1.3).

    Raises:
        ValueError: When the sets are not 2-D with equal width and at least 2 rows each.
    """
    a, b = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or min(len(a), len(b)) < 2:
        raise ValueError(f"need two (n >= 2, d) sets of equal d, got {a.shape} and {b.shape}")
    k = kernel or polynomial_kernel()
    kxx, kyy, kxy = k(a, a), k(b, b), k(a, b)
    m, n = len(a), len(b)
    xx = (kxx.sum() - np.trace(kxx)) / (m * (m - 1))
    yy = (kyy.sum() - np.trace(kyy)) / (n * (n - 1))
    return float(xx + yy - 2.0 * kxy.mean())
