import math

import numpy as np
import pytest

from robojudge.meta import krippendorff_alpha_ordinal, quadratic_weighted_kappa, rater_agreement


def test_rater_agreement_by_hand():
    r = np.array([[1, 2, np.nan], [3, 3, 5], [4, np.nan, np.nan]])
    # comparisons: unit 0 (1,2) -> 1; unit 1 (3,3) 0, (3,5) 2, (3,5) 2; unit 2 has one rating.
    got = rater_agreement(r)
    assert got.n_pairs == 4
    assert got.exact == 0.25 and got.within_one == 0.5 and got.mean_abs_diff == pytest.approx(5 / 4)


def test_qwk_by_hand():
    # a = 1, 2, 3; b = 1, 3, 3; K = 3 so w = ((i - j) / 2)^2: observed disagreement one (2,3) -> 0.25.
    # marginals a: 1,1,1; b: 1,0,2; expected = outer / 3, so sum w*E = (1/3) * sum_ij a_i b_j w_ij:
    # a=1: 1*0 + 2*1 = 2; a=2: 1*.25 + 2*.25 = .75; a=3: 1*1 + 2*0 = 1 -> 3.75 / 3 = 1.25
    # kappa = 1 - 0.25 / 1.25 = 0.8
    assert quadratic_weighted_kappa([1, 2, 3], [1, 3, 3]) == pytest.approx(0.8)


def test_qwk_equals_moment_identity():
    # For labels 1..K, kappa_q = 2 cov / (var a + var b + (mean a - mean b)^2), population moments.
    rng = np.random.default_rng(0)
    a = rng.integers(1, 6, 200)
    b = np.clip(a + rng.integers(-1, 3, 200), 1, 5)
    ident = 2 * np.cov(a, b, bias=True)[0, 1] / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert quadratic_weighted_kappa(a, b, labels=[1, 2, 3, 4, 5]) == pytest.approx(ident)
    with pytest.raises(ValueError):
        quadratic_weighted_kappa([1, 7], [1, 2], labels=[1, 2, 3])


def test_krippendorff_by_hand():
    r = np.array([[1, 1], [1, 2], [2, 2], [2, 3], [3, 3]], dtype=float)
    # coincidences o = [[2,1,0],[1,2,1],[0,1,2]], n_c = 3, 4, 3, n = 10.
    # ordinal d(1,2) = d(2,3) = (7/2)^2 = 12.25, d(1,3) = (10 - 3)^2 = 49.
    # sum o*d = 4 * 12.25 = 49; sum n_c n_k d = 2 * (12*12.25 + 12*12.25 + 9*49) = 1470.
    # alpha = 1 - 9 * 49 / 1470 = 0.7
    assert krippendorff_alpha_ordinal(r) == pytest.approx(0.7)
    assert math.isnan(krippendorff_alpha_ordinal(np.ones((4, 2))))


def test_krippendorff_matches_package():
    kd = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(5)
    r = rng.integers(1, 6, (50, 4)).astype(float)
    r[:, 1] = np.clip(r[:, 0] + rng.integers(-1, 2, 50), 1, 5)
    r[rng.random(r.shape) < 0.25] = np.nan
    want = kd.alpha(reliability_data=r.T, level_of_measurement="ordinal")
    assert krippendorff_alpha_ordinal(r) == pytest.approx(want)
