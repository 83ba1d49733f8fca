"""With the reference's state file, the tracker is checked on the reference video: a target it does not
follow there leaves the trajectory and localization scores unmeasured.

An audit scored demo reference videos against their own state: a Fetch reference got ta_hsd 0 against
itself (the tracker lost the end effector, and a lost track scores 0), an ADROIT one 1.0 at 10 fps but
0.13 at 5 fps and 0.27 at half size. A lost or wrong track then says nothing about the video.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.metrics import get_metric
from robojudge.metrics.robophys import tracking
from robojudge.metrics.tracking import Tracks
from robojudge.suite import Item

TA = ("ta_hsd", "ta_ndtw", "ta_dyn")
ITEM = Item(item_id="a", video="a.mp4", reference_video="r.mp4", state="a.npz")


def _tracks(ee: np.ndarray, obj: np.ndarray) -> Tracks:
    t = len(ee)
    points = np.stack([ee, obj], axis=1)
    boxes = np.concatenate([points - 5, points + 5], axis=2)
    boxes[:, 0] = np.nan  # the end effector is a point target
    return Tracks(("ee", "object"), points, boxes, np.ones((t, 2)), (100, 100))


def _install(monkeypatch: pytest.MonkeyPatch, followed: dict[str, float], gen_ee_lost: bool) -> None:
    t = np.linspace(0, 1, 20)[:, None]
    ee = np.hstack([20 + 60 * t, 50 + 0 * t])  # moves 60 px: the farthest
    obj = np.hstack([50 + 10 * t, 60 + 0 * t])
    gen_ee = np.full_like(ee, np.nan) if gen_ee_lost else ee
    item = tracking.ItemTracks(_tracks(gen_ee, obj), _tracks(ee, obj), "reference_state", followed)
    monkeypatch.setattr(tracking, "_cached_tracks", lambda key: item)


def test_a_target_the_tracker_does_not_follow_on_the_reference_is_unmeasured(monkeypatch) -> None:
    _install(monkeypatch, {"ee": 0.3, "object": 1.0}, gen_ee_lost=True)
    for m in TA:
        score = get_metric(m).compute(ITEM)
        assert math.isnan(score.value), m
        reason = score.details["unscored_reason"]
        assert reason.startswith("the reference's farthest-moving track, ee: the tracker follows ee on 30% "
                                 "of the reference video's frames (within 0.05 of its true position; 50% "
                                 "needed)")
        assert score.details["tracks"]["ee"]["reference_followed"] == 0.3
    # another target does not stand in for it; asked for alone, the object is scored
    obj = get_metric("ta_hsd").compute(ITEM, get_metric("ta_hsd").make_config({"targets": ["object"]}))
    assert obj.value == 1.0 and obj.details["tracks"]["object"]["reference_followed"] == 1.0
    # the mean needs every track
    mean = get_metric("ta_ndtw").compute(ITEM, get_metric("ta_ndtw").make_config({"select": "mean"}))
    assert math.isnan(mean.value) and "the mean needs every track" in mean.details["unscored_reason"]
    # the threshold is a setting
    loose = get_metric("ta_hsd").compute(ITEM, get_metric("ta_hsd").make_config({"min_followed": 0.2}))
    assert loose.value == 0.0  # followed: its loss in the generated video is the video's


def test_a_followed_target_lost_in_the_generated_video_still_scores_0(monkeypatch) -> None:
    _install(monkeypatch, {"ee": 0.95, "object": 1.0}, gen_ee_lost=True)
    score = get_metric("ta_hsd").compute(ITEM)
    assert score.value == 0.0 and score.details["tracks"]["ee"]["status"] == "lost in the generated video"
    _install(monkeypatch, {"ee": 0.95, "object": 1.0}, gen_ee_lost=False)
    assert get_metric("ta_hsd").compute(ITEM).value == 1.0


def test_localization_leaves_out_an_object_not_followed_on_the_reference(monkeypatch) -> None:
    _install(monkeypatch, {"ee": 1.0, "object": 0.1}, gen_ee_lost=False)
    score = get_metric("ol_average_precision").compute(ITEM)
    assert math.isnan(score.value)
    why = score.details["unscored_reason"]
    assert "the tracker follows object on 10% of the reference video's frames" in why
    _install(monkeypatch, {"ee": 1.0, "object": 0.9}, gen_ee_lost=False)
    ok = get_metric("ol_average_precision").compute(ITEM)
    assert ok.value == 1.0 and ok.details["objects"]["object"]["reference_followed"] == 0.9
