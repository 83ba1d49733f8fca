"""Trajectory accuracy (HSD, nDTW, DYN) and object localization (COCO AP / AR) on 2-D tracks.

RoboPhys-3D takes its trajectory-accuracy trio (App. B.3.2) from EWMBench (Yue et al., 2025,
"EWMBench: Evaluating Scene, Motion, and Semantic Quality in Embodied World Models", trajectory
consistency): 2-D tracks in image coordinates divided by the frame's width and height, gaps filled
by linear interpolation, a track more than 80% missing counted as failed (score 0), and each score
the inverse of a distance divided by a fixed maximum and clipped to [0, 1].

Object localization (App. B.3.1) follows the COCO detection protocol (Lin et al. 2014): each frame
is an image, each tracked object a category. For every IoU threshold in 0.50:0.05:0.95, detections
are matched greedily in decreasing score to the unmatched ground-truth box of highest IoU at or
above the threshold; precision is made monotone and read at the 101 recall points 0:0.01:1 (AP), and
recall is the fraction of ground-truth boxes matched (AR). Both are averaged over thresholds.

Tracks are ``(T, 2)`` float arrays of positions (NaN rows where unknown); boxes are ``(x0, y0, x1,
y1)`` on continuous coordinates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: EWMBench's normalizing maxima of the inverse distances (trajectory_consistency.py, ``eval_traj``).
HSD_MAX = 24.979
NDTW_MAX = 50.202
DYN_MAX = 22.519
#: EWMBench's weights of the velocity and acceleration terms of DYN.
DYN_WEIGHTS = (0.007, 0.003)
MAX_MISSING = 0.8

IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
RECALL_POINTS = np.linspace(0.0, 1.0, 101)


# -- trajectories (App. B.3.2) ----------------------------------------------------------------------


def fill_gaps(traj: np.ndarray, max_missing: float = MAX_MISSING) -> tuple[np.ndarray, bool]:
    """Fill NaN rows of a ``(T, D)`` track; return it and whether it is valid.

    Interior gaps are interpolated linearly between the nearest known frames, leading and trailing
    gaps repeat the nearest known position. A track with more than ``max_missing`` of its frames
    unknown is invalid and returned unchanged.

    >>> filled, ok = fill_gaps(np.array([[np.nan, np.nan], [1.0, 2.0], [np.nan, np.nan], [3.0, 6.0]]))
    >>> filled.tolist(), ok
    ([[1.0, 2.0], [1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], True)
    """
    traj = np.asarray(traj, dtype=np.float64)
    known = np.isfinite(traj).all(axis=1)
    if len(traj) == 0 or 1.0 - known.mean() > max_missing or not known.any():
        return traj, False
    idx = np.arange(len(traj))
    filled = np.stack([np.interp(idx, idx[known], traj[known, d]) for d in range(traj.shape[1])], axis=1)
    return filled, True


def diameter(traj: np.ndarray) -> float:
    """Largest distance between two points of a track (its spatial extent).

    >>> diameter(np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]))
    5.0
    """
    from scipy.spatial.distance import pdist

    return float(pdist(traj).max()) if len(traj) >= 2 else 0.0


def symmetric_hausdorff(a: np.ndarray, b: np.ndarray) -> float:
    """``max(h(a, b), h(b, a))`` with ``h(a, b) = max_i min_j |a_i - b_j|`` (SciPy's directed form).

    >>> round(symmetric_hausdorff(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]),
    ...                           np.array([[0.0, 1.0], [2.0, 1.0]])), 6)  # (1, 0) is sqrt(2) from both
    1.414214
    """
    from scipy.spatial.distance import directed_hausdorff

    return float(max(directed_hausdorff(a, b)[0], directed_hausdorff(b, a)[0]))


def dtw(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """Exact dynamic time warping with Euclidean step cost: total cost and warping-path length.

    ``D[i, j] = |a_i - b_j| + min(D[i-1, j], D[i, j-1], D[i-1, j-1])``; the path is traced back
    from the end, preferring the diagonal on ties (the shortest of the optimal paths). EWMBench uses
    ``fastdtw`` (an approximation with radius 1); on tracks of a few hundred frames exact DTW is cheap.

    >>> dtw(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 0.0], [2.0, 0.0]]))
    (1.0, 3)
    """
    n, m = len(a), len(b)
    cost = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            acc[i, j] = cost[i - 1, j - 1] + min(acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
    i, j, steps = n, m, 1
    while (i, j) != (1, 1):
        moves = ((i - 1, j - 1), (i - 1, j), (i, j - 1))  # diagonal first: wins ties
        i, j = min(moves, key=lambda ij: acc[ij])
        steps += 1
    return float(acc[n, m]), steps


def speeds(traj: np.ndarray) -> np.ndarray:
    """Per-step speed ``|p_{t+1} - p_t|`` of a ``(T, 2)`` track (units per frame).

    >>> speeds(np.array([[0.0, 0.0], [3.0, 4.0], [3.0, 5.0]])).tolist()
    [5.0, 1.0]
    """
    return np.asarray(np.linalg.norm(np.diff(traj, axis=0), axis=1))


def on_time_grid(traj: np.ndarray, times: np.ndarray, fps: float) -> np.ndarray:
    """A ``(T, D)`` track known at ``times`` (seconds), read at the even times ``k / fps`` from its first
    time to its last, by linear interpolation between the two frames around each.

    Frames picked from a video at a rate its own does not divide are unevenly spaced (30 fps read at 16
    fps takes frames 1 and 2 source frames apart in turn), so per-step speeds of the same motion would
    alternate; on the grid each step spans the same time.

    >>> track = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 6.0]])  # at 0, 1/30 and 3/30 s: 30 units/s in x
    >>> on_time_grid(track, np.array([0.0, 1 / 30, 3 / 30]), 20.0).tolist()  # at 0, 1/20 and 2/20 s
    [[0.0, 0.0], [1.5, 3.0], [3.0, 6.0]]
    """
    traj = np.asarray(traj, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64) - float(times[0])
    ticks = np.arange(int(np.floor(t[-1] * fps + 1e-6)) + 1) / fps
    return np.stack([np.interp(ticks, t, traj[:, d]) for d in range(traj.shape[1])], axis=1)


def _inverse(distance: float, scale: float) -> float:
    """``min(1, 1 / (scale * distance))``; a zero distance is a perfect 1."""
    return 1.0 if distance <= 0.0 else min(1.0, 1.0 / (scale * distance))


class DistanceScore(NamedTuple):
    """A trajectory score and the distance it was drawn from."""

    score: float
    distance: float


def hsd_score(pred: np.ndarray, ref: np.ndarray, scale: float = HSD_MAX) -> DistanceScore:
    """EWMBench HSD (RoboPhys-3D App. B.3.2, ``ta_hsd``): ``min(1, 1 / (24.979 H))``, H the symmetric
    Hausdorff distance (:func:`symmetric_hausdorff`); 1 when ``H = 0``. Insensitive to timing.

    >>> a = np.array([[0.0, 0.0], [0.5, 0.5]])
    >>> hsd_score(a, a + [0.2, 0.0], scale=10.0)  # H = 0.2: 1 / (10 * 0.2)
    DistanceScore(score=0.5, distance=0.2)
    """
    h = symmetric_hausdorff(pred, ref)
    return DistanceScore(_inverse(h, scale), h)


def ndtw_score(path: np.ndarray, reference_path: np.ndarray, scale: float = NDTW_MAX) -> DistanceScore:
    """EWMBench nDTW (RoboPhys-3D App. B.3.2, ``ta_ndtw``): ``min(1, 1 / (50.202 d))`` with ``d =
    DTW / L`` the mean cost per matched pair (L the warping-path length, :func:`dtw`); 1 when
    ``d = 0``. Not the exponential nDTW of Ilharco et al. 2019, which needs a success threshold.

    >>> ndtw_score(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 0.0], [2.0, 0.0]]),
    ...            scale=1.5)  # DTW 1 over 3 steps: d = 1/3, 1 / (1.5 / 3) > 1
    DistanceScore(score=1.0, distance=0.3333333333333333)
    """
    total, steps = dtw(path, reference_path)
    per_step = total / steps
    return DistanceScore(_inverse(per_step, scale), per_step)


def range_ratio(x: np.ndarray, y: np.ndarray, eps: float = 1e-8) -> float:
    """EWMBench's motion normalization: ``(min(rx, ry) + eps) / (max(rx, ry) + eps)`` of the value ranges.

    >>> round(range_ratio(np.array([1.0, 3.0]), np.array([0.0, 4.0])), 6)
    0.5
    """
    rx, ry = float(np.ptp(x)), float(np.ptp(y))
    return (min(rx, ry) + eps) / (max(rx, ry) + eps)


def dyn_score(pred: np.ndarray, ref: np.ndarray, scale: float = DYN_MAX) -> tuple[float, dict[str, float]]:
    """EWMBench DYN (RoboPhys-3D App. B.3.2, ``ta_dyn``): Wasserstein-1 distances of the speed and
    acceleration distributions of two tracks.

    ``s = 0.007 * r_v / W1(v_pred, v_ref) + 0.003 * r_a / W1(a_pred, a_ref)`` with ``r`` the range
    ratios (:func:`range_ratio`), score ``min(1, s / 22.519)``. A zero Wasserstein distance makes
    its term infinite, so identical motion scores 1 (EWMBench's code sets such a term to 0, which
    would rank a perfect match worst; RoboPhys-3D Table 40 reports 1.0 for ground truth). Returns the
    score and its parts.

    >>> still_then_fast = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [6.0, 0.0]])  # speeds 1, 2, 3
    >>> steady = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])  # speeds 1, 1, 1
    >>> score, parts = dyn_score(still_then_fast, steady)
    >>> parts["w_velocity"], parts["w_acceleration"], parts["range_ratio_acceleration"]
    (1.0, 1.0, 1.0)
    >>> round(score, 8)  # (0.007 * ~5e-9 / 1 + 0.003 * 1 / 1) / 22.519
    0.00013322
    >>> dyn_score(steady, steady)[0]
    1.0

    Raises:
        ValueError: When a track has fewer than 3 frames (no acceleration).
    """
    from scipy.stats import wasserstein_distance

    if min(len(pred), len(ref)) < 3:
        raise ValueError("DYN needs tracks of at least 3 frames")
    vp, vr = speeds(pred), speeds(ref)
    ap, ar = np.diff(vp), np.diff(vr)
    wv, wa = float(wasserstein_distance(vp, vr)), float(wasserstein_distance(ap, ar))
    rv, ra = range_ratio(vp, vr), range_ratio(ap, ar)
    if wv == 0.0 or wa == 0.0:
        score = 1.0
    else:
        score = min(1.0, (DYN_WEIGHTS[0] * rv / wv + DYN_WEIGHTS[1] * ra / wa) / scale)
    return score, {
        "w_velocity": wv,
        "w_acceleration": wa,
        "range_ratio_velocity": rv,
        "range_ratio_acceleration": ra,
    }


# -- object localization (App. B.3.1) ---------------------------------------------------------------


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix of ``(N, 4)`` and ``(M, 4)`` boxes ``(x0, y0, x1, y1)`` (continuous areas).

    >>> box_iou(np.array([[0, 0, 10, 10]]), np.array([[0, 0, 10, 5], [20, 20, 30, 30]])).tolist()
    [[0.5, 0.0]]
    """
    a, b = np.asarray(a, np.float64).reshape(-1, 4), np.asarray(b, np.float64).reshape(-1, 4)
    lo = np.maximum(a[:, None, :2], b[None, :, :2])
    hi = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(hi - lo, 0, None).prod(axis=-1)
    area_a = (a[:, 2:] - a[:, :2]).prod(axis=1)
    area_b = (b[:, 2:] - b[:, :2]).prod(axis=1)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def average_precision_recall(
    gt: list[np.ndarray],
    dets: list[np.ndarray],
    scores: list[np.ndarray],
    thresholds: np.ndarray = IOU_THRESHOLDS,
) -> tuple[float, float]:
    """COCO AP and AR of one category over frames (RoboPhys-3D App. B.3.1, Lin et al. 2014).

    ``gt[f]`` are frame f's ``(G, 4)`` true boxes, ``dets[f]`` its ``(D, 4)`` detections and
    ``scores[f]`` their ``(D,)`` confidences. Returns NaN for both when no frame has a ground-truth
    box (COCO reports -1 there).

    >>> box = np.array([[0.0, 0.0, 10.0, 10.0]])
    >>> ap, ar = average_precision_recall([box, box], [box, np.zeros((0, 4))], [np.array([0.9]), np.zeros(0)])
    >>> round(ap * 101, 9), ar  # precision 1 up to recall 0.5: 51 of the 101 recall points
    (51.0, 0.5)
    """
    n_gt = sum(len(g) for g in gt)
    if n_gt == 0:
        return float("nan"), float("nan")
    aps, ars = [], []
    for thr in thresholds:
        all_scores, all_tp = [], []
        for g, d, s in zip(gt, dets, scores, strict=True):
            order = np.argsort(-np.asarray(s), kind="mergesort")
            iou = box_iou(np.asarray(d)[order], g) if len(g) and len(d) else np.zeros((len(d), len(g)))
            taken = np.zeros(len(g), bool)
            for k, row in enumerate(iou):
                cand = np.where(~taken & (row >= thr), row, -1.0)
                hit = len(g) > 0 and cand.max() >= 0
                if hit:
                    taken[int(cand.argmax())] = True
                all_tp.append(hit)
                all_scores.append(float(np.asarray(s)[order][k]))
        if not all_tp:  # no detections at all: nothing found
            aps.append(0.0)
            ars.append(0.0)
            continue
        order = np.argsort(-np.array(all_scores), kind="mergesort")
        tp = np.array(all_tp, dtype=np.float64)[order]
        tps, fps = np.cumsum(tp), np.cumsum(1.0 - tp)
        recall = tps / n_gt
        precision = tps / np.maximum(tps + fps, np.finfo(float).eps)
        precision = np.maximum.accumulate(precision[::-1])[::-1]  # best precision at this recall or more
        at = np.searchsorted(recall, RECALL_POINTS, side="left")
        sampled = np.where(at < len(precision), precision[np.minimum(at, len(precision) - 1)], 0.0)
        aps.append(float(sampled.mean()))
        ars.append(float(recall[-1]))
    return float(np.mean(aps)), float(np.mean(ars))


class Localization(NamedTuple):
    """AP and AR of one tracked object against its reference boxes, with the frame counts behind them."""

    ap: float
    ar: float
    frames_with_truth: int
    frames_detected: int


def track_localization(
    reference_boxes: np.ndarray, boxes: np.ndarray, confidence: np.ndarray
) -> Localization:
    """AP and AR (:func:`average_precision_recall`) of one object's box track against the reference's,
    frame by frame at the same index (``ol_average_precision``, ``ol_average_recall``).

    ``reference_boxes`` is ``(T, 4)`` with NaN rows where the object is hidden (no ground truth);
    ``boxes`` ``(T', 4)`` and ``confidence`` ``(T',)`` are the tracked boxes and their scores, NaN or
    confidence 0 where the tracker lost the object. Every reference frame is an image: frames past
    the end of a shorter track have no detection (comparing only the common start would give a
    one-frame video a perfect score), frames past the reference's end are not scored. AP and AR are
    NaN when the reference never shows the object.

    >>> ref = np.array([[0.0, 0.0, 10.0, 10.0]] * 4)
    >>> loc = track_localization(ref, ref[:2], np.ones(2))  # the track stops after 2 of 4 frames
    >>> round(loc.ap * 101, 9), loc.ar, loc.frames_with_truth, loc.frames_detected
    (51.0, 0.5, 4, 2)
    """
    reference_boxes = np.asarray(reference_boxes, np.float64).reshape(-1, 4)
    n, found_in = len(reference_boxes), min(len(boxes), len(reference_boxes))
    gt = [b[None] if np.isfinite(b).all() else np.zeros((0, 4)) for b in reference_boxes]
    g, c, found = np.zeros((n, 4)), np.zeros(n), np.zeros(n, bool)
    g[:found_in] = np.asarray(boxes, np.float64).reshape(-1, 4)[:found_in]
    c[:found_in] = np.asarray(confidence, np.float64)[:found_in]
    found[:found_in] = np.isfinite(g[:found_in]).all(axis=1) & (c[:found_in] > 0)
    dets = [g[t][None] if found[t] else np.zeros((0, 4)) for t in range(n)]
    scores = [c[t : t + 1] if found[t] else np.zeros(0) for t in range(n)]
    ap, ar = average_precision_recall(gt, dets, scores)
    return Localization(ap, ar, int(sum(len(x) for x in gt)), int(found.sum()))
