"""KIVA's rigidity on relative link lengths (measure version 6) on hand-worked tracks (numpy only)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robojudge.kiva import Thresholds, Tracks, judge_tracks, relative_lengths, segment_values
from robojudge.kiva._score import MIN_LINK, link_cvs, link_lengths, typical_lengths

FPS = 10.0
DIAG = 200.0
LINKS = [(0, 1), (1, 2), (2, 3)]


def arm(n: int = 48) -> np.ndarray:
    """A still 3-link arm: links of 30, 40 and 50 px along the x axis, from (50, 100)."""
    pts = np.zeros((n, 4, 2))
    pts[:, :, 0] = [50.0, 80.0, 120.0, 170.0]
    pts[:, :, 1] = 100.0
    return pts


def zoomed(pts: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Every keypoint scaled about (100, 100) by ``factor[t]``: the robot coming towards the camera."""
    return 100.0 + (pts - 100.0) * factor[:, None, None]


def seen(pts: np.ndarray) -> np.ndarray:
    return np.ones(pts.shape[:2], bool)


def test_a_zoom_scales_every_link_alike_and_leaves_relative_lengths_unchanged():
    pts = zoomed(arm(), np.linspace(1.0, 1.6, 48))
    pixel = link_lengths(pts, seen(pts), LINKS)
    assert pixel[-1] == pytest.approx(1.6 * pixel[0])  # 60% longer in pixels, every link
    rel = relative_lengths(pixel)
    # Each link over the frame's scale (the other links' summed length over their summed typical one):
    # the typical length is the median over the 48 frames, so every row is a constant multiple of it.
    np.testing.assert_allclose(rel, np.tile(rel[0], (48, 1)), rtol=1e-12)
    np.testing.assert_allclose(rel[0] / rel[0, 0], [1.0, 40 / 30, 50 / 30], rtol=1e-12)
    # Pixel lengths vary by 3-6% (standard deviation over median) within a segment; relative ones not at all.
    v6 = segment_values(pts, seen(pts), LINKS, FPS, DIAG)
    v5 = segment_values(pts, seen(pts), LINKS, FPS, DIAG, relative=False)
    assert all(v.rigidity < 1e-12 for v in v6)
    assert all(v.rigidity > 0.03 for v in v5)


def test_a_link_that_stretches_alone_keeps_its_stretch_in_its_relative_length():
    pts = arm()
    pts[20:28, 3, 0] += np.array([5, 10, 15, 20, 20, 15, 10, 5])  # the 50-px link stretched up to 40%
    pixel = link_lengths(pts, seen(pts), LINKS)
    rel = relative_lengths(pixel)
    # The stretched link's scale comes from the two others (unchanged): its relative length is its pixel
    # length.
    np.testing.assert_allclose(rel[:, 2], pixel[:, 2])
    # Each other link's scale includes the stretched one, by its share of the others' length: at the peak
    # link 0-1's others are 40 + 70 px against 40 + 50 usually.
    assert rel[23, 0] == pytest.approx(30 / ((40 + 70) / (40 + 50)))
    assert rel[23, 1] == pytest.approx(40 / ((30 + 70) / (30 + 50)))
    v6 = segment_values(pts, seen(pts), LINKS, FPS, DIAG)
    assert np.nanargmax(v6[1].link_cv) == 2  # the stretched link is the segment's least rigid
    assert v6[1].rigidity == pytest.approx(link_cvs(pixel[16:32], DIAG)[2])
    assert v6[0].rigidity < 1e-12 and v6[2].rigidity < 1e-12


def test_with_fewer_than_two_other_links_seen_the_pixel_length_is_kept():
    pts = zoomed(arm(), np.linspace(1.0, 1.6, 48))
    vis = seen(pts)
    vis[:24, 3] = False  # the last link (2-3) unseen in the first half: each link has one other there
    pixel = link_lengths(pts, vis, LINKS)
    rel = relative_lengths(pixel)
    np.testing.assert_array_equal(rel[:24, :2], pixel[:24, :2])
    assert np.isnan(rel[:24, 2]).all()
    # From frame 24 all three are seen: the zoom cancels again.
    np.testing.assert_allclose(rel[24:, 0], np.full(24, rel[24, 0]), rtol=1e-12)
    # Two links only: never two others, pixels throughout.
    np.testing.assert_array_equal(relative_lengths(pixel[:, :2]), pixel[:, :2])


def test_a_link_that_shrinks_below_the_shortest_measured_stays_measured():
    pts = arm()
    short = 0.2 * DIAG * MIN_LINK  # about a fifth of the shortest length measured
    shrink = np.r_[np.linspace(30.0, short, 4), np.full(12, short)]
    pts[16:32, 1, 0] = pts[16:32, 0, 0] + shrink  # link 0-1 shrinks to almost nothing and stays so
    pts[16:32, 2, 0] = pts[16:32, 1, 0] + 40.0  # (the rest of the arm follows, its links keep their length)
    pts[16:32, 3, 0] = pts[16:32, 2, 0] + 50.0
    pixel = link_lengths(pts, seen(pts), LINKS)
    assert np.median(pixel[16:32, 0]) < DIAG * MIN_LINK < typical_lengths(pixel)[0]
    # Versions 1-5 judged a link short by its median in the segment: the shrinking link was dropped.
    assert math.isnan(link_cvs(pixel[16:32], DIAG)[0])
    v5 = segment_values(pts, seen(pts), LINKS, FPS, DIAG, relative=False)
    assert math.isnan(v5[1].link_cv[0])
    # Version 6 judges it by its typical length over the video: measured, and the least rigid link.
    v6 = segment_values(pts, seen(pts), LINKS, FPS, DIAG)
    assert v6[1].link_cv[0] > 0.4 and np.nanargmax(v6[1].link_cv) == 0


def test_a_link_read_at_no_length_on_most_frames_is_measured_against_its_typical_length():
    pixel = np.full((16, 3), 30.0)
    pixel[4:, 0] = 0.0  # both ends read at one point on 12 of 16 frames
    cvs = link_cvs(pixel, DIAG, typical=np.array([30.0, 30.0, 30.0]))
    assert cvs[0] == pytest.approx(np.std(pixel[:, 0]) / 30.0) and np.isfinite(cvs[0])


def test_judge_tracks_measures_relative_lengths_unless_told_otherwise():
    pts = zoomed(arm(), np.linspace(1.0, 1.6, 48))
    vis = seen(pts)
    tracks = Tracks(pts, vis, vis.astype(float), FPS, 160, 120)
    cuts = Thresholds(rigidity=0.02, jerk=math.inf)
    assert [v.invalid for v in judge_tracks(tracks, LINKS, cuts).verdicts] == [False] * 3
    assert [v.invalid for v in judge_tracks(tracks, LINKS, cuts, relative=False).verdicts] == [True] * 3
