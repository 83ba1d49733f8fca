"""Trajectory scores (EWMBench HSD, nDTW, DYN) and COCO AP/AR against SciPy and hand-worked values."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist, directed_hausdorff
from scipy.stats import wasserstein_distance

from robojudge.metrics.functional import (
    average_precision_recall,
    box_iou,
    diameter,
    dtw,
    dyn_score,
    fill_gaps,
    hsd_score,
    ndtw_score,
    symmetric_hausdorff,
)


def test_hausdorff_by_hand_and_against_scipy():
    a = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    b = np.array([[0.0, 1.0], [2.0, 1.0]])
    # h(a, b): (1, 0) is sqrt(1 + 1) from both b points; h(b, a) = 1. H = sqrt(2).
    assert symmetric_hausdorff(a, b) == pytest.approx(np.sqrt(2))
    rng = np.random.default_rng(0)
    for _ in range(5):
        p, q = rng.random((30, 2)), rng.random((17, 2))
        d = cdist(p, q)
        brute = max(d.min(axis=1).max(), d.min(axis=0).max())
        assert symmetric_hausdorff(p, q) == pytest.approx(brute, abs=1e-12)
        assert symmetric_hausdorff(p, q) == max(directed_hausdorff(p, q)[0], directed_hausdorff(q, p)[0])


def test_hsd_score_scale():
    a = np.array([[0.0, 0.0], [0.5, 0.5]])
    b = a + [0.2, 0.0]  # H = 0.2 -> 1 / (24.979 * 0.2) = 0.200168...
    score, h = hsd_score(a, b)
    assert h == pytest.approx(0.2) and score == pytest.approx(1 / (24.979 * 0.2))
    assert hsd_score(a, a)[0] == 1.0  # identical tracks: distance 0, perfect score
    assert hsd_score(a, a + [0.01, 0])[0] == 1.0  # 1 / (24.979 * 0.01) > 1: clipped


def test_dtw_hand_worked():
    a = np.array([[0.0, 0], [1, 0], [2, 0]])
    b = np.array([[0.0, 0], [2, 0]])
    # Costs |a_i - b_j|: [[0, 2], [1, 1], [2, 0]]. Accumulated: D11=0, D21=1, D31=3, D12=2,
    # D22=1+min(0,2,1)=1, D32=0+min(D21=1, D22=1, D31=3)=1. Path (1,1)-(2,1)-(3,2): 3 steps.
    total, steps = dtw(a, b)
    assert total == pytest.approx(1.0) and steps == 3
    score, per_step = ndtw_score(a, b, scale=10.0)
    assert per_step == pytest.approx(1 / 3) and score == pytest.approx(0.3)  # 1 / (10 / 3)
    same = np.random.default_rng(1).random((12, 2))
    assert dtw(same, same) == (0.0, 12)
    assert ndtw_score(same, same)[0] == 1.0


def test_dtw_handles_a_time_warp():
    # The same path at half speed: DTW matches every slow point to a fast one at distance <= 0.5 step.
    fast = np.stack([np.arange(10.0), np.zeros(10)], axis=1)
    slow = np.stack([np.arange(0, 10, 0.5), np.zeros(20)], axis=1)
    total, steps = dtw(slow, fast)
    assert steps == 20 and total == pytest.approx(10 * 0.5)  # 10 half-step points cost 0.5 each


def test_dyn_by_hand_and_scipy():
    pred = np.array([[0.0, 0], [1, 0], [3, 0], [6, 0]])  # speeds 1, 2, 3; accelerations 1, 1
    ref = np.array([[0.0, 0], [1, 0], [2, 0], [3, 0]])  # speeds 1, 1, 1; accelerations 0, 0
    score, parts = dyn_score(pred, ref)
    # W1({1,2,3}, {1,1,1}) = (0 + 1 + 2) / 3 = 1; W1({1,1}, {0,0}) = 1.
    assert parts["w_velocity"] == pytest.approx(1.0) == wasserstein_distance([1, 2, 3], [1, 1, 1])
    assert parts["w_acceleration"] == pytest.approx(1.0)
    # Range ratios: speeds (0 + eps) / (2 + eps) ~ 5e-9; accelerations (0 + eps) / (0 + eps) = 1.
    assert parts["range_ratio_velocity"] == pytest.approx(5e-9, rel=1e-3)
    assert parts["range_ratio_acceleration"] == 1.0
    # (0.007 * 5e-9 / 1 + 0.003 * 1 / 1) / 22.519 = 1.33221e-4
    assert score == pytest.approx(0.003 / 22.519, rel=1e-5)
    assert dyn_score(ref, ref)[0] == 1.0
    with pytest.raises(ValueError, match="at least 3 frames"):
        dyn_score(ref[:2], ref)


def test_fill_gaps_interpolates_and_flags_mostly_missing():
    t = np.array([[np.nan, np.nan], [1.0, 2.0], [np.nan, np.nan], [3.0, 6.0], [np.nan, np.nan]])
    filled, ok = fill_gaps(t)
    assert ok
    np.testing.assert_allclose(filled, [[1, 2], [1, 2], [2, 4], [3, 6], [3, 6]])
    sparse = np.full((10, 2), np.nan)
    sparse[0] = [0, 0]  # 90% missing > 80%
    assert fill_gaps(sparse)[1] is False
    assert diameter(np.array([[0.0, 0], [3, 4], [1, 1]])) == 5.0


def test_box_iou_by_hand():
    iou = box_iou(np.array([[0, 0, 10, 10]]), np.array([[0, 0, 10, 5], [5, 5, 15, 15], [20, 20, 30, 30]]))
    # 50 / 100; 25 / (100 + 100 - 25); 0
    np.testing.assert_allclose(iou, [[0.5, 25 / 175, 0.0]])


def test_average_precision_recall_hand_worked():
    box = np.array([[0.0, 0, 10, 10]])
    gt = [box] * 4
    dets = [box, np.array([[0.0, 0, 10, 5]]), np.array([[20.0, 20, 30, 30]]), np.zeros((0, 4))]
    scores = [np.array([0.9]), np.array([0.8]), np.array([0.7]), np.zeros(0)]
    ap, ar = average_precision_recall(gt, dets, scores)
    # IoU 0.50: ranked TP, TP, FP -> recall .25, .5, .5, precision 1, 1, 2/3: precision 1 at the 51
    #   recall points 0.00..0.50, 0 above -> AP 51/101; recall 0.5.
    # IoU 0.55..0.95 (9 thresholds): only the exact box -> recall .25 at precision 1: AP 26/101; recall .25.
    assert ap == pytest.approx((51 / 101 + 9 * 26 / 101) / 10)
    assert ar == pytest.approx((0.5 + 9 * 0.25) / 10)
    perfect = average_precision_recall(gt, [box] * 4, [np.array([1.0])] * 4)
    assert perfect == (1.0, 1.0)
    nothing = average_precision_recall(gt, [np.zeros((0, 4))] * 4, [np.zeros(0)] * 4)
    assert nothing == (0.0, 0.0)
    assert all(np.isnan(average_precision_recall([np.zeros((0, 4))], [box], [np.array([1.0])])))


def test_a_detection_where_nothing_is_lowers_precision_only():
    box = np.array([[0.0, 0, 10, 10]])
    # Frame 0: true box found (score .5); frame 1: no object but a detection with a higher score.
    ap, ar = average_precision_recall([box, np.zeros((0, 4))], [box, box], [np.array([0.5]), np.array([0.9])])
    # Ranked FP (.9), TP (.5): recall 0, 1; precision 0, 1/2 -> envelope 1/2 at every recall point.
    assert ap == pytest.approx(0.5) and ar == 1.0
