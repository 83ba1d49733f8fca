"""Chance agreement: RoboJudge Table 2's Random Baseline row as the expectation of a uniform draw.

The paper's row (r 0.000, Acc 0.200, MSE 3.349 / 3.631 / 3.490) is what a score drawn uniformly from
1..5 gets on average against its labels; the ``uniform_random`` metric is one seeded draw, whose
agreement lands around it by chance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.meta import OVERALL, axis_stats, chance_agreement, overall
from robojudge.metrics import functional as F


def _labels(counts: dict[int, int]) -> list[float]:
    return [float(v) for v, n in counts.items() for _ in range(n)]


def test_hand_computed_values_on_five_and_three_points() -> None:
    got = chance_agreement({"pa": [1, 2, 5, 5], "ia": [3, 3, 4]})
    # 1-5: Var(U) = (25 - 1) / 12 = 2, E[U] = 3.
    # PA: (3-1)^2 + (3-2)^2 + (3-5)^2 + (3-5)^2 = 4 + 1 + 4 + 4 = 13 -> 2 + 13/4 = 5.25
    # IA: 0 + 0 + 1 = 1 -> 2 + 1/3
    assert got["pa"].mse == pytest.approx(5.25) and got["ia"].mse == pytest.approx(2 + 1 / 3)
    assert got["pa"].exact == got["ia"].exact == pytest.approx(0.2)
    assert got["pa"].pearson == 0.0 and got["ia"].pearson == 0.0
    # Overall: MSE over the 7 pooled pairs, (4 * 5.25 + 3 * 7/3) / 7 = (21 + 7) / 7 = 4; Acc the mean
    assert got[OVERALL].n == 7 and got[OVERALL].mse == pytest.approx(4.0)
    assert got[OVERALL].exact == pytest.approx(0.2)
    # 1-3 (K = 3): Var(U) = (9 - 1) / 12 = 2/3, E[U] = 2; labels 1, 2, 3 -> 2/3 + (1 + 0 + 1)/3 = 4/3
    three = chance_agreement({"v": [1, 2, 3]}, scale=(1, 3))
    assert three["v"].mse == pytest.approx(4 / 3) and three["v"].exact == pytest.approx(1 / 3)


def test_reproduces_the_paper_s_random_baseline_row() -> None:
    """Table 2's MSEs give mean((h - 3)^2) = 1.349 (PA) and 1.631 (IA) over its 800 items per axis (the
    paper prints no label histogram); labels with those spreads give its row back exactly."""
    pa = _labels({1: 100, 5: 100, 2: 549, 3: 251})  # (200 * 4 + 549) / 1000 = 1.349
    ia = _labels({1: 125, 5: 125, 4: 631, 3: 119})  # (250 * 4 + 631) / 1000 = 1.631
    got = chance_agreement({"pa": pa, "ia": ia})
    row = [(got[t].pearson, got[t].exact, got[t].mse) for t in ("pa", "ia", OVERALL)]
    assert np.round(row, 3).tolist() == [[0.0, 0.2, 3.349], [0.0, 0.2, 3.631], [0.0, 0.2, 3.49]]


def test_uniform_random_draws_land_around_the_expectation() -> None:
    """The sampled metric (one seeded draw per item) against the same labels: its MSE and Acc scatter
    around the expected values, and their mean over seeds comes close."""
    rng = np.random.default_rng(3)
    h = {"pa": rng.choice([1, 2, 3, 4, 5], 1500, p=[.15, .2, .25, .25, .15]).astype(float),
         "ia": rng.choice([1, 2, 3, 4, 5], 1500, p=[.2, .15, .2, .2, .25]).astype(float)}
    want = chance_agreement(h)
    ids = [f"item{i:04d}" for i in range(1500)]
    drawn = []
    for seed in range(4):
        pred = {a: np.array([float(F.uniform_score(i, a, seed)) for i in ids]) for a in h}
        o = overall({a: (pred[a], h[a]) for a in h})
        drawn.append((axis_stats(pred["pa"], h["pa"]).mse, o.mse, o.exact, o.pearson))
    mse_pa, mse_all, acc, r = np.mean(drawn, axis=0)
    assert mse_pa == pytest.approx(want["pa"].mse, abs=0.15)
    assert mse_all == pytest.approx(want[OVERALL].mse, abs=0.1)
    assert acc == pytest.approx(0.2, abs=0.02) and r == pytest.approx(0.0, abs=0.04)


def test_undefined_where_a_judge_s_would_be() -> None:
    got = chance_agreement({"pa": [4, 4, 4, 4], "ia": [1, 2]})
    # constant labels, and fewer than MIN_CORRELATION_PAIRS (3) labels: no r, as for any judge
    assert math.isnan(got["pa"].pearson) and math.isnan(got["ia"].pearson)
    assert math.isnan(got[OVERALL].pearson)
    assert got["pa"].mse == pytest.approx(3.0)  # 2 + (3 - 4)^2
    unlabelled = chance_agreement({"pa": [2, 3, 4], "ia": [math.nan, math.nan]})
    assert unlabelled["ia"].n == 0 and math.isnan(unlabelled["ia"].mse)
    assert math.isnan(unlabelled[OVERALL].mse) and unlabelled["pa"].mse == pytest.approx(2 + 2 / 3)
    with pytest.raises(ValueError, match="low <= high"):
        chance_agreement({"pa": [1]}, scale=(5, 1))
