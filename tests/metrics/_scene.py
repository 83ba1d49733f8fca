"""A small synthetic rollout for metric tests: a textured scene, an object carried by a gripper, its state.

128x96 px, 16 frames at 8 fps. A 32 px textured square eases across the frame (up to ~8 px per frame,
dynamic by VBench's rule) under a 32x16 textured gripper; the background is fixed and textured, so
corner trackers, ORB and optical flow all find something to follow.
"""

from __future__ import annotations

import cv2
import numpy as np

W, H, T, FPS = 128, 96, 16, 8
OBJ, OBJ_STEP, GRIP = 32, 5, 16


def _background() -> np.ndarray:
    rng = np.random.default_rng(0)
    coarse = cv2.resize(rng.integers(0, 256, (H // 4, W // 4, 3)).astype(np.uint8), (W, H),
                        interpolation=cv2.INTER_CUBIC)
    return np.clip(coarse.astype(int) + rng.integers(-25, 26, (H, W, 3)), 0, 255).astype(np.uint8)


def _boxes() -> list[tuple[int, int]]:
    """Top-left corner of the object on each frame (easing in and out, as a real reach does: constant
    speeds would give DYN's range ratios nothing to compare); the gripper sits just above it."""
    ease = (1 - np.cos(np.pi * np.arange(T) / (T - 1))) / 2
    return [(8 + round(OBJ_STEP * (T - 1) * e), 44 + round((T - 1) * e)) for e in ease]


def clean_frames() -> np.ndarray:
    bg, rng = _background(), np.random.default_rng(1)
    obj = rng.integers(0, 256, (OBJ, OBJ, 3)).astype(np.uint8)
    obj[..., 0] = 230
    grip = rng.integers(0, 256, (GRIP, OBJ, 3)).astype(np.uint8)
    grip[..., 2] = 250
    out = []
    for x, y in _boxes():
        f = bg.copy()
        f[y:y + OBJ, x:x + OBJ] = obj
        f[y - GRIP:y, x:x + OBJ] = grip
        out.append(f)
    return np.stack(out)


def state_arrays(frames: int = T) -> dict[str, np.ndarray]:
    """A state file in the sim suite's layout (docs/sim_suite.md) for one view of the clean clip.

    Object mask class 3, gripper (robot) class 2, the end effector at the gripper's centre; the
    camera is the identity (K = I, R = I, t = 0), so ``ee_pos = (u, v, 1)`` projects to pixel (u, v).
    """
    masks = np.zeros((frames, 1, H, W), np.uint8)
    ee = np.zeros((frames, 3))
    for t, (x, y) in enumerate(_boxes()[:frames]):
        masks[t, 0, y:y + OBJ, x:x + OBJ] = 3
        masks[t, 0, y - GRIP:y, x:x + OBJ] = 2
        ee[t] = (x + OBJ / 2, y - GRIP / 2, 1.0)
    return {
        "masks": masks, "ee_pos": ee, "K": np.eye(3)[None], "R": np.tile(np.eye(3), (frames, 1, 1, 1)),
        "t": np.zeros((frames, 1, 3)), "keypoint_names": np.array(["gripper"]),
        "keypoints_2d": np.zeros((frames, 1, 1, 2)), "keypoints_visible": np.zeros((frames, 1, 1), bool),
        "unintended_collision": np.zeros(frames, bool), "success": np.ones(frames, bool),
    }
