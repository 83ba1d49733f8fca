"""Optical flow needs texture: the flow metrics leave flat and near-blank clips unscored, and still
measure flat-shaded scenes; frames too small for block means get a size reason, not "still".

docs/metrics.md, "When a metric cannot measure" (too little texture; frames under two blocks a side).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from robojudge.metrics import get_metric
from robojudge.metrics._content import MIN_TEXTURED, texture_shares
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

H, W, T = 96, 128, 16
# Every metric that reads optical flow as motion or as its consistency (and has no weights).
FLOW_METRICS = ("cc_photometric", "mq_flow_score", "mq_dynamic_degree", "flow_motion_magnitude_farneback")


def _clip(name: str) -> np.ndarray:
    """A clip whose frames change but show (almost) no texture: the audit's fade, flash, strobe and speck."""
    frames = np.zeros((T, H, W, 3), np.uint8)
    if name == "fade":
        frames[:] = np.round(np.linspace(0, 255, T)).astype(np.uint8)[:, None, None, None]
    elif name == "flash":
        frames[T // 2] = 255
    elif name == "strobe":
        frames[1::2] = 255
    elif name == "speck":  # black with a 2x2 white speck moving 3 px a frame
        for t in range(T):
            frames[t, 40:42, 2 + 3 * t:4 + 3 * t] = 255
    return frames


def _scene(t: int) -> np.ndarray:
    """A flat-shaded scene like the demo suite's renders (wall, table, a robot's base, a cube and the
    gripper carrying it): texture only along the edges of flat regions, 11.5% of the blocks."""
    f = np.empty((H, W, 3), np.uint8)
    f[:40], f[40:] = (120, 200, 140), (170, 170, 170)
    f[8:40, 56:72] = (60, 110, 200)
    x = 20 + 4 * t
    f[60:72, x:x + 12] = (200, 30, 30)
    f[44:60, x + 2:x + 10] = (230, 230, 230)
    return f


def _item(tmp_path: Path, name: str, frames: np.ndarray) -> Item:
    path = write_video(tmp_path / f"{name}.mp4", frames, fps=8)
    return Item(item_id=name, video=str(path))


@pytest.mark.parametrize("name", ["fade", "flash", "strobe", "speck"])
def test_flow_metrics_leave_clips_without_texture_unscored(tmp_path: Path, name: str) -> None:
    # Before, cc_photometric gave the fade, flash and strobe 0.669 (its static penalty on no flow error,
    # the value a still clip used to get) and the speck 3.3, the best of the audit's clips; mq_flow_score
    # gave the speck six times a real clip's motion (DIS filled the black frame with its motion).
    # cc_photometric now calls the fade, flash and strobe still (a flat field that only changes its
    # brightness), before it looks at their texture.
    item = _item(tmp_path, name, _clip(name))
    for metric in FLOW_METRICS:
        score = get_metric(metric).compute(item)
        assert math.isnan(score.value), (metric, score.value)
        if metric == "cc_photometric" and name != "speck":
            assert "is still" in score.details["unscored_reason"]
            continue
        assert "too little texture for optical flow" in score.details["unscored_reason"], metric
        assert score.details["least_textured_share"] < MIN_TEXTURED


def test_frame_difference_metrics_leave_a_flat_strobe_unscored(tmp_path: Path) -> None:
    # A flat field that only changes its brightness shows nothing that moves: still, as a frozen
    # picture whose exposure drifts is (these metrics measured it as a change of 255 levels before).
    item = _item(tmp_path, "strobe", _clip("strobe"))
    for metric in ("pixel_frame_consistency", "mq_temporal_flickering", "flow_warp_error"):
        score = get_metric(metric).compute(item)
        assert math.isnan(score.value) and "is still" in score.details["unscored_reason"], metric


def test_flow_metrics_measure_a_flat_shaded_scene(tmp_path: Path) -> None:
    item = _item(tmp_path, "scene", np.stack([_scene(t) for t in range(T)]))
    gray = sample_frames(item.video, fps=None, max_frames=None, gray=True).frames
    assert 0.1 < texture_shares(gray).min() < 0.15  # a demo render's share (lowest frame: 0.092)
    for metric in FLOW_METRICS:
        score = get_metric(metric).compute(item)
        assert math.isfinite(score.value) and "unscored_reason" not in score.details, metric
    assert get_metric("mq_dynamic_degree").compute(item).value == 1.0  # the cube moves 4 px a frame


def test_moving_8x8_clip_is_not_called_still(tmp_path: Path) -> None:
    # A 2x2 square crossing an 8x8 frame: one block, whose mean does not change. The metrics that read
    # the native frames said "the video is still ... nothing moves"; they named the frame size, and now
    # refuse frames under 16 px on a side before they look at them, as the pixel and flow pair do.
    frames = np.zeros((T, 8, 8, 3), np.uint8)
    for t in range(T):
        frames[t, 3:5, t % 7:t % 7 + 2] = 255
    item = _item(tmp_path, "tiny", frames)
    for metric in ("cc_photometric", "ctg_camera_control", "rbg_stability", "mq_temporal_flickering"):
        score = get_metric(metric).compute(item)
        reason = score.details["unscored_reason"]
        assert math.isnan(score.value) and "frames of 8x8 are too small" in reason, metric
        assert "still" not in reason and score.details["video_size"] == "8x8"


def test_a_frozen_blank_clip_is_measured_as_no_motion(tmp_path: Path) -> None:
    # Still, whatever its texture: nothing changes, so the motion-amount metrics' 0 is what it shows;
    # leaving it unscored would drop a generator's blank clips from its motion means.
    item = _item(tmp_path, "blank", np.full((T, H, W, 3), 90, np.uint8))
    for metric in ("mq_flow_score", "mq_dynamic_degree", "flow_motion_magnitude_farneback"):
        score = get_metric(metric).compute(item)
        assert score.value == pytest.approx(0.0, abs=1e-6) and "unscored_reason" not in score.details, metric
    assert "is still" in get_metric("cc_photometric").compute(item).details["unscored_reason"]
