"""Whether each camera of a fixed rig stays where it is mounted, read from its own view over time.

A calibration holds one pose per camera: it declares every camera fixed in the world for the whole
rollout. A camera that shakes or drifts breaks that declaration in its own view first: the static scene
(table, walls, the robot's base) moves in the image. Matching a view against itself at another instant
is far easier than matching two cameras tens of degrees apart (same viewpoint, same lighting), so this
reads the rig's stability even on flat-coloured scenes whose views share too few keypoints for a
relative pose (docs/rigis.md, "S_pose").

Per view and instant ``t``: SIFT matches between the view's first instant and instant ``t``; the image
motion of the static scene is the smallest of the motions of the plausible hypotheses (no motion, a
RANSAC homography, a RANSAC similarity) that explain at least ``support`` of the best one's matches,
because a moving arm or object must not be read as a moving camera while the unmoved scene still
explains as much. The motion is the median displacement of a 5 x 5 grid of image points under it,
turned into degrees of camera turn with the focal length. Pure numpy and OpenCV.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from robojudge.metrics.multiview._features import Features, match

REACH_DEG = (1.0, 3.0, 10.0, 30.0)
"""Camera turns (degrees) searched in turn, smallest first (:func:`scene_motion`)."""


def scene_motion(
    ref: Features, cur: Features, size: tuple[int, int], focal_px: float, *, ratio: float, thr: float,
    support: float, least: int, cover: float,
) -> tuple[float, int] | None:
    """Image motion (pixels) of the static scene between two frames of one view, and the matches read.

    No motion when at least ``least`` matches stay where they were (within ``thr`` pixels): a moved
    camera leaves no static point in place. Otherwise the matches that moved at most as far as a turn of
    1, then 3, 10 and 30 degrees moves them are searched in turn, and the first search where a RANSAC
    homography or similarity explains ``least`` of them, spread over ``cover`` of the image (the convex
    hull of its matches), reads the motion: the median displacement of the matches it explains. Small
    motions first, because look-alike corners (the four of a square, two squares alike) also line up
    into a dozen matches that agree on a large wrong motion; the spread, because a dozen matches on the
    moving arm fit a homography too, but gather in one part of the image. ``None`` when no search reads
    (too few matches on the static scene to tell).
    """
    pa, pb = match(ref, cur, ratio)
    if len(pa) < least:
        return None
    moved = np.linalg.norm(pa - pb, axis=1)
    if int(np.sum(moved <= thr)) >= least:
        return 0.0, len(pa)
    area = float(size[0] * size[1])
    for deg in REACH_DEG:
        near = moved <= max(2 * thr, focal_px * math.tan(math.radians(deg)))
        if int(near.sum()) < least:
            continue
        qa, qb = pa[near], pb[near]
        qa32, qb32 = qa.astype(np.float32), qb.astype(np.float32)
        hyps: list[np.ndarray] = []
        cv2.setRNGSeed(0)
        h, _ = cv2.findHomography(qa32, qb32, cv2.RANSAC, thr)
        if h is not None:
            hyps.append(h)
        sim, _ = cv2.estimateAffinePartial2D(qa32, qb32, method=cv2.RANSAC, ransacReprojThreshold=thr)
        if sim is not None:
            hyps.append(np.vstack([sim, [0.0, 0.0, 1.0]]))
        counted = [_inliers(hh, qa, qb, thr) for hh in hyps]
        best = max((int(m.sum()) for m in counted), default=0)
        fit = [m for m in counted if m.sum() >= max(least, support * best) and _hull(qb[m]) >= cover * area]
        if fit:
            # The motion of the points the hypothesis explains, not of the hypothesis: a homography
            # fitted to a few points swings far outside them.
            return min(float(np.median(np.linalg.norm(qb[m] - qa[m], axis=1))) for m in fit), len(pa)
    return None


def _inliers(h: np.ndarray, pa: np.ndarray, pb: np.ndarray, thr: float) -> np.ndarray:
    ph = cv2.perspectiveTransform(pa.reshape(-1, 1, 2), h).reshape(-1, 2)
    return np.asarray(np.linalg.norm(ph - pb, axis=1) <= thr)


def _hull(points: np.ndarray) -> float:
    if len(points) < 3:
        return 0.0
    return float(cv2.contourArea(cv2.convexHull(points.astype(np.float32))))


def view_stillness(
    feats: list[Features], size: tuple[int, int], focal_px: float, *, ratio: float, thr_px: float,
    support: float, least: int, cover: float,
) -> dict[str, Any]:
    """How far one view's camera has turned at each later instant since its first (degrees; ``None``
    where the static scene gives too little to read), from the view's features per instant, the
    frame ``size`` (width, height) and the focal length in pixels.

    Each instant is read against the first; one that cannot be (the arm covers the static points the
    first instant showed) is read against the other instants found in place against the first, which
    show the camera where it is mounted as well.
    """
    def read(a: int, b: int) -> tuple[float, int] | None:
        return scene_motion(feats[a], feats[b], size, focal_px, ratio=ratio, thr=thr_px, support=support,
                            least=least, cover=cover)

    first = {t: read(0, t) for t in range(1, len(feats))}
    placed = [0, *(t for t, got in first.items() if got is not None and got[0] == 0.0)]
    turns: list[float | None] = []
    matches: list[int] = []
    for t, got in first.items():
        if got is None:
            tries = [g for s in placed if s != t for g in [read(s, t)] if g is not None]
            # In place against any of them settles it; else the reading with the most matches.
            got = min(tries, key=lambda g: (g[0] > 0.0, -g[1]), default=None)
        if got is None:
            turns.append(None)
            matches.append(0)
            continue
        px, n = got
        turns.append(math.degrees(math.atan2(px, focal_px)))
        matches.append(n)
    return {"turn_deg": turns, "matches": matches}
