"""Keypoints read in several calibrated views, triangulated to 3D, and the rigidity of links in metres.

A keypoint read in one view fixes a ray, not a point: a link that stretches along that view's line of sight
keeps its projected length, and a link outside the view is not seen at all. With two or more calibrated
views of the same instant, the linear (DLT) triangulation below gives each keypoint's world position, so
link lengths are in metres and need no foreshortening allowance.

* :func:`triangulate`: per frame and keypoint, the least-squares point of every view that sees it (each
  view adds two linear equations, scaled to unit norm so no view dominates by its pixel scale). A point
  seen in fewer than two views stays NaN. The reprojection error (the largest pixel distance between a
  view's reading and the point projected back into it) rejects bad reads: when it is above ``max_error``
  and three or more views saw the point, the point is solved again without each view in turn and the
  subset that agrees best is kept (one bad view dropped); a point still above ``max_error`` is rejected.
* :func:`segment_rigidity_3d`: per segment, the largest coefficient of variation (standard deviation over
  median) of a link's 3D length over the frames where both ends were triangulated, for links seen on at
  least :data:`MIN_FRAMES` frames and at least ``min_link`` metres long: the 2D measure's definition, in
  metres instead of pixels.

Pure numpy; cameras follow :mod:`robojudge.robots._camera` (OpenCV axes, ``x_cam = R x_world + t``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_FRAMES = 4
"""Frames a link needs in a segment to have a rigidity value (as in 2D)."""
MIN_LINK_M = 0.02
"""Shortest link measured in 3D, metres (the shortest rigid link robojudge's specs measure)."""
MAX_ERROR = 0.03
"""Default largest reprojection error accepted, as a share of the image diagonal (about 5 px at 128 px:
a few times a trained reader's error, well below a wrong body's distance)."""


def projection_matrix(K: Any, R: Any, t: Any) -> np.ndarray:
    """``(3, 4)`` matrix ``K [R | t]`` (or ``(T, 3, 4)`` for per-frame ``R`` ``(T, 3, 3)`` and ``t``)."""
    k = np.asarray(K, dtype=np.float64)
    r = np.asarray(R, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    rt = np.concatenate([r, tt[..., None]], axis=-1)
    return np.asarray(k @ rt)


def reproject(points: np.ndarray, projections: np.ndarray) -> np.ndarray:
    """``(T, V, K, 2)`` pixels of ``(T, K, 3)`` points in every view of ``(T, V, 3, 4)`` matrices."""
    hom = np.concatenate([points, np.ones(points.shape[:-1] + (1,))], axis=-1)  # (T, K, 4)
    img = np.einsum("tvij,tkj->tvki", projections, hom)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(img[..., :2] / img[..., 2:3])


def _solve(points_2d: np.ndarray, use: np.ndarray, projections: np.ndarray) -> np.ndarray:
    """DLT over the views in ``use``: ``(T, K, 3)`` points, NaN where fewer than two views are used."""
    p = projections[:, :, None]  # (T, V, 1, 3, 4)
    u = points_2d[..., 0:1]
    v = points_2d[..., 1:2]
    rows = np.stack([u * p[..., 2, :] - p[..., 0, :], v * p[..., 2, :] - p[..., 1, :]], axis=-2)  # T V K 2 4
    norm = np.linalg.norm(rows, axis=-1, keepdims=True)
    rows = np.where(norm > 0, rows / np.where(norm > 0, norm, 1.0), 0.0)
    rows = np.where(use[..., None, None] & np.isfinite(rows).all(axis=-1, keepdims=True), rows, 0.0)
    t, views, k = use.shape
    a = rows.transpose(0, 2, 1, 3, 4).reshape(t, k, 2 * views, 4)  # (T, K, 2V, 4)
    _, _, vt = np.linalg.svd(a)
    x = vt[..., -1, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x[..., :3] / x[..., 3:4]
    out[use.sum(axis=1) < 2] = np.nan
    return np.asarray(out)


@dataclass(frozen=True)
class Triangulated:
    """Triangulated keypoints: positions, which were accepted, and their reprojection error and views."""

    points: np.ndarray  # (T, K, 3) world metres, NaN where not accepted
    ok: np.ndarray  # (T, K) bool
    error: np.ndarray  # (T, K) largest reprojection error over the views used, pixels (NaN: not solved)
    views_used: np.ndarray  # (T, K) int


def triangulate(
    points_2d: Any,
    visible: Any,
    projections: Any,
    *,
    max_error: float = math.inf,
) -> Triangulated:
    """World positions of keypoints read in several calibrated views.

    Args:
        points_2d: ``(T, V, K, 2)`` pixel readings of every view.
        visible: ``(T, V, K)``: whether view ``v`` saw keypoint ``k`` at frame ``t``.
        projections: ``(V, 3, 4)`` camera matrices ``K [R | t]``, or ``(T, V, 3, 4)`` for moving cameras.
        max_error: reprojection error above which one view is dropped (when three or more saw the
            point) and then the point rejected, pixels.

    Returns:
        The points, accepted where at least two views agree within ``max_error``.
    """
    pts = np.asarray(points_2d, dtype=np.float64)
    use = np.asarray(visible, dtype=bool).copy()
    proj = np.asarray(projections, dtype=np.float64)
    if pts.ndim != 4 or pts.shape[-1] != 2 or use.shape != pts.shape[:3]:
        raise ValueError(f"points must be (T, V, K, 2) with a (T, V, K) mask; got {pts.shape} and "
                         f"{use.shape}")
    if proj.ndim == 3:
        proj = np.broadcast_to(proj, (pts.shape[0],) + proj.shape)
    if proj.shape != (pts.shape[0], pts.shape[1], 3, 4):
        raise ValueError(f"projections must be (V, 3, 4) or (T, V, 3, 4) for {pts.shape[1]} views; "
                         f"got {proj.shape}")
    use &= np.isfinite(pts).all(axis=-1)
    x = _solve(pts, use, proj)

    def errors(points: np.ndarray, mask: np.ndarray) -> np.ndarray:
        e = np.linalg.norm(reproject(points, proj) - pts, axis=-1)  # (T, V, K)
        return np.where(mask, e, np.nan)

    def worst_of(points: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            e = np.where(mask, errors(points, mask), -np.inf).max(axis=1)
        return np.where(mask.sum(axis=1) >= 2, e, np.nan)

    worst = worst_of(x, use)
    retry = (worst > max_error) & (use.sum(axis=1) >= 3)
    if retry.any():
        # The least-squares point spreads one bad read over every view, so the largest residual need not
        # be the bad view's: solve again without each view in turn and keep the best-agreeing subset.
        best_x, best_use, best_worst = x.copy(), use.copy(), worst.copy()
        for v in range(use.shape[1]):
            drop = use.copy()
            drop[:, v] &= ~retry
            x_v = _solve(pts, drop, proj)
            w_v = worst_of(x_v, drop)
            better = retry & use[:, v] & (w_v < best_worst)
            best_x = np.where(better[..., None], x_v, best_x)
            best_worst = np.where(better, w_v, best_worst)
            best_use = np.where(better[:, None, :], drop, best_use)
        x, use, worst = best_x, best_use, best_worst
    count = use.sum(axis=1)
    ok = (count >= 2) & np.isfinite(x).all(axis=-1) & (worst <= max_error)
    points = np.where(ok[..., None], x, np.nan)
    return Triangulated(points, ok, np.where(count >= 2, worst, np.nan), count.astype(int))


def link_lengths_3d(points: np.ndarray, ok: np.ndarray, links: Sequence[tuple[int, int]]) -> np.ndarray:
    """``(T, L)`` metres per link and frame, NaN where either end was not triangulated."""
    if not links:
        return np.zeros((len(points), 0))
    a = np.array([i for i, _ in links])
    b = np.array([j for _, j in links])
    lengths = np.linalg.norm(points[:, a] - points[:, b], axis=-1)
    return np.where(ok[:, a] & ok[:, b], lengths, np.nan)


def rigidity_3d(lengths: np.ndarray, min_link: float = MIN_LINK_M) -> tuple[float, int]:
    """Largest coefficient of variation of a measurable link's 3D length in a segment (NaN if none) and how
    many links were measured."""
    worst, measured = math.nan, 0
    for col in np.asarray(lengths, dtype=np.float64).T:
        good = col[~np.isnan(col)]
        if len(good) < MIN_FRAMES:
            continue
        med = float(np.median(good))
        if med < min_link:
            continue
        measured += 1
        cv = float(np.std(good) / med)
        worst = cv if math.isnan(worst) else max(worst, cv)
    return worst, measured


def segment_rigidity_3d(
    points: np.ndarray,
    ok: np.ndarray,
    links: Sequence[tuple[int, int]],
    spans: Sequence[tuple[int, int]],
    min_link: float = MIN_LINK_M,
) -> list[tuple[float, int]]:
    """:func:`rigidity_3d` of every ``[start, stop)`` span: ``(value, links measured)``."""
    lengths = link_lengths_3d(points, ok, links)
    return [rigidity_3d(lengths[a:b], min_link) for a, b in spans]


def cameras_for_views(
    calibration: Mapping[str, Any], views: Sequence[str], sizes: Mapping[str, tuple[int, int]]
) -> np.ndarray:
    """``(V, 3, 4)`` matrices of ``views`` from calibrated :class:`~robojudge.robots.Camera` objects, in
    the pixels of frames of ``sizes`` (a view's calibration at another image size of its aspect ratio is
    scaled to it).

    Raises:
        ValueError: A view's frames have another aspect ratio than its calibration's ``size`` (a crop or
            padding: :func:`robojudge.robots.size_mismatch`, naming the view and both sizes).
    """
    from robojudge.robots import pixel_scale

    mats = []
    for name in views:
        cam = calibration[name]
        w, h = sizes[name]
        sx, sy = pixel_scale(cam, w, h, name)
        scale = np.diag([sx, sy, 1.0])
        mats.append(scale @ projection_matrix(cam.K, cam.R, cam.t))
    return np.stack(mats)
