"""``S_still`` and ``rigis_pose`` on a flat-coloured rig (tests/metrics/multiview/_mv_rig.py).

Keypoints do not match between cameras tens of degrees apart over a plain table, so the relative poses
of the views cannot be read; each view matched against itself over time still says whether its camera
stays where the calibration puts it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _mv_rig import CAMERAS, flat_textures, flat_views, instants, shaken

from robojudge.metrics.multiview import RigisParams, analyse_rig, rigis, rigis_pose
from robojudge.metrics.multiview._rigis import rig_stillness

P = RigisParams(max_features=300)
N = 6  # instants


@pytest.fixture(scope="module")
def flat() -> dict[str, np.ndarray]:
    return flat_views()


def test_clean_flat_rig_scores_near_perfect_without_cross_view_poses(flat):
    frames = instants(flat, N)
    pose, details = rigis_pose(frames, CAMERAS, P)
    assert pose >= 0.97, details
    # The relative poses cannot be read here: the score is the cameras' stillness alone, and says so.
    assert math.isnan(details["relative"]) and "too few matches" in details["relative_unscored"]
    assert details["stillness"] == pose
    views = details["still_details"]["views"]
    assert set(views) == {"a", "b", "c"}
    assert all(v["instants_read"] >= N - 2 and v["largest_turn_deg"] < 0.3 for v in views.values()), views
    # The blue square moves across the table in every view: an object moving is not a camera moving.
    both, both_d = rigis(frames, CAMERAS, P, timing=flat)
    assert both >= 0.97 and both_d["pose"] == pose


@pytest.mark.slow  # five shaken renders, each matched: about 13 s on a busy machine
def test_pose_drops_monotonically_with_the_shake_of_one_camera(flat):
    tex = flat_textures()
    scores, turns = [], []
    for sd in (0.0, 0.5, 1.0, 2.0, 4.0):
        views = {**flat, "b": shaken(CAMERAS["b"], tex, sd)}
        pose, details = rigis_pose(instants(views, N), CAMERAS, P)
        scores.append(pose)
        turns.append(details["still_details"]["views"]["b"]["largest_turn_deg"])
    assert scores[0] >= 0.97
    assert all(a > b for a, b in zip(scores, scores[1:], strict=False)), scores
    assert scores[-1] < 0.5, scores
    # The turn read grows with the shake; the two still cameras are not blamed.
    assert all(a < b for a, b in zip(turns, turns[1:], strict=False)), turns


def test_stillness_is_read_per_view_and_the_worst_camera_counts(flat):
    tex = flat_textures()
    views = {**flat, "c": shaken(CAMERAS["c"], tex, 2.0, seed=3)}
    frames = instants(views, N)
    still, details = rig_stillness(analyse_rig(frames, CAMERAS, P), P)
    per_view = details["views"]
    assert per_view["a"]["score"] >= 0.97 and per_view["b"]["score"] >= 0.97
    assert per_view["c"]["score"] < 0.8 and still == per_view["c"]["score"]


def test_blank_view_or_one_view_stays_unscored(flat):
    frames = instants(flat, N)
    blank = {**frames, "b": np.full_like(frames["b"], 90)}
    value, details = rigis_pose(blank, CAMERAS, P)
    assert math.isnan(value) and "blank" in details["unscored_reason"]
    value, details = rigis_pose({"a": frames["a"]}, CAMERAS, P)
    assert math.isnan(value) and "at least two views" in details["unscored_reason"]


def test_stillness_off_leaves_a_flat_rig_unscored(flat):
    # With the stillness reading switched off nothing else reads the pose of a flat rig: NaN, with both
    # reasons.
    value, details = rigis_pose(instants(flat, N), CAMERAS, P.model_copy(update={"still": False}))
    assert math.isnan(value)
    assert "too few matches" in details["unscored_reason"] and "still = false" in details["unscored_reason"]
