import cv2
import numpy as np
import pytest

from robojudge.metrics import get_metric
from robojudge.metrics.flow import (
    FarnebackConfig,
    farneback_flow,
    motion_magnitudes,
    warp_by_flow,
    warp_residuals,
)
from robojudge.metrics.pixel import mean_abs_frame_difference
from robojudge.suite import Item
from robojudge.video import write_video

CFG = FarnebackConfig()


def texture(h=128, w=128, seed=0) -> np.ndarray:
    """Smooth random texture (blurred noise): trackable by Farneback, no flat regions."""
    rng = np.random.default_rng(seed)
    noise = rng.uniform(0, 255, (h, w)).astype(np.float32)
    return np.clip(cv2.GaussianBlur(noise, (0, 0), 2.0) * 3 - 255, 0, 255).astype(np.uint8)


def shifted(img: np.ndarray, dx: float, dy: float) -> np.ndarray:
    m = np.float32([[1, 0, dx], [0, 1, dy]])
    return cv2.warpAffine(img, m, img.shape[::-1], flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def test_warp_with_known_flow_is_exact_inside():
    # next(p) = frame(p - (2, 1)) for an integer shift; with F = (2, 1) everywhere the prediction
    # frame(p - F) equals next exactly away from the border.
    frame = texture()
    nxt = shifted(frame, 2, 1)
    flow = np.zeros((*frame.shape, 2), np.float32)
    flow[..., 0], flow[..., 1] = 2, 1
    pred = warp_by_flow(frame, flow)
    np.testing.assert_array_equal(pred[4:-4, 4:-4], nxt[4:-4, 4:-4].astype(np.float32))


def test_farneback_recovers_a_translation():
    frame = texture()
    flow = farneback_flow(frame, shifted(frame, 3, -2), CFG)
    inner = flow[16:-16, 16:-16].reshape(-1, 2)
    assert np.median(inner[:, 0]) == pytest.approx(3, abs=0.25)
    assert np.median(inner[:, 1]) == pytest.approx(-2, abs=0.25)


def test_warp_error_explains_motion_but_not_flicker():
    frame = texture()
    moving = np.stack([shifted(frame, 2 * t, 0) for t in range(5)])
    flicker = np.stack([np.clip(frame.astype(int) + (40 if t % 2 else 0), 0, 255).astype(np.uint8)
                        for t in range(5)])
    pix_moving, _ = mean_abs_frame_difference(moving)
    warp_moving = warp_residuals(moving, CFG).mean()
    warp_static = warp_residuals(np.stack([frame] * 4), CFG).mean()
    warp_flicker = warp_residuals(flicker, CFG).mean()
    assert warp_static < 0.05  # Farneback finds a tiny spurious flow on identical frames
    assert warp_moving < 0.25 * pix_moving  # motion compensation removes most of the change
    assert warp_flicker > 20  # a brightness jump of ~40 levels is no motion


def test_motion_magnitude_of_a_translation():
    # A shift of (3, 4) px per frame has magnitude 5 everywhere; borders bias the mean a little.
    frame = texture()
    frames = np.stack([shifted(frame, 3 * t, 4 * t) for t in range(4)])
    assert motion_magnitudes(frames, CFG).mean() == pytest.approx(5.0, rel=0.15)
    assert motion_magnitudes(np.stack([frame] * 3), CFG).max() < 0.01


def test_metrics_end_to_end_on_lossless_frames(tmp_path):
    # Native 256x256 PNG frames: the metric's resize is the identity, so values match the helpers.
    frame = texture(256, 256, seed=3)
    frames = np.stack([shifted(frame, 2 * t, 0) for t in range(6)])
    write_video(tmp_path / "f", np.repeat(frames[..., None], 3, axis=-1), fps=8)
    item = Item(item_id="a", video=str(tmp_path / "f"))
    warp = get_metric("flow_warp_error").compute(item)
    mag = get_metric("flow_motion_magnitude_farneback").compute(item)
    assert warp.value == pytest.approx(warp_residuals(frames, CFG).mean(), rel=1e-6)
    assert mag.value == pytest.approx(2.0, rel=0.15)
    assert warp.details["frames"] == 6


def test_flow_metrics_leave_one_frame_unscored(tmp_path):
    write_video(tmp_path / "one.mp4", np.zeros((1, 32, 32, 3), np.uint8), fps=8)
    for metric in ("flow_warp_error", "flow_motion_magnitude_farneback"):
        score = get_metric(metric).compute(Item(item_id="x", video=str(tmp_path / "one.mp4")))
        assert not score.scored and score.details == {
            "unscored_reason": "the video gave 1 frame; the metric needs at least 2 frames", "frames": 1}
