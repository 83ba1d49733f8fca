import math

import numpy as np
import pytest
from scipy import stats

from robojudge.aggregate import agreement, select_metrics, threshold_sensitivity

T1 = [0.0, 1.0, 2.0, 3.0]
T2 = [0.0, 1.0, 2.0, 4.0]


def _table():
    return {
        "t1": T1, "t2": T2,
        "a": T1,                    # r(a, t1) = 1, r(a, t2) = 0.98271 (below)
        "b": [3.0, 2.0, 1.0, 0.0],  # r = -1 with t1
        "c": [1.0, 1.0, 1.0, 1.0],  # constant: r undefined
        "ts_vlm2": T1,              # a task-success metric is never a candidate
    }


def test_select_by_hand():
    # r(a, t2): dx = -1.5, -.5, .5, 1.5; dy = -1.75, -.75, .25, 2.25; sum dx*dy = 6.5,
    # sum dx^2 = 5, sum dy^2 = 8.75 -> r = 6.5 / sqrt(43.75) = 0.982708.
    sel = select_metrics(_table(), ["t1", "t2"], 0.98)
    assert sel.min_r["a"] == pytest.approx(6.5 / math.sqrt(43.75))
    assert sel.min_r["a"] == pytest.approx(stats.pearsonr(T1, T2).statistic)
    assert sel.selected == ("a",)
    assert sel.min_r["b"] == pytest.approx(-1.0) and math.isnan(sel.min_r["c"])
    assert "ts_vlm2" not in sel.min_r and "t1" not in sel.min_r
    assert select_metrics(_table(), ["t1", "t2"], 0.99).selected is None


def test_threshold_is_strict():
    assert select_metrics({"t": T1, "m": T1}, ["t"], 1.0).selected is None


def test_targets_as_arrays_and_explicit_candidates():
    sel = select_metrics({"a": T1, "b": T2}, {"human": T2}, 0.5, candidates=["a"])
    assert sel.selected == ("a",) and set(sel.min_r) == {"a"}


def test_agreement_by_hand():
    # y = [2, 4, 5, 8] on x = [1, 2, 3, 4]: slope 9.5 / 5 = 1.9, intercept 4.75 - 1.9 * 2.5 = 0;
    # residuals .1, .2, -.7, .4 -> MAE 0.35; r^2 = 9.5^2 / (5 * 18.75) = 0.962667.
    a = agreement([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 8.0])
    assert a.mae == pytest.approx(0.35) and a.r2 == pytest.approx(90.25 / 93.75)
    assert a.pearson == pytest.approx(math.sqrt(90.25 / 93.75)) and a.spearman == pytest.approx(1.0)
    assert math.isnan(agreement([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]).pearson)


def test_sensitivity_rows():
    rows = threshold_sensitivity(_table(), ["t1", "t2"], [0.5, 0.99])
    assert rows[0].selected == ("a",) and rows[0].n_metrics == 1
    # RoboPhyscore of {a} is a itself, so its agreement with t1 is perfect.
    assert rows[0].agreement is not None and rows[0].agreement["t1"].pearson == pytest.approx(1.0)
    assert rows[1].selected is None and rows[1].agreement is None and rows[1].n_metrics == 0
    refs = threshold_sensitivity(_table(), ["t1", "t2"], [0.5], references={"human": np.array(T2)})
    assert refs[0].agreement is not None and set(refs[0].agreement) == {"human"}


def test_an_undefined_min_r_says_why() -> None:
    # Metric c is constant, d shares two configurations with the targets: their min r was NaN with no
    # reason (the selection's own reason is only given when nothing can be computed at all).
    table = {**_table(), "d": [0.5, 0.1, math.nan, math.nan]}
    sel = select_metrics(table, ["t1", "t2"], 0.98)
    assert sel.selected == ("a",) and sel.reason is None
    assert sel.why == {"c": "values of c are constant", "d": "fewer than 3 configurations with both values"}
    assert math.isnan(sel.min_r["d"]) and "a" not in sel.why and "b" not in sel.why
    flat = agreement([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert flat.why == "scores are constant" and agreement([1.0, 2.0], [1.0, 3.0]).why is not None
    assert agreement([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 8.0]).why is None


def test_sensitivity_against_a_reference_per_sample():
    # Eq. 3 on the configuration means (a kept at 0.5), then each sample's RoboPhyscore (its value of a)
    # against its own reference: 6 samples, one without a value of a.
    a = [0.1, 0.3, 0.2, 0.6, math.nan, 0.9]
    human = [2.0, 3.0, 5.0, 4.0, 9.0, 8.0]
    (row,) = threshold_sensitivity(_table(), ["t1", "t2"], [0.5], sample_values={"a": a, "b": a},
                                   sample_references={"human": human})
    assert row.selected == ("a",) and row.per_sample == {"human"}
    assert set(row.agreement) == {"human"}  # given per sample only: the targets are not added
    got = row.agreement["human"]
    ok = np.isfinite(a)
    assert got.n == 5
    assert got.pearson == pytest.approx(stats.pearsonr(np.array(a)[ok], np.array(human)[ok]).statistic)
    both = threshold_sensitivity(_table(), ["t1", "t2"], [0.5], references={"t1": np.array(T1)},
                                 sample_values={"a": a}, sample_references={"human": human})[0]
    assert both.agreement["t1"].n == 4 and both.per_sample == {"human"}
    with pytest.raises(ValueError, match="need sample_values"):
        threshold_sensitivity(_table(), ["t1", "t2"], [0.5], sample_references={"human": human})
    with pytest.raises(ValueError, match="both per configuration and per sample"):
        threshold_sensitivity(_table(), ["t1", "t2"], [0.5], references={"human": T1},
                              sample_values={"a": a}, sample_references={"human": human})
    with pytest.raises(KeyError, match="kept metric"):
        threshold_sensitivity(_table(), ["t1", "t2"], [0.5], sample_values={"b": a},
                              sample_references={"human": human})
