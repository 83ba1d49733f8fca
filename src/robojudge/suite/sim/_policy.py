"""Scripted policies that drive the environments, and the recorded episodes they produce.

A policy is a short closed-loop waypoint program (reach above the object, descend, close, lift, carry,
lower, release, retreat). The same program with other parameters gives the instruction-alignment
variants, which are real simulated episodes too: picking the distractor instead of the object,
placing at another spot, placing short of the goal, or moving about without touching anything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from robojudge.suite.sim._scenes import SCENES

N_FRAMES = 48
FPS = 10.0
ADROIT_GRASP = {"arty": -0.12, "dy": 0.03}  # palm height actuator target and palm offset at the grasp
ADROIT_STEPS_PER_FRAME = 4  # env steps (0.01 s each) per recorded frame; Fetch records every step (0.04 s)


@dataclass(frozen=True)
class Layout:
    """Initial placement of one episode (world frame, metres)."""

    obj: np.ndarray  # (3,) object centre
    distractor: np.ndarray  # (3,)
    goal: np.ndarray  # (3,) goal point: where the object centre should end up


@dataclass
class Episode:
    """A recorded episode: simulator state and the action applied at every frame."""

    embodiment: str
    layout: Layout
    qpos: np.ndarray  # (T, nq)
    mocap_pos: np.ndarray  # (T, nmocap, 3)
    mocap_quat: np.ndarray  # (T, nmocap, 4)
    actions: np.ndarray  # (T, na); the action that led to frame t (zeros at t=0)
    variant: str = "faithful"


def _jnt_adr(model: Any, name: str) -> int:
    return int(model.joint(name).qposadr[0])


def _set_free(model: Any, data: Any, joint: str, pos: np.ndarray) -> None:
    a = _jnt_adr(model, joint)
    data.qpos[a : a + 3] = pos
    data.qpos[a + 3 : a + 7] = (1.0, 0.0, 0.0, 0.0)


def sample_layout(embodiment: str, rng: np.random.Generator) -> Layout:
    """Draw object, distractor and goal positions that keep the distractor off the robot's path."""
    info = SCENES[embodiment]
    z = info.table_top + info.object_size
    if embodiment == "gripper":
        lo, hi = np.array([1.18, 0.55]), np.array([1.45, 0.98])
    else:
        lo, hi = np.array([-0.15, -0.02]), np.array([0.15, 0.25])
    for _ in range(1000):
        obj, dis = rng.uniform(lo, hi), rng.uniform(lo, hi)
        ang = rng.uniform(0, 2 * np.pi)
        goal = obj + rng.uniform(0.13, 0.2) * np.array([np.cos(ang), np.sin(ang)])
        if np.any(goal < lo) or np.any(goal > hi):
            continue
        seg = goal - obj
        s = np.clip(np.dot(dis - obj, seg) / np.dot(seg, seg), 0, 1)
        if np.linalg.norm(dis - (obj + s * seg)) < 0.1 or np.linalg.norm(dis - goal) < 0.1:
            continue
        return Layout(np.r_[obj, z], np.r_[dis, z], np.r_[goal, z])
    raise RuntimeError("could not place the scene")  # pragma: no cover


def set_goal_marker(model: Any, embodiment: str, layout: Layout) -> None:
    """Put the goal disc on the table under the goal point (a model edit, constant per episode)."""
    model.body("goal_marker").pos[:] = layout.goal - (0, 0, SCENES[embodiment].object_size - 0.001)


def _reset(env: Any, embodiment: str, layout: Layout, seed: int) -> None:
    import mujoco

    env.reset(seed=seed)
    m, d = env.model, env.data
    if embodiment == "gripper":
        _set_free(m, d, "object0:joint", layout.obj)
    else:
        m.body("Object").pos[:] = (0.0, 0.0, layout.obj[2])
        d.qpos[[_jnt_adr(m, n) for n in ("OBJTx", "OBJTy", "OBJTz")]] = (*layout.obj[:2], 0.0)
    _set_free(m, d, "distractor:joint", layout.distractor)
    _set_free(m, d, "duplicate:joint", np.array([10.0, 10.0, -5.0]))
    d.qvel[:] = 0
    set_goal_marker(m, embodiment, layout)
    mujoco.mj_forward(m, d)


def _program(
    kind: str, layout: Layout, rng: np.random.Generator, severity: float
) -> list[tuple[np.ndarray, float]]:
    """Waypoints (position of the object-holding point, closure 0 open .. 1 closed) for a variant."""
    pick, place = layout.obj, layout.goal
    if kind == "wrong_object":
        pick = layout.distractor
    elif kind == "stop_short":
        place = layout.obj + (1.0 - severity) * (layout.goal - layout.obj)  # severity >= 0.7 misses the goal
    elif kind == "wrong_target":
        d = layout.goal - layout.obj
        place = layout.obj + np.array([-d[1], d[0], 0.0]) * (0.9 + 0.5 * severity)  # a quarter-turn away
    up = np.array([0, 0, 0.1])
    if kind == "unrelated":
        pts = [layout.obj + up * 2.2 + np.r_[rng.uniform(-0.12, 0.12, 2), 0] for _ in range(4)]
        return [(p, float(i % 2)) for i, p in enumerate(pts)]
    return [
        (pick + up, 0.0),
        (pick, 0.0),
        (pick, 1.0),
        (pick + up, 1.0),
        (place + up, 1.0),
        (place + np.array([0, 0, 0.005]), 1.0),
        (place + np.array([0, 0, 0.005]), 0.0),
        (place + up * 1.2, 0.0),
    ]


def _record(env: Any, ep: dict[str, list[np.ndarray]], action: np.ndarray) -> None:
    ep["qpos"].append(env.data.qpos.copy())
    ep["mocap_pos"].append(env.data.mocap_pos.copy())
    ep["mocap_quat"].append(env.data.mocap_quat.copy())
    ep["actions"].append(np.asarray(action, dtype=np.float32).copy())


def _run_fetch(env: Any, program: list[tuple[np.ndarray, float]], ep: dict[str, list[np.ndarray]]) -> None:
    grip_site = env.model.site("robot0:grip").id
    k, held = 0, 0
    for _ in range(N_FRAMES - 1):
        target, closure = program[k]
        pos = env.data.site_xpos[grip_site]
        err = target - pos
        action = np.r_[np.clip(10.0 * err, -1, 1), 1.0 - 2.0 * closure].astype(np.float32)
        env.step(action)
        _record(env, ep, action)
        held += 1
        prev_closure = program[k - 1][1] if k > 0 else closure
        need = 4 if closure != prev_closure else 1
        if (
            np.linalg.norm(target - env.data.site_xpos[grip_site]) < 0.012
            and held >= need
            and k < len(program) - 1
        ):
            k, held = k + 1, 0


def _run_adroit(env: Any, program: list[tuple[np.ndarray, float]], ep: dict[str, list[np.ndarray]]) -> None:
    m, d = env.model, env.data
    names = [m.actuator(i).name[2:] for i in range(m.nu)]
    ix = {n: i for i, n in enumerate(names)}
    fingers = [ix[n] for n in names if n[:2] in ("FF", "MF", "RF", "LF") and n[-1] in "012"]
    palm = d.site_xpos[m.site("S_grasp").id].copy()
    q0 = d.qpos[[_jnt_adr(m, "ARTx"), _jnt_adr(m, "ARTz")]].copy()
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    z_obj = SCENES["dexterous_hand"].object_size
    # Segment lengths (frames) of the waypoint program; the rest of the episode holds the last one.
    frames = [9, 5, 5, 5, 9, 5, 3, 5]
    ctrl = np.zeros(m.nu)
    ctrl[ix["ARTx"]], ctrl[ix["ARTz"]] = 0.4 * q0
    start = ctrl.copy()

    def ctrl_for(p: np.ndarray, c: float) -> np.ndarray:
        u = np.zeros(m.nu)
        # The arm actuators are affine servos (force = 500 ctrl - 200 q): the joint settles at 2.5 ctrl.
        u[ix["ARTx"]] = 0.4 * (q0[0] - (p[0] - palm[0]))
        u[ix["ARTz"]] = 0.4 * (q0[1] + (p[1] - ADROIT_GRASP["dy"] - palm[1]))
        u[ix["ARTy"]] = 0.4 * (ADROIT_GRASP["arty"] + (p[2] - z_obj))  # grasp height: fingers around the ball
        u[fingers] = 1.2 * c
        u[[ix["THJ4"], ix["THJ3"], ix["THJ1"], ix["THJ0"]]] = np.array([0.5, 1.1, 0.3, -0.8]) * c
        return np.clip(u, lo, hi)

    plan: list[np.ndarray] = []
    for (p, c), n in zip(program, frames[: len(program)], strict=False):
        goal = ctrl_for(p, c)
        plan += [start + (goal - start) * (i + 1) / n for i in range(n)]
        start = goal
    while len(plan) < N_FRAMES - 1:
        plan.append(start)
    eq = m.equality("grasp_assist").id
    b1, b2 = m.body("palm").id, m.body("Object").id
    ff = ix["FFJ1"]
    shift = np.zeros(2)  # ball offset from where the program expects it, measured when the weld closes
    for u in plan[: N_FRAMES - 1]:
        u = u.copy()
        u[ix["ARTx"]] += 0.4 * shift[0]
        u[ix["ARTz"]] -= 0.4 * shift[1]
        action = ((u - env.act_mean) / env.act_rng).astype(np.float32)
        closed = u[ff] >= 1.2 * 0.95 and d.ctrl[ff] >= 1.2 * 0.95
        near = np.linalg.norm(d.xpos[b2] - d.site_xpos[m.site("S_grasp").id]) < 0.12
        if closed and near and not d.eq_active[eq]:
            _weld_here(m, d, eq, b1, b2)
            grasp = d.site_xpos[m.site("S_grasp").id]
            shift = d.xpos[b2][:2] - (grasp[:2] + (0.0, ADROIT_GRASP["dy"]))
        elif not closed:
            d.eq_active[eq] = 0
        for _ in range(ADROIT_STEPS_PER_FRAME):
            env.step(action)
        _record(env, ep, action)


def _weld_here(m: Any, d: Any, eq: int, b1: int, b2: int) -> None:
    """Switch on a weld that holds body ``b2`` at its current pose relative to body ``b1``."""
    import mujoco

    r1 = d.xmat[b1].reshape(3, 3)
    m.eq_data[eq, 0:3] = 0.0
    m.eq_data[eq, 3:6] = r1.T @ (d.xpos[b2] - d.xpos[b1])
    q1inv = np.zeros(4)
    mujoco.mju_negQuat(q1inv, d.xquat[b1])
    rel = np.zeros(4)
    mujoco.mju_mulQuat(rel, q1inv, d.xquat[b2])
    m.eq_data[eq, 6:10] = rel
    m.eq_data[eq, 10] = 1.0
    d.eq_active[eq] = 1


def run_episode(
    env: Any, embodiment: str, layout: Layout, seed: int, kind: str = "faithful", severity: float = 0.0
) -> Episode:
    """Simulate one episode of ``N_FRAMES`` frames with the scripted policy variant ``kind``.

    ``kind`` is ``faithful`` or one of the instruction-alignment variants ``wrong_object``,
    ``wrong_target``, ``stop_short``, ``unrelated`` (``severity`` sets how far off they are).
    """
    _reset(env, embodiment, layout, seed)
    if embodiment != "gripper":
        env.data.eq_active[:] = 0
    ep: dict[str, list[np.ndarray]] = {"qpos": [], "mocap_pos": [], "mocap_quat": [], "actions": []}
    na = env.action_space.shape[0]
    _record(env, ep, np.zeros(na))
    program = _program(kind, layout, np.random.default_rng(seed), severity)
    if embodiment == "gripper":
        _run_fetch(env, program, ep)
    else:
        _run_adroit(env, program, ep)
    return Episode(
        embodiment=embodiment,
        layout=layout,
        qpos=np.stack(ep["qpos"]),
        mocap_pos=np.stack(ep["mocap_pos"]),
        mocap_quat=np.stack(ep["mocap_quat"]),
        actions=np.stack(ep["actions"]),
        variant=kind,
    )


def object_positions(model: Any, ep: Episode, body: str) -> np.ndarray:
    """World position of a body at every frame of an episode (forward kinematics on a scratch MjData)."""
    import mujoco

    data = mujoco.MjData(model)
    bid = model.body(body).id
    out = np.zeros((len(ep.qpos), 3))
    for t in range(len(ep.qpos)):
        data.qpos[:] = ep.qpos[t]
        data.mocap_pos[:] = ep.mocap_pos[t]
        mujoco.mj_kinematics(model, data)
        out[t] = data.xpos[bid]
    return out


def faithful_episode(env: Any, embodiment: str, rng: np.random.Generator, seed: int) -> Episode:
    """Sample layouts until the scripted policy finishes the task (object at the goal at the end)."""
    info = SCENES[embodiment]
    for attempt in range(8):
        layout = sample_layout(embodiment, rng)
        ep = run_episode(env, embodiment, layout, seed + 1000 * attempt)
        final = object_positions(env.model, ep, info.object_body)[-1]
        if np.linalg.norm(final - layout.goal) < info.success_threshold:
            return replace(ep, variant="faithful")
    raise RuntimeError(f"the scripted {embodiment} policy failed 8 layouts in a row")
