"""Two-view geometry of a calibrated rig: relative poses, fundamental matrices, epipolar distances, angles.

Cameras follow :class:`robojudge.robots.Camera`: OpenCV axes, ``x_cam = R x_world + t``. Pure numpy.
"""

from __future__ import annotations

import math

import numpy as np

from robojudge.robots import Camera, pixel_scale


def intrinsics_for(cam: Camera, width: int, height: int, view: str | None = None) -> np.ndarray:
    """``K`` of ``cam`` for frames of ``width x height`` pixels (scaled per axis from ``cam.size``).

    A video sampled at another size than the one calibrated, at its aspect ratio, shows the same rays on
    a scaled pixel grid. Pixel centres sit at half-integers in both grids (robojudge's convention), so the
    principal point scales with the focal lengths.

    Raises:
        ValueError: The frames have another aspect ratio than ``cam.size`` (a crop or padding, which no
            scaling undoes; :func:`robojudge.robots.size_mismatch`, naming ``view``).
    """
    k = np.asarray(cam.K, dtype=np.float64).copy()
    sx, sy = pixel_scale(cam, width, height, view)
    k[0] *= sx
    k[1] *= sy
    return k


def relative_pose(a: Camera, b: Camera) -> tuple[np.ndarray, np.ndarray]:
    """``(R, t)`` taking camera ``a``'s coordinates to camera ``b``'s: ``x_b = R x_a + t``."""
    ra, ta = np.asarray(a.R, dtype=np.float64), np.asarray(a.t, dtype=np.float64)
    rb, tb = np.asarray(b.R, dtype=np.float64), np.asarray(b.t, dtype=np.float64)
    r = rb @ ra.T
    return r, tb - r @ ta


def skew(v: np.ndarray) -> np.ndarray:
    """The cross-product matrix ``[v]_x``."""
    x, y, z = (float(c) for c in v)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def fundamental(k_a: np.ndarray, k_b: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``F`` with ``x_b^T F x_a = 0`` for pixels ``x_a`` in view a, ``x_b`` in view b (homogeneous)."""
    e = skew(t) @ r
    out: np.ndarray = np.linalg.inv(k_b).T @ e @ np.linalg.inv(k_a)
    return out


def sampson_distance(f: np.ndarray, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Sampson distance in pixels (square root of the Sampson error) of each match under ``F``.

    The first-order approximation of how far the two points must move, together, to satisfy the
    epipolar constraint exactly; ``(N,)`` for ``(N, 2)`` points.
    """
    n = len(pa)
    x1 = np.c_[np.asarray(pa, dtype=np.float64), np.ones(n)]
    x2 = np.c_[np.asarray(pb, dtype=np.float64), np.ones(n)]
    fx1 = x1 @ f.T
    ftx2 = x2 @ f
    num = np.einsum("ij,ij->i", x2, fx1) ** 2
    den = fx1[:, 0] ** 2 + fx1[:, 1] ** 2 + ftx2[:, 0] ** 2 + ftx2[:, 1] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(num / den)
    return np.where(den > 0, out, np.inf)


def rotation_angle_deg(r: np.ndarray) -> float:
    """The angle of rotation ``r`` in degrees (0-180)."""
    c = (float(np.trace(r)) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))


def direction_angle_deg(u: np.ndarray, v: np.ndarray) -> float:
    """The angle between two directions in degrees (0-180); NaN when either has no length."""
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nu < 1e-12 or nv < 1e-12:
        return float("nan")
    c = float(np.dot(u, v)) / (nu * nv)
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))


def tolerance_score(err: float, free: float, scale: float) -> float:
    """An error mapped to 0-1: 1 up to ``free``, then ``exp(-(err - free) / scale)``."""
    return math.exp(-max(0.0, err - free) / scale)
