"""cc_photometric, ctg_camera_control, rbg_stability: hand values, a per-pixel reference, synthetic videos."""

import math

import cv2
import numpy as np
import pytest

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.robophys.geometry import (
    CameraControlConfig,
    background_homographies,
    corner_drift,
    default_intervals,
    forward_backward_epe,
    soft_motion,
    verified_ratio,
)
from robojudge.suite import Item
from robojudge.video import write_video


def _texture(h, w, seed=0, sigma=1.5):
    noise = np.random.default_rng(seed).integers(0, 256, (h, w)).astype(np.float32)
    blurred = cv2.GaussianBlur(noise, (0, 0), sigma)
    return cv2.normalize(blurred, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)


def _rgb(gray_frames):
    return np.repeat(np.stack(gray_frames)[..., None], 3, axis=3)


def _item(tmp_path, frames, name="v"):
    write_video(tmp_path / name, frames, fps=10.0)  # a lossless PNG frame folder
    return Item(item_id=name, video=str(tmp_path / name))


def _panning(n=16, size=96, dx=1, square=False):
    """A camera pan of ``dx`` px per frame over a texture; optionally a bright square moving down."""
    big = _texture(size, size + dx * n + 4)
    frames = []
    for t in range(n):
        f = big[:, t * dx:t * dx + size].copy()
        if square:
            f[10 + 3 * t:26 + 3 * t, 60:76] = 255
        frames.append(f)
    return frames


# ------------------------------------------------------------------ photometric consistency


def _epe_reference(fwd, bwd, crop):
    # Per-pixel loop written from the definition (WorldScore's AEPE): crop, carry p by F, read B at
    # the nearest pixel of the cropped window (clipped), measure the round-trip miss.
    h, w = fwd.shape[:2]
    ch, cw = h - crop, w - crop
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    total = 0.0
    for y in range(ch):
        for x in range(cw):
            u, v = fwd[y0 + y, x0 + x]
            qx, qy = x + u, y + v
            rx = min(max(int(np.round(qx)), 0), cw - 1)
            ry = min(max(int(np.round(qy)), 0), ch - 1)
            bu, bv = bwd[y0 + ry, x0 + rx]
            total += math.hypot(qx + bu - x, qy + bv - y)
    return total / (ch * cw)


def test_fb_epe_by_hand():
    fwd = np.zeros((20, 30, 2), np.float32)
    fwd[...] = (2.0, 1.0)
    assert forward_backward_epe(fwd, -fwd, crop=4) == 0.0
    bwd = np.zeros_like(fwd)
    bwd[...] = (-1.0, -1.0)
    # Round trip misses by (2 - 1, 1 - 1) = (1, 0): EPE 1 at every pixel.
    assert forward_backward_epe(fwd, bwd, crop=4) == pytest.approx(1.0)
    # Zero flows both ways: EPE 0.
    assert forward_backward_epe(np.zeros_like(fwd), np.zeros_like(fwd), crop=0) == 0.0
    with pytest.raises(MetricInputError, match="too small"):
        forward_backward_epe(fwd, bwd, crop=30)


def test_fb_epe_matches_per_pixel_reference():
    rng = np.random.default_rng(7)
    fwd = rng.normal(0, 3, (14, 17, 2))  # large enough to hit the clipping
    bwd = rng.normal(0, 3, (14, 17, 2))
    for crop in (0, 4, 5):
        assert forward_backward_epe(fwd, bwd, crop) == pytest.approx(_epe_reference(fwd, bwd, crop), rel=1e-9)


def test_soft_motion_by_hand():
    # Threshold at a 256 px short side is 6 px: magnitude 6 -> sigmoid(0) = 0.5; magnitude 0 ->
    # sigmoid(-5) = 1 / (1 + e^5) = 0.0066929.
    assert soft_motion(np.array([6.0]), 256, 5.0) == pytest.approx(0.5)
    assert soft_motion(np.array([0.0, 6.0]), 256, 5.0) == pytest.approx((1 / (1 + math.e**5) + 0.5) / 2)
    # 128 px short side halves the threshold to 3 px.
    assert soft_motion(np.array([3.0]), 128, 5.0) == pytest.approx(0.5)


def test_photometric_static_clip_is_penalized(tmp_path):
    frames = _rgb([_texture(64, 64)] * 6)
    score = get_metric("cc_photometric").compute(_item(tmp_path, frames))
    # Identical frames: (near-)zero flows, AEPE below the 0.01 px floor -> 1 / 0.01 = 100; soft motion
    # sigmoid(-5) = 0.0066929 <= 0.1213, so the score is 100 / (1 + e^5) = 0.66929.
    assert score.details["aepe"] < 0.01 and score.details["static_penalty_applied"]
    # (Farneback leaves ~0.01 px of flow noise, so the soft motion is only close to the hand value.)
    assert score.details["soft_motion"] == pytest.approx(1 / (1 + math.e**5), rel=0.1)
    assert score.value == pytest.approx(100 * score.details["soft_motion"], rel=1e-9)


def test_photometric_orders_smooth_motion_above_noise(tmp_path):
    pan = get_metric("cc_photometric").compute(_item(tmp_path, _rgb(_panning(n=8, size=64, dx=2)), "pan"))
    rng = np.random.default_rng(3)
    noise = _rgb([_texture(64, 64, seed=int(s)) for s in rng.integers(0, 10_000, 8)])
    rand = get_metric("cc_photometric").compute(_item(tmp_path, noise, "noise"))
    assert not pan.details["static_penalty_applied"]
    assert pan.value == pytest.approx(1 / max(pan.details["aepe"], 0.01))
    assert rand.value == pytest.approx(1 / rand.details["aepe"])
    assert pan.details["aepe"] < 0.5 < rand.details["aepe"]
    assert pan.value > 3 * rand.value


# ------------------------------------------------------------------ camera control


def test_corner_drift_by_hand():
    assert corner_drift(np.eye(3), 40, 30) == 0.0
    shift = np.array([[1, 0, 3], [0, 1, 4], [0, 0, 1]], np.float64)
    assert corner_drift(shift, 40, 30) == pytest.approx(5.0)  # every corner moves by |(3, 4)| = 5
    # Scaling by 2 about the origin: corners (0,0), (40,0), (40,30), (0,30) move 0, 40, 50, 30 -> mean 30.
    assert corner_drift(np.diag([2.0, 2.0, 1.0]), 40, 30) == pytest.approx(30.0)


def test_homographies_recover_a_pan_despite_a_moving_object():
    frames = np.stack(_panning(n=12, size=96, dx=1, square=True))
    homs, lost = background_homographies(frames, CameraControlConfig())
    assert lost == 0
    grid = np.array([[x, y] for x in (16.0, 48.0, 80.0) for y in (16.0, 48.0, 80.0)]).reshape(-1, 1, 2)
    for t, h in enumerate(homs):
        # Content moves left by t px: H_0t maps every point p to p + (-t, 0), whatever the square does.
        moved = cv2.perspectiveTransform(grid, h).reshape(-1, 2) - grid.reshape(-1, 2)
        assert np.abs(moved - [-t, 0.0]).max() < 0.5
        assert corner_drift(h, 96, 96) == pytest.approx(t, abs=0.5)  # corners extrapolate the fit


def test_camera_control_values(tmp_path):
    still = [_texture(96, 96)] * 10
    for t in range(10):  # a fixed camera with a moving foreground object
        still[t] = still[t].copy()
        still[t][10 + 4 * t:30 + 4 * t, 50:70] = 255
    fixed = get_metric("ctg_camera_control").compute(_item(tmp_path, _rgb(still), "fixed"))
    assert fixed.value > 0.999 and fixed.details["lost_frames"] == 0
    panning = _rgb(_panning(n=16, size=96, dx=1))
    pan = get_metric("ctg_camera_control").compute(_item(tmp_path, panning, "pan"))
    # Drift t px at frames 1..15, mean 8 px; diagonal hypot(96, 96) = 135.76 -> 1 - 8 / 135.76 = 0.94107.
    assert pan.details["mean_drift_px"] == pytest.approx(8.0, abs=0.2)
    assert pan.value == pytest.approx(1 - 8 / math.hypot(96, 96), abs=0.002)


# ------------------------------------------------------------------ sustained stability


def test_verified_ratio_by_hand():
    rng = np.random.default_rng(0)
    p1 = rng.uniform(0, 200, (40, 2)).astype(np.float32)
    h = np.array([[1.02, 0.01, 5.0], [-0.01, 0.98, -3.0], [0.0, 0.0, 1.0]])
    p2 = cv2.perspectiveTransform(p1.reshape(-1, 1, 2).astype(np.float64), h).reshape(-1, 2)
    p2 = p2.astype(np.float32)
    # 10 outliers: each moved 40-60 px off its true image, far beyond the 2 px threshold.
    q1 = rng.uniform(0, 200, (10, 2)).astype(np.float32)
    q2 = cv2.perspectiveTransform(q1.reshape(-1, 1, 2).astype(np.float64), h).reshape(-1, 2)
    q2 = q2.astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi, 10)
    q2 += (rng.uniform(40, 60, 10)[:, None] * np.stack([np.cos(angle), np.sin(angle)], 1)).astype(np.float32)
    ratio = verified_ratio(np.vstack([p1, q1]), np.vstack([p2, q2]), 2.0)
    # The 40 true matches verify through H, the 10 outliers do not. (F alone, under-determined on a
    # planar pair, would also absorb about two outliers; H keeps >= 0.8 of F's inliers, so H counts.)
    assert ratio == pytest.approx(40 / 50)


def test_default_intervals():
    assert default_intervals(48) == (1, 2, 4, 8, 16, 32)
    assert default_intervals(2) == (1,)
    assert default_intervals(1) == ()


def test_stability_static_vs_unrelated_frames(tmp_path):
    spec = get_metric("rbg_stability")
    static = spec.compute(_item(tmp_path, _rgb([_texture(128, 128, sigma=1.0)] * 9), "static"))
    assert static.value == pytest.approx(1.0)
    assert list(static.details["per_interval"]) == ["1", "2", "4", "8"]
    rng = np.random.default_rng(5)
    unrelated = _rgb([_texture(128, 128, seed=int(s), sigma=1.0) for s in rng.integers(0, 10_000, 9)])
    assert spec.compute(_item(tmp_path, unrelated, "unrelated")).value < 0.2
    with pytest.raises(MetricInputError, match="no frame interval"):
        short = _item(tmp_path, _rgb([_texture(64, 64)] * 4), "short")
        spec.compute(short, spec.make_config({"intervals": [8]}))
