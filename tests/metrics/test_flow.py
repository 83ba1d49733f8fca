import cv2
import numpy as np
import pytest
from _agree import agree
from scipy import ndimage

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.metrics.flow import FarnebackConfig
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
    pred = F.warp_by_flow(frame, flow)
    np.testing.assert_array_equal(pred[4:-4, 4:-4], nxt[4:-4, 4:-4].astype(np.float32))


def test_farneback_recovers_a_translation():
    frame = texture()
    flow = F.farneback_flow(frame, shifted(frame, 3, -2), CFG)
    inner = flow[16:-16, 16:-16].reshape(-1, 2)
    assert np.median(inner[:, 0]) == pytest.approx(3, abs=0.25)
    assert np.median(inner[:, 1]) == pytest.approx(-2, abs=0.25)


def test_warp_error_explains_motion_but_not_flicker():
    frame = texture()
    moving = np.stack([shifted(frame, 2 * t, 0) for t in range(5)])
    flicker = np.stack([np.clip(frame.astype(int) + (40 if t % 2 else 0), 0, 255).astype(np.uint8)
                        for t in range(5)])
    pix_moving = F.frame_consistency(moving)
    warp_moving = F.warp_error(moving, CFG)
    warp_static = F.warp_error(np.stack([frame] * 4), CFG)
    warp_flicker = F.warp_error(flicker, CFG)
    assert warp_static < 0.05  # Farneback finds a tiny spurious flow on identical frames
    assert warp_moving < 0.25 * pix_moving  # motion compensation removes most of the change
    assert warp_flicker > 20  # a brightness jump of ~40 levels is no motion


def test_motion_magnitude_of_a_translation():
    # A shift of (3, 4) px per frame has magnitude 5 everywhere; borders bias the mean a little.
    frame = texture()
    frames = np.stack([shifted(frame, 3 * t, 4 * t) for t in range(4)])
    assert F.motion_magnitude(frames, CFG) == pytest.approx(5.0, rel=0.15)
    assert F.motion_magnitudes(np.stack([frame] * 3), CFG).max() < 0.01


def test_settings_reach_farneback_from_the_dataclass_or_a_config():
    # One pyramid level and one iteration with a 5 px window fall well short of an 8 px shift (4.6 px);
    # the default 3 levels follow it. A metric config with the same fields gives the same flow.
    frame = texture()
    frames = np.stack([frame, shifted(frame, 8, 0)])
    coarse = F.motion_magnitude(frames, F.Farneback(levels=1, winsize=5, iterations=1))
    assert F.motion_magnitude(frames) == pytest.approx(8.0, rel=0.15)
    assert coarse < 6.0
    assert F.motion_magnitude(frames, FarnebackConfig(levels=1, winsize=5, iterations=1)) == coarse


def _opencv_flow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)


def _scipy_warp_error(frames: np.ndarray) -> float:
    """The warp error written out: OpenCV flow, SciPy's bilinear sampling with edge replication."""
    h, w = frames.shape[1:]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    errors = []
    for a, b in zip(frames[:-1], frames[1:], strict=True):
        flow = _opencv_flow(a, b)
        pred = ndimage.map_coordinates(a.astype(np.float64), [yy - flow[..., 1], xx - flow[..., 0]], order=1,
                                       mode="nearest")
        errors.append(np.abs(pred - b).mean())
    return float(np.mean(errors))


def _opencv_magnitude(frames: np.ndarray) -> float:
    flows = [_opencv_flow(a, b) for a, b in zip(frames[:-1], frames[1:], strict=True)]
    return float(np.mean([cv2.cartToPolar(f[..., 0], f[..., 1])[0].mean() for f in flows]))


def test_metrics_functional_and_references_agree_on_lossless_frames(tmp_path):
    # Native 256x256 PNG frames: the metric's decode, resize and luma are the identity, so it reads
    # these arrays. References: the warp done by SciPy instead of cv2.remap (OpenCV's fixed-point
    # bilinear weights differ in the 7th digit), the magnitude by cv2.cartToPolar in float32.
    frame = texture(256, 256, seed=3)
    frames = np.stack([shifted(frame, 1.5 * t, 0.5 * t) for t in range(6)])
    write_video(tmp_path / "f", np.repeat(frames[..., None], 3, axis=-1), fps=8)
    item = Item(item_id="a", video=str(tmp_path / "f"))
    warp = agree("flow_warp_error", item, functional=lambda: F.warp_error(frames),
                 reference=lambda: _scipy_warp_error(frames), reference_rtol=1e-5)
    mag = agree("flow_motion_magnitude_farneback", item, functional=lambda: F.motion_magnitude(frames),
                reference=lambda: _opencv_magnitude(frames), reference_rtol=1e-6)
    assert mag.value == pytest.approx(np.hypot(1.5, 0.5), rel=0.15)
    assert warp.details["frames"] == 6 and warp.details["max_step"] == F.warp_residuals(frames).max()


def test_flow_metrics_leave_one_frame_unscored(tmp_path):
    write_video(tmp_path / "one.mp4", np.zeros((1, 32, 32, 3), np.uint8), fps=8)
    for metric in ("flow_warp_error", "flow_motion_magnitude_farneback"):
        score = get_metric(metric).compute(Item(item_id="x", video=str(tmp_path / "one.mp4")))
        assert not score.scored and score.details == {
            "unscored_reason": "the video gave 1 frame; the metric needs at least 2 frames", "frames": 1}
