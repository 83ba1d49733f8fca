"""Colour regions as cross-view correspondences, where keypoints find none.

Rendered and many real robot scenes are flat-coloured: a plain table, a red block, a blue one, a green
target. Keypoint descriptors of such scenes do not match between cameras tens of degrees apart, but a
saturated colour region that appears once in each of two views is, unambiguously, the same object. Its
centroid is not exactly the projection of one 3D point (an object's faces differ by view), so it is
judged with a wider tolerance than a keypoint. Pure numpy and OpenCV.
"""

from __future__ import annotations

import cv2
import numpy as np

SATURATION = 100
"""Minimum HSV saturation (0-255) of a pixel that belongs to a colour region."""
VALUE = 60
"""Minimum HSV value (0-255): dark pixels have no reliable hue."""
HUE_BINS = 6
"""Hue is cut into this many bins (60 degrees each, red centred on 0)."""


def colour_blobs(frame: np.ndarray, min_area: int) -> dict[int, list[np.ndarray]]:
    """Centroids (robojudge pixel coordinates) of the saturated colour regions of an RGB frame, by hue bin."""
    if frame.ndim != 3:
        return {}
    hsv = cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2HSV)
    hue, sat, val = hsv[..., 0].astype(np.int32), hsv[..., 1], hsv[..., 2]
    coloured = (sat >= SATURATION) & (val >= VALUE)
    width = 180 // HUE_BINS  # OpenCV's hue runs 0-179
    bins = ((hue + width // 2) // width) % HUE_BINS
    out: dict[int, list[np.ndarray]] = {}
    for b in range(HUE_BINS):
        mask = (coloured & (bins == b)).astype(np.uint8)
        if not mask.any():
            continue
        n, _, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
        found = [centroids[i] + 0.5 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= min_area]
        if found:
            out[b] = found
    return out


def blob_matches(
    a: dict[int, list[np.ndarray]], b: dict[int, list[np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """``(pa, pb)`` centroids of the hues that form exactly one region in each view."""
    pa = [a[h][0] for h in sorted(a) if len(a[h]) == 1 and len(b.get(h, ())) == 1]
    pb = [b[h][0] for h in sorted(a) if len(a[h]) == 1 and len(b.get(h, ())) == 1]
    if not pa:
        return np.zeros((0, 2)), np.zeros((0, 2))
    return np.asarray(pa, dtype=np.float64), np.asarray(pb, dtype=np.float64)
