"""Local features of one frame and putative matches between two views (OpenCV SIFT).

Views of a robot rig are far apart (tens of degrees) and rendered or low-resolution frames hold little
texture, so detection is tuned for many keypoints (a low contrast threshold; small frames upscaled so
the shorter side is at least 256 pixels before detection), and matching for few wrong pairs (Lowe's
ratio test and a mutual nearest-neighbour check). Keypoints come back in robojudge's pixel convention:
``(0, 0)`` the top-left corner of the top-left pixel, so a pixel's centre is at ``i + 0.5``.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

MIN_DETECT_SIDE = 256
"""Frames whose shorter side is below this are upscaled (by a whole factor) before detection."""


class Features(NamedTuple):
    """Keypoints ``(N, 2)`` (float64, robojudge pixel coordinates) and their descriptors ``(N, 128)``."""

    points: np.ndarray
    descriptors: np.ndarray


def to_gray(frame: np.ndarray) -> np.ndarray:
    """``(H, W)`` uint8 luma of a gray or RGB uint8 frame."""
    if frame.ndim == 2:
        return frame
    return cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2GRAY)


def detect(frame: np.ndarray, contrast_threshold: float = 0.01, max_features: int = 1000) -> Features:
    """SIFT keypoints and descriptors of one frame (gray ``(H, W)`` or RGB ``(H, W, 3)``, uint8).

    At most ``max_features`` keypoints, the strongest (matching cost grows with their square).
    """
    gray = to_gray(frame)
    up = max(1, -(-MIN_DETECT_SIDE // max(1, min(gray.shape))))
    img = cv2.resize(gray, None, fx=up, fy=up, interpolation=cv2.INTER_CUBIC) if up > 1 else gray
    sift = cv2.SIFT_create(nfeatures=max_features, contrastThreshold=contrast_threshold)  # type: ignore[attr-defined]
    kps, desc = sift.detectAndCompute(img, None)
    if desc is None or not kps:
        return Features(np.zeros((0, 2)), np.zeros((0, 128), dtype=np.float32))
    # OpenCV puts pixel centres at integers; resize maps an upscaled centre x to (x + 0.5) / up - 0.5.
    pts = (np.array([k.pt for k in kps], dtype=np.float64) + 0.5) / up
    return Features(pts, desc)


def match(a: Features, b: Features, ratio: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """Putative matches ``(pa, pb)``, each ``(M, 2)``: ratio test one way, mutual nearest neighbours."""
    empty = (np.zeros((0, 2)), np.zeros((0, 2)))
    if len(a.points) < 2 or len(b.points) < 2:
        return empty
    bf = cv2.BFMatcher(cv2.NORM_L2)
    fwd = bf.knnMatch(a.descriptors, b.descriptors, k=2)
    back = {m[0].queryIdx: m[0].trainIdx for m in bf.knnMatch(b.descriptors, a.descriptors, k=1) if m}
    ia: list[int] = []
    ib: list[int] = []
    for pair in fwd:
        if len(pair) < 2:
            continue
        best, second = pair
        if best.distance < ratio * second.distance and back.get(best.trainIdx) == best.queryIdx:
            ia.append(best.queryIdx)
            ib.append(best.trainIdx)
    if not ia:
        return empty
    return a.points[ia], b.points[ib]
