"""KIVA's jerk-window attribution and finger check (crossing and gap) on hand-worked tracks (numpy only,
no reader)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.kiva import (
    Thresholds,
    Tracks,
    judge_segments,
    judge_tracks,
    percentile_thresholds,
    segment_values,
)
from robojudge.kiva._links import FINGER_PAIRS, finger_indices
from robojudge.kiva._score import (
    GAP_FLOOR,
    JERK_WINDOW,
    JERK_WINDOWS,
    MIN_FINGER,
    finger_crossing,
    finger_gaps,
    finger_sides,
    gap_ratio,
    held_frames,
    jerk_window_span,
)

FPS = 10.0
DIAG = 100.0
SCALE = FPS**3 / DIAG  # jerk of a 1-px third difference


def still(n: int = 48) -> np.ndarray:
    return np.full((n, 1, 2), 5.0)


def jerks(pts: np.ndarray, **kw) -> list[float]:
    seen = np.ones(pts.shape[:2], bool)
    return [v.jerk for v in segment_values(pts, seen, [], FPS, DIAG, **kw)]


def flags(pts: np.ndarray, cuts: Thresholds) -> list[bool]:
    seen = np.ones(pts.shape[:2], bool)
    return [v.invalid for v in judge_segments(segment_values(pts, seen, [], FPS, DIAG), cuts)]


def test_a_failure_ending_before_a_boundary_does_not_flag_the_clean_segment_after_it():
    # A keypoint at rest is displaced by 1 px on frames 8-14, the failure's span inside segment 0; it
    # snaps back between frames 14 and 15. Windows containing that step end at 15, 16 and 17, with
    # third differences -1, +2, -1 px (hand-worked). Their centres (13.5, 14.5, 15.5) lie in segment 0.
    pts = still()
    pts[8:15, 0, 0] += 1.0
    assert jerks(pts) == pytest.approx([2 * SCALE, 0.0, 0.0])
    # The first rule (windows ending in the segment) gave the +2 and -1 windows to segment 1.
    assert jerks(pts, window="end") == pytest.approx([2 * SCALE, 2 * SCALE, 0.0])
    assert flags(pts, Thresholds(math.nan, 0.5 * SCALE)) == [True, False, False]


def test_a_jump_across_a_boundary_counts_in_the_segment_where_it_lands():
    # The keypoint jumps 1 px between frames 15 and 16 and stays. Windows holding the step end at 16, 17
    # and 18, with third differences +1, -2, +1 px (frames 13-16: 0, 0, 0, 1; 14-17: 0, 0, 1, 1; 15-18:
    # 0, 1, 1, 1). Segment 1 counts the window ending 18 (one frame back, three of its own); segment 0
    # counts windows ending up to 15, none of which holds the step; the two between count for neither.
    pts = still()
    pts[16:, 0, 0] += 1.0
    assert jerks(pts) == pytest.approx([0.0, 1 * SCALE, 0.0])
    assert flags(pts, Thresholds(math.nan, 0.5 * SCALE)) == [False, True, False]
    # With the windows of versions 3-6 (by their centre) the +2 window (centre 15.5) went to segment 0,
    # the window ending 18 to segment 1: a failure starting at a boundary flagged the clean segment before.
    assert jerks(pts, window="centre") == pytest.approx([2 * SCALE, 1 * SCALE, 0.0])


def test_a_failure_ending_exactly_at_a_boundary_shows_in_the_next_segment_by_its_step_back():
    # Displaced on frames 10-15, back on frame 16: the step in (9 -> 10) is segment 0's (+2 at most, as
    # hand-worked above); the step back (15 -> 16) shows only in the window ending 18 (frames 15-18: 1, 0,
    # 0, 0 -> -1), which is segment 1's. The cost of the rule: nothing tells a step back from a step in.
    pts = still()
    pts[10:16, 0, 0] += 1.0
    assert jerks(pts) == pytest.approx([2 * SCALE, 1 * SCALE, 0.0])


def test_window_spans_by_rule():
    assert jerk_window_span(16, 32) == (18, 32)
    assert jerk_window_span(16, 32, "lead") == (18, 32)
    assert jerk_window_span(16, 32, "centre") == (18, 34)
    assert jerk_window_span(16, 32, "end") == (16, 32)
    assert JERK_WINDOW == "lead" and set(JERK_WINDOWS) == {"lead", "centre", "end"}
    with pytest.raises(ValueError, match="unknown jerk window rule 'mid'"):
        jerk_window_span(0, 16, "mid")
    # Every window ending inside a run of segments counts for exactly one of them, but the two that
    # straddle each boundary by two or three frames.
    spans = [range(*jerk_window_span(a, a + 16)) for a in (0, 16, 32)]
    counted = sorted(t for r in spans for t in r)
    assert len(counted) == len(set(counted))
    assert set(range(2, 48)) - set(counted) == {16, 17, 32, 33}


def hand(width: np.ndarray, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    """A gripper seen from the side: hand keypoint at (50, 20), two fingers at (50 -/+ width, 60)."""
    n = len(width)
    a = np.stack([50.0 - width, np.full(n, 60.0)], axis=-1)
    b = np.stack([50.0 + width, np.full(n, 60.0)], axis=-1)
    h = np.tile([50.0, 20.0], (n, 1))
    pts = np.stack([h, a, b], axis=1)
    return pts + np.random.default_rng(seed).normal(0, noise, pts.shape)


FINGERS = [(1, 2, 0)]


def finger_values(pts: np.ndarray, fingers=FINGERS):
    return segment_values(pts, np.ones(pts.shape[:2], bool), [], FPS, DIAG, fingers=fingers)


def test_finger_side_flips_when_one_finger_passes_through_the_other():
    width = np.linspace(5.0, 2.0, 48)  # closing, never crossing
    crossed = width.copy()
    crossed[20:28] = -3.0  # fingers swapped: a at x=53, b at x=47
    pts = hand(crossed)
    # Axis (0, 40) from the hand to the fingers' midpoint; b - a = (2w, 0); cross = 0 * 0 - 1 * 2w = -2w.
    assert finger_sides(pts, np.ones((48, 3), bool), FINGERS)[:, 0] == pytest.approx(-2 * crossed)
    # The usual side is negative (median); frames 20-27 are 6 px on the wrong side: 0.06 of the diagonal.
    depth = finger_crossing(pts, np.ones((48, 3), bool), FINGERS, DIAG)[:, 0]
    assert depth[20:28] == pytest.approx(0.06) and not depth[:20].any() and not depth[28:].any()
    assert [v.finger for v in finger_values(pts)] == pytest.approx([0.0, 0.06, 0.0])
    assert [v.finger for v in finger_values(hand(width))] == pytest.approx([0.0, 0.0, 0.0])


def test_finger_check_flags_a_crossing_segment_and_passes_a_clean_one_with_calibrated_threshold():
    # References: nearly closed fingers (0.2 px each side of the axis) read with 0.3 px of noise, so some
    # frames land on the wrong side by a little; the threshold is their 95th percentile.
    refs = [v for seed in range(6) for v in finger_values(hand(np.full(48, 0.2 + 0.1 * seed), 0.3, seed))]
    got = [v.finger for v in refs]
    cuts = percentile_thresholds(refs, 95)
    assert cuts.finger == pytest.approx(max(float(np.percentile(got, 95)), MIN_FINGER))
    assert cuts.finger > MIN_FINGER  # the noise, not the floor, sets it here
    assert percentile_thresholds(refs, 95) == cuts  # the same references give the same cut
    width = np.linspace(5.0, 1.0, 48)
    crossed = width.copy()
    crossed[18:26] = -2.5
    clean = judge_segments(finger_values(hand(width, 0.3, 9)), cuts)
    bad = judge_segments(finger_values(hand(crossed, 0.3, 9)), cuts)
    assert [v.invalid for v in clean] == [False, False, False]
    assert all(v.finger_judged for v in clean)
    assert [v.finger_bad for v in bad] == [False, True, False]
    assert bad[1].score == pytest.approx(bad[1].values.finger / cuts.finger) and bad[1].score > 1
    d = bad[1].to_dict()
    assert d["finger_invalid"] is True and d["finger"] == pytest.approx(bad[1].values.finger, abs=1e-6)


def test_references_that_never_cross_get_the_floor_and_no_pairs_means_no_finger_part():
    refs = finger_values(hand(np.full(48, 4.0)))
    assert percentile_thresholds(refs, 95).finger == MIN_FINGER
    plain = segment_values(hand(np.full(48, 4.0)), np.ones((48, 3), bool), [], FPS, DIAG)
    assert all(math.isnan(v.finger) for v in plain)
    cuts = percentile_thresholds(plain, 95)
    assert math.isnan(cuts.finger)
    verdicts = judge_segments(plain, cuts)
    assert not any(v.finger_judged for v in verdicts) and "finger" not in verdicts[0].to_dict()
    # An unseen finger gives no value on the frames it is hidden.
    seen = np.ones((48, 3), bool)
    seen[:, 2] = False
    assert all(math.isnan(v.finger) for v in segment_values(hand(np.full(48, 4.0)), seen, [], FPS, DIAG,
                                                             fingers=FINGERS))


def test_judge_tracks_passes_finger_pairs_and_reports_the_threshold():
    crossed = np.linspace(5.0, 1.0, 48)
    crossed[34:40] = -2.0
    tracks = Tracks(hand(crossed), np.ones((48, 3), bool), np.ones((48, 3)), FPS, 60, 80)  # diagonal 100
    result = judge_tracks(tracks, [], Thresholds(math.nan, 1e9, 0.01), fingers=FINGERS)
    assert [v.invalid for v in result.verdicts] == [False, False, True]
    assert result.details()["thresholds"]["finger"] == 0.01
    assert result.value("finger") == pytest.approx((100 / 3, 3))


def test_built_in_finger_pairs_name_keypoints_of_their_robots():
    from robojudge.robots import SIM_KEYPOINTS

    for robot, pairs in FINGER_PAIRS.items():
        names = SIM_KEYPOINTS[robot]
        assert len(finger_indices(pairs, names)) == len(pairs), robot
    assert "adroit" not in FINGER_PAIRS
    names = list(SIM_KEYPOINTS["fetch"])
    got = finger_indices(FINGER_PAIRS["fetch"], names)
    assert got == [(names.index("robot0:l_gripper_finger_link"), names.index("robot0:r_gripper_finger_link"),
                    names.index("robot0:wrist_roll_link"))]
    assert finger_indices(FINGER_PAIRS["fetch"], names[:7]) == []  # a reader without the fingers


def test_a_held_frame_is_left_out_of_the_jerk():
    # A keypoint moving 2 px a frame whose frame 20 repeats frame 19 (a slowed replay): positions
    # ..., 36, 38, 38, 40, ... A stall of one frame is a step of -2 px: third differences +-2 and 4 px.
    x = 2.0 * np.arange(48)
    x[20:] -= 2.0
    pts = np.stack([x, np.zeros(48)], axis=-1)[:, None]
    assert jerks(pts)[1] == pytest.approx(4 * SCALE)
    held = np.zeros(48, bool)
    held[20] = True
    seen = np.ones((48, 1), bool)
    got = segment_values(pts, seen, [], FPS, DIAG, held=held)
    assert [v.jerk for v in got] == pytest.approx([0.0, 0.0, 0.0])
    tracks = Tracks(pts, seen, np.ones((48, 1)), FPS, 60, 80, held=held)
    assert [v.values.jerk for v in judge_tracks(tracks, [], Thresholds(math.nan, 1.0)).verdicts] == \
        pytest.approx([0.0, 0.0, 0.0])
    # A real jump is still seen with held frames dropped around it.
    jumped = pts.copy()
    jumped[30:, 0, 1] += 3.0
    assert segment_values(jumped, seen, [], FPS, DIAG, held=held)[1].jerk == pytest.approx(6 * SCALE)
    with pytest.raises(ValueError, match=r"held must be \(48,\)"):
        segment_values(pts, seen, [], FPS, DIAG, held=held[:10])


def test_held_frames_are_frames_that_repeat_the_previous_one():
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (6, 8, 8, 3)).astype(np.uint8)
    frames[3] = frames[2]
    frames[5] = np.clip(frames[4].astype(int) + (rng.random((8, 8, 3)) < 0.05), 0, 255)  # codec noise
    assert held_frames(frames).tolist() == [False, False, False, True, False, True]
    assert held_frames(frames, tol=0.0).tolist() == [False] * 6


def test_jerk_of_a_window_is_the_mean_over_keypoints_or_with_max_the_largest():
    # Three keypoints; the first steps 3 px at frame 20, the others stay: its third differences are
    # 3, -6 and 3 px in the windows ending at frames 20, 21 and 22, on one keypoint of three.
    pts = np.concatenate([still(), still(), still()], axis=1)
    pts[20:, 0, 0] += 3.0
    mean = jerks(pts)
    largest = jerks(pts, jerk_reduce="max")
    assert mean[1] == pytest.approx(6.0 * SCALE / 3) and largest[1] == pytest.approx(6.0 * SCALE)
    assert mean[0] == largest[0] == 0.0 and mean[2] == largest[2] == 0.0
    # an unseen keypoint is left out either way; a window with none seen has no value
    seen = np.ones(pts.shape[:2], bool)
    seen[:, 0] = False
    assert [v.jerk for v in segment_values(pts, seen, [], FPS, DIAG, jerk_reduce="max")] == [0.0, 0.0, 0.0]
    seen[:] = False
    assert all(math.isnan(v.jerk) for v in segment_values(pts, seen, [], FPS, DIAG, jerk_reduce="max"))
    with pytest.raises(ValueError, match="jerk reduce"):
        jerks(pts, jerk_reduce="median")


def test_finger_gap_is_the_distance_between_paired_fingers_and_its_segment_minimum():
    width = np.linspace(5.0, 1.0, 48)  # each finger `width` px from the axis: the gap is 2 * width
    pts = hand(width)
    gaps = finger_gaps(pts, np.ones((48, 3), bool), FINGERS, DIAG)[:, 0]
    assert gaps == pytest.approx(2 * width / DIAG)
    assert [v.finger_gap for v in finger_values(pts)] == pytest.approx([2 * width[s - 1] / DIAG
                                                                         for s in (16, 32, 48)])
    hidden = np.ones((48, 3), bool)
    hidden[10:20, 1] = False
    assert np.isnan(finger_gaps(pts, hidden, FINGERS, DIAG)[10:20, 0]).all()


def gap_refs() -> list:
    # References: fingers 3-4.5 px each side of the axis (gap 6-9 px), read with 0.3 px of noise.
    return [v for seed in range(6) for v in finger_values(hand(np.full(48, 3.0 + 0.3 * seed), 0.3, seed))]


def test_fingers_read_together_but_not_crossed_fail_the_finger_gap():
    refs = gap_refs()
    cuts = percentile_thresholds(refs, 95)
    # The gap's cut is the complement percentile: fingers closer than 95% of reference segments' closest.
    assert cuts.finger_gap == pytest.approx(float(np.percentile([v.finger_gap for v in refs], 5)))
    assert 0.05 < cuts.finger_gap < 0.07
    width = np.full(48, 3.5)
    closed = width.copy()
    closed[20:26] = 0.2  # a pass read as the fingers meeting: 0.4 px apart, on their usual sides
    bad = judge_segments(finger_values(hand(closed)), cuts)
    assert [v.values.finger for v in bad] == pytest.approx([0.0, 0.0, 0.0])  # no crossing to see
    assert [v.finger_bad for v in bad] == [False, True, False]
    assert [v.invalid for v in judge_segments(finger_values(hand(width)), cuts)] == [False, False, False]
    assert bad[1].score == pytest.approx(cuts.finger_gap / 0.004) and bad[1].score > 10
    d = bad[1].to_dict()
    assert d["finger_invalid"] is True and d["finger_gap"] == pytest.approx(0.004)
    # Fingers read at the very same point: the ratio is taken against the floor, not zero.
    closed[20:26] = 0.0
    touching = judge_segments(finger_values(hand(closed)), cuts)
    assert touching[1].score == pytest.approx(gap_ratio(0.0, cuts.finger_gap)) == cuts.finger_gap / GAP_FLOOR


def test_a_calibration_without_a_gap_cut_judges_as_before_and_touching_references_mute_the_gap():
    cuts = percentile_thresholds(gap_refs(), 95)
    closed = np.full(48, 3.5)
    closed[20:26] = 0.2
    values = finger_values(hand(closed))
    # A reader calibrated before measure version 5 stored no gap cut: the crossing alone is judged.
    before = judge_segments(values, Thresholds(cuts.rigidity, cuts.jerk, cuts.finger))
    assert all(v.finger_judged for v in before) and not any(v.finger_bad for v in before)
    # (no links here, no crossing: the score is the jerk's ratio, which the fingers' closing raises)
    assert before[1].score == pytest.approx(values[1].jerk / cuts.jerk)
    assert judge_segments(values, cuts)[1].score > 5 * before[1].score
    # References whose fingers close completely give a cut of 0: no gap is below it.
    touching = percentile_thresholds(finger_values(hand(np.r_[np.full(24, 3.0), np.zeros(24)])), 95)
    assert touching.finger_gap == 0.0
    assert not any(v.finger_bad for v in judge_segments(values, touching))
    assert gap_ratio(0.0, 0.0) == 0.0


def test_a_link_seen_on_min_frames_frames_is_measured_and_on_fewer_is_not():
    from robojudge.kiva._score import MIN_FRAMES, link_cvs

    # One 100 px link on a 200 px diagonal, seen on exactly MIN_FRAMES frames: its spread over its median,
    # 7.07/100; seen on one frame fewer it has no value.
    assert MIN_FRAMES == 4
    seen = np.full(16, np.nan)
    seen[:4] = [100.0, 110.0, 90.0, 100.0]
    assert link_cvs(seen[:, None], diagonal=200.0)[0] == pytest.approx(np.std(seen[:4]) / 100.0)
    seen[3] = np.nan
    assert math.isnan(link_cvs(seen[:, None], diagonal=200.0)[0])


def test_a_segment_at_its_cut_is_valid():
    from robojudge.kiva._score import SegmentValues, Thresholds, invalid_percentage, judge_segments

    # References whose links never change length give a rigidity cut of 0; a segment whose links do not
    # change either is not above it. Likewise a jerk equal to its cut.
    seg = SegmentValues(start=0, stop=16, rigidity=0.0, jerk=1.0, visible=1.0, link_cv=(0.0,),
                        keypoint_jerk=(1.0,))
    (v,) = judge_segments([seg], Thresholds(rigidity=0.0, jerk=1.0))
    assert not v.rigid_bad and not v.jerk_bad
    assert invalid_percentage([v])[0] == 0.0
    (w,) = judge_segments([seg], Thresholds(rigidity=0.0, jerk=0.999))
    assert w.jerk_bad and invalid_percentage([w])[0] == 100.0
