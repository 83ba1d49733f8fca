"""Pinhole cameras: projecting 3D keypoints into calibrated views, with visibility.

Axes follow OpenCV, as the simulator suite's calibration does: camera x right, y down, z forward;
``x_cam = R @ x_world + t``; pixel ``(u, v) = (fx x/z + cx, fy y/z + cy)`` with ``(0, 0)`` the top-left
corner of the top-left pixel, so pixel ``(i, j)`` covers ``[i, i+1) x [j, j+1)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

DEPTH_MARGIN = 0.06
"""Metres: with a depth map, a keypoint counts as visible when the surface drawn at its pixel is at
most this much in front of it (a keypoint is a body's frame origin, usually inside the body's mesh)."""


class Camera(BaseModel):
    """One calibrated view: intrinsics ``K``, world-to-camera ``R``, ``t`` (OpenCV axes), image size.

    ``size`` is ``(width, height)`` in pixels.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    K: tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
    R: tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
    t: tuple[float, float, float]
    size: tuple[int, int] = Field(description="(width, height) in pixels")

    @field_validator("size")
    @classmethod
    def _positive(cls, v: tuple[int, int]) -> tuple[int, int]:
        if min(v) <= 0:
            raise ValueError(f"image size {list(v)} must be positive (width, height)")
        return v

    @field_validator("K")
    @classmethod
    def _intrinsics(cls, v: Any) -> Any:
        k = np.asarray(v, dtype=np.float64)
        if not np.all(np.isfinite(k)):
            raise ValueError(f"K holds a value that is not a finite number: {k.tolist()}")
        if k[0, 0] <= 0 or k[1, 1] <= 0:
            raise ValueError(f"K's focal lengths fx = K[0][0] and fy = K[1][1] must be positive; got "
                             f"{k[0, 0]:g} and {k[1, 1]:g}")
        return v

    @field_validator("t")
    @classmethod
    def _finite_t(cls, v: Any) -> Any:
        if not np.all(np.isfinite(np.asarray(v, dtype=np.float64))):
            raise ValueError(f"t holds a value that is not a finite number: {list(v)}")
        return v

    @field_validator("R")
    @classmethod
    def _rotation(cls, v: Any) -> Any:
        r = np.asarray(v, dtype=np.float64)
        if not np.allclose(r @ r.T, np.eye(3), atol=1e-5) or np.linalg.det(r) < 0:
            raise ValueError("R is not a rotation matrix (R @ R.T must be the identity, det(R) = 1)")
        return v

    def project(
        self, points_3d: Any, depth: Any = None, margin: float = DEPTH_MARGIN
    ) -> tuple[np.ndarray, np.ndarray]:
        """:func:`project` with this camera."""
        return project(points_3d, self.K, self.R, self.t, self.size, depth=depth, margin=margin)


def project(
    points_3d: Any,
    K: Any,
    R: Any,
    t: Any,
    size: int | tuple[int, int],
    *,
    depth: Any = None,
    margin: float = DEPTH_MARGIN,
) -> tuple[np.ndarray, np.ndarray]:
    """Project world points into one view.

    Args:
        points_3d: ``(..., 3)`` world points, typically ``(T, K, 3)`` from forward kinematics.
        K: ``(3, 3)`` pinhole intrinsics.
        R: ``(3, 3)`` world-to-camera rotation, or ``(T, 3, 3)`` for a camera that moves per frame.
        t: ``(3,)`` world-to-camera translation, or ``(T, 3)``.
        size: image ``(width, height)``, or one number for a square image.
        depth: optional ``(T, H, W)`` (or ``(H, W)``) depth along the camera's z axis, metres; when given,
            a point hidden behind a surface nearer than ``z - margin`` is not visible.
        margin: see :data:`DEPTH_MARGIN`.

    Returns:
        ``uv`` ``(..., 2)`` pixel coordinates and ``visible`` ``(...)``: in front of the camera, inside
        the image, and (with ``depth``) not occluded. Points behind the camera get NaN coordinates.
    """
    p = np.asarray(points_3d, dtype=np.float64)
    k = np.asarray(K, dtype=np.float64)
    r = np.asarray(R, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    w, h = (size, size) if isinstance(size, int | np.integer) else (int(size[0]), int(size[1]))
    if p.shape[-1] != 3 or k.shape != (3, 3):
        raise ValueError(f"points must be (..., 3) and K (3, 3); got {p.shape} and {k.shape}")
    if r.ndim == 3:  # per-frame extrinsics: frames on the first axis of the points
        if p.ndim != 3 or r.shape[0] != p.shape[0] or tt.shape != (r.shape[0], 3):
            raise ValueError(f"per-frame R {r.shape} and t {tt.shape} need (T, K, 3) points; got {p.shape}")
        cam = np.einsum("tij,tkj->tki", r, p) + tt[:, None, :]
    else:
        cam = p @ r.T + tt
    z = cam[..., 2]
    front = z > 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = np.stack(
            [
                k[0, 0] * cam[..., 0] / z + k[0, 1] * cam[..., 1] / z + k[0, 2],
                k[1, 1] * cam[..., 1] / z + k[1, 2],
            ],
            axis=-1,
        )
    uv[~front] = np.nan
    inside = front & (uv[..., 0] >= 0) & (uv[..., 0] < w) & (uv[..., 1] >= 0) & (uv[..., 1] < h)
    visible = inside
    if depth is not None:
        visible = inside & ~_occluded(np.asarray(depth, dtype=np.float64), uv, z, inside, margin)
    return uv, visible


def _occluded(
    depth: np.ndarray, uv: np.ndarray, z: np.ndarray, inside: np.ndarray, margin: float
) -> np.ndarray:
    px = np.where(inside[..., None], uv, 0).astype(int)
    if depth.ndim == 2:  # one depth map for every point
        surf = depth[px[..., 1], px[..., 0]]
    elif depth.ndim == 3 and uv.ndim == 3 and depth.shape[0] == uv.shape[0]:
        surf = depth[np.arange(uv.shape[0])[:, None], px[..., 1], px[..., 0]]
    else:
        raise ValueError(
            f"depth must be (H, W), or (T, H, W) for (T, K, 3) points; got {depth.shape} for {uv.shape[:-1]}"
        )
    return np.asarray(surf < z - margin)


ASPECT_TOLERANCE = 0.05
"""Frames of another size than a camera's calibrated ``size`` are that picture resized, and read with
``K`` scaled to them, only when the two aspect ratios (width / height) agree within this share (allowing
half a pixel of rounding on each side of the frames): 5%, as a generated video is paired with its reference
(:data:`robojudge.metrics.robophys.reference.ASPECT_TOLERANCE`), so that a model's rounding of its sides
(Wan's 832x480 for 854x480, Cosmos's 1280x704 for 1280x720) is a resize. Beyond it the frames are another
framing: a crop, padding (a 16:9 export of a 4:3 camera) or another camera, which no scaling of ``K`` maps
onto the calibrated rays."""


def same_picture(size: tuple[int, int], width: int, height: int) -> bool:
    """Whether frames of ``width x height`` can be the picture of ``size`` (width, height) resized: their
    aspect ratios agree within :data:`ASPECT_TOLERANCE`, allowing half a pixel of rounding on each side.

    >>> same_picture((1280, 720), 640, 360), same_picture((1280, 720), 1280, 704)
    (True, True)
    >>> same_picture((640, 480), 640, 360)  # a 16:9 export of a 4:3 camera
    False
    """
    w, h = int(width), int(height)
    aspect = int(size[0]) / int(size[1])
    widest, narrowest = (w + 0.5) / max(h - 0.5, 0.5), (w - 0.5) / (h + 0.5)
    return widest >= aspect * (1 - ASPECT_TOLERANCE) and narrowest <= aspect * (1 + ASPECT_TOLERANCE)


def size_mismatch(cam: Camera, width: int, height: int, view: str | None = None) -> str | None:
    """Why frames of ``width x height`` cannot be read with ``cam``'s calibration (naming ``view``), or
    None when they are the calibrated picture, at its size or resized (:data:`ASPECT_TOLERANCE`).

    >>> eye = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
    >>> cam = Camera(K=((100, 0, 64), (0, 100, 48), (0, 0, 1)), R=eye, t=(0, 0, 0), size=(128, 96))
    >>> size_mismatch(cam, 64, 48) is None, size_mismatch(cam, 129, 96) is None
    (True, True)
    >>> size_mismatch(cam, 128, 72, "c")[:72]
    "view 'c' is 128x72 (aspect 1.778), its calibration is for 128x96 (1.333)"
    """
    cw, ch = int(cam.size[0]), int(cam.size[1])
    w, h = int(width), int(height)
    if same_picture((cw, ch), w, h):
        return None
    aspect = cw / ch
    head = f"view {view!r} is" if view is not None else "the frames are"
    return (f"{head} {w}x{h} (aspect {w / h:.3f}), its calibration is for {cw}x{ch} ({aspect:.3f}): aspect "
            f"ratios more than {ASPECT_TOLERANCE:.0%} apart are another framing (a crop, padding, another "
            "camera), which no scaling of K maps onto the calibrated rays; calibrate the view at the framing "
            "it is given in")


def pixel_scale(cam: Camera, width: int, height: int, view: str | None = None) -> tuple[float, float]:
    """``(sx, sy)`` taking pixels of ``cam``'s calibrated ``size`` to those of ``width x height`` frames.

    Raises:
        ValueError: The frames have another aspect ratio (:func:`size_mismatch`, naming ``view``).
    """
    why = size_mismatch(cam, width, height, view)
    if why is not None:
        raise ValueError(why)
    return width / cam.size[0], height / cam.size[1]


def mujoco_camera(model: Any, data: Any, camera: str | int, size: int | tuple[int, int]) -> Camera:
    """The calibration of a MuJoCo camera as rendered at ``size`` (``data`` after ``mj_forward``).

    MuJoCo's ``fovy`` is the vertical field of view and its pixels are square, so ``fx = fy``; its
    camera looks along -z with y up, which a flip of y and z turns into OpenCV axes.
    """
    w, h = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
    cid = model.camera(camera).id
    f = 0.5 * h / np.tan(np.deg2rad(float(model.cam_fovy[cid])) / 2)
    r = np.diag([1.0, -1.0, -1.0]) @ data.cam_xmat[cid].reshape(3, 3).T
    t = -r @ data.cam_xpos[cid]
    k = [[f, 0.0, w / 2], [0.0, f, h / 2], [0.0, 0.0, 1.0]]
    return Camera.model_validate({"K": k, "R": r.tolist(), "t": t.tolist(), "size": (w, h)})


def load_calibration(path: str | Path) -> dict[str, Camera]:
    """Read a calibration file: a JSON object mapping each view name to ``{K, R, t, size}``.

    Raises:
        ValueError: naming the file, the view and the field, when a camera is missing or malformed.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))  # a BOM, as Windows tools write
    except OSError as e:
        raise ValueError(f"{p}: cannot read calibration: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: line {e.lineno}: not valid JSON: {e.msg}") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{p}: a calibration is a JSON object mapping view names to cameras {{K, R, t, size}}"
        )
    out: dict[str, Camera] = {}
    for view, cam in data.items():
        try:
            out[view] = Camera.model_validate(cam)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            msg = str(err.get("ctx", {}).get("error", err["msg"]))
            raise ValueError(f"{p}: view {view!r} field {where or '(camera)'}: {msg}") from None
    return out
