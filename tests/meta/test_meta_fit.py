import numpy as np
import pytest
from scipy import stats

from robojudge.meta import fit_agreement


def test_fit_agreement_by_hand():
    score = [0.0, 1.0, 2.0, 3.0]
    target = [1.0, 3.0, 2.0, 4.0]
    # OLS: mean x 1.5, mean y 2.5; Sxy = (-1.5)(-1.5) + (-.5)(.5) + (.5)(-.5) + 1.5*1.5 = 4; Sxx = 5
    # slope 0.8, intercept 1.3; fitted 1.3, 2.1, 2.9, 3.7; |resid| .3 .9 .9 .3 -> MAE 0.6
    # SSres = .09 + .81 + .81 + .09 = 1.8, SStot = 5 -> R^2 0.64 = r^2 (r = 4 / 5)
    # rescaled to [0,1]: s' = 0, 1/3, 2/3, 1; t' = 0, 2/3, 1/3, 1 -> |diff| 0, 1/3, 1/3, 0 -> 1/6
    f = fit_agreement(score, target)
    assert f.slope == pytest.approx(0.8) and f.intercept == pytest.approx(1.3)
    assert f.mae_fit == pytest.approx(0.6) and f.r2 == pytest.approx(0.64) and f.pearson == pytest.approx(0.8)
    assert f.mae_rescaled == pytest.approx(1 / 6)
    # theoretical ranges instead of observed: s' = s / 4, t' = t / 4 -> |diffs| .25 .5 0 .25 -> 0.25
    assert fit_agreement(score, target, (0, 4), (0, 4)).mae_rescaled == pytest.approx(0.25)


def test_fit_agreement_matches_scipy_linregress():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 25)
    y = 3 * x + rng.normal(0, 0.3, 25)
    x[3] = np.nan
    f = fit_agreement(x, y)
    keep = np.isfinite(x)
    lr = stats.linregress(x[keep], y[keep])
    assert f.n == 24 and f.r2 == pytest.approx(lr.rvalue ** 2)
    resid = y[keep] - (lr.intercept + lr.slope * x[keep])
    assert f.mae_fit == pytest.approx(np.abs(resid).mean())
    assert f.spearman == pytest.approx(stats.spearmanr(x[keep], y[keep]).statistic)


def test_a_constant_score_or_target_gives_no_fit_even_when_floats_round():
    # Seven copies of 0.1 do not average to 0.1 exactly: the fit took the rounding for variance
    # (slope 6.29, R^2 0) and `meta compare` gave no warning.
    target = [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0]
    f = fit_agreement([0.1] * 7, target)
    assert np.isnan(f.pearson) and np.isnan(f.r2) and np.isnan(f.slope) and np.isnan(f.mae_fit)
    g = fit_agreement(target, [3.3] * 7)
    assert np.isnan(g.pearson) and np.isnan(g.r2)
