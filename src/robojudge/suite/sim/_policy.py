"""Scripted policies that drive the environments, and the recorded episodes they produce.

Pick-and-place and relocate use a short closed-loop waypoint program (reach above the object, descend,
close, lift, carry, lower, release, retreat). Push and slide use closed-loop phase controllers with the
envs' blocked (closed) gripper: push goes above a point behind the cube, descends, and pushes the cube
along the table while steering to keep it on the line to the goal; slide descends behind the puck and
accelerates into it, and stops the gripper (releasing the puck) once the puck's predicted sliding
distance, from its measured velocity and the table's friction, reaches the goal.

The same programs with other parameters give the instruction-alignment variants, which are real
simulated episodes too: handling the distractor instead of the object, bringing the object to another
spot, stopping short of the goal, or moving about without touching anything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from robojudge.suite.sim._scenes import SCENES, scene, scene_name

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
    wrong_sign: float = 1.0  # side of the quarter turn used by the wrong_target variant


@dataclass
class Episode:
    """A recorded episode: simulator state and the action applied at every frame."""

    embodiment: str  # the scene key (pick_and_place, push, slide, relocate); see ``scene``
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


def _seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    seg = b - a
    s = np.clip(np.dot(p - a, seg) / np.dot(seg, seg), 0, 1)
    return float(np.linalg.norm(p - (a + s * seg)))


def wrong_target_point(layout: Layout, severity: float, sign: float = 1.0, turn: float = 0.0) -> np.ndarray:
    """Where the ``wrong_target`` variant brings the object.

    By default a quarter turn away from the goal, (0.9 + 0.5 severity) x as far; with ``turn`` (slide,
    whose goals are too far for a quarter turn to stay on the table) the goal direction turned by
    ``turn`` x (1 + 0.7 severity) radians, as far as the goal.
    """
    d = layout.goal - layout.obj
    if turn:
        a = sign * turn * (1 + 0.7 * severity)
        c, s = np.cos(a), np.sin(a)
        out: np.ndarray = layout.obj + np.array([c * d[0] - s * d[1], s * d[0] + c * d[1], 0.0])
        return out
    out = layout.obj + sign * np.array([-d[1], d[0], 0.0]) * (0.9 + 0.5 * severity)
    return out


SLIDE_TURN = 0.6  # rad: the slide wrong_target turns the goal direction by 0.6-1.0 rad


def _wrong_sign(layout: Layout, lo: np.ndarray, hi: np.ndarray, turn: float) -> float | None:
    """Side (+1 or -1) of the turn whose wrong targets (all severities) stay on the table."""
    for sign in (1.0, -1.0):
        pts = [wrong_target_point(layout, s, sign, turn)[:2] for s in (0.0, 0.5, 1.0)]
        if all(np.all(p >= lo) and np.all(p <= hi) for p in pts):
            return sign
    return None


def _sample_surface_layout(name: str, rng: np.random.Generator) -> Layout:
    """Push and slide layouts: the object, the distractor and the goal are all reached along the table,
    so the distractor keeps off the object's path and the object off the distractor's (``wrong_object``),
    and the quarter-turn wrong target stays on the table."""
    info = SCENES[name]
    z = info.table_top + info.half_height
    lo, hi = np.array(info.workspace[0]), np.array(info.workspace[1])
    push = name == "push"
    start = np.array(info.extra["grip_start"])  # the gripper's start position, at table height
    for _ in range(5000):
        if push:
            obj = rng.uniform(lo + 0.06, hi - 0.06)
            ang = rng.uniform(0, 2 * np.pi)
            dist = rng.uniform(0.13, 0.2)
        else:
            obj = rng.uniform((0.98, 0.55), (1.1, 0.95))
            ang = rng.uniform(-0.12, 0.12)
            dist = rng.uniform(0.35, 0.45)
        goal = obj + dist * np.array([np.cos(ang), np.sin(ang)])
        dis = rng.uniform(lo, hi) if push else rng.uniform((0.98, 0.5), (1.1, 1.0))
        if np.any(goal < lo) or np.any(goal > hi):
            continue
        if min(np.linalg.norm(obj - start), np.linalg.norm(dis - start)) < 0.1:
            continue
        if _seg_dist(dis, obj - 0.1 * (goal - obj) / dist, goal) < 0.1 or np.linalg.norm(dis - goal) < 0.1:
            continue
        dg = np.linalg.norm(goal - dis)
        if dg < 0.1 or _seg_dist(obj, dis - 0.1 * (goal - dis) / dg, goal) < 0.1:
            continue
        if not push and not (0.3 < dg < 0.5):  # the distractor must be slidable to the goal as well
            continue
        layout = Layout(np.r_[obj, z], np.r_[dis, z], np.r_[goal, z])
        sign = _wrong_sign(layout, lo, hi, 0.0 if push else SLIDE_TURN)
        if sign is None:
            continue
        return replace(layout, wrong_sign=sign)
    raise RuntimeError("could not place the scene")  # pragma: no cover


def sample_layout(embodiment: str, rng: np.random.Generator) -> Layout:
    """Draw object, distractor and goal positions that keep the distractor off the robot's path."""
    name = scene_name(embodiment)
    if name in ("push", "slide"):
        return _sample_surface_layout(name, rng)
    info = SCENES[name]
    if info.embodiment == "bimanual":
        from robojudge.suite.sim._aloha import sample_layout as aloha_layout

        obj, dis, goal, sign = aloha_layout(rng, info.table_top + info.half_height)
        return Layout(obj, dis, goal, wrong_sign=sign)
    z = info.table_top + info.object_size
    lo, hi = np.array(info.workspace[0]), np.array(info.workspace[1])
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
    model.body("goal_marker").pos[:] = layout.goal - (0, 0, scene(embodiment).half_height - 0.001)


def _reset(env: Any, embodiment: str, layout: Layout, seed: int) -> None:
    import mujoco

    env.reset(seed=seed)
    m, d = env.model, env.data
    info = scene(embodiment)
    if info.is_fetch:
        _set_free(m, d, "object0:joint", layout.obj)
    elif "object_joint" in info.extra:
        _set_free(m, d, info.extra["object_joint"], layout.obj)
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


SLIDE_DECEL = 0.95  # m/s^2: the puck's deceleration on the slide table (friction 0.1), measured
SLIDE_LEAD = 0.03  # m: the arm keeps pushing briefly after the let-go
SLIDE_CAP = 1.4  # the commanded speed overshoots the needed one by this factor (the arm lags)
SLIDE_RAMP = 0.006  # m per env step, per step: how fast the strike speeds up
PUSH_TOL = 0.015  # m: the push stops this close to the goal
PUSH_Z = 0.025  # grip-site height above the table while pushing or striking (fingertips near the table)


def _surface_targets(name: str, kind: str, layout: Layout, severity: float) -> tuple[str, np.ndarray]:
    """Body pushed/struck and the point it should reach, for a push or slide variant."""
    body, goal = "object0", layout.goal
    if kind == "wrong_object":
        body = "distractor"
    elif kind == "stop_short":
        goal = layout.obj + (1.0 - severity) * (layout.goal - layout.obj)
    elif kind == "wrong_target":
        goal = wrong_target_point(layout, severity, layout.wrong_sign, SLIDE_TURN if name == "slide" else 0.0)
    return body, goal


def _run_surface(
    env: Any,
    name: str,
    kind: str,
    layout: Layout,
    severity: float,
    rng: np.random.Generator,
    ep: dict[str, list[np.ndarray]],
) -> None:
    """Closed-loop push (``push``) or strike (``slide``) with the blocked gripper; see the module doc."""
    info = SCENES[name]
    m, d = env.model, env.data
    grip = m.site("robot0:grip").id
    z_push = info.table_top + PUSH_Z
    z_high = info.table_top + 2 * info.half_height + 0.04
    body, goal = _surface_targets(name, kind, layout, severity)
    bid = m.body(body).id
    r = info.object_size + 0.012  # grip site to object centre when the fingers touch the object
    wander = [layout.obj + np.r_[rng.uniform(-0.12, 0.12, 2), 0.17] for _ in range(5)]
    phase, k, speed, v_prev = 0, 0, 0.0, 0.0
    line = (goal - d.xpos[bid])[:2] / max(float(np.linalg.norm((goal - d.xpos[bid])[:2])), 1e-6)
    stop_at = np.zeros(3)
    for _ in range(N_FRAMES - 1):
        pos = d.site_xpos[grip].copy()
        obj = d.xpos[bid].copy()
        to_goal = goal[:2] - obj[:2]
        dist = float(np.linalg.norm(to_goal))
        u = to_goal / max(dist, 1e-6)
        behind = np.r_[obj[:2] - u * (r + (0.05 if name == "push" else 0.015)), z_push]
        gain = 10.0 if phase >= 1 else 20.0  # moves in the air go at full speed
        if kind == "unrelated":
            target = wander[min(k, len(wander) - 1)]
            if np.linalg.norm(target - pos) < 0.02:
                k += 1
        elif phase == 0:  # up from the start pose (it is at table height), then above the point behind
            target = np.r_[behind[:2], z_high] if pos[2] > z_high - 0.02 else np.r_[pos[:2], z_high + 0.01]
            if np.linalg.norm(np.r_[behind[:2], z_high] - pos) < 0.015:
                phase = 1
        elif phase == 1:  # down behind it
            target = behind
            if np.linalg.norm(target - pos) < 0.01:
                phase = 2
        elif phase == 2 and name == "push":  # push through the cube's centre along the line to the goal
            step = float(np.clip(0.35 * dist, 0.004, 0.02))  # m per step, slower near the goal
            target = np.r_[obj[:2] - u * (r - 2 * step), z_push]
            if dist < PUSH_TOL or np.dot(goal[:2] - obj[:2], line) < 0:
                phase, stop_at = 3, pos.copy()
        elif phase == 2:  # slide: push the puck ever faster; let go once its predicted run reaches the goal
            v = float(np.dot(_body_vel(m, d, bid)[:2], u))
            need = np.sqrt(2 * SLIDE_DECEL * max(dist - SLIDE_LEAD, 0.0))  # m/s the puck must leave with
            speed = min(speed + SLIDE_RAMP, SLIDE_CAP * need * 0.04)  # m per env step
            # The action moves the gripper by about half the error per step: from contact, ``speed``.
            target = np.r_[obj[:2] - u * (r - 2 * speed), z_push]
            if v > 0.05 and v + 0.5 * (v - v_prev) >= need:
                phase, stop_at = 3, pos.copy()
            v_prev = v
        else:  # retreat: back off (against the push direction) and up, clear of the object
            target = np.r_[stop_at[:2] - line * 0.04, z_high + 0.03]
        # The env moves the mocap handle to the gripper, then by 0.05 x action: half the error per step.
        action = np.r_[np.clip(gain * (target - pos), -1, 1), 1.0].astype(np.float32)
        env.step(action)
        _record(env, ep, action)


def _body_vel(m: Any, d: Any, bid: int) -> np.ndarray:
    """World linear velocity of a body's origin."""
    import mujoco

    res = np.zeros(6)
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, bid, res, 0)
    return res[3:]


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
    z_obj = SCENES["relocate"].object_size
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
    name = scene_name(embodiment)
    _reset(env, name, layout, seed)
    if SCENES[name].embodiment == "dexterous_hand":
        env.data.eq_active[:] = 0
    ep: dict[str, list[np.ndarray]] = {"qpos": [], "mocap_pos": [], "mocap_quat": [], "actions": []}
    na = env.action_space.shape[0]
    _record(env, ep, np.zeros(na))
    if name in ("push", "slide"):
        _run_surface(env, name, kind, layout, severity, np.random.default_rng(seed), ep)
    elif SCENES[name].embodiment == "bimanual":
        from robojudge.suite.sim._aloha import run_variant

        run_variant(
            env,
            kind,
            layout.obj,
            layout.distractor,
            layout.goal,
            layout.wrong_sign,
            severity,
            np.random.default_rng(seed),
            lambda action: _record(env, ep, action),
            N_FRAMES - 1,
            SCENES[name].object_body,
        )
    else:
        program = _program(kind, layout, np.random.default_rng(seed), severity)
        if SCENES[name].assets == "franka_kitchen":
            from robojudge.suite.sim._franka import run_program

            run_program(env, program, lambda action: _record(env, ep, action), N_FRAMES - 1)
        elif name == "pick_and_place":
            _run_fetch(env, program, ep)
        else:
            _run_adroit(env, program, ep)
    return Episode(
        embodiment=name,
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
    name = scene_name(embodiment)
    info = SCENES[name]
    for attempt in range(8):
        layout = sample_layout(name, rng)
        ep = run_episode(env, name, layout, seed + 1000 * attempt)
        final = object_positions(env.model, ep, info.object_body)[-1]
        if np.linalg.norm(final - layout.goal) < info.success_threshold:
            return replace(ep, variant="faithful")
    raise RuntimeError(f"the scripted {name} policy failed 8 layouts in a row")
