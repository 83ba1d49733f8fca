"""Unit tests of the planted-label rule (no simulator needed)."""

from __future__ import annotations

from robojudge.suite.sim._labels import PROFILES, TRUE_RANKING, item_score, planted_labels


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
