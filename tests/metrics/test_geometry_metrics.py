"""cc_photometric, ctg_camera_control, rbg_stability: hand values, a per-pixel reference, synthetic videos."""

import math

import cv2
import numpy as np
import pytest
from _agree import agree

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics import functional as F
from robojudge.metrics.functional import (
    background_homographies,
    contrast_normalized,
    corner_drift,
    default_intervals,
    forward_backward_epe,
    patch_correlations,
    soft_motion,
    verified_ratio,
)
from robojudge.metrics.functional._geometry import _track
from robojudge.metrics.robophys.geometry import CameraControlConfig
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


def _epe_float64(fwd, bwd, crop):
    # The all-float64 vectorized form robojudge used before its float32 residual (same definition).
    h, w = fwd.shape[:2]
    ch, cw = h - crop, w - crop
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    f = fwd[y0:y0 + ch, x0:x0 + cw].astype(np.float64)
    b = bwd[y0:y0 + ch, x0:x0 + cw].astype(np.float64)
    ys, xs = np.meshgrid(np.arange(ch), np.arange(cw), indexing="ij")
    qx, qy = xs + f[..., 0], ys + f[..., 1]
    back = b[np.clip(np.round(qy).astype(int), 0, ch - 1), np.clip(np.round(qx).astype(int), 0, cw - 1)]
    return float(np.sqrt((qx + back[..., 0] - xs) ** 2 + (qy + back[..., 1] - ys) ** 2).mean())


@pytest.mark.parametrize(("angle", "scale", "shift"), [(0.0, 1.0, (2.4, -1.3)), (2.0, 1.02, (0.0, 0.0)),
                                                        (-4.0, 0.97, (5.5, 3.0))])
def test_fb_epe_on_opencv_flow_is_float64_to_1e6(angle, scale, shift):
    # OpenCV's flow is float32, and the residual is now formed in float32: on real flows (rotation,
    # zoom, translation of a texture at 640x360) AEPE moves by far less than 1e-6 relative.
    a = _texture(360, 640)
    m = cv2.getRotationMatrix2D((320, 180), angle, scale)
    m[:, 2] += shift
    b = cv2.warpAffine(a, m, (640, 360), borderMode=cv2.BORDER_REFLECT)
    fwd, bwd = F.farneback_flow(a, b), F.farneback_flow(b, a)
    assert fwd.dtype == np.float32
    assert forward_backward_epe(fwd, bwd) == pytest.approx(_epe_float64(fwd, bwd, 30), rel=1e-6, abs=0)


def test_soft_motion_by_hand():
    # Threshold at a 256 px short side is 6 px: magnitude 6 -> sigmoid(0) = 0.5; magnitude 0 ->
    # sigmoid(-5) = 1 / (1 + e^5) = 0.0066929.
    assert soft_motion(np.array([6.0]), 256, 5.0) == pytest.approx(0.5)
    assert soft_motion(np.array([0.0, 6.0]), 256, 5.0) == pytest.approx((1 / (1 + math.e**5) + 0.5) / 2)
    # 128 px short side halves the threshold to 3 px.
    assert soft_motion(np.array([3.0]), 128, 5.0) == pytest.approx(0.5)


def test_photometric_barely_moving_clip_is_penalized_and_a_still_one_unscored(tmp_path):
    slow = []
    for t in range(6):  # a 6x6 square creeping 1 px per frame over a fixed texture
        f = _texture(64, 64).copy()
        f[20:26, 10 + t:16 + t] = 255
        slow.append(f)
    score = get_metric("cc_photometric").compute(_item(tmp_path, _rgb(slow), "slow"))
    # The top 5% of flow magnitudes (205 px) hold the 36 moving pixels at ~1 px: mean ~0.2 px, far
    # below the 1.5 px threshold of a 64 px side, so the soft motion is ~sigmoid(-4.4), under 0.1213.
    assert score.details["static_penalty_applied"] and score.details["soft_motion"] < 0.05
    assert score.value == pytest.approx(score.details["soft_motion"] / max(score.details["aepe"], 0.01))
    # Identical frames used to score 100 / (1 + e^5) = 0.669, more than a clip with 2 px of AEPE.
    still = get_metric("cc_photometric").compute(_item(tmp_path, _rgb([_texture(64, 64)] * 6), "still"))
    assert not still.scored and "is still" in still.details["unscored_reason"]


def test_photometric_orders_smooth_motion_and_refuses_unrelated_frames(tmp_path):
    pan_frames = _rgb(_panning(n=8, size=64, dx=2))
    pan = get_metric("cc_photometric").compute(_item(tmp_path, pan_frames, "pan"))
    assert not pan.details["static_penalty_applied"] and pan.details["steps_without_correspondence"] == 0
    assert pan.value == pytest.approx(1 / max(pan.details["aepe"], 0.01))
    # One frame swapped for another texture: 2 of 7 steps show nothing of each other, still scored.
    cut = pan_frames.copy()
    cut[4] = _rgb([_texture(64, 64, seed=77)])[0]
    scored = get_metric("cc_photometric").compute(_item(tmp_path, cut, "cut"))
    assert scored.details["steps_without_correspondence"] == 2 and scored.value < pan.value
    # Every frame a different texture: flow between unrelated frames is no motion; unscored.
    rng = np.random.default_rng(3)
    noise = _rgb([_texture(64, 64, seed=int(s)) for s in rng.integers(0, 10_000, 8)])
    rand = get_metric("cc_photometric").compute(_item(tmp_path, noise, "noise"))
    assert not rand.scored and rand.details["steps_without_correspondence"] == 7


@pytest.mark.parametrize("estimator", ["dis", "farneback"])
@pytest.mark.parametrize(("dx", "square"), [(2, False), (0, True)])  # a pan; a fixed view, one thing moving
def test_photometric_agrees_with_opencv_flows_and_the_per_pixel_epe(tmp_path, dx, square, estimator):
    gray = np.stack(_panning(n=6, size=64, dx=dx)) if dx else np.stack(_panning(n=6, size=64, dx=1)[:1] * 6)
    if square:
        for t, f in enumerate(gray):
            f[20:26, 10 + t:16 + t] = 255  # creeping 1 px per frame: the low-motion penalty applies
    item = _item(tmp_path, _rgb(gray), f"p{dx}")

    def reference():
        # Written from the definition (WorldScore's AEPE, WorldArena's reciprocal and soft motion) with
        # OpenCV's DIS at the preset robojudge picks for 64 px frames (medium), or Farneback at its
        # customary settings.
        engine = cv2.DISOpticalFlow.create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM)

        def flow(a, b):
            if estimator == "dis":
                return engine.calc(a, b, None)
            return cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)

        epes, tops = [], []
        for a, b in zip(gray[:-1], gray[1:], strict=True):
            fwd = flow(a, b)
            epes.append(_epe_reference(fwd, flow(b, a), 30))
            mags = sorted(math.hypot(u, v) for u, v in fwd.reshape(-1, 2).astype(np.float64))
            top = mags[-int(len(mags) * 0.05):]
            tops.append(sum(top) / len(top))
        thr = 6 * 64 / 256
        motion = sum(1 / (1 + math.exp(-5 * (m / thr - 1))) for m in tops) / len(tops)
        value = 1 / max(sum(epes) / len(epes), 0.01)
        return value * motion if motion <= 0.1213 else value

    settings = F.NATIVE_FLOW if estimator == "dis" else F.FARNEBACK
    score = agree("cc_photometric", item, config={"estimator": estimator},
                  functional=lambda: F.photometric_consistency(gray, flow=settings).value,
                  reference=reference, reference_rtol=1e-7)
    assert score.details["static_penalty_applied"] is square


# ------------------------------------------------------------------ camera control


def test_corner_drift_by_hand():
    assert corner_drift(np.eye(3), 40, 30) == 0.0
    shift = np.array([[1, 0, 3], [0, 1, 4], [0, 0, 1]], np.float64)
    assert corner_drift(shift, 40, 30) == pytest.approx(5.0)  # every corner moves by |(3, 4)| = 5
    # Scaling by 2 about the origin: corners (0,0), (40,0), (40,30), (0,30) move 0, 40, 50, 30 -> mean 30.
    assert corner_drift(np.diag([2.0, 2.0, 1.0]), 40, 30) == pytest.approx(30.0)


def test_homographies_recover_a_pan_despite_a_moving_object():
    frames = np.stack(_panning(n=12, size=96, dx=1, square=True))
    homs, lost, corners = background_homographies(frames)
    assert not lost.any() and corners >= 8
    grid = np.array([[x, y] for x in (16.0, 48.0, 80.0) for y in (16.0, 48.0, 80.0)]).reshape(-1, 1, 2)
    for t, h in enumerate(homs):
        # Content moves left by t px: H_0t maps every point p to p + (-t, 0), whatever the square does.
        moved = cv2.perspectiveTransform(grid, h).reshape(-1, 2) - grid.reshape(-1, 2)
        assert np.abs(moved - [-t, 0.0]).max() < 0.5
        assert corner_drift(h, 96, 96) == pytest.approx(t, abs=0.5)  # corners extrapolate the fit


def _homographies_patching_frame0_every_frame(gray, cfg):
    # background_homographies as it was: frame 0's patches extracted again for every frame t.
    gray = contrast_normalized(gray)
    p0 = cv2.goodFeaturesToTrack(gray[0], cfg.max_corners, cfg.quality_level, cfg.min_distance)
    p0 = p0.astype(np.float32)
    h_0t, out, lost = np.eye(3), [np.eye(3)], np.zeros(len(gray), bool)
    for t in range(1, len(gray)):
        kept = 0
        guess = cv2.perspectiveTransform(p0.astype(np.float64), h_0t).astype(np.float32)
        pt, ok = _track(gray[0], gray[t], p0, guess)
        back, ok_back = _track(gray[t], gray[0], pt, p0)
        ok &= ok_back & (np.linalg.norm(back - p0, axis=-1).ravel() < cfg.fb_max_px)
        ok[ok] = patch_correlations(gray[0], gray[t], p0[ok], pt[ok]) >= cfg.min_patch_correlation
        if ok.sum() >= cfg.min_inliers:
            h, mask = cv2.findHomography(p0[ok], pt[ok], cv2.RANSAC, cfg.ransac_px)
            if h is not None and int(mask.sum()) >= cfg.min_inliers:
                h_0t, kept = h, int(mask.sum())
        lost[t] = kept == 0
        out.append(h_0t)
    return out, lost, len(p0)


@pytest.mark.parametrize("dx", [1, 4])  # 4 px per frame: frame 0's content leaves, tracks get lost
def test_homographies_extract_frame0_patches_once_with_the_same_results(monkeypatch, dx):
    frames = np.stack(_panning(n=16, size=96, dx=dx, square=True))
    cfg = CameraControlConfig()
    homs0, lost0, corners0 = _homographies_patching_frame0_every_frame(frames, cfg)
    sources = []
    real = cv2.getRectSubPix

    def counted(img, size, center, *args):
        sources.append(img.__array_interface__["data"][0])
        return real(img, size, center, *args)

    monkeypatch.setattr(cv2, "getRectSubPix", counted)
    homs, lost, corners = background_homographies(frames)
    assert corners == corners0 and np.array_equal(lost, lost0)
    assert all(np.array_equal(a, b) for a, b in zip(homs, homs0, strict=True))  # bit for bit
    # Frame 0's patches are taken first, before any later frame's: its buffer is the first address.
    assert sources.count(sources[0]) == corners  # each frame-0 patch once (before: once per frame)
    assert len(sources) - corners == sum(1 for a in sources if a != sources[0]) > corners


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


def test_camera_control_agrees_with_the_true_drift_of_a_pan(tmp_path):
    gray = np.stack(_panning(n=16, size=96, dx=1, square=True))
    # The view slides 1 px per frame: the true drift at frame t is t px, mean 8 px over frames 1..15.
    agree("ctg_camera_control", _item(tmp_path, _rgb(gray), "pan"),
          functional=lambda: F.camera_control(gray).value,
          reference=lambda: 1 - 8 / math.hypot(96, 96), reference_atol=0.002)


def test_patch_correlations_ignore_lighting_and_reject_other_content():
    a = _texture(64, 64)
    pts = np.array([[20.0, 20.0], [40.5, 30.25]], np.float32)
    dimmed = (a.astype(np.float64) * 0.6 + 30).astype(np.uint8)  # gain and offset: the same patch
    assert patch_correlations(a, dimmed, pts, pts) == pytest.approx([1.0, 1.0], abs=0.01)
    other = patch_correlations(a, _texture(64, 64, seed=9), pts, pts)
    assert np.all(np.abs(other) < 0.5)
    assert patch_correlations(a, np.full_like(a, 90), pts, pts).tolist() == [0.0, 0.0]  # flat: no evidence
    assert patch_correlations(a, a, pts[:0], pts[:0]).shape == (0,)  # no point survived the round trip


def test_camera_control_keeps_falling_for_pans_beyond_the_frame(tmp_path):
    # 16 frames of 96 px; total pans of 45, 90, 180 and 360 px. Once frame 0's background has left
    # the view, lost frames count as drifted by the diagonal, so the score falls to 0 (it used to stop
    # falling: LK stuck at its start passed the round-trip check and fitted stray homographies).
    values = [get_metric("ctg_camera_control").compute(_item(tmp_path, _rgb(_panning(n=16, size=96, dx=dx)),
                                                             f"pan{dx}")).value for dx in (3, 6, 12, 24)]
    assert values[0] > values[1] > values[2] > values[3] == 0.0


def test_camera_control_counts_lost_frames_as_full_drift(tmp_path):
    scene = _texture(96, 96)
    frames = [scene] * 8 + [_texture(96, 96, seed=s) for s in (11, 12, 13)]  # a cut after frame 7
    frames[3] = frames[3].copy()
    frames[3][40:60, 40:60] = 255  # something moves, so the clip is not still
    score = get_metric("ctg_camera_control").compute(_item(tmp_path, _rgb(frames), "cut"))
    # Frames 1-7 keep the background (drift 0), frames 8-10 lose it: 1 - 3 * diagonal / 10 / diagonal.
    assert score.details["lost_frames"] == 3
    assert score.value == pytest.approx(0.7, abs=0.002)


def _flat_wall_tilting(n=10, w=192, h=128):
    """A flat grey wall with one textured patch near the top-left corner, under homographies that keep
    the patch nearly in place and throw the far corners away (past the diagonal from frame 6 on): the
    few tracks of a featureless background fit such a homography whatever the far corners do."""
    base = np.full((h, w), 128, np.uint8)
    base[4:44, 4:44] = _texture(40, 40)
    return [cv2.warpPerspective(base, np.array([[1, 0, 0], [0, 1, 0], [-4e-4 * t, -4e-4 * t, 1]]), (w, h),
                                borderMode=cv2.BORDER_CONSTANT, borderValue=128) for t in range(n)]


def test_camera_control_caps_a_frame_drift_at_the_diagonal(tmp_path):
    frames = _flat_wall_tilting()
    diagonal = math.hypot(192, 128)
    # The true corner drift of frames 6-9 is 246, 571, 2560 and 572 px on a 231 px diagonal: uncapped,
    # the mean drift passed the diagonal and the clip scored 0, below a clip whose every frame was lost.
    res = F.camera_control(np.stack(frames))
    assert res.lost_frames == 0 and res.frames_beyond_diagonal >= 3
    assert res.drift.max() == pytest.approx(diagonal)
    assert res.value == pytest.approx(1 - res.drift.mean() / diagonal) and res.value > 0.3
    score = get_metric("ctg_camera_control").compute(_item(tmp_path, _rgb(frames), "tilt"))
    assert score.details["frames_beyond_diagonal"] == res.frames_beyond_diagonal
    assert score.details["max_drift_px"] == pytest.approx(diagonal)
    assert score.value == pytest.approx(res.value)


def test_camera_control_cannot_measure_a_blank_first_frame_or_a_still_clip(tmp_path):
    blank_start = [np.full((96, 96), 128, np.uint8)] + [_texture(96, 96)] * 5
    score = get_metric("ctg_camera_control").compute(_item(tmp_path, _rgb(blank_start), "blank"))
    assert not score.scored and score.details == {
        "unscored_reason": "the first frame has 0 trackable corners, fewer than min_inliers (8): no "
        "background to follow", "frames": 6, "corners": 0}
    # A flat grey clip lost tracking on every frame and kept the identity: it scored a perfect 1.
    grey = get_metric("ctg_camera_control").compute(_item(tmp_path, _rgb([blank_start[0]] * 24), "grey"))
    assert not grey.scored and "is still" in grey.details["unscored_reason"]


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
    a, b = np.vstack([p1, q1]), np.vstack([p2, q2])
    ratio = verified_ratio(a, b, 2.0)
    # COLMAP keeps the larger inlier set. The 40 true matches verify through H, the 10 outliers do not;
    # F, under-determined on a planar pair, fits the 40 and may absorb an outlier or two.
    n_f = int(np.count_nonzero(cv2.findFundamentalMat(a, b, cv2.FM_RANSAC, 2.0, 0.999)[1]))
    n_h = int(np.count_nonzero(cv2.findHomography(a, b, cv2.RANSAC, 2.0)[1]))
    assert n_h == 40 and 40 <= n_f <= 43
    assert ratio == pytest.approx(max(n_f, n_h) / 50)


def test_matches_on_a_moving_object_count_as_verified():
    # A static background (identity) and an object moving 12 px right: 40 + 10 correct matches, and
    # 5 outliers. Version 4 kept the background's homography (40 >= 0.8 of F's inliers) and counted the
    # object's correct matches as failed: 40/55. COLMAP keeps F's inliers, which hold the object's.
    rng = np.random.default_rng(1)
    bg = rng.uniform(0, 200, (40, 2)).astype(np.float32)
    obj = rng.uniform(80, 120, (10, 2)).astype(np.float32)
    out1 = rng.uniform(0, 200, (5, 2)).astype(np.float32)
    out2 = (out1 + rng.uniform(30, 50, (5, 2)) * rng.choice([-1, 1], (5, 2))).astype(np.float32)
    p1 = np.vstack([bg, obj, out1])
    p2 = np.vstack([bg, obj + np.float32([12, 0]), out2])
    ratio = verified_ratio(p1, p2, 2.0)
    assert ratio >= 50 / 55 and ratio > 40 / 55 + 0.1


def test_default_intervals():
    assert default_intervals(48) == (1, 2, 4, 8, 16, 32)
    assert default_intervals(2) == (1,)
    assert default_intervals(1) == ()


def _stability_by_hand(gray):
    """Sustained stability written from its definition with OpenCV: ORB (1000), Lowe's ratio 0.8, F and H
    by RANSAC (2 px), the larger inlier set (COLMAP); intervals 1, 2, 4, ...; 8 spread pairs each."""
    orb = cv2.ORB.create(1000)
    found = [orb.detectAndCompute(g, None) for g in gray]
    n, per_interval, k = len(gray), [], 1
    while k < n:
        ratios = []
        for t in sorted({int(round(x)) for x in np.linspace(0, n - 1 - k, min(8, n - k))}):
            (kp1, d1), (kp2, d2) = found[t], found[t + k]
            pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(d1, d2, k=2)
            good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < 0.8 * p[1].distance]
            if len(good) < 8:
                ratios.append(0.0)
                continue
            p1 = np.float32([kp1[m.queryIdx].pt for m in good])
            p2 = np.float32([kp2[m.trainIdx].pt for m in good])
            n_f = int(cv2.findFundamentalMat(p1, p2, cv2.FM_RANSAC, 2.0, 0.999)[1].sum())
            n_h = int(cv2.findHomography(p1, p2, cv2.RANSAC, 2.0)[1].sum())
            ratios.append(max(n_f, n_h) / len(good))
        per_interval.append(sum(ratios) / len(ratios))
        k *= 2
    return sum(per_interval) / len(per_interval)


def test_stability_agrees_with_opencv_matching_written_out(tmp_path):
    gray = np.stack(_panning(n=9, size=128, dx=3, square=True))
    score = agree("rbg_stability", _item(tmp_path, _rgb(gray), "pan"),
                  functional=lambda: F.sustained_stability(gray).value,
                  reference=lambda: _stability_by_hand(gray))
    assert 0.5 < score.value < 1


def test_stability_pan_vs_unrelated_frames_and_what_it_cannot_measure(tmp_path):
    spec = get_metric("rbg_stability")
    pan = spec.compute(_item(tmp_path, _rgb(_panning(n=9, size=128, dx=2)), "pan"))
    assert pan.value > 0.9  # every pair is one rigid shift: nearly every tentative match verifies
    assert list(pan.details["per_interval"]) == ["1", "2", "4", "8"]
    rng = np.random.default_rng(5)
    unrelated = _rgb([_texture(128, 128, seed=int(s), sigma=1.0) for s in rng.integers(0, 10_000, 9)])
    assert spec.compute(_item(tmp_path, unrelated, "unrelated")).value < 0.2
    # A still clip verifies every pair trivially (it scored exactly 1): unscored.
    static = spec.compute(_item(tmp_path, _rgb([_texture(128, 128, sigma=1.0)] * 9), "static"))
    assert not static.scored and "is still" in static.details["unscored_reason"]
    short = spec.compute(_item(tmp_path, _rgb(_panning(n=4, size=64, dx=2)), "short"),
                         spec.make_config({"intervals": [8]}))
    assert not short.scored and short.details == {
        "unscored_reason": "no frame interval in (8,) fits a clip of 4 frames", "frames": 4}
    # The same pan at 48 px a side: ORB keeps 31 px from every border, so it finds nothing. That is the
    # frame size, not lost geometry: unscored, where it scored 0 (the worst value) as stored.
    tiny = spec.compute(_item(tmp_path, _rgb(_panning(n=9, size=48, dx=2)), "tiny"))
    assert not tiny.scored and tiny.details["mean_features"] == 0.0
    assert "48x48 frames, fewer than min_matches (8)" in tiny.details["unscored_reason"]
    # The same clip as a blank: flat frames whose brightness changes. Nothing to match and nothing that
    # could be unstable: unscored, now as still (only the brightness changes; it was "blank or flat").
    blank = spec.compute(_item(tmp_path, _rgb([np.full((128, 128), 40 + 20 * t, np.uint8) for t in range(9)]),
                               "blank"))
    assert not blank.scored and "is still" in blank.details["unscored_reason"]
    # Frames of one pixel have no features (OpenCV's pyramid raised on them): the functional form gives
    # the worst value, as 2x2 gets; the metric leaves such clips unscored (above).
    noise = rng.integers(0, 256, (9, 1, 1), dtype=np.uint8)
    assert F.sustained_stability(noise).value == 0.0
    assert F.sustained_stability(rng.integers(0, 256, (9, 2, 2), dtype=np.uint8)).value == 0.0


def test_stability_scores_a_blurred_clip_too_blurred_for_features_as_unstable(tmp_path):
    # The pan above at 128 px, blurred (sigma 3): the frames show texture in most of their blocks but ORB
    # finds about 1 feature a frame. Version 5 left it unscored, one blur level after scoring it lowest,
    # so the blurriest videos fell out of a generator's mean; its pairs without features keep 0.
    spec = get_metric("rbg_stability")
    sharp = _panning(n=9, size=128, dx=2, square=True)
    blurred = [cv2.GaussianBlur(f, (0, 0), 3) for f in sharp]
    score = spec.compute(_item(tmp_path, _rgb(blurred), "blurred"))
    assert score.scored and score.value == 0.0
    assert score.details["mean_features"] < 8
    assert "(heavy blur): pairs without enough features keep 0" in score.details["too_few_features"]
    assert spec.compute(_item(tmp_path, _rgb(sharp), "sharp")).value > 0.9
