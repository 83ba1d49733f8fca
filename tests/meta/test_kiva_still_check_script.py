"""scripts/kiva_still_check.py: the still pictures it makes, and the motion it reports of cached reads."""

from __future__ import annotations

import numpy as np
import pytest

from _scripts import load_script

ksc = load_script("kiva_still_check")


def test_still_pictures_carry_enough_noise_that_no_frame_is_held():
    from robojudge.kiva import held_frames

    frame = np.full((32, 32, 3), 120, np.uint8)
    assert held_frames(ksc.still_frames(frame, 20, 0.0))[1:].all()
    noisy = ksc.still_frames(frame, 20, 2.0)
    assert noisy.shape == (20, 32, 32, 3) and noisy.dtype == np.uint8
    assert not held_frames(noisy)[1:].any()
    assert abs(float(noisy.mean()) - 120) < 0.5  # noise around the picture, not a shift of it


def test_suite_motion_orders_clips_by_their_read_motion_and_gives_the_true_one_beside_it():
    n = 21
    seen = np.ones((n, 1), bool)

    def clip(sweep: float, true_sweep: float) -> dict:
        # A keypoint sweeping x from 0 to ``sweep`` evenly over 21 frames: median sweep / 2, and the 95th
        # percentile of the distances from it (0, 1, 1, ..., 10, 10 twentieths of the sweep) is 10 of them.
        pos = np.zeros((n, 1, 2))
        pos[:, 0, 0] = np.linspace(0.0, sweep, n)
        true = np.zeros((n, 1, 2))
        true[:, 0, 0] = np.linspace(0.0, true_sweep, n)
        return {"pos": pos, "vis": seen, "true_pos": true, "true_vis": seen, "w": 300, "h": 400}

    reads = {"refs": {"ref0": clip(50.0, 50.0)}, "items": {"a": clip(10.0, 12.0), "b": clip(25.0, 25.0)}}
    rows = ksc.suite_motion(reads)
    assert [r[2] for r in rows] == ["a", "b", "ref0"]
    read, true, _ = rows[0]
    assert read == pytest.approx(5.0 / 500) and true == pytest.approx(6.0 / 500)  # diagonal 500 px
