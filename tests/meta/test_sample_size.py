"""FVD sample-size sensitivity: curves over n and ranking flips, on hand-made cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.meta._sample_size import flip_share, ranking_flips, sample_size_sensitivity


def _max(x: np.ndarray) -> float:
    return float(x[:, 0].max())


def test_ranking_flips_by_hand() -> None:
    before = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    # b and c swap; a ties with b (was below it); d unchanged above all.
    after = {"a": 2.5, "b": 2.5, "c": 2.0, "d": 9.0}
    # pairs: ab tie now (flip), ac (1<3 -> 2.5>2: flip), ad same, bc flip, bd same, cd same -> 3 of 6
    assert ranking_flips(before, after) == (3, 6)
    assert flip_share(before, after) == 0.5
    assert flip_share(before, before) == 0.0
    assert ranking_flips({"a": 1.0, "b": math.nan}, {"a": 1.0, "b": 2.0}) == (0, 0)
    assert math.isnan(flip_share({"a": 1.0}, {"a": 2.0}))


def test_flips_of_a_size_biased_statistic() -> None:
    # The set maximum grows with n. A has 50 windows spread over [0, 1] (full max 1.0), B and C four
    # windows each at 0.9 and 0.1: the full-sample ranking is A > B > C.
    feats = {"A": np.linspace(0, 1, 50)[:, None], "B": np.full((4, 1), 0.9), "C": np.full((4, 1), 0.1)}
    res = sample_size_sensitivity(feats, _max, [2, 4, 50], draws=2000, seed=1)
    assert res.full == {"A": 1.0, "B": 0.9, "C": 0.1}
    assert res.windows == {"A": 50, "B": 4, "C": 4}
    # Mean max of 2 or 4 of A's windows is about 0.67 / 0.8 < 0.9: only the pair (A, B) flips -> 1/3.
    assert res.flips[0] == pytest.approx(1 / 3) and res.flips[1] == pytest.approx(1 / 3)
    # One draw at n = 2: A < B when both windows lie below 0.9 (45 of 50: 45*44/(50*49)), A < C when
    # both lie below 0.1 (5 of 50: 5*4/(50*49)); B vs C never flips -> expected share
    expected = (45 * 44 + 5 * 4) / (50 * 49) / 3
    assert res.draw_flips[0] == pytest.approx(expected, abs=0.02)
    # n = 50 exceeds B's and C's windows: no subset without replacement, so no ranking at that n.
    assert math.isnan(res.curves["B"][2].mean) and math.isnan(res.flips[2])
    # The share's pairs are counted per n: all three at 2 and 4, none at 50.
    assert res.pairs == (3, 3, 0)
    # With a fourth generator of 10 windows, n = 8 compares only (A, D): the share is over 1 pair.
    feats["D"] = np.linspace(0, 0.5, 10)[:, None]
    four = sample_size_sensitivity(feats, _max, [2, 8], draws=50, seed=1)
    assert four.pairs == (6, 1)
    # A subset of all A's windows is a permutation of them: exactly the full value, every draw.
    assert res.curves["A"][2].mean == 1.0 and res.curves["A"][2].sd == 0.0
    a2 = res.curves["A"][0]
    assert a2.low < a2.mean < a2.high and len(a2.values) == 2000


def test_with_replacement_gives_values_beyond_the_windows() -> None:
    feats = {"A": np.arange(6, dtype=float)[:, None], "B": np.arange(3, dtype=float)[:, None]}
    res = sample_size_sensitivity(feats, _max, [5], draws=50, seed=0, replace=True)
    assert not math.isnan(res.curves["B"][0].mean)
    assert res.curves["B"][0].mean <= 2.0


def test_bad_input_names_the_generator() -> None:
    with pytest.raises(ValueError, match="'B'"):
        sample_size_sensitivity({"A": np.zeros((4, 2)), "B": np.zeros(4)}, _max, [2])
    with pytest.raises(ValueError, match="at least 2"):
        sample_size_sensitivity({"A": np.zeros((4, 2)), "B": np.zeros((4, 2))}, _max, [1])
    with pytest.raises(ValueError, match="two generators"):
        sample_size_sensitivity({"A": np.zeros((4, 2))}, _max, [2])
