import math

import cv2
import numpy as np
import pytest
from _agree import agree

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import write_video


def test_mean_abs_difference_by_hand():
    # Solid frames 0, 10, 30: steps differ by 10 and 20 everywhere -> D = (10 + 20) / 2 = 15.
    frames = np.stack([np.full((2, 2), v, np.uint8) for v in (0, 10, 30)])
    assert F.frame_consistency(frames) == 15.0
    assert F.frame_differences(frames).tolist() == [10.0, 20.0]


def test_mean_abs_difference_no_uint8_wraparound():
    # 0 -> 255 must count 255, not (0 - 255) mod 256 = 1.
    frames = np.stack([np.zeros((1, 2), np.uint8), np.array([[255, 0]], np.uint8)])
    assert F.frame_consistency(frames) == 127.5  # (255 + 0) / 2 pixels


def test_mean_abs_difference_partial_change():
    # A 4x4 frame where one pixel moves from 0 to 160: d = 160 / 16 = 10; identical frames: d = 0.
    a = np.zeros((4, 4), np.uint8)
    b = a.copy()
    b[1, 2] = 160
    assert F.frame_differences(np.stack([a, b, b])).tolist() == [10.0, 0.0]
    assert F.frame_consistency(np.stack([a, b, b])) == 5.0


def test_needs_two_grayscale_frames():
    with pytest.raises(ValueError, match="at least 2 frames"):
        F.frame_consistency(np.zeros((1, 4, 4), np.uint8))
    with pytest.raises(ValueError, match="grayscale"):
        F.frame_consistency(np.zeros((3, 4, 4, 3), np.uint8))


def test_metric_functional_and_opencv_agree(tmp_path):
    # A textured 256x256 gray clip in lossless PNG frames: decoding at 8 fps, resizing to 256x256 and
    # taking luma leave it unchanged, so the metric reads exactly these arrays. OpenCV's L1 norm of the
    # difference of consecutive frames, over the pixel count, is the reference.
    rng = np.random.default_rng(1)
    base = cv2.GaussianBlur(rng.uniform(0, 255, (256, 320)).astype(np.float32), (0, 0), 3.0)
    base = cv2.normalize(base, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    gray = np.stack([base[:, 8 * t:8 * t + 256] for t in range(6)])
    write_video(tmp_path / "f", np.repeat(gray[..., None], 3, axis=-1), fps=8)

    def opencv() -> float:
        steps = zip(gray[:-1], gray[1:], strict=True)
        return float(np.mean([cv2.norm(a, b, cv2.NORM_L1) / a.size for a, b in steps]))

    score = agree("pixel_frame_consistency", Item(item_id="x", video=str(tmp_path / "f")),
                  functional=lambda: F.frame_consistency(gray), reference=opencv)
    assert score.details == {"frames": 6, "max_step": float(F.frame_differences(gray).max())}


def _item(path) -> Item:
    return Item(item_id="x", video=str(path))


def test_metric_on_lossless_frame_folder(tmp_path):
    # PNG frames are lossless, so the whole pipeline (decode, resize, gray) is exact but for the
    # few columns the 4x resize blends at the edge: a black left half and a right half at levels
    # 0, 10, 30, 60 -> steps 10, 20, 30 over half the frame -> D_pix = 10. (Solid frames would be a
    # still picture changing its brightness, which is left unscored.)
    frames = np.zeros((4, 64, 64, 3), np.uint8)
    for t, v in enumerate((0, 10, 30, 60)):
        frames[t, :, 32:] = v
    folder = tmp_path / "frames"
    write_video(folder, frames, fps=8)
    score = get_metric("pixel_frame_consistency").compute(_item(folder))
    assert score.value == pytest.approx(10.0, abs=0.05)
    assert score.details["frames"] == 4


def test_metric_ranks_flicker_and_leaves_a_still_video_unscored(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (1, 64, 96, 3), dtype=np.uint8).repeat(16, axis=0)
    flicker = base.astype(np.int16)
    flicker[::2] += 60
    write_video(tmp_path / "static.mp4", base, fps=8)
    write_video(tmp_path / "flicker.mp4", np.clip(flicker, 0, 255).astype(np.uint8), fps=8)
    spec = get_metric("pixel_frame_consistency")
    static = spec.compute(_item(tmp_path / "static.mp4"))
    flick = spec.compute(_item(tmp_path / "flicker.mp4")).value
    # Codec noise alone would give about 1 level, the metric's near-best value: a still video is unscored.
    assert not static.scored and "is still" in static.details["unscored_reason"]
    assert static.details["largest_change"] <= 8.0 and static.details["frames"] == 16
    # The same picture whose brightness flickers is still too: nothing in it moves (audit "degenerate" F1).
    assert math.isnan(flick)
    moving = base.copy()
    for t in range(16):
        moving[t, 8:24, 4 + 4 * t:20 + 4 * t] = 255  # a white square crosses the frame
    flicker = moving.astype(np.int16)
    flicker[::2] += 60
    write_video(tmp_path / "moving.mp4", moving, fps=8)
    write_video(tmp_path / "moving_flicker.mp4", np.clip(flicker, 0, 255).astype(np.uint8), fps=8)
    steady = spec.compute(_item(tmp_path / "moving.mp4")).value
    assert spec.compute(_item(tmp_path / "moving_flicker.mp4")).value > steady + 20


def test_metric_decodes_at_8_fps(tmp_path):
    # A 32 fps source of 33 frames lasts 1 s; at 8 fps the metric keeps every 4th frame: 9 frames.
    frames = np.zeros((33, 32, 32, 3), np.uint8)
    for i in range(33):
        frames[i, :, 16:] = 4 * i  # the right half brightens; the left stays black
    write_video(tmp_path / "fast.mp4", frames, fps=32)
    score = get_metric("pixel_frame_consistency").compute(_item(tmp_path / "fast.mp4"))
    assert score.details["frames"] == 9
    # Consecutive kept frames differ by 4 frames * 4 levels = 16 levels over half the frame (codec
    # noise aside).
    assert score.value == pytest.approx(8.0, abs=1.0)
