import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import (
    axis_stats,
    confusion_matrix,
    exact_accuracy,
    kendall,
    mae,
    mean_signed_error,
    mse,
    overall,
    overall_from_axis_values,
    pearson,
    round_to_scale,
    spearman,
    within_one_accuracy,
)


@pytest.fixture
def xy():
    rng = np.random.default_rng(3)
    y = rng.integers(1, 6, 60).astype(float)
    x = np.clip(y + rng.normal(0, 1, 60), 0.5, 5.5)
    return x, y


def test_correlations_match_scipy(xy):
    x, y = xy
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    xr = np.round(x)  # ties on both sides exercise tau-b
    assert kendall(xr, y) == pytest.approx(stats.kendalltau(xr, y).statistic)


def test_rounding_half_up_and_clipped():
    got = round_to_scale([0.2, 1.5, 2.5, 2.49, 4.5, 7.0, np.nan])
    np.testing.assert_array_equal(got, [1, 2, 3, 2, 5, 5, np.nan])


def test_errors_and_accuracy_by_hand():
    pred = np.array([1.0, 2.6, 3.0, 5.0])
    human = np.array([1.0, 2.0, 5.0, 4.0])
    # rounded pred 1, 3, 3, 5 vs 1, 2, 5, 4: exact 1/4; |diff| 0, 1, 2, 1 -> within one 3/4.
    assert exact_accuracy(pred, human) == 0.25
    assert within_one_accuracy(pred, human) == 0.75
    # raw diffs 0, 0.6, -2, 1: MSE (0 + .36 + 4 + 1) / 4 = 1.34; MAE 3.6 / 4 = 0.9; bias -0.4 / 4.
    assert mse(pred, human) == pytest.approx(1.34)
    assert mae(pred, human) == pytest.approx(0.9)
    assert mean_signed_error(pred, human) == pytest.approx(-0.1)


def test_nan_predictions_are_excluded_not_zero():
    pred = np.array([np.nan, 2.0, 3.0, 4.0])
    human = np.array([5.0, 2.0, 3.0, 5.0])
    assert mse(pred, human) == pytest.approx(1 / 3)  # only items 1..3: diffs 0, 0, -1
    s = axis_stats(pred, human)
    assert s.n == 3 and s.n_unscored == 1
    # a human NaN is an unlabelled item: neither scored nor unscored
    s2 = axis_stats([1.0, np.nan], [np.nan, np.nan])
    assert s2.n == 0 and s2.n_unscored == 0 and math.isnan(s2.exact)


def test_degenerate_inputs_give_nan():
    assert math.isnan(pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    # Constants that binary floats do not hold exactly: their deviations from the rounded mean are tiny
    # but not 0, and r came out 0.000 (a judge answering 3.3 everywhere was marked best on r).
    for c in (0.1, 3.3, 100 / 3):
        assert math.isnan(pearson([c] * 7, [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0]))
        assert math.isnan(pearson([1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0], [c] * 7))
    assert math.isnan(spearman([1.0], [2.0]))
    assert math.isnan(mse([], []))
    with pytest.raises(ValueError):
        pearson([1.0, 2.0], [1.0])


def test_confusion_matrix_rows_are_human():
    cm = confusion_matrix([1.2, 2.0, 4.6, 5.0, np.nan], [1, 3, 5, 5, 2])
    assert cm.shape == (5, 5) and cm.sum() == 4
    assert cm[0, 0] == 1 and cm[2, 1] == 1 and cm[4, 4] == 2
    assert confusion_matrix([1, 2], [1, 2], labels=[1, 2]).tolist() == [[1, 0], [0, 1]]


def test_overall_pools_r_and_mse_but_averages_accuracy():
    pa_p, pa_h = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 4.0, 4.0])
    ia_p, ia_h = np.array([5.0, 5.0]), np.array([5.0, 3.0])
    o = overall({"pa": (pa_p, pa_h), "ia": (ia_p, ia_h)})
    # Acc: PA 3/4, IA 1/2 -> mean 0.625 (pooled would be 4/6).
    assert o.exact == pytest.approx(0.625)
    # MSE pooled over 6 items: squared diffs 0, 0, 1, 0, 0, 4 -> 5/6.
    assert o.mse == pytest.approx(5 / 6)
    allp, allh = np.r_[pa_p, ia_p], np.r_[pa_h, ia_h]
    assert o.pearson == pytest.approx(stats.pearsonr(allp, allh).statistic)
    assert o.n == 6
    missing_axis = overall({"pa": (pa_p, pa_h), "ia": (np.full(2, np.nan), ia_h)})
    assert math.isnan(missing_axis.pearson) and missing_axis.n_unscored == 2


# Golden check against RoboJudge Table 2: Overall Acc is the mean of PA and IA Acc and Overall MSE,
# pooled over equally many PA and IA items, is the mean of the two MSEs. Item-level inputs are not
# printed, so pooled r cannot be checked. Rows: (PA Acc, PA MSE, IA Acc, IA MSE, Overall Acc, MSE).
TABLE2 = {
    "Random Baseline": (0.200, 3.349, 0.200, 3.631, 0.200, 3.490),
    "Gemini-3.7-Flash": (0.245, 1.949, 0.341, 0.916, 0.293, 1.433),
    "GPT-5.5": (0.334, 1.359, 0.481, 0.786, 0.407, 1.073),
    "Qwen3.5-4B": (0.154, 4.513, 0.331, 2.620, 0.242, 3.566),
    "RoboJudge-9B": (0.434, 0.806, 0.512, 0.688, 0.473, 0.747),
}


@pytest.mark.parametrize("row", TABLE2)
def test_table2_overall_definition(row):
    pa_acc, pa_mse, ia_acc, ia_mse, acc, mse_ = TABLE2[row]
    assert overall_from_axis_values([pa_acc, ia_acc], [1, 1], "mean_of_axes") == pytest.approx(acc, abs=6e-4)
    assert overall_from_axis_values([pa_mse, ia_mse], [800, 800], "pooled") == pytest.approx(mse_, abs=6e-4)
