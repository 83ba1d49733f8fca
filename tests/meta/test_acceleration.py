"""The acceleration audit's statistics against hand-worked values and a direct bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.meta._acceleration import (
    GenerationCost,
    acceleration_audit,
    best_speedup,
    method_audit,
    pareto_frontier,
    retention_ratio,
    speedup,
)
from robojudge.meta._bootstrap import CONSTANT_WHY, ClusterBootstrap

# Three clips, two metrics: "sharp" (higher is better) and "jerk" (lower is better).
#
#   clip   dense sharp  fast sharp  dense jerk  fast jerk
#   c1        4.0          3.0         1.0        2.0
#   c2        6.0          6.0         2.0        2.0
#   c3        2.0          0.0         3.0        5.0
#   mean      4.0          3.0         2.0        3.0
#
# retention(sharp) = 3 / 4 = 0.75 (higher is better: accelerated over dense)
# retention(jerk)  = 2 / 3 = 0.6667 (lower is better: dense over accelerated)
# Q = (0.75 + 2/3) / 2 = 17/24 = 0.70833...
# Costs: dense 12 s per rollout, fast 3 s: speedup 4 (seconds); "slow" only steps 50 vs 40 -> 1.25.
DENSE = {"sharp": {"c1": 4.0, "c2": 6.0, "c3": 2.0}, "jerk": {"c1": 1.0, "c2": 2.0, "c3": 3.0}}
FAST = {"sharp": {"c1": 3.0, "c2": 6.0, "c3": 0.0}, "jerk": {"c1": 2.0, "c2": 2.0, "c3": 5.0}}
# "slow" keeps sharp exactly and halves jerk on c3 only: jerk mean (1 + 2 + 1.5) / 3 = 1.5 -> 2 / 1.5.
SLOW = {"sharp": dict(DENSE["sharp"]), "jerk": {"c1": 1.0, "c2": 2.0, "c3": 1.5}}
HIGHER = {"sharp": True, "jerk": False}
COSTS = {"dense": GenerationCost(seconds=12.0, steps=50), "fast": GenerationCost(seconds=3.0, steps=10),
         "slow": GenerationCost(steps=40)}


def test_hand_worked_speedup_retention_and_q() -> None:
    audit = acceleration_audit("dense", {"dense": DENSE, "fast": FAST, "slow": SLOW}, HIGHER, COSTS,
                               ["fast", "slow"], level=0.9, bootstrap=0)
    dense, fast, slow = audit.methods
    assert [m.name for m in audit.methods] == ["dense", "fast", "slow"]
    assert (fast.speedup, fast.basis) == (4.0, "seconds")
    assert (slow.speedup, slow.basis) == pytest.approx((1.25, "steps"))
    sharp, jerk = fast.retentions
    assert (sharp.dense_mean, sharp.accelerated_mean, sharp.n) == (4.0, 3.0, 3)
    assert sharp.retention.value == pytest.approx(0.75)
    assert jerk.retention.value == pytest.approx(2 / 3)
    assert fast.q.value == pytest.approx(17 / 24)
    # slow: sharp 1, jerk 2 / 1.5 = 4/3; Q = 7/6, above dense (an accelerated variant may score better)
    assert slow.q.value == pytest.approx(7 / 6)
    # Q >= 0.9: dense (1, 1) and slow (1.25, 7/6) qualify, fast (Q 0.71) does not -> slow
    assert audit.best == "slow"
    assert audit.frontier == ("slow", "fast")  # dense is dominated by slow (faster and better)


def test_dense_against_itself_is_exactly_one() -> None:
    audit = acceleration_audit("dense", {"dense": DENSE, "fast": FAST}, HIGHER, {}, ["fast"], bootstrap=200)
    dense = audit.methods[0]
    assert dense.q.value == 1.0
    assert all(r.retention.value == 1.0 for r in dense.retentions)
    assert (dense.speedup, dense.basis) == (1.0, "dense")
    # Every paired draw is a ratio m / m: exactly 1, so no interval, with the reason.
    assert math.isnan(dense.q.low) and math.isnan(dense.q.high) and dense.q.why == CONSTANT_WHY
    assert math.isnan(audit.methods[1].speedup)  # no costs given: unknown, never guessed


def test_retention_interval_matches_a_direct_bootstrap() -> None:
    rng = np.random.default_rng(3)
    clips = [f"c{i}" for i in range(12)]
    d = rng.uniform(1, 5, size=(12, 2))
    a = d * rng.uniform(0.6, 1.2, size=(12, 2))
    dense = {m: dict(zip(clips, d[:, j], strict=True)) for j, m in enumerate(HIGHER)}
    fast = {m: dict(zip(clips, a[:, j], strict=True)) for j, m in enumerate(HIGHER)}
    got = method_audit("fast", dense, fast, HIGHER, bootstrap=500, seed=11)
    # The same clip draws, resampled by hand: every drawn clip brings both its scores.
    boot = ClusterBootstrap(sorted(clips), n_replicates=500, seed=11)
    order = np.argsort(clips)  # method_audit sorts clips by key
    reps = []
    for counts in boot.counts:
        idx = np.repeat(np.arange(12), counts)
        ds, as_ = d[order][idx], a[order][idx]
        sharp = as_[:, 0].mean() / ds[:, 0].mean()
        jerk = ds[:, 1].mean() / as_[:, 1].mean()
        reps.append((sharp, jerk, (sharp + jerk) / 2))
    lo, hi = np.percentile(np.array(reps), [2.5, 97.5], axis=0)
    for j, r in enumerate(got.retentions):
        assert (r.retention.low, r.retention.high) == pytest.approx((lo[j], hi[j]))
    assert (got.q.low, got.q.high) == pytest.approx((lo[2], hi[2]))
    assert got.q.low < got.q.value < got.q.high


def test_one_or_two_clips_give_no_interval_with_the_reason() -> None:
    # A resample of one or two clips only recombines them: Q 1.611 [1.611, 1.611] read as certainty.
    for keep in (["c1"], ["c1", "c2"]):
        dense = {m: {c: v for c, v in DENSE[m].items() if c in keep} for m in DENSE}
        fast = {m: {c: v for c, v in FAST[m].items() if c in keep} for m in FAST}
        got = method_audit("fast", dense, fast, HIGHER, bootstrap=200)
        assert math.isfinite(got.q.value) and math.isnan(got.q.low) and math.isnan(got.q.high)
        assert got.q.why == f"scored items in {len(keep)} cluster(s); an interval needs at least 3"
        assert all(math.isnan(r.retention.low) and r.retention.why == got.q.why for r in got.retentions)
    three = method_audit("fast", DENSE, FAST, HIGHER, bootstrap=200)
    assert three.q.why is None and three.q.low <= three.q.value <= three.q.high
    # A metric scored on two of the three clips has no interval of its own; Q (three clips) keeps one.
    fast = {"sharp": {"c1": 3.0, "c2": 6.0}, "jerk": FAST["jerk"]}
    part = method_audit("fast", DENSE, fast, HIGHER, bootstrap=200)
    assert math.isnan(part.retentions[0].retention.low) and math.isfinite(part.retentions[1].retention.low)
    assert math.isfinite(part.q.low)


def test_only_clips_scored_by_both_are_paired() -> None:
    fast = {"sharp": {"c1": 3.0, "c2": 6.0}, "jerk": {"c1": 2.0, "c2": 2.0, "c3": 5.0, "c9": 1.0}}
    got = method_audit("fast", DENSE, fast, HIGHER, bootstrap=0)
    sharp, jerk = got.retentions
    assert sharp.n == 2 and sharp.retention.value == pytest.approx(9 / 10)  # (3+6)/(4+6)
    assert jerk.n == 3 and got.clips == 3  # c9 has no dense rollout


def test_undefined_retention_says_why() -> None:
    negative = retention_ratio([1.0, -1.0], [1.0, 1.0], True)
    assert negative[1] == "negative scores: a ratio of means is not a retention"
    zero = retention_ratio([0.0, 0.0], [1.0, 1.0], True)
    assert math.isnan(zero[0]) and zero[1] == "the mean in the denominator is 0"
    assert retention_ratio([], [], True)[1] == "no clip scored by both generators"
    got = method_audit("fast", {"m": {"c": -1.0}, "sharp": DENSE["sharp"]},
                       {"m": {"c": 2.0}, "sharp": FAST["sharp"]}, {"m": True, "sharp": True}, bootstrap=50)
    assert math.isnan(got.retentions[0].retention.value) and got.retentions[0].reason
    assert got.q.value == pytest.approx(0.75)  # Q averages the defined retentions only


def test_speedup_basis() -> None:
    assert speedup(GenerationCost(seconds=10.0), GenerationCost(seconds=4.0)) == (2.5, "seconds")
    assert speedup(GenerationCost(seconds=10.0, steps=50), GenerationCost(steps=25)) == (2.0, "steps")
    s, basis = speedup(GenerationCost(seconds=10.0), GenerationCost(seconds=0.0))
    assert math.isnan(s) and basis == "seconds"
    s, basis = speedup(GenerationCost(), GenerationCost(steps=3))
    assert math.isnan(s) and basis == "unknown"


def test_frontier_and_best_on_a_hand_made_plane() -> None:
    # speedup, Q:  dense (1, 1); cache (2.3, 0.99); sparse (1.8, 0.93); prune (3.1, 0.80); bad (1.5, 0.7)
    pts = {"dense": (1.0, 1.0), "cache": (2.3, 0.99), "sparse": (1.8, 0.93), "prune": (3.1, 0.80),
           "bad": (1.5, 0.70), "nan": (math.nan, 1.0)}
    assert pareto_frontier(pts) == ["dense", "cache", "prune"]  # sparse and bad are dominated by cache
    assert best_speedup(pts, 0.95) == "cache"
    assert best_speedup(pts, 0.90) == "cache"
    assert best_speedup(pts, 0.80) == "prune"  # Q >= level includes equality
    assert best_speedup(pts, 1.01) is None
    assert best_speedup({"a": (2.0, 0.96), "b": (2.0, 0.98)}, 0.95) == "b"  # tie on speed: higher Q


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="also listed"):
        acceleration_audit("dense", {"dense": DENSE}, HIGHER, {}, ["dense"])
    with pytest.raises(ValueError, match="no scores for generator"):
        acceleration_audit("dense", {"dense": DENSE}, HIGHER, {}, ["fast"])
    with pytest.raises(ValueError, match="no metric"):
        acceleration_audit("dense", {"dense": DENSE}, {}, {}, [])
