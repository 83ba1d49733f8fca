"""Inverse kinematics for the scripted arms: damped least squares on MuJoCo's body Jacobian."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def solve_ik(
    model: Any,
    scratch: Any,
    joints: Sequence[str],
    body: str,
    offset: np.ndarray,
    q0: np.ndarray,
    pos: np.ndarray,
    rot: np.ndarray,
    iters: int = 60,
    rot_weight: float = 0.3,
) -> np.ndarray:
    """Angles of ``joints`` that put the point ``offset`` (in ``body``'s frame) at ``pos`` and turn
    ``body`` to the orientation ``rot`` (3x3, columns = body axes in world axes).

    Damped least squares on the 6-D error (position, rotation vector), from ``q0``, within the joint
    limits; orientation errors weigh ``rot_weight`` per radian against metres. ``scratch`` is an MjData
    whose other joints stay as they are.
    """
    import mujoco

    ids = [model.joint(j).id for j in joints]
    adr = np.array([int(model.jnt_qposadr[i]) for i in ids])
    dof = np.array([int(model.jnt_dofadr[i]) for i in ids])
    lo, hi = model.jnt_range[ids].T
    bid = model.body(body).id
    q = np.clip(np.asarray(q0, float).copy(), lo, hi)
    jp, jr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    n = len(ids)
    for _ in range(iters):
        scratch.qpos[adr] = q
        mujoco.mj_kinematics(model, scratch)
        mujoco.mj_comPos(model, scratch)
        r = scratch.xmat[bid].reshape(3, 3)
        point = scratch.xpos[bid] + r @ offset
        err_p = pos - point
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, (rot @ r.T).ravel())  # the turn from the current orientation to rot
        err_r = np.zeros(3)
        mujoco.mju_quat2Vel(err_r, quat, 1.0)
        if np.linalg.norm(err_p) < 1e-4 and np.linalg.norm(err_r) < 1e-3:
            break
        mujoco.mj_jac(model, scratch, jp, jr, point, bid)
        jac = np.r_[jp[:, dof], rot_weight * jr[:, dof]]
        err = np.r_[err_p, rot_weight * err_r]
        dq = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), err)
        q = np.clip(q + dq[:n], lo, hi)
    out: np.ndarray = q
    return out


def min_jerk(n: int) -> np.ndarray:
    """Minimum-jerk fractions of a move over n frames (the last one 1)."""
    s = np.arange(1, n + 1) / n
    out: np.ndarray = 10 * s**3 - 15 * s**4 + 6 * s**5
    return out


def ramp_controls(mj: Any, model: Any, data: Any, start: np.ndarray, end: np.ndarray, steps: int) -> None:
    """Advance ``steps`` physics steps with the controls moving linearly from ``start`` to ``end``
    (reached on the last step): how the scripted envs turn one frame's action into smooth motion."""
    for i in range(steps):
        data.ctrl[:] = start + (end - start) * (i + 1) / steps
        mj.mj_step(model, data)
