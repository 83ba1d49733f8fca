"""KIVA on videos with nothing to judge: a frozen picture, a frozen stretch, a robot that stands still
(numpy only, no reader). Such a video must come out unscored, never as a perfect 0%."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.kiva import STILL_MOTION, Thresholds, Tracks, judge_tracks, robot_motion, segment_values

FPS = 10.0
LINKS = [(0, 1), (1, 2)]
CUTS = Thresholds(rigidity=0.05, jerk=50.0, finger=math.nan, finger_gap=math.nan)


def arm(n: int = 48, sway: float = 20.0) -> np.ndarray:
    """A 3-keypoint arm of two 30-px links that swings its tip by ``sway`` px, smoothly, in a 200 x 150
    picture (diagonal 250 px)."""
    t = np.arange(n) / FPS
    pts = np.zeros((n, 3, 2))
    pts[:, 0] = (60.0, 100.0)
    pts[:, 1] = (90.0, 100.0)
    angle = (sway / 30.0) * np.sin(2 * np.pi * 0.25 * t)
    pts[:, 2, 0] = 90.0 + 30.0 * np.cos(angle)
    pts[:, 2, 1] = 100.0 + 30.0 * np.sin(angle)
    return pts


def tracks(pts: np.ndarray, held: np.ndarray | None = None) -> Tracks:
    seen = np.ones(pts.shape[:2], bool)
    return Tracks(pts, seen, seen.astype(float), FPS, 200, 150, held=held)


def test_robot_motion_is_the_farthest_keypoints_95th_percentile_from_its_median_as_a_share_of_the_diagonal():
    # Keypoint 0 walks x = 0..20 over 21 frames: median 10, distances 0, 1, 1, ..., 10, 10; numpy's 95th
    # percentile of those 21 sorted values is the one at index 19, 10 px. Keypoint 1 stays put.
    pts = np.zeros((21, 2, 2))
    pts[:, 0, 0] = np.arange(21.0)
    seen = np.ones((21, 2), bool)
    assert robot_motion(pts, seen, 250.0) == pytest.approx(10 / 250)
    # A keypoint seen on fewer than 8 frames does not count; with none left there is nothing to tell.
    seen[7:, 0] = False
    assert robot_motion(pts, seen, 250.0) == 0.0
    seen[:, 1] = False
    assert math.isnan(robot_motion(pts, seen, 250.0))


def test_a_moving_arm_is_judged_and_its_motion_reported():
    result = judge_tracks(tracks(arm()), LINKS, CUTS)
    assert result.reason is None and result.motion > 5 * STILL_MOTION
    value, measured = result.value()
    assert measured == 3 and value == 0.0
    assert result.details()["robot_motion"] == pytest.approx(result.motion, abs=1e-6)
    assert result.details()["frozen_segments"] == 0


def test_a_frozen_video_is_unscored_not_a_perfect_score():
    pts = np.repeat(arm()[:1], 48, axis=0)  # the first picture, held for the whole video
    held = np.ones(48, bool)
    held[0] = False
    result = judge_tracks(tracks(pts, held), LINKS, CUTS)
    assert "frozen" in result.reason and result.verdicts == []
    assert math.isnan(result.value()[0])
    # Before version 8 the same tracks were three valid segments: KIVA 0%, the best there is.
    old = judge_tracks(tracks(pts), LINKS, CUTS)
    assert "does not move" in old.reason  # without the held frames, the still robot tells it


@pytest.mark.parametrize("noise_px", [0.0, 0.3, 1.0])
def test_a_robot_that_does_not_move_is_unscored_whatever_the_reading_noise(noise_px):
    # A still arm read with noise (the readers measured read a still picture to within 0.1% of the
    # diagonal; 1 px here is 0.4%): no frame is held, yet there is no motion to judge.
    rng = np.random.default_rng(0)
    pts = np.repeat(arm()[:1], 48, axis=0) + rng.normal(0, noise_px, (48, 3, 2))
    result = judge_tracks(tracks(pts), LINKS, CUTS)
    assert result.reason is not None and "does not move" in result.reason
    assert result.motion < STILL_MOTION and math.isnan(result.value()[0])


def test_a_robot_that_moves_just_past_the_bound_is_judged():
    # Tip sway sized so the farthest keypoint's 95th-percentile distance is about 1.5% of the diagonal.
    result = judge_tracks(tracks(arm(sway=4.0)), LINKS, CUTS)
    assert STILL_MOTION < result.motion < 2 * STILL_MOTION and result.reason is None


def test_a_frozen_stretch_gives_no_value_and_the_moving_segments_keep_theirs():
    pts = arm()
    pts[16:32] = pts[16]  # the picture stops for the whole second segment
    held = np.zeros(48, bool)
    held[17:32] = True
    seen = np.ones(pts.shape[:2], bool)
    values = segment_values(pts, seen, LINKS, FPS, 250.0, held=held)
    assert [v.frozen for v in values] == [False, True, False]
    mid = values[1]
    assert math.isnan(mid.rigidity) and math.isnan(mid.jerk)
    assert all(math.isnan(x) for x in mid.link_cv + mid.keypoint_jerk)
    assert len(mid.link_cv) == 2 and len(mid.keypoint_jerk) == 3
    assert not math.isnan(values[0].rigidity) and not math.isnan(values[2].jerk)
    result = judge_tracks(tracks(pts, held), LINKS, CUTS)
    assert result.value()[1] == 2  # the frozen segment is not counted either way
    details = result.details()
    assert details["frozen_segments"] == 1
    assert [s.get("frozen", False) for s in details["segments"]] == [False, True, False]
    assert details["segments"][1]["invalid"] is None


def test_one_moving_frame_in_a_segment_keeps_it_measured():
    pts = arm()
    held = np.zeros(48, bool)
    held[17:32] = True
    held[24] = False  # one new picture in the middle of the segment
    seen = np.ones(pts.shape[:2], bool)
    values = segment_values(pts, seen, LINKS, FPS, 250.0, held=held)
    assert [v.frozen for v in values] == [False, False, False]
    assert not math.isnan(values[1].rigidity)
