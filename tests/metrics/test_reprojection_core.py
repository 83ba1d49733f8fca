"""Depth-based reprojection (RoboPhys-3D App. B.2.1 geometry): hand-worked planes and invariants."""

import math

import numpy as np
import pytest

from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics.functional._reprojection import (
    lift,
    masked_psnr,
    project,
    reprojection_consistency,
    round_trip,
    warp_into,
)

H, W, F = 48, 64, 100.0
K = np.array([[F, 0.0, W / 2], [0.0, F, H / 2], [0.0, 0.0, 1.0]])
EYE = np.eye(4)


def moved(tx: float) -> np.ndarray:
    """Camera-to-world pose of a camera translated by ``tx`` metres along world x (= camera x)."""
    pose = np.eye(4)
    pose[0, 3] = tx
    return pose


def plane(z: float) -> np.ndarray:
    return np.full((H, W), z)


def texture(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (H, W, 3), dtype=np.uint8)


def test_forward_shift_is_f_t_over_z() -> None:
    # Plane at Z = 2, camera j moved +0.1 m along x: a point at x_i lands at x_i - 0.1 in camera j, so
    # u_j = f (x_i - 0.1) / Z + cx = u_i - f * 0.1 / Z = u_i - 100 * 0.1 / 2 = u_i - 5 px.
    rt = round_trip(plane(2.0), plane(2.0), K, K, EYE, moved(0.1))
    u = np.arange(W) + 0.5
    assert np.allclose(rt.target_uv[..., 0], u[None, :] - 5.0)
    assert np.allclose(rt.target_uv[..., 1], (np.arange(H) + 0.5)[:, None])
    # q_u = u - 5 >= 0.5 needs column >= 5: 59 of 64 columns are valid.
    assert np.array_equal(rt.valid, np.broadcast_to(np.arange(W) >= 5, (H, W)))
    assert np.nanmax(rt.displacement) < 1e-9  # consistent depths: the round trip closes


def test_inconsistent_depth_gives_hand_worked_displacement() -> None:
    # depth_j says Z' = 4 instead of 2. q = u - 5; lifted with Z' = 4 the point is at
    # x' = (q - cx) * 4 / f in camera j, i.e. x' + 0.1 in camera i, which projects to
    # u' = f (x' + 0.1) / 4 + cx = (q - cx) + 100 * 0.1 / 4 + cx = q + 2.5 = u - 2.5: 2.5 px off.
    rt = round_trip(plane(2.0), plane(4.0), K, K, EYE, moved(0.1))
    assert np.allclose(rt.displacement[rt.valid], 2.5)


def test_project_matches_opencv_under_rotation() -> None:
    import cv2

    rng = np.random.default_rng(1)
    pts = rng.uniform([-1, -1, 2], [1, 1, 5], (20, 3))
    rvec, tvec = np.array([0.1, -0.2, 0.05]), np.array([0.3, -0.1, 0.5])
    R = cv2.Rodrigues(rvec)[0]
    ours, _ = project(pts @ R.T + tvec, K)
    ref = cv2.projectPoints(pts, rvec, tvec, K, None)[0].reshape(-1, 2)
    assert np.allclose(ours, ref, atol=1e-9)
    # lift inverts project
    uv, z = project(pts, K)
    assert np.allclose(lift(uv, z, K), pts)


def test_identical_frames_score_one_and_psnr_cap() -> None:
    frames = np.stack([texture()] * 3)
    depth = np.random.default_rng(2).uniform(1, 3, (3, H, W))
    depth[:] = depth[0]
    res = reprojection_consistency(frames, depth, K, np.stack([EYE] * 3), max_db=100.0)
    # float32 depth sampling leaves round-off of ~1e-17 of the diagonal
    assert res.mean_displacement == pytest.approx(0.0, abs=1e-12) and res.geometric == pytest.approx(1.0)
    # MSE 0 -> the cap, as iq1_psnr does for identical frames
    assert np.all(res.psnr == 100.0) and res.photometric == 100.0
    assert np.all(res.valid_fraction == 1.0)


def test_warp_recovers_shifted_frame_and_psnr_matches_skimage() -> None:
    from skimage.metrics import peak_signal_noise_ratio

    img_i = texture(3)
    # Moving the camera +0.1 m shifts the plane's image 5 px left: frame_j[:, c] = frame_i[:, c + 5].
    img_j = np.zeros_like(img_i)
    img_j[:, : W - 5] = img_i[:, 5:]
    warped, ok = warp_into(img_i, plane(2.0), plane(2.0), K, K, EYE, moved(0.1))
    # pixel q of j samples i at q + 5, inside frame i for columns <= 58
    assert np.array_equal(ok, np.broadcast_to(np.arange(W) <= 58, (H, W)))
    assert np.array_equal(warped[ok], img_j[ok].astype(np.float32))
    assert masked_psnr(warped, img_j, ok) == 100.0
    noisy = np.clip(img_j.astype(int) + np.random.default_rng(4).integers(-20, 21, img_j.shape), 0, 255)
    ref = peak_signal_noise_ratio(img_j[:, :59], noisy[:, :59].astype(np.uint8), data_range=255)
    assert masked_psnr(warped, noisy, ok) == pytest.approx(ref, rel=1e-12)


def test_zbuffer_masks_points_hidden_in_source() -> None:
    # Frame i sees a surface at Z = 1 everywhere; the plane of frame j at Z = 2 lies behind it.
    _, ok = warp_into(texture(), plane(1.0), plane(2.0), K, K, EYE, moved(0.1))
    assert not ok.any()
    assert math.isnan(masked_psnr(texture(), texture(), ok))
    _, ok = warp_into(texture(), plane(1.95), plane(2.0), K, K, EYE, moved(0.1), occlusion_tol=0.05)
    assert ok.any()  # 2.0 <= 1.95 * 1.05: within tolerance


def test_sequence_with_one_bad_depth_map() -> None:
    # Three frames along +x (0, 0.1, 0.2 m). Pair (0, 1) is consistent (0 px); in pair (1, 2) depth_2
    # reads 4 instead of 2, which displaces every valid pixel by 2.5 px (hand-worked above). Diagonal
    # sqrt(48^2 + 64^2) = 80 px, so e = (0 + 2.5 / 80) / 2 = 0.015625 and score = exp(-0.015625 / 0.02).
    depth = np.stack([plane(2.0), plane(2.0), plane(4.0)])
    frames = np.stack([texture(i) for i in range(3)])
    poses = np.stack([moved(0.0), moved(0.1), moved(0.2)])
    res = reprojection_consistency(frames, depth, K, poses, tau=0.02)
    assert res.pairs == [(0, 1), (1, 2)]
    assert res.displacement == pytest.approx([0.0, 2.5 / 80])
    assert res.mean_displacement == pytest.approx(0.015625)
    assert res.geometric == pytest.approx(math.exp(-0.78125))
    assert res.valid_fraction == pytest.approx([59 / 64, 59 / 64])


def test_input_errors_name_the_problem() -> None:
    # Too few frames and no overlap are readable inputs with nothing to measure: NaN with the reason.
    with pytest.raises(Unmeasurable, match="more than 1 frames"):
        reprojection_consistency(texture()[None], plane(2.0)[None], K, EYE[None])
    with pytest.raises(MetricInputError, match="differ in shape"):
        reprojection_consistency(np.stack([texture()] * 2), np.ones((2, 10, 10)), K, np.stack([EYE] * 2))
    with pytest.raises(Unmeasurable, match="overlaps"):
        far = np.stack([moved(0.0), moved(100.0)])
        reprojection_consistency(np.stack([texture()] * 2), np.stack([plane(2.0)] * 2), K, far)
