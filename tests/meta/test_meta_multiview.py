"""Table D5's agreement per embodiment (robojudge.meta._multiview), on hand-worked tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import embodiment_agreement, embodiment_table


def test_hand_worked_table_counts_ties_as_errors() -> None:
    # Embodiment A: labels 5, 4, 3, 3. Human-ordered pairs (the two 3s are not ordered): (0,1) (0,2)
    # (0,3) (1,2) (1,3); the scores tie on (1,2), an error; the other four agree: 4 / 5.
    # Embodiment B: labels 1, 5, 3 and scores 0.2, 0.1, 0.3: pairs (1,0) 5>1 but 0.1<0.2 wrong,
    # (1,2) 5>3 but 0.1<0.3 wrong, (2,0) 3>1 and 0.3>0.2 right: 1 / 3. A NaN score is left out.
    scores = [0.9, 0.8, 0.8, 0.1, 0.2, 0.1, 0.3, math.nan]
    labels = [5, 4, 3, 3, 1, 5, 3, 2]
    groups = ["A"] * 4 + ["B"] * 4
    out = embodiment_agreement(scores, labels, groups)
    a, b = out.groups["A"], out.groups["B"]
    assert a.rank_accuracy == pytest.approx(4 / 5) and b.rank_accuracy == pytest.approx(1 / 3)
    assert (a.n, a.unscored, b.n, b.unscored) == (4, 0, 3, 1)
    rho_a = stats.spearmanr([0.9, 0.8, 0.8, 0.1], [5, 4, 3, 3]).statistic
    rho_b = stats.spearmanr([0.2, 0.1, 0.3], [1, 5, 3]).statistic
    assert a.rho == pytest.approx(rho_a) and b.rho == pytest.approx(rho_b)
    assert rho_b == pytest.approx(-0.5)  # ranks (2,1,3) against (1,3,2): 1 - 6*6/(3*8)
    assert out.rho == pytest.approx((rho_a + rho_b) / 2)
    assert out.rank_accuracy == pytest.approx((4 / 5 + 1 / 3) / 2)
    assert out.defined == 2


def test_lower_is_better_is_turned_and_constant_scores_are_all_errors() -> None:
    labels = [5, 4, 3, 2]
    low = embodiment_agreement([1.0, 2.0, 3.0, 4.0], labels, ["x"] * 4, higher_is_better=False)
    assert low.rho == pytest.approx(1.0) and low.rank_accuracy == 1.0
    flat = embodiment_agreement([0.5] * 4, labels, ["x"] * 4)
    assert math.isnan(flat.rho) and flat.rank_accuracy == 0.0 and flat.defined == 0
    table = embodiment_table({"up": ([4, 3, 2, 1], True), "down": ([4, 3, 2, 1], False)}, labels, ["x"] * 4)
    assert table["up"].rho == pytest.approx(1.0) and table["down"].rho == pytest.approx(-1.0)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        embodiment_agreement([1.0, 2.0], [1, 2, 3], ["a", "a", "a"])
    with pytest.raises(ValueError, match="label of video 1"):
        embodiment_agreement([1.0, 2.0], [1, np.nan], ["a", "a"])
