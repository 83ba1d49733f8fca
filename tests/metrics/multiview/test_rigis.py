"""The weights-free RIGIS on a synthetic calibrated rig (tests/metrics/multiview/_mv_rig.py).

A clean rig scores near 1; a view moved off its calibration, a view running late and two views swapped
score lower, the more the worse; views that give nothing to measure are unscored with a reason.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _mv_rig import CAMERAS, T, clean_views, flat_views, instants, lagged, shifted

from robojudge.metrics.multiview import RigisParams, analyse_rig, check_rig, rigis, rigis_geo, rigis_pose
from robojudge.metrics.multiview._rigis import rig_sync

# Fewer keypoints than the default keep the tests quick; the synthetic texture has plenty.
P = RigisParams(max_features=300)
N = 4  # instants


@pytest.fixture(scope="module")
def views() -> dict[str, np.ndarray]:
    return clean_views()


def test_clean_rig_scores_near_perfect(views):
    frames = instants(views, N)
    analysis = analyse_rig(frames, CAMERAS, P)
    geo, geo_d = rigis_geo(frames, CAMERAS, P, analysis=analysis, timing=views)
    pose, pose_d = rigis_pose(frames, CAMERAS, P, analysis=analysis)
    both, both_d = rigis(frames, CAMERAS, P, analysis=analysis, timing=views)
    assert geo >= 0.97 and pose >= 0.97
    assert both == pytest.approx(0.5 * geo + 0.5 * pose)
    assert both_d["geo"] == geo and both_d["pose"] == pose
    # Every pair was measured (b and c, 90 degrees apart, not at every instant), and its matches sit
    # within half a pixel of the epipolar lines.
    assert set(geo_d["pairs"]) == {"a-b", "a-c", "b-c"}
    for pair in geo_d["pairs"].values():
        assert pair["instants"] >= 1 and pair["share"] >= 0.95 and pair["median_px"] < 0.5
    for pair in pose_d["pairs"].values():
        assert pair["median_error_deg"] < P.pose_free_deg  # within what costs nothing
    assert geo_d["sync_details"]["offsets"] == {"a": 0.0, "b": 0.0, "c": 0.0}


def test_view_moved_off_its_calibration_drops_geo_with_the_shift(views):
    scores = []
    for px in (0, 2, 4, 8):
        moved = {**views, "b": shifted(views["b"], px)}
        scores.append(rigis_geo(instants(moved, N), CAMERAS, P, timing=moved)[0])
    assert all(a > b for a, b in zip(scores, scores[1:], strict=False)), scores
    # The pair that does not involve b still agrees: the score cannot fall below a third.
    assert scores[-1] < 0.8


@pytest.mark.parametrize("k", [2, 3, 5])
def test_view_lag_of_k_frames_is_found(views, k):
    late = {**views, "b": lagged(views["b"], k)}
    sync, details = rig_sync(late, P)
    assert details["offsets"] == {"a": 0.0, "b": float(k), "c": 0.0}
    assert details["largest_lag"] == k
    assert sync == pytest.approx(math.exp(-(k - P.lag_free) / P.lag_scale))


def test_view_lag_drops_geo_more_the_longer_it_is(views):
    scores = [rigis_geo(instants(v, N), CAMERAS, P, timing=v)[0]
              for v in ({**views, "b": lagged(views["b"], k)} for k in (0, 2, 5))]
    assert scores[0] > scores[1] > scores[2], scores
    # One frame of lag is within what the check forgives.
    assert rig_sync({**views, "b": lagged(views["b"], 1)}, P)[0] == 1.0


def test_swapped_views_disagree_with_the_calibration(views):
    swapped = {**views, "b": views["c"], "c": views["b"]}
    geo, _ = rigis_geo(instants(swapped, N), CAMERAS, P, timing=swapped)
    assert geo < 0.2


def _nan_reason(result: tuple[float, dict]) -> str:
    value, details = result
    assert math.isnan(value), f"scored {value}; expected unscored"
    reason = details["unscored_reason"]
    assert isinstance(reason, str) and reason
    return reason


def test_nothing_to_measure_is_unscored_with_a_reason(views):
    frames = instants(views, N)
    assert "at least two views" in _nan_reason(rigis({"a": frames["a"]}, CAMERAS, P))
    blank = {**frames, "c": np.full_like(frames["c"], 128)}
    for fn in (rigis, rigis_geo, rigis_pose):  # never a good score for a blank view
        assert "blank" in _nan_reason(fn(blank, CAMERAS, P))
    still = {n: np.repeat(f[:1], N, axis=0) for n, f in frames.items()}
    assert "still" in _nan_reason(rigis(still, CAMERAS, P))
    one = {n: f[:1] for n, f in frames.items()}
    assert "still" in _nan_reason(rigis(one, CAMERAS, P))
    # Smooth shading that brightens over time: still (nothing moves past the brightness change).
    ramp = np.tile(np.linspace(40, 160, 128)[None, :, None], (96, 1, 3))
    brightening = {n: np.stack([ramp + 20 * j for j in range(N)]).astype(np.uint8) for n in frames}
    assert "still" in _nan_reason(rigis(brightening, CAMERAS, P))
    # A broad soft bump drifting across the shading: neither blank nor still, but no keypoint to match.
    yy, xx = np.mgrid[:96, :128]
    smooth = {n: np.stack([ramp + 60 * np.exp(-((xx - 30 - 20 * j) ** 2 + (yy - 48) ** 2) / 800)[..., None]
                           for j in range(N)]).astype(np.uint8) for n in frames}
    assert "too few matches" in _nan_reason(rigis(smooth, CAMERAS, P))


def test_a_view_of_noise_is_treated_as_unreadable_as_a_blank_one(views):
    # Audit "degenerate" F3: views of per-frame noise were left out of S_still, so rigis_pose read the
    # one view left and gave 1.0 (its best) to a rig with two of three views noise.
    rng = np.random.default_rng(3)
    noisy = {**views, "b": rng.integers(0, 256, views["b"].shape, dtype=np.uint8),
             "c": rng.integers(0, 256, views["c"].shape, dtype=np.uint8)}
    frames = instants(noisy, N)
    for fn in (rigis, rigis_geo, rigis_pose):
        reason = _nan_reason(fn(frames, CAMERAS, P, timing=noisy))
        assert reason.startswith("view(s) ['b', 'c'] show nothing of themselves from one frame to the next")
        assert f"b {T - 1} of {T - 1}" in reason
    assert "show nothing" in check_rig(frames, CAMERAS, noisy)
    assert check_rig(instants(views, N), CAMERAS, views) is None  # the clean rig is read


def test_rigis_pose_says_which_views_it_rests_on(views):
    frames = instants(views, N)
    value, details = rigis_pose(frames, CAMERAS, P, timing=views)
    assert value > 0.9 and details["views_read"] == ["a", "b", "c"] and "notice" not in details
    _, details = rigis(frames, CAMERAS, P, timing=views)
    assert details["views_read"] == ["a", "b", "c"]


def test_bad_input_is_an_error(views):
    frames = instants(views, N)
    with pytest.raises(ValueError, match="not synchronised"):
        check_rig({**frames, "b": frames["b"][:-1]}, CAMERAS)
    with pytest.raises(ValueError, match=r"no camera for view\(s\) \['d'\]"):
        check_rig({**frames, "d": frames["a"]}, CAMERAS)
    with pytest.raises(ValueError, match="uint8"):
        check_rig({**frames, "a": frames["a"].astype(np.float32)}, CAMERAS)


def test_timing_frames_default_to_the_instants(views):
    # Without every frame, the lag check reads the instants themselves (coarser, still in step here).
    frames = instants(views, N)
    _, details = rigis_geo(frames, CAMERAS, P)
    assert details["sync"] == 1.0 and len(views["a"]) == T


def test_flat_coloured_rig_is_judged_by_its_colour_regions():
    # No texture: no keypoint matches between views, so no relative pose is read, but each coloured
    # square is one region per view, and their centroids obey the epipolar geometry; S_pose reads each
    # camera's stillness in its own view instead (tests/metrics/multiview/test_rigis_still.py).
    views = flat_views()
    frames = instants(views, N)
    analysis = analyse_rig(frames, CAMERAS, P)
    geo, details = rigis_geo(frames, CAMERAS, P, analysis=analysis, timing=views)
    assert geo == 1.0
    assert all(pair["regions"] == 3 * N and pair["instants"] == 0 for pair in details["pairs"].values())
    pose, pose_d = rigis_pose(frames, CAMERAS, P, analysis=analysis)
    assert pose == pose_d["stillness"] == 1.0 and "too few matches" in pose_d["relative_unscored"]
    both, _ = rigis(frames, CAMERAS, P, analysis=analysis, timing=views)
    assert both == 1.0
    moved = {**views, "b": shifted(views["b"], 16)}
    assert rigis_geo(instants(moved, N), CAMERAS, P, timing=moved)[0] < 0.8
