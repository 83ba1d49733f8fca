"""Segment verdicts from planted failures (pure rule, no simulator) and the opt-in kinematic profiles."""

from __future__ import annotations

from typing import Any

import numpy as np
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
    seen = {"visible": True}
    assert segs[0]["failures"] == [
        {"type": "jitter", "severity": 0.3, "frames": 4, "visible_frames": 4, **seen}
    ]
    assert segs[1]["failures"] == [
        {"type": "jitter", "severity": 0.3, "frames": 4, "visible_frames": 4, **seen},
        {"type": "bend", "severity": 0.7, "frames": 12, "visible_frames": 12, **seen},
    ]
    assert [s["verdict"] for s in segs] == ["Medium", "Bad", "Good"]


NAMES = ("base", "upper", "fore", "hand")


def _seen(kind: str, severity: float, start: int, stop: int, keys: list[str]) -> dict[str, Any]:
    return {**_f(kind, severity, start, stop), "detail": {"keypoints": keys}}


def test_failure_the_main_view_never_shows_does_not_lower_the_verdict() -> None:
    vis = np.ones((48, 4), bool)
    vis[:, [1, 2]] = False  # "upper" and "fore" are out of view all along
    hidden = _seen("link_stretch", 0.9, 10, 26, ["upper", "fore"])
    segs = segment_verdicts([hidden], 48, keypoints_visible=vis, keypoint_names=NAMES)
    assert [s["verdict"] for s in segs] == ["Good", "Good", "Good"]
    # Still listed, flagged as not visible.
    assert segs[0]["failures"] == [
        {"type": "link_stretch", "severity": 0.9, "frames": 6, "visible_frames": 0, "visible": False}
    ]
    # The same failure on links the view shows is Bad where it covers 4 frames, as without visibility.
    shown = _seen("link_stretch", 0.9, 10, 26, ["fore", "hand"])
    vis[:, 2] = True
    assert [s["verdict"] for s in segment_verdicts([shown], 48, keypoints_visible=vis,
                                                   keypoint_names=NAMES)] == ["Bad", "Bad", "Good"]
    assert _verdicts([shown]) == ["Bad", "Bad", "Good"]


def test_partly_visible_failure_counts_only_its_seen_frames() -> None:
    vis = np.ones((48, 4), bool)
    vis[:20, 3] = False  # the hand comes into view at frame 20
    f = _seen("bend", 0.8, 12, 28, ["fore", "hand"])
    segs = segment_verdicts([f], 48, keypoints_visible=vis, keypoint_names=NAMES)
    # Segment 0 holds frames 12-15 of it, none seen: Good. Segment 1: frames 16-27, seen 20-27 (8): Bad.
    assert [s["verdict"] for s in segs] == ["Good", "Bad", "Good"]
    assert [x["visible_frames"] for x in segs[1]["failures"]] == [8]
    vis[:25, 3] = False  # now seen on 25-27 only: 3 frames of a 16-frame failure, Medium
    segs = segment_verdicts([f], 48, keypoints_visible=vis, keypoint_names=NAMES)
    assert [s["verdict"] for s in segs] == ["Good", "Medium", "Good"]
    # Three keypoints: any two in view show it (here "base" and "fore").
    g = _seen("jitter", 0.8, 12, 28, ["base", "fore", "hand"])
    assert [s["verdict"] for s in segment_verdicts([g], 48, keypoints_visible=vis,
                                                   keypoint_names=NAMES)] == ["Bad", "Bad", "Good"]


def test_a_keypoint_on_a_robot_pixel_is_seen_though_its_origin_is_buried() -> None:
    from robojudge.suite.sim._segments import keypoints_seen

    masks = np.zeros((2, 8, 8), np.uint8)
    masks[:, 2:5, 2:5] = 2  # the robot
    masks[:, 6, 6] = 1  # the table
    uv = np.array([[[3.5, 3.2], [6.1, 6.9], [9.0, 1.0], [3.0, 3.0]]] * 2)  # (col, row) pixels
    visible = np.zeros((2, 4), bool)
    visible[1, 1] = True  # the state's own depth test says visible: always seen
    got = keypoints_seen(uv, visible, masks)
    # On the robot: seen; on the table (something in front of it): not; outside the image: not.
    assert got.tolist() == [[True, False, False, True], [True, True, False, True]]
    uv[0, 0] = np.nan  # behind the camera, no projection
    assert not keypoints_seen(uv, visible, masks)[0, 0]


def test_visibility_errors_name_what_is_wrong() -> None:
    f = _seen("bend", 0.8, 12, 28, ["elbow"])
    with pytest.raises(ValueError, match="elbow"):
        segment_verdicts([f], 48, keypoints_visible=np.ones((48, 4), bool), keypoint_names=NAMES)
    with pytest.raises(ValueError, match="40 frames"):
        segment_verdicts([f], 48, keypoints_visible=np.ones((40, 4), bool), keypoint_names=NAMES)


def test_kinematic_profiles_are_opt_in() -> None:
    assert list(PROFILES) == ["oracle", "steady", "sloppy", "drifty", "glitchy", "chaotic"]
    assert list(ALL_PROFILES)[: len(PROFILES)] == list(PROFILES)  # default streams keep their index
    kin = {"link_stretch", "bend", "jitter", "config_jump", "finger_pass", "joint_limit"}
    for p in PROFILES.values():
        assert not kin & set(p.pa_types), p.name
    for p in KINEMATIC_PROFILES.values():
        assert set(p.pa_types) == kin and p.ia_rate == 0 and p.pa_rate == 1
    assert (
        KINEMATIC_PROFILES["kin_mild"].pa_severity[1] < 0.5 <= KINEMATIC_PROFILES["kin_severe"].pa_severity[0]
    )
