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


def test_a_target_the_tracker_cannot_start_on_in_the_reference_is_unmeasured(tmp_path) -> None:
    # the first check left such a target out of the shares and scored it: a flat grey reference video
    # with the reference's state gave the object ta_hsd 1.0 and AP 0.55 (a review of 2026-12-06)
    from _scene import FPS, clean_frames, state_arrays

    from robojudge.video import write_video

    clean = clean_frames()
    write_video(tmp_path / "gen.mp4", clean, fps=FPS)
    write_video(tmp_path / "ref.mp4", np.full_like(clean, 128), fps=FPS)
    np.savez(tmp_path / "gen.npz", **state_arrays())
    np.savez(tmp_path / "ref.npz", **state_arrays())  # the reference's state, next to its video
    item = Item(item_id="g", video=str(tmp_path / "gen.mp4"), reference_video=str(tmp_path / "ref.mp4"),
                state=str(tmp_path / "gen.npz"))
    tracking._cached_tracks.cache_clear()
    found = tracking.item_tracks(item, tracking.TrackingConfig())
    assert found.truth == "reference_state" and found.followed["object"] == 0.0
    hsd = get_metric("ta_hsd").compute(item, get_metric("ta_hsd").make_config({"targets": ["object"]}))
    assert math.isnan(hsd.value) and "follows object on 0%" in hsd.details["unscored_reason"]
    ap = get_metric("ol_average_precision").compute(item)
    assert math.isnan(ap.value) and "follows object on 0%" in ap.details["unscored_reason"]


def test_the_reference_video_scoring_low_against_its_own_truth_leaves_the_metric_unmeasured(
        monkeypatch) -> None:
    # followed on every frame, yet jittering: DYN of the reference video itself against its truth is
    # low, so a generated video's DYN measures the tracker (the reviewer's demo references: 0.22-0.36)
    t = np.linspace(0, 1, 20)[:, None]
    ee = np.hstack([20 + 60 * t, 50 + 0 * t])
    obj = np.hstack([50 + 10 * t, 60 + 0 * t])
    jitter = np.random.default_rng(0).normal(0, 1.5, ee.shape)
    truth = _tracks(ee, obj)
    steady = tracking.ItemTracks(_tracks(ee, obj), truth, "reference_state", {"ee": 1.0, "object": 1.0},
                                 _tracks(ee, obj))
    shaky = steady._replace(checked=_tracks(ee + jitter, obj))
    monkeypatch.setattr(tracking, "_cached_tracks", lambda key: steady)
    assert get_metric("ta_dyn").compute(ITEM).value == 1.0
    assert get_metric("ta_dyn").compute(ITEM).details["tracks"]["ee"]["reference_score"] == 1.0
    monkeypatch.setattr(tracking, "_cached_tracks", lambda key: shaky)
    dyn = get_metric("ta_dyn").compute(ITEM)
    assert math.isnan(dyn.value)
    assert "the reference video itself scores 0." in dyn.details["unscored_reason"]
    assert dyn.details["tracks"]["ee"]["reference_score"] < 0.5
    hsd = get_metric("ta_hsd").compute(ITEM)  # 1.5 px of jitter on 100 px frames: HSD still resolves it
    assert hsd.value == 1.0 and hsd.details["tracks"]["ee"]["reference_score"] == 1.0


def test_a_target_the_truth_never_shows_is_no_check_failure() -> None:
    # it was reported as "the tracker follows object on 0%", hiding "never visible in the reference"
    t = np.linspace(0, 1, 5)[:, None]
    shown = _tracks(np.hstack([20 + 60 * t, 50 + 0 * t]), np.full((5, 2), np.nan))
    assert math.isnan(tracking._never(shown, "object")) and tracking._never(shown, "ee") == 0.0
