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


def values(pts: np.ndarray, vis: np.ndarray | None = None, **kw):
    vis = np.ones(pts.shape[:2], bool) if vis is None else vis
    return segment_values(pts, vis, LINKS, FPS, DIAG, **kw)


def test_segments_are_consecutive_sixteen_frame_spans_and_drop_a_short_tail():
    assert segments(48) == [(0, 16), (16, 32), (32, 48)]
    assert segments(40) == [(0, 16), (16, 32), (32, 40)]  # a tail of 8 is judged
    assert segments(39) == [(0, 16), (16, 32)]  # a tail of 7 is not
    assert segments(10) == [] and segments(7) == []  # no whole segment: judge_tracks refuses it too


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
    # A segment's windows are its own and the one reaching back a frame (measure version 7): the jump
    # shows in the segment where the tip lands, not in the one before (tests/kiva/test_kiva_segment_rules.py
    # works the values out by hand).
    assert after[1].jerk > 10 * max(before[1].jerk, 1e-6)
    assert after[0].jerk == pytest.approx(before[0].jerk) and after[2].jerk == pytest.approx(before[2].jerk)
    # With the windows of versions 3-6 (by their centre) it showed on both sides.
    centre = values(jumped, window="centre")
    assert centre[0].jerk > 10 * max(before[0].jerk, 1e-6) and centre[1].jerk == pytest.approx(after[1].jerk)


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


# ------------------------------------------------------------------ per-part scales (measure version 4)


def _seg(link_cv, keypoint_jerk, start=0):
    from robojudge.kiva import SegmentValues

    return SegmentValues(start, start + 16, max(link_cv), float(np.mean(keypoint_jerk)), 1.0,
                         link_cv=tuple(link_cv), keypoint_jerk=tuple(keypoint_jerk))


def test_part_scales_are_each_parts_percentile_floored_at_half_the_median_of_its_kind():
    from robojudge.kiva import part_scales

    # Three links and four keypoints over 11 reference segments; link 2 is never measured.
    refs = [_seg([0.01 * i, 0.3 + 0.01 * i, math.nan], [i, 2.0 * i, 0.001 * i, 5.0]) for i in range(11)]
    s = part_scales(refs, 90)
    assert s.links[1] == pytest.approx(np.percentile([0.3 + 0.01 * i for i in range(11)], 90))  # 0.39
    assert math.isnan(s.links[2])
    # Keypoint scales before the floor: 9, 18, 0.009, 5 -> median 7 -> floor 3.5 lifts the third.
    assert s.keypoints == pytest.approx((9.0, 18.0, 3.5, 5.0))
    # Link 0's 90th percentile is 0.09; the floor, half the median of (0.09, 0.39), lifts it to 0.12.
    assert s.links[0] == pytest.approx(0.12)
    # Mixed part counts and segments measured without their parts are refused.
    with pytest.raises(ValueError, match="parts"):
        part_scales([*refs, _seg([0.1], [1.0, 1.0, 1.0, 1.0])])
    with pytest.raises(ValueError, match="per-keypoint"):
        part_scales([_plain()])


def _plain():
    from robojudge.kiva import SegmentValues

    return SegmentValues(0, 16, 0.1, 1.0, 1.0)


def test_scaled_values_are_each_segments_largest_ratio_to_its_parts_own_scale():
    from robojudge.kiva import Scales, apply_scales
    from robojudge.kiva._score import worst_part

    scales = Scales((0.3, 0.01, math.nan), (10.0, 1.0))
    (v,) = apply_scales([_seg([0.15, 0.04, 5.0], [20.0, 0.5])], scales)
    assert v.rigidity == pytest.approx(4.0)  # 0.04 / 0.01; the unscaled link 2 is left out
    assert v.jerk == pytest.approx(2.0)  # 20 / 10
    assert worst_part(v.link_cv, scales.links) == 1 and worst_part(v.keypoint_jerk, scales.keypoints) == 0
    (none,) = apply_scales([_seg([math.nan, math.nan, 1.0], [math.nan, math.nan])], scales)
    assert math.isnan(none.rigidity) and math.isnan(none.jerk)
    with pytest.raises(ValueError, match="another robot"):
        apply_scales([_seg([0.1, 0.1], [1.0, 1.0])], scales)
    # A part whose references never moved (scale 0): any movement is infinitely far over, none is 0.
    (z,) = apply_scales([_seg([0.0, 0.0, 0.0], [0.0, 0.2])], Scales((0.0, 0.0, 0.0), (0.0, 0.0)))
    assert z.rigidity == 0.0 and z.jerk == math.inf


def test_a_stiff_link_that_stretches_is_flagged_though_a_foreshortening_link_varies_more():
    """The case version 4 is for: one threshold over the largest link's variation lets a short link that
    turns towards the camera in every reference set the cut, and a stretch of a long stiff link passes."""
    from robojudge.kiva import apply_scales, part_scales, reference_cuts

    rng = np.random.default_rng(0)
    # References: link 0 foreshortens (CV 0.05-0.25), links 1-3 stay within 0.5-1.5%.
    refs = [_seg([rng.uniform(0.05, 0.25), *rng.uniform(0.005, 0.015, 3)], [1.0, 1.0]) for _ in range(40)]
    stretch = _seg([0.06, 0.10, 0.01, 0.01], [1.0, 1.0])  # link 1 stretches by ~10%
    plain = percentile_thresholds(refs, 95)
    assert judge_segments([stretch], plain)[0].rigid_bad is False  # version 3 misses it
    scales = part_scales(refs, 95)
    cuts = percentile_thresholds(apply_scales(refs, scales), 95)
    assert reference_cuts(refs, 95) == (scales, cuts)  # the one call calibration makes
    (v,) = judge_segments(apply_scales([stretch], scales), cuts)
    assert v.rigid_bad and v.values.rigidity > 4 * cuts.rigidity
    # ... and the references themselves are flagged at about the rate the percentile sets.
    flagged = sum(x.rigid_bad for x in judge_segments(apply_scales(refs, scales), cuts))
    assert flagged == 2  # 40 segments above their own 95th percentile


def test_per_keypoint_jerk_is_what_the_mean_window_jerk_averages():
    from robojudge.kiva._score import keypoint_window_jerk, window_jerk

    pts = arm(noise=0.3, seed=2)
    vis = np.ones(pts.shape[:2], bool)
    vis[10:14, 1] = False
    per = keypoint_window_jerk(pts, vis, FPS, DIAG)
    assert per.shape == (48, 3) and np.isnan(per[:3]).all()
    assert np.isnan(per[10:17, 1]).all() and not np.isnan(per[17:, 1]).any()  # windows touching 10-13
    np.testing.assert_allclose(np.nanmean(per[3:], axis=1), window_jerk(pts, vis, FPS, DIAG)[3:])
    np.testing.assert_allclose(np.nanmax(per[3:], axis=1), window_jerk(pts, vis, FPS, DIAG, "max")[3:])
    segs = segment_values(pts, vis, LINKS, FPS, DIAG)
    # A segment's per-keypoint jerk is that keypoint's largest window among the segment's windows.
    assert segs[1].keypoint_jerk[0] == pytest.approx(np.nanmax(per[18:34, 0]))
    assert segs[1].rigidity == pytest.approx(max(segs[1].link_cv))
