"""Unit tests of the planted-label rule (no simulator needed)."""

from __future__ import annotations

import numpy as np

from robojudge.suite.sim._failures import FAILURE_TYPES
from robojudge.suite.sim._labels import PROFILES, TRUE_RANKING, Profile, item_score, planted_labels


def f(kind: str, axis: str, item: str, sev: float) -> dict[str, object]:
    return {"type": kind, "axis": axis, "item": item, "severity": sev, "start": 0, "stop": 5}


def test_no_failures_is_perfect() -> None:
    lab = planted_labels([])
    assert (lab["pa"], lab["ia"], lab["overall"], lab["rater"]) == (5, 5, 10, "planted")
    assert set(lab["checklist"].values()) == {2}


def test_item_score_buckets() -> None:
    assert item_score([]) == 2
    assert item_score([0.2]) == 1
    assert item_score([0.2, 0.7]) == 0


def test_pa_failures_do_not_touch_ia() -> None:
    lab = planted_labels([f("teleport", "pa", "scene_consistency", 1.0)])
    assert lab["pa"] == 2 and lab["ia"] == 5
    assert lab["checklist"]["scene_consistency"] == 0
    lab = planted_labels([f("flicker", "pa", "scene_consistency", 0.3)])
    assert lab["pa"] == 4 and lab["checklist"]["scene_consistency"] == 1
    two = planted_labels(
        [f("teleport", "pa", "scene_consistency", 1.0), f("deformation", "pa", "agent_consistency", 1.0)]
    )
    assert two["pa"] == 1 and two["checklist"]["agent_consistency"] == 0


def test_ia_failures_do_not_touch_pa() -> None:
    lab = planted_labels([f("wrong_object", "ia", "object_correctness", 0.9)])
    assert lab["pa"] == 5 and lab["ia"] == 1
    assert lab["checklist"]["object_correctness"] == 0 and lab["checklist"]["goal_completion"] == 0
    short = planted_labels([f("stop_short", "ia", "goal_completion", 0.3)])
    assert short["ia"] == 3 and short["checklist"]["goal_completion"] == 1
    far = planted_labels([f("stop_short", "ia", "goal_completion", 0.9)])
    assert far["ia"] == 2
    unrelated = planted_labels([f("unrelated", "ia", "object_correctness", 0.9)])
    assert unrelated["ia"] == 1 and unrelated["checklist"]["agent_match"] == 1


def test_profiles_and_ranking_are_consistent() -> None:
    assert len(PROFILES) >= 5
    for axis in ("pa", "ia"):
        named = {n.strip() for entry in TRUE_RANKING[axis] for n in entry.split("=")}
        assert named == set(PROFILES)


def _mean_labels(profile: Profile, draws: int, rng: np.random.Generator) -> dict[str, float]:
    """Mean planted PA and IA of a profile's rollouts, drawn as the suite builder draws them: one IA
    failure with probability ia_rate, then pa_count of the PA types, each kept with probability pa_rate."""
    totals = {"pa": 0.0, "ia": 0.0}
    for _ in range(draws):
        fs = []
        if profile.ia_types and rng.random() < profile.ia_rate:
            kind = str(rng.choice(profile.ia_types))
            fs.append({"type": kind, "axis": "ia", "item": FAILURE_TYPES[kind][1],
                       "severity": rng.uniform(*profile.ia_severity), "start": 0, "stop": 48})
        n = int(rng.integers(profile.pa_count[0], profile.pa_count[1] + 1)) if profile.pa_types else 0
        for kind in list(rng.permutation(profile.pa_types))[:n]:
            if rng.random() < profile.pa_rate:
                fs.append({"type": str(kind), "axis": "pa", "item": FAILURE_TYPES[str(kind)][1],
                           "severity": rng.uniform(*profile.pa_severity), "start": 0, "stop": 5})
        labels = planted_labels(fs)
        totals["pa"] += labels["pa"]
        totals["ia"] += labels["ia"]
    return {k: v / draws for k, v in totals.items()}


def test_the_true_ranking_follows_from_the_profiles_and_the_label_rule() -> None:
    """An audit found drifty ranked above glitchy on IA, though both draw IA 2 with p=0.3: a judge that
    ranked them either way round was marked wrong. Each "=" must be a tie in expectation, each ">" a
    clear gap (4,000 draws per profile: the standard error of a mean is below 0.03)."""
    rng = np.random.default_rng(0)
    means = {name: _mean_labels(p, 4000, rng) for name, p in PROFILES.items()}
    for axis in ("pa", "ia"):
        groups = [[n.strip() for n in entry.split("=")] for entry in TRUE_RANKING[axis]]
        for group in groups:
            values = [means[n][axis] for n in group]
            assert max(values) - min(values) < 0.1, (axis, group, values)
        for better, worse in zip(groups, groups[1:], strict=False):
            assert min(means[n][axis] for n in better) > max(means[n][axis] for n in worse) + 0.1, (
                axis, better, worse, means)
