"""COCO-style average precision and recall of per-frame boxes (Lin et al. 2014, the COCO detection
protocol that RoboPhys-3D App. B.3.1 cites for object localization).

Each frame is an image; each tracked object name is a category. For every IoU threshold in
0.50:0.05:0.95, detections are matched greedily in decreasing score to the unmatched ground-truth
box of highest IoU at or above the threshold; precision is made monotone and read at the 101 recall
points 0:0.01:1 (AP), and recall is the fraction of ground-truth boxes matched (AR). Both are
averaged over thresholds, then over categories that have ground truth.
"""

from __future__ import annotations

import numpy as np

IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
RECALL_POINTS = np.linspace(0.0, 1.0, 101)


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix of ``(N, 4)`` and ``(M, 4)`` boxes ``(x0, y0, x1, y1)`` (continuous areas)."""
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
    """AP and AR of one category over frames.

    ``gt[f]`` are frame f's ``(G, 4)`` true boxes, ``dets[f]`` its ``(D, 4)`` detections and
    ``scores[f]`` their ``(D,)`` confidences.

    Returns NaN for both when no frame has a ground-truth box (COCO reports -1 there).
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
