"""A synthetic calibrated rig for the RIGIS tests: three cameras looking at a textured table top.

The scene is the plane z = 0 (metres), covered by a multi-scale random texture, with a textured square
sliding across it (the "arm"), so every view has texture to match and motion to time. Each view is the
texture warped through its camera's plane-induced homography, so the geometry is exact: a view agrees
with the calibration to the pixel. 128x96 px, 24 frames.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from robojudge.robots import Camera

W, H, T = 128, 96, 24
TEX = 512  # texture pixels across the 1 m x 1 m table
EYES = {"a": (0.0, -0.9, 0.9), "b": (0.45, -0.75, 0.95), "c": (-0.45, -0.75, 0.95)}


def look_at(eye: tuple[float, float, float], target: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> Camera:
    """A camera at ``eye`` looking at ``target`` (OpenCV axes: x right, y down, z forward), world z up."""
    e, g = np.asarray(eye, float), np.asarray(target, float)
    z = (g - e) / np.linalg.norm(g - e)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    r = np.stack([x, y, z])
    f = 0.9 * W
    k = [[f, 0.0, W / 2], [0.0, f, H / 2], [0.0, 0.0, 1.0]]
    return Camera.model_validate({"K": k, "R": r.tolist(), "t": (-r @ e).tolist(), "size": (W, H)})


CAMERAS = {n: look_at(e) for n, e in EYES.items()}


def _texture() -> np.ndarray:
    rng = np.random.default_rng(0)
    out = np.zeros((TEX, TEX, 3), np.float64)
    for cells, amp in ((8, 90.0), (32, 60.0), (128, 40.0)):
        layer = rng.uniform(-amp, amp, (cells, cells, 3))
        out += cv2.resize(layer, (TEX, TEX), interpolation=cv2.INTER_CUBIC)
    return np.clip(out + 128, 0, 255).astype(np.uint8)


def _homography(cam: Camera) -> np.ndarray:
    """Texture pixel (u, v) -> image pixel (robojudge convention), through the table plane."""
    k, r, t = np.asarray(cam.K), np.asarray(cam.R), np.asarray(cam.t)
    plane_to_img = k @ np.column_stack([r[:, 0], r[:, 1], t])
    tex_to_plane = np.array([[1 / TEX, 0, -0.5], [0, 1 / TEX, -0.5], [0, 0, 1.0]])
    # warpPerspective maps pixel centres at integers; robojudge's centres are at +0.5 on both sides.
    shift = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1.0]])
    return np.linalg.inv(shift) @ plane_to_img @ tex_to_plane @ shift


def scene_textures(offset: tuple[int, int] = (0, 0)) -> np.ndarray:
    """``(T, TEX, TEX, 3)``: the table texture with the sliding square drawn at each instant (moved by
    ``offset``, texture pixels (right, down), for a view that shows it elsewhere)."""
    tex = _texture()
    patch = np.random.default_rng(1).integers(0, 256, (64, 64, 3)).astype(np.uint8)
    patch[..., 2] = 240
    out = []
    # Stop and go, as an arm reaches, waits and returns: the views' motion over time has a shape to align.
    xs = np.interp(np.arange(T), [0, 3, 9, 14, 20, T - 1], [120, 120, 380, 380, 200, 200]).round().astype(int)
    dx, dy = offset
    for x in xs:
        f = tex.copy()
        f[200 + dy:264 + dy, x + dx:x + dx + 64] = patch
        out.append(f)
    return np.stack(out)


def render(cam: Camera, textures: np.ndarray) -> np.ndarray:
    h = _homography(cam)
    return np.stack([cv2.warpPerspective(f, h, (W, H), flags=cv2.INTER_AREA, borderValue=(40, 40, 40))
                     for f in textures])


def clean_views() -> dict[str, np.ndarray]:
    """``view -> (T, H, W, 3)`` uint8 frames of the rig, every view in step with the others."""
    tex = scene_textures()
    return {n: render(c, tex) for n, c in CAMERAS.items()}


def write_rig(root: Path) -> dict[str, np.ndarray]:
    """The clean views as lossless PNG frame folders at 10 fps under ``root``, with ``calib.json`` (every
    camera) and ``calib_ab.json`` (without c); returns the views' frames."""
    import json

    from robojudge.video import write_video

    views = clean_views()
    for name, frames in views.items():
        write_video(root / name, frames, fps=10)
    cal = {n: c.model_dump() for n, c in CAMERAS.items()}
    (root / "calib.json").write_text(json.dumps(cal))
    (root / "calib_ab.json").write_text(json.dumps({k: cal[k] for k in ("a", "b")}))
    return views


def lagged(frames: np.ndarray, k: int) -> np.ndarray:
    """The view ``k`` frames late: it holds its first frame for ``k`` frames, then plays on."""
    return np.concatenate([np.repeat(frames[:1], k, axis=0), frames[: len(frames) - k]]) if k else frames


def shifted(frames: np.ndarray, px: int) -> np.ndarray:
    """The view moved ``px`` pixels right (the camera turned slightly; edge columns repeat)."""
    return np.concatenate([np.repeat(frames[:, :, :1], px, axis=2), frames[:, :, : W - px]], axis=2) \
        if px else frames


def instants(views: dict[str, np.ndarray], n: int = 8) -> dict[str, np.ndarray]:
    """``n`` instants spread evenly over the views (as the registered metric samples them)."""
    idx = np.linspace(0, T - 1, n).round().astype(int)
    return {k: v[idx] for k, v in views.items()}


def flat_textures() -> np.ndarray:
    """``(T, TEX, TEX, 3)``: a plain grey table with a red, a green and a blue square (the blue one
    moving)."""
    base = np.full((TEX, TEX, 3), 150, np.uint8)
    xs = np.interp(np.arange(T), [0, 6, 16, T - 1], [100, 100, 300, 300]).round().astype(int)
    tex = []
    for x in xs:
        f = base.copy()
        f[80:140, 80:140] = (220, 30, 30)
        f[330:390, 360:420] = (30, 200, 40)
        f[250:310, x:x + 60] = (30, 40, 220)
        tex.append(f)
    return np.stack(tex)


def flat_views() -> dict[str, np.ndarray]:
    """The rig over the flat table of :func:`flat_textures`: no texture for keypoints, three colour
    regions to match."""
    stack = flat_textures()
    return {n: render(c, stack) for n, c in CAMERAS.items()}


def turned(cam: Camera, rotvec: np.ndarray) -> Camera:
    """``cam`` turned about its own centre by the rotation vector ``rotvec`` (camera axes, radians)."""
    rd, _ = cv2.Rodrigues(np.asarray(rotvec, dtype=np.float64).reshape(3, 1))
    r, t = rd @ np.asarray(cam.R), rd @ np.asarray(cam.t)
    return Camera.model_validate({"K": cam.K, "R": r.tolist(), "t": t.tolist(), "size": cam.size})


def shaken(cam: Camera, textures: np.ndarray, sd_deg: float, seed: int = 0) -> np.ndarray:
    """The view of ``cam`` while it shakes: from frame 4 on, each frame turned by a random rotation of
    ``sd_deg`` degrees (standard deviation per axis) about the camera's centre."""
    rng = np.random.default_rng(seed)
    out = []
    for i, f in enumerate(textures):
        turn = np.zeros(3) if i < 4 else np.deg2rad(sd_deg) * rng.normal(size=3)
        out.append(render(turned(cam, turn), f[None])[0])
    return np.stack(out)
