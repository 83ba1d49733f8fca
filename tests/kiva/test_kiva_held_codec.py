"""Held frames and frozen segments through a lossy codec: the same frames as mp4 and as PNG give the same
frozen segments, and slow real motion stays motion (numpy and the video writer only, no reader)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robojudge.kiva import frozen_span, held_frames, segments
from robojudge.video import sample_frames, write_video


def scene(n: int = 48, moving: int = 16, size: int = 64) -> np.ndarray:
    """A textured picture with a bright square that moves 3 px a frame for ``moving`` frames, then stops."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:size, 0:size]
    base = 90 + 40 * np.sin(xx / 5.0) * np.cos(yy / 7.0) + rng.normal(0, 12, (size, size))
    frames = np.repeat(np.clip(base, 0, 255)[None, :, :, None], n, axis=0).repeat(3, axis=3)
    for t in range(n):
        x = 4 + 3 * min(t, moving - 1)
        frames[t, 20:34, x : x + 14] = (230, 60, 40)
    return frames.astype(np.uint8)


def decoded(path: Path) -> np.ndarray:
    return sample_frames(path, fps=None, max_frames=None).frames


def frozen_segments(frames: np.ndarray) -> list[bool]:
    held = held_frames(frames)
    return [frozen_span(held, a, b) for a, b in segments(len(frames))]


def test_a_frozen_stretch_is_frozen_in_an_mp4_as_in_png(tmp_path: Path):
    frames = scene()
    mp4 = decoded(write_video(tmp_path / "clip.mp4", frames, 16.0))
    png = decoded(write_video(tmp_path / "frames", frames, 16.0))
    noise = np.abs(np.diff(mp4[16:].astype(np.float32), axis=0)).mean(axis=(1, 2, 3))
    assert noise.max() > 0.1  # the codec re-draws the still picture with noise above the old tolerance
    assert frozen_segments(png) == [False, True, True]
    assert frozen_segments(mp4) == [False, True, True]
    assert held_frames(mp4)[16:].all()


def test_slow_motion_through_the_codec_is_not_held(tmp_path: Path):
    # The square creeps 1 px every frame: each step changes some 8 x 8 block by tens of levels.
    frames = scene(moving=48)
    for t in range(48):
        frames[t] = scene(n=1, moving=1)[0]
        frames[t, 20:34, 4 + t : 18 + t] = (230, 60, 40)
    mp4 = decoded(write_video(tmp_path / "slow.mp4", frames, 16.0))
    assert not held_frames(mp4)[1:].any()
    assert frozen_segments(mp4) == [False, False, False]


def test_a_lone_quiet_step_inside_motion_is_not_held():
    # Frame 2 differs from frame 1 by a step below the codec tolerance, but frame 3 moves on: a robot
    # slowing down, not a repeat. Two quiet frames in a row are a repeat.
    frames = np.full((6, 16, 16, 3), 100, np.uint8)
    frames[1, :8, :8] = 160
    frames[2, :8, :8] = 162
    frames[3, 8:, 8:] = 30
    frames[4, 8:, 8:] = 32
    frames[5, 8:, 8:] = 33
    assert held_frames(frames).tolist() == [False, False, False, False, True, True]
    assert held_frames(frames, levels=None).tolist() == [False] * 6


def test_independent_noise_on_every_pixel_is_not_held():
    # A camera's own noise of a few levels on a still picture moves pixels by far more than a codec does.
    rng = np.random.default_rng(1)
    still = np.clip(120 + rng.normal(0, 2.0, (10, 32, 32, 3)), 0, 255).astype(np.uint8)
    assert not held_frames(still)[1:].any()


@pytest.mark.parametrize("shape", [(4, 5, 7, 3), (4, 5, 7)])
def test_frames_smaller_than_a_block_are_one_block(shape: tuple[int, ...]):
    frames = np.zeros(shape, np.uint8)
    frames[1] = 1  # mean step 1: above the repeat tolerance and the noise bound
    frames[2] = 1
    frames[3] = 1
    assert held_frames(frames).tolist() == [False, False, True, True]
