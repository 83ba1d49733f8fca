"""Frechet distance, Inception Score and MMD against scipy references and hand-worked values."""

import math
import warnings

import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.distance import cdist
from scipy.stats import entropy

from robojudge.metrics.learned.distribution import (
    SmallSampleWarning,
    fit_gaussian,
    frechet_distance,
    frechet_feature_distance,
    inception_score,
    median_bandwidth,
    min_stable_samples,
    mmd2_unbiased,
    polynomial_kernel,
    rbf_kernel,
)

RNG = np.random.default_rng(4)


def _scipy_frechet(mu1, c1, mu2, c2):
    # The reference FID/FVD formula, with scipy's general matrix square root of the product.
    covmean = scipy.linalg.sqrtm(c1 @ c2).real
    return float(((mu1 - mu2) ** 2).sum() + np.trace(c1) + np.trace(c2) - 2 * np.trace(covmean))


def test_frechet_distance_matches_scipy_sqrtm():
    for d in (2, 5, 12):
        a, b = RNG.normal(size=(3 * d, d)), RNG.normal(size=(3 * d, d)) * 1.5 + 0.3
        g1, g2 = fit_gaussian(a), fit_gaussian(b)
        ours = frechet_distance(g1.mean, g1.cov, g2.mean, g2.cov)
        assert ours == pytest.approx(_scipy_frechet(g1.mean, g1.cov, g2.mean, g2.cov), rel=1e-6, abs=1e-9)


def test_frechet_distance_one_dimensional_by_hand():
    # N(1, 2^2) vs N(3, 1^2): (1 - 3)^2 + 4 + 1 - 2 * sqrt(4 * 1) = 4 + 5 - 4 = 5 = (m1-m2)^2 + (s1-s2)^2.
    assert frechet_distance(
        np.array([1.0]), np.array([[4.0]]), np.array([3.0]), np.array([[1.0]])
    ) == pytest.approx(5)


def test_fit_gaussian_uses_unbiased_covariance():
    x = np.array([[0.0], [2.0], [4.0]])  # mean 2, deviations -2, 0, 2: sum of squares 8, / (3 - 1) = 4
    g = fit_gaussian(x)
    assert g.mean[0] == 2.0 and g.cov[0, 0] == pytest.approx(4.0) and g.n == 3


def test_identical_sets_give_zero_and_singular_covariances_stay_finite():
    x = RNG.normal(size=(6, 20))  # 6 samples of 20-d: covariance of rank 5
    g = fit_gaussian(x)
    assert frechet_distance(g.mean, g.cov, g.mean, g.cov) == pytest.approx(0.0, abs=1e-8)
    y = RNG.normal(size=(6, 20)) + 1.0
    value = frechet_feature_distance(x, y, warn=False)
    assert math.isfinite(value) and value > 0
    # A shift of every coordinate by 1 adds about |mu1 - mu2|^2 = 20; the rest are covariance terms.
    assert value == pytest.approx(_scipy_frechet(*_stats(x), *_stats(y)), rel=1e-4)


def _stats(x):
    g = fit_gaussian(x)
    return g.mean, g.cov


def test_small_samples_warn_and_say_why():
    assert min_stable_samples(400) == 401
    x, y = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))  # 4 = d + 1: enough for 3-d features
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frechet_feature_distance(x, y)
    with pytest.warns(SmallSampleWarning, match="rank-deficient"):
        frechet_feature_distance(x[:3], y)


def test_inception_score_by_hand():
    # Two confident, different predictions: p(y) = (1/2, 1/2), each KL = log 2, IS = exp(log 2) = 2.
    assert inception_score(np.eye(2), splits=1) == pytest.approx((2.0, 0.0))
    # The same prediction everywhere: KL = 0, IS = 1 (the lower bound).
    assert inception_score(np.tile([0.2, 0.8], (5, 1)), splits=1)[0] == pytest.approx(1.0)
    # Identical rows whose mean rounds away from them: the KL is -1e-16 in floats, the score exactly 1.
    rows = np.tile([0.23390704020164768, 0.17586159398824547, 0.3945408504257169, 0.09392401788814507,
                    0.10176649749624495], (7, 1))
    assert inception_score(rows, splits=1) == (1.0, 0.0)
    # Splits [e1, e2] and [e1, e1] score 2 and 1: mean 1.5, population std 0.5.
    p = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    assert inception_score(p, splits=2) == pytest.approx((1.5, 0.5))


def test_inception_score_matches_scipy_entropy():
    logits = RNG.normal(size=(30, 7)) * 2
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    parts = np.array_split(p, 3)
    expect = [math.exp(np.mean([entropy(row, part.mean(0)) for row in part])) for part in parts]
    mean, std = inception_score(p, splits=3)
    assert mean == pytest.approx(np.mean(expect), rel=1e-9) and std == pytest.approx(np.std(expect), rel=1e-9)


def test_inception_score_rejects_bad_input():
    with pytest.raises(ValueError, match="splits"):
        inception_score(np.eye(3), splits=4)
    with pytest.raises(ValueError, match="distribution"):
        inception_score(np.ones((3, 3)), splits=1)


def test_mmd_linear_kernel_by_hand():
    # k(x, y) = x y. X = {0, 2}, Y = {1, 3}: off-diagonal K_xx sums to 0 -> 0 / 2 = 0;
    # off-diagonal K_yy = 3 + 3 -> 6 / 2 = 3; K_xy = [[0, 0], [2, 6]] has mean 2. MMD^2_u = 0 + 3 - 4 = -1.
    linear = polynomial_kernel(degree=1, gamma=1.0, coef0=0.0)
    assert mmd2_unbiased(np.array([[0.0], [2.0]]), np.array([[1.0], [3.0]]), linear) == pytest.approx(-1.0)


def test_mmd_rbf_matches_brute_force():
    x, y = RNG.normal(size=(7, 4)), RNG.normal(size=(9, 4)) + 0.5
    bw = median_bandwidth(x, y)
    z = np.concatenate([x, y])
    assert bw == pytest.approx(np.median(cdist(z, z)[~np.eye(16, dtype=bool)]))

    def k(a, b):
        return math.exp(-float(((a - b) ** 2).sum()) / (2 * bw**2))

    xx = sum(k(x[i], x[j]) for i in range(7) for j in range(7) if i != j) / (7 * 6)
    yy = sum(k(y[i], y[j]) for i in range(9) for j in range(9) if i != j) / (9 * 8)
    xy = sum(k(a, b) for a in x for b in y) / (7 * 9)
    assert mmd2_unbiased(x, y, rbf_kernel(bw)) == pytest.approx(xx + yy - 2 * xy, rel=1e-10)


def test_mmd_default_is_the_kid_polynomial_kernel():
    x, y = RNG.normal(size=(5, 3)), RNG.normal(size=(6, 3))
    gram = polynomial_kernel()(x, y)
    assert gram == pytest.approx((x @ y.T / 3 + 1) ** 3)
    same = RNG.normal(size=(200, 3))
    # Two samples of one distribution: the unbiased estimate is near 0 (either sign); a shift makes it
    # clearly positive.
    assert abs(mmd2_unbiased(same[:100], same[100:])) < 0.05
    assert mmd2_unbiased(same[:100], same[100:] + 2.0) > 0.5
