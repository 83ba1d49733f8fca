"""Measures on a simulator's per-frame flags (the sim suite's state file, docs/sim_suite.md)."""

from __future__ import annotations

import numpy as np


def _flags(flags: np.ndarray) -> np.ndarray:
    arr = np.asarray(flags)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"expected one flag per frame, shape (T,) with T >= 1, got shape {arr.shape}")
    return arr.astype(bool)


def collision_events(flags: np.ndarray) -> int:
    """Number of runs of consecutive True flags: a contact held for 20 frames counts once.

    RoboPhys-3D App. B.4.2 (Collision Count) on the sim suite's ``unintended_collision`` flags.

    >>> collision_events(np.array([0, 1, 1, 0, 1, 0, 0, 1], bool))
    3
    """
    f = _flags(flags)
    return int(f[0]) + int((f[1:] & ~f[:-1]).sum())


def task_success(flags: np.ndarray) -> float:
    """1.0 when the last frame's success flag is set, else 0.0 (reaching the goal and losing it fails).

    >>> task_success(np.array([0, 1, 1, 0], bool)), task_success(np.array([0, 0, 1], bool))
    (0.0, 1.0)
    """
    return float(_flags(flags)[-1])
