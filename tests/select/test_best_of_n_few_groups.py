"""Best-of-N over one or two compared groups has no interval (robojudge.meta's MIN_CLUSTERS = 3).

Each group is one bootstrap cluster; a resample of one group is that group every time and one of two
recombines two values, so the old ``gain 0.500 [0.500, 0.500]`` read as certainty. Groups, as
(item, score, label):

  G1: a (2, 2), b (1, 1)   pick a: label 2, random (2 + 1) / 2 = 1.5, gain 0.5
  G2: c (3, 4), d (1, 2)   pick c: label 4, random 3, gain 1
  G3: e (1, 3), f (2, 5)   pick f: label 5, random 4, gain 1

G1 alone: selected 2, gain 0.5. G1 and G2: selected 3, gain 0.75. All three: selected 11 / 3, gain
2.5 / 3, with intervals inside [0.5, 1] for the gain (every replicate mean lies between the groups').
"""

from __future__ import annotations

import math

import pytest

from robojudge.meta import MIN_CLUSTERS
from robojudge.select import BestOfN, pick_group, summarize, summary_rows, summary_text

GROUPS = [
    (("G1",), ["a", "b"], [2, 1], [2, 1]),
    (("G2",), ["c", "d"], [3, 1], [4, 2]),
    (("G3",), ["e", "f"], [1, 2], [3, 5]),
]


def _picks(k: int) -> list:
    return [pick_group(key, ids, scores, labels) for key, ids, scores, labels in GROUPS[:k]]


@pytest.mark.parametrize(("k", "selected", "gain"), [(1, 2.0, 0.5), (2, 3.0, 0.75)])
def test_one_or_two_groups_get_means_and_no_interval(k: int, selected: float, gain: float) -> None:
    assert MIN_CLUSTERS == 3
    s = summarize(_picks(k), bootstrap=200, seed=0)
    assert s.evaluated == k and s.n_replicates == 200
    assert s.stats["selected"].value == pytest.approx(selected)
    assert s.stats["gain"].value == pytest.approx(gain)
    for name, e in s.stats.items():
        assert math.isnan(e.low) and math.isnan(e.high) and math.isnan(e.se), name
        assert e.why == f"scored items in {k} cluster(s); an interval needs at least 3", name
    result = BestOfN("score", "score", ("group",), "overall", _picks(k), s)
    assert "no intervals: a bootstrap over groups needs at least 3 compared groups" in summary_text(result)
    assert "percentile intervals" not in summary_text(result)
    assert dict((n, v) for n, v, _ in summary_rows(result))["gain"] == f"{gain:.3f}"  # no [lo, hi]


def test_three_groups_get_intervals() -> None:
    s = summarize(_picks(3), bootstrap=200, seed=0)
    assert s.stats["selected"].value == pytest.approx(11 / 3)
    gain = s.stats["gain"]
    assert gain.value == pytest.approx(2.5 / 3) and gain.why is None
    assert 0.5 <= gain.low < gain.high <= 1.0
    result = BestOfN("score", "score", ("group",), "overall", _picks(3), s)
    assert "95% percentile intervals over 200 bootstrap replicates of groups" in summary_text(result)
