"""Temporal flickering, dynamic degree and flow score: hand values, VBench's rule, OpenCV flow references.

Dynamic degree and the flow score use DIS flow by default and Farneback with ``estimator="farneback"``;
both are checked against the estimator called directly.
"""

import cv2
import numpy as np
import pytest
from _agree import agree

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import write_video


def _texture(h=64, w=64, seed=0):
    # A smooth random texture (blurred noise) that Farneback can track.
    noise = np.random.default_rng(seed).integers(0, 256, (h, w)).astype(np.float32)
    return cv2.GaussianBlur(noise, (0, 0), 2.0)


def _moving_video(shift, n=16, size=64):
    big = _texture(size, size + shift * n + 8)
    frames = []
    for t in range(n):
        g = cv2.normalize(big[:, t * shift:t * shift + size], None, 0, 255, cv2.NORM_MINMAX)
        frames.append(np.repeat(g.astype(np.uint8)[..., None], 3, axis=2))
    return np.stack(frames)


def _item(tmp_path, frames, fps=8.0):
    write_video(tmp_path / "v", frames, fps=fps)
    return Item(item_id="a", video=str(tmp_path / "v"))


def test_flickering_by_hand():
    # Solid frames 0, 10, 10: MAE steps 10 and 0 -> mean 5 -> (255 - 5) / 255 = 0.980392...
    frames = np.stack([np.full((2, 3, 3), v, np.uint8) for v in (0, 10, 10)])
    assert F.frame_differences(frames).tolist() == [10.0, 0.0]
    assert F.temporal_flickering(frames) == pytest.approx(250 / 255)
    # 0 -> 255 everywhere: MAE 255, score 0; no uint8 wrap-around.
    black_white = np.stack([np.zeros((2, 2, 3), np.uint8), np.full((2, 2, 3), 255, np.uint8)])
    assert F.temporal_flickering(black_white) == 0.0
    with pytest.raises(ValueError, match="at least 2 frames"):
        F.temporal_flickering(np.zeros((1, 2, 2, 3), np.uint8))


def test_flickering_metric_on_a_video(tmp_path):
    # Thirds at 0, 100 and v: only the right third changes, so it is not a change of the whole frame's
    # brightness (solid frames are a still picture whose brightness changes, and frames under 16 px on a
    # side are refused). MAE steps 40/3, 40/3, 0 -> mean 80/9 -> (255 - 80/9) / 255.
    frames = np.zeros((4, 16, 24, 3), np.uint8)
    frames[:, :, 8:16] = 100
    for t, v in enumerate((50, 90, 50, 50)):
        frames[t, :, 16:] = v
    assert get_metric("mq_temporal_flickering").compute(_item(tmp_path, frames)).value == pytest.approx(
        (255 - 80 / 9) / 255)


def _vbench_flickering(frames: np.ndarray) -> float:
    """VBench's temporal_flickering.py written out: float32 cv2.absdiff, mean per pair, (255 - mean) / 255."""
    maes = [np.mean(cv2.absdiff(a.astype(np.float32), b.astype(np.float32)))
            for a, b in zip(frames[:-1], frames[1:], strict=True)]
    return (255.0 - float(np.mean(maes))) / 255.0


def test_flickering_metric_functional_and_vbench_agree(tmp_path):
    # A moving colour texture with a brightness flicker on every third frame, lossless PNG frames.
    frames = _moving_video(2, n=9).astype(np.int16)
    frames[..., 0] = 255 - frames[..., 0]
    frames[::3] += 25
    frames = np.clip(frames, 0, 255).astype(np.uint8)
    score = agree("mq_temporal_flickering", _item(tmp_path, frames),
                  functional=lambda: F.temporal_flickering(frames),
                  reference=lambda: _vbench_flickering(frames), reference_rtol=1e-6)
    assert score.details["max_step_mae"] == F.frame_differences(frames).max()


def test_top_magnitude_by_hand():
    flow = np.zeros((10, 10, 2), np.float32)
    flow[0, :5] = (3.0, 4.0)  # five pixels of magnitude 5; top 5% of 100 pixels = 5 pixels
    assert F.top_magnitude(flow, 0.05) == pytest.approx(5.0)
    assert F.top_magnitude(flow, 0.10) == pytest.approx(2.5)  # 10 pixels: five 5s and five 0s
    assert F.top_magnitude(np.zeros((2, 2, 2), np.float32), 0.05) == 0.0  # int(4 * 0.05) = 0 -> one pixel


def test_vbench_decision_rule():
    is_dynamic = F.is_dynamic
    assert F.dynamic_threshold(64) == 1.5 and F.dynamic_threshold(256, threshold_at_256=3.0) == 3.0
    # 16 frames at short side 256: threshold 6 px, needs round(4 * 16 / 16) = 4 steps above it.
    assert is_dynamic(np.array([7, 7, 7, 7] + [0] * 11), 16, 256)
    assert not is_dynamic(np.array([7, 7, 7, 6] + [0] * 11), 16, 256)  # 6 is not above 6
    # 64 px short side: threshold 1.5 px; 8 frames need round(2.0) = 2 steps.
    assert is_dynamic(np.array([1.6, 1.6, 0, 0, 0, 0, 0]), 8, 64)
    assert not is_dynamic(np.array([1.6, 0, 0, 0, 0, 0, 0]), 8, 64)
    # Two frames: round(0.5) = 0 steps needed (Python rounds half to even, as VBench does).
    assert is_dynamic(np.array([0.0]), 2, 64)
    assert not is_dynamic(np.array([]), 1, 64)


def test_dynamic_degree_static_and_moving(tmp_path):
    still = np.repeat(_moving_video(0)[:1], 16, axis=0)
    (tmp_path / "s").mkdir()
    (tmp_path / "m").mkdir()
    s = get_metric("mq_dynamic_degree").compute(_item(tmp_path / "s", still))
    m = get_metric("mq_dynamic_degree").compute(_item(tmp_path / "m", _moving_video(3)))
    assert s.value == 0.0 and s.details["moving_fraction"] == 0.0
    assert m.value == 1.0 and m.details["threshold_px"] == 1.5 and m.details["stride"] == 1


def test_dynamic_degree_is_unscored_below_three_frames(tmp_path):
    # VBench's rule needs round(4 * 2 / 16) = 0 moving steps of a two-frame clip (test above), so a frozen
    # one would be dynamic: the metric leaves such a clip unscored, and measures three frames.
    metric = get_metric("mq_dynamic_degree")
    for n in (2, 3):
        (tmp_path / str(n)).mkdir()
        still = np.repeat(_moving_video(0)[:1], n, axis=0)
        score = metric.compute(_item(tmp_path / str(n), still))
        if n == 2:
            assert np.isnan(score.value)
            assert "the video after the 1-frame stride gave 2 frames" in score.details["unscored_reason"]
        else:
            assert score.value == 0.0
    # 16 frames at 60 fps: every 8th is kept, two frames
    (tmp_path / "fast").mkdir()
    fast = metric.compute(_item(tmp_path / "fast", np.repeat(_moving_video(0)[:1], 16, axis=0), fps=60))
    assert np.isnan(fast.value) and "8-frame stride gave 2 frames" in fast.details["unscored_reason"]


def _opencv_flow(estimator: str):
    """The estimator called directly: Farneback with OpenCV's customary settings, or DIS at the preset
    robojudge picks for these 64 px frames (medium: short side below 480 px)."""
    if estimator == "farneback":
        return lambda a, b: cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)
    engine = cv2.DISOpticalFlow.create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM)
    return lambda a, b: engine.calc(a, b, None)


def _vbench_step_scores(gray: np.ndarray, estimator: str = "dis") -> list[float]:
    """VBench dynamic_degree.py's get_score written out (on OpenCV flow instead of RAFT)."""
    scores = []
    flow = _opencv_flow(estimator)
    for a, b in zip(gray[:-1], gray[1:], strict=True):
        flo = flow(a, b).astype(np.float64)
        rad = np.sqrt(np.square(flo[..., 0]) + np.square(flo[..., 1]))
        cut_index = int(rad.size * 0.05)
        scores.append(float(np.mean(np.abs(np.sort(-rad.flatten())[:cut_index]))))
    return scores


def _vbench_dynamic_degree(gray: np.ndarray, estimator: str = "dis") -> float:
    """VBench's set_params and check_move: count steps above 6 * scale / 256 until round(4 * n / 16)."""
    thres = 6.0 * min(gray.shape[1:3]) / 256.0
    count_num = round(4 * (len(gray) / 16.0))
    count = 0
    for score in _vbench_step_scores(gray, estimator):
        if score > thres:
            count += 1
        if count >= count_num:
            return 1.0
    return 0.0


@pytest.mark.parametrize("estimator", ["dis", "farneback"])
@pytest.mark.parametrize(("shift", "expected"), [(3, 1.0), (0, 0.0)])
def test_dynamic_degree_metric_functional_and_vbench_agree(tmp_path, shift, expected, estimator):
    frames = _moving_video(shift)
    if shift == 0:
        frames = np.repeat(frames[:1], 16, axis=0)
    gray = frames[..., 0]  # gray texture in all three channels: luma is the channel itself
    settings = F.NATIVE_FLOW if estimator == "dis" else F.FARNEBACK
    score = agree("mq_dynamic_degree", _item(tmp_path, frames), config={"estimator": estimator},
                  functional=lambda: F.dynamic_degree(gray, settings=settings),
                  reference=lambda: _vbench_dynamic_degree(gray, estimator))
    assert score.value == expected
    # The continuous step scores agree with VBench's top-5% mean too (partition vs sort).
    np.testing.assert_allclose(F.dynamic_steps(gray, 0.05, settings), _vbench_step_scores(gray, estimator),
                               rtol=1e-12)
    assert score.details["max_step"] == pytest.approx(max(_vbench_step_scores(gray, estimator)), rel=1e-12)


def test_dynamic_degree_stride_from_frame_rate(tmp_path):
    # 24 fps source -> every round(24 / 8) = 3rd frame is kept: 16 frames -> 6.
    d = get_metric("mq_dynamic_degree").compute(_item(tmp_path, _moving_video(1), fps=24))
    assert d.details["stride"] == 3 and d.details["frames"] == 6


@pytest.mark.parametrize("estimator", ["dis", "farneback"])
def test_flow_score_metric_functional_and_direct_opencv_agree(tmp_path, estimator):
    frames = _moving_video(2, n=6)
    gray = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in frames])
    flow = _opencv_flow(estimator)
    settings = F.NATIVE_FLOW if estimator == "dis" else F.FARNEBACK

    def opencv() -> float:
        flows = [flow(a, b) for a, b in zip(gray[:-1], gray[1:], strict=True)]
        return float(np.mean([np.linalg.norm(f, axis=-1).mean() for f in flows]))

    got = agree("mq_flow_score", _item(tmp_path, frames), config={"estimator": estimator},
                functional=lambda: F.motion_magnitude(gray, settings), reference=opencv, reference_rtol=1e-6)
    assert 1.0 < got.value < 2.5  # a 2 px shift per frame (borders pull it down)


def test_flow_score_static_video_is_zero(tmp_path):
    still = np.repeat(_moving_video(0)[:1], 4, axis=0)
    # DIS gives exactly 0 on identical frames (Farneback leaves sub-pixel noise, far below any motion).
    assert get_metric("mq_flow_score").compute(_item(tmp_path, still)).value < 0.01
