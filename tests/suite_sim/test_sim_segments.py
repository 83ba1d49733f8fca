"""Segment verdicts from planted failures (pure rule, no simulator) and the opt-in kinematic profiles."""

from __future__ import annotations

from typing import Any

import pytest

from robojudge.suite.sim._labels import ALL_PROFILES, KINEMATIC_PROFILES, PROFILES
from robojudge.suite.sim._segments import segment_bounds, segment_verdicts


def _f(kind: str, severity: float, start: int, stop: int) -> dict[str, Any]:
    return {
        "type": kind,
        "axis": "pa",
        "item": "agent_consistency",
        "severity": severity,
        "start": start,
        "stop": stop,
    }


def _verdicts(failures: list[dict[str, Any]], n: int = 48) -> list[str]:
    return [s["verdict"] for s in segment_verdicts(failures, n)]


def test_bounds_cover_every_frame_once() -> None:
    assert segment_bounds(48) == [(0, 16), (16, 32), (32, 48)]
    assert segment_bounds(40) == [(0, 16), (16, 32), (32, 40)]
    assert segment_bounds(0) == []
    with pytest.raises(ValueError, match="size"):
        segment_bounds(10, 0)


def test_clean_rollout_is_good_everywhere() -> None:
    segs = segment_verdicts([], 48)
    assert [s["verdict"] for s in segs] == ["Good"] * 3
    assert all(s["rater"] == "planted" and s["failures"] == [] for s in segs)
    assert [(s["start"], s["stop"]) for s in segs] == segment_bounds(48)


def test_severe_failure_is_bad_where_it_covers_four_frames() -> None:
    assert _verdicts([_f("link_stretch", 0.8, 10, 20)]) == ["Bad", "Bad", "Good"]  # 6 and 4 frames
    assert _verdicts([_f("link_stretch", 0.8, 13, 20)]) == ["Medium", "Bad", "Good"]  # 3 and 4 frames
    assert _verdicts([_f("jitter", 0.5, 30, 48)]) == ["Good", "Medium", "Bad"]  # 2 frames, then 16


def test_short_severe_failure_inside_a_segment_is_bad() -> None:
    assert _verdicts([_f("config_jump", 0.9, 20, 22)]) == ["Good", "Bad", "Good"]
    # Split across a boundary, one frame on each side: neither segment holds all of it.
    assert _verdicts([_f("config_jump", 0.9, 15, 17)]) == ["Medium", "Medium", "Good"]


def test_mild_failures_are_medium_and_other_types_do_not_count() -> None:
    assert _verdicts([_f("bend", 0.49, 0, 48)]) == ["Medium"] * 3
    others = [
        {**_f("teleport", 1.0, 0, 48), "item": "scene_consistency"},
        _f("deformation", 1.0, 0, 48),  # geom sizes, not kinematics
        {**_f("wrong_object", 1.0, 0, 48), "axis": "ia", "item": "object_correctness"},
    ]
    assert _verdicts(others) == ["Good"] * 3
    assert _verdicts([*others, _f("finger_pass", 0.6, 33, 40)]) == ["Good", "Good", "Bad"]


def test_segment_lists_the_failures_touching_it() -> None:
    segs = segment_verdicts([_f("jitter", 0.3, 12, 20), _f("bend", 0.7, 18, 30)], 48)
    assert segs[0]["failures"] == [{"type": "jitter", "severity": 0.3, "frames": 4}]
    assert segs[1]["failures"] == [
        {"type": "jitter", "severity": 0.3, "frames": 4},
        {"type": "bend", "severity": 0.7, "frames": 12},
    ]
    assert [s["verdict"] for s in segs] == ["Medium", "Bad", "Good"]


def test_kinematic_profiles_are_opt_in() -> None:
    assert list(PROFILES) == ["oracle", "steady", "sloppy", "drifty", "glitchy", "chaotic"]
    assert list(ALL_PROFILES)[: len(PROFILES)] == list(PROFILES)  # default streams keep their index
    kin = {"link_stretch", "bend", "jitter", "config_jump", "finger_pass"}
    for p in PROFILES.values():
        assert not kin & set(p.pa_types), p.name
    for p in KINEMATIC_PROFILES.values():
        assert set(p.pa_types) == kin and p.ia_rate == 0 and p.pa_rate == 1
    assert (
        KINEMATIC_PROFILES["kin_mild"].pa_severity[1] < 0.5 <= KINEMATIC_PROFILES["kin_severe"].pa_severity[0]
    )
