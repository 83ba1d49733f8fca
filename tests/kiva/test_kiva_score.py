"""KIVA's segment measures on hand-made keypoint tracks (numpy only, no reader)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.kiva import (
    Thresholds,
    Tracks,
    invalid_percentage,
    judge_segments,
    judge_tracks,
    percentile_thresholds,
    segment_values,
    segments,
)

FPS = 10.0
DIAG = 100.0


def arm(n: int = 48, lengths: tuple[float, float] = (30.0, 20.0), noise: float = 0.0, seed: int = 0,
        speed: float = 0.05) -> np.ndarray:
    """A two-link planar arm (3 keypoints) swinging smoothly: rigid links of constant pixel length."""
    t = np.arange(n)
    a1 = 0.6 * np.sin(speed * t)
    a2 = a1 + 0.4 * np.sin(0.7 * speed * t + 0.3)
    base = np.tile([[60.0, 60.0]], (n, 1))
    elbow = base + lengths[0] * np.stack([np.cos(a1), np.sin(a1)], axis=-1)
    tip = elbow + lengths[1] * np.stack([np.cos(a2), np.sin(a2)], axis=-1)
    pts = np.stack([base, elbow, tip], axis=1)
    return pts + np.random.default_rng(seed).normal(0, noise, pts.shape)


LINKS = [(0, 1), (1, 2)]


def values(pts: np.ndarray, vis: np.ndarray | None = None):
    vis = np.ones(pts.shape[:2], bool) if vis is None else vis
    return segment_values(pts, vis, LINKS, FPS, DIAG)


def test_segments_are_consecutive_sixteen_frame_spans_and_drop_a_short_tail():
    assert segments(48) == [(0, 16), (16, 32), (32, 48)]
    assert segments(40) == [(0, 16), (16, 32), (32, 40)]  # a tail of 8 is judged
    assert segments(39) == [(0, 16), (16, 32)]  # a tail of 7 is not
    assert segments(10) == [(0, 10)] and segments(7) == []  # (judge_tracks refuses videos under 16)


def test_rigid_links_have_zero_rigidity_and_a_stretch_is_its_coefficient_of_variation():
    pts = arm()
    assert all(v.rigidity == pytest.approx(0, abs=1e-9) for v in values(pts))
    stretched = pts.copy()
    # Grow the second link's length linearly from 20 to 30 px over frames 16-31.
    scale = np.ones(48)
    scale[16:32] = np.linspace(1.0, 1.5, 16)
    stretched[:, 2] = pts[:, 1] + (pts[:, 2] - pts[:, 1]) * scale[:, None]
    got = values(stretched)
    lengths = 20.0 * scale[16:32]
    assert got[1].rigidity == pytest.approx(np.std(lengths) / np.median(lengths), rel=1e-9)
    assert got[0].rigidity == pytest.approx(0, abs=1e-9) and got[2].rigidity == pytest.approx(0, abs=1e-9)


def test_links_shorter_than_the_minimum_or_seen_on_too_few_frames_are_not_measured():
    pts = arm(lengths=(2.0, 2.0))  # 2 px links: below 3% of a 100 px diagonal
    assert all(math.isnan(v.rigidity) for v in values(pts))
    vis = np.ones((48, 3), bool)
    vis[:, 1] = False  # the elbow is never seen: neither link has both ends
    assert all(math.isnan(v.rigidity) for v in values(arm(), vis))


def test_jerk_is_the_third_difference_times_fps_cubed_over_the_diagonal():
    t = np.arange(32, dtype=float)
    seen = np.ones((32, 1), bool)
    still = np.full((32, 1, 2), 5.0)
    assert all(v.jerk == pytest.approx(0) for v in segment_values(still, seen, [], FPS, DIAG))
    # Constant acceleration: the third difference is zero.
    quad = np.stack([0.1 * t**2, 2 * t], axis=-1)[:, None]
    assert all(v.jerk == pytest.approx(0, abs=1e-9) for v in segment_values(quad, seen, [], FPS, DIAG))
    # x = c t^3: third difference 6 c per frame, so jerk = 6 c fps^3 / diagonal, by hand.
    c = 0.01
    cubic = np.stack([c * t**3, np.zeros(32)], axis=-1)[:, None]
    got = segment_values(cubic, seen, [], FPS, DIAG)
    assert [v.jerk for v in got] == pytest.approx([6 * c * FPS**3 / DIAG] * 2)


def test_a_jump_shows_as_jerk_in_the_segment_where_it_lands_even_at_its_first_frame():
    pts = arm()
    jumped = pts.copy()
    jumped[16:, 2] += [8.0, 0.0]  # the tip jumps between frames 15 and 16 and stays there
    before, after = values(pts), values(jumped)
    # Windows are given to the segment holding their centre: the jump shows on both sides of the
    # boundary (tests/kiva/test_kiva_segment_rules.py works the values out by hand).
    assert after[1].jerk > 10 * max(before[1].jerk, 1e-6) and after[0].jerk > 10 * max(before[0].jerk, 1e-6)
    assert after[2].jerk == pytest.approx(before[2].jerk)


def test_judging_flags_only_the_stretched_segment_against_thresholds_calibrated_on_clean_arms():
    refs = [v for seed in range(8) for v in values(arm(noise=0.3, seed=seed, speed=0.04 + 0.01 * seed))]
    cuts = percentile_thresholds(refs, 95)
    rig = np.array([v.rigidity for v in refs])
    assert cuts.rigidity == pytest.approx(np.percentile(rig, 95))
    clean = arm(noise=0.3, seed=99, speed=0.06)
    # The forearm grows by 40% over frames 16-31 and keeps that length (snapping back would be a jump,
    # rightly flagged in the next segment).
    scale = np.concatenate([np.ones(16), np.linspace(1, 1.4, 16), np.full(16, 1.4)])[:, None]
    stretched = clean.copy()
    stretched[:, 2] = clean[:, 1] + (clean[:, 2] - clean[:, 1]) * scale
    ok = judge_segments(values(clean), cuts)
    bad = judge_segments(values(stretched), cuts)
    assert not ok[1].invalid, ok[1].to_dict()
    assert bad[1].invalid and bad[1].rigid_bad and bad[1].score > 1
    assert [v.invalid for v in bad[::2]] == [v.invalid for v in ok[::2]]
    assert invalid_percentage(bad)[0] - invalid_percentage(ok)[0] == pytest.approx(100 / 3)


def test_invalid_percentage_by_part_counts_only_segments_measured_for_it():
    vals = values(arm())
    cuts = Thresholds(rigidity=0.01, jerk=1e9)
    v = judge_segments(vals, cuts)
    assert invalid_percentage(v, "rigidity") == (0.0, 3)
    v[0].rigid_bad = True
    assert invalid_percentage(v, "kiva") == pytest.approx((100 / 3, 3))
    assert invalid_percentage(v, "jerk") == (0.0, 3)
    with pytest.raises(ValueError, match="unknown KIVA part"):
        invalid_percentage(v, "speed")


def test_short_and_unseen_videos_get_a_reason_not_a_value():
    cuts = Thresholds(0.1, 10.0)
    pts = arm(n=10)
    short = judge_tracks(Tracks(pts, np.ones((10, 3), bool), np.ones((10, 3)), FPS, 64, 64), LINKS, cuts)
    assert short.reason is not None and "10 frames" in short.reason and short.verdicts == []
    unseen = judge_tracks(Tracks(arm(), np.zeros((48, 3), bool), np.zeros((48, 3)), FPS, 64, 64), LINKS, cuts)
    assert unseen.reason is not None and "none of the robot's keypoints" in unseen.reason


def test_a_part_the_references_never_measure_has_no_threshold_and_is_not_judged():
    # Links too short to measure in every reference segment (as when the main view shows one link end
    # only): no rigidity threshold; jerk still calibrates and judges alone.
    refs = values(arm(lengths=(1.0, 1.0), noise=0.3))
    cuts = percentile_thresholds(refs, 95)
    assert math.isnan(cuts.rigidity) and cuts.jerk == pytest.approx(np.percentile([v.jerk for v in refs], 95))
    verdicts = judge_segments(values(arm(noise=0.3, seed=4)), cuts)  # rigidity measurable here, not judged
    assert not any(v.rigid_bad for v in verdicts)
    assert invalid_percentage(verdicts, "rigidity") == (pytest.approx(math.nan, nan_ok=True), 0)
    assert all(v.score == pytest.approx(v.values.jerk / cuts.jerk) for v in verdicts)
    assert invalid_percentage(verdicts, "kiva")[1] == 3
    with pytest.raises(ValueError, match="0 segments with a rigidity value and 0 with a jerk value"):
        percentile_thresholds([v for v in refs if False], 95)
