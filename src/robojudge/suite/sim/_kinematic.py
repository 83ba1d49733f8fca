"""Planted kinematic failures: the robot itself moves in ways no real robot can.

Each function edits a :class:`~robojudge.suite.sim._render.Plan` in place (joint positions in
``qpos`` or per-frame model edits ``body_shift`` / ``body_rot``) and returns the frame window and a
small JSON-ready record of what was planted. The renderer draws the edited model, so the video, the
keypoints in the state file (positions of the bodies as rendered) and the joint positions all show it.

Which joints count as the arm and which as fingers comes from ``SceneInfo.extra`` (``arm_joints``;
``finger_close``: pairs of joint name and the end of its range that means "closed", -1 lower, +1
upper) and falls back to the tables below for the built-in scenes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

KINEMATIC_TYPES = ("link_stretch", "bend", "jitter", "config_jump", "finger_pass")

_FETCH_ARM = tuple(
    f"robot0:{j}_joint"
    for j in (
        "shoulder_pan",
        "shoulder_lift",
        "upperarm_roll",
        "elbow_flex",
        "forearm_roll",
        "wrist_flex",
        "wrist_roll",
    )
)
_FETCH_FINGERS = (("robot0:l_gripper_finger_joint", -1), ("robot0:r_gripper_finger_joint", -1))
ARM_JOINTS: dict[str, tuple[str, ...]] = {
    "pick_and_place": _FETCH_ARM,
    "push": _FETCH_ARM,
    "slide": _FETCH_ARM,
    "relocate": ("ARTx", "ARTy", "ARTz", "ARRx", "ARRy", "ARRz", "WRJ1", "WRJ0"),
}
FINGER_CLOSE: dict[str, tuple[tuple[str, int], ...]] = {
    "pick_and_place": _FETCH_FINGERS,
    "push": _FETCH_FINGERS,
    "slide": _FETCH_FINGERS,
    # The three flexion joints of each long finger close towards their upper limit.
    "relocate": tuple((f"{f}J{i}", 1) for f in ("FF", "MF", "RF", "LF") for i in (2, 1, 0)),
}
SLIDE_PER_RAD = 0.08  # m of a slide joint's noise or jump per rad of a hinge's (ADROIT's arm slides)
MIN_LINK = 0.02  # m: shorter rigid links (finger pads on their knuckles) are never stretched


@dataclass(frozen=True)
class Link:
    """Two keypoint bodies held at a fixed offset by the model; ``mover`` is the body to shift.

    ``offset`` is the child keypoint's position in the parent keypoint's frame; ``mover`` is the body
    on the way from parent to child whose parent is the parent keypoint, so adding ``k * offset`` to
    its ``body_pos`` moves the child (and all below it) by ``k`` times the link.
    """

    parent: str
    child: str
    mover: str
    offset: np.ndarray

    @property
    def length(self) -> float:
        return float(np.linalg.norm(self.offset))


def _joints(model: Any, names: tuple[str, ...]) -> list[int]:
    return [int(model.joint(n).id) for n in names]


def _span(rng: np.random.Generator, T: int, n: int) -> tuple[int, int]:
    """A window of ``n`` frames with at least one untouched frame before and after it."""
    n = max(1, min(n, T - 3))
    a = int(rng.integers(1, T - n))
    return a, a + n


def _ramp(n: int) -> np.ndarray:
    """Strength over a window: full inside, half on the first and last frame (a one-frame onset)."""
    w = np.ones(n)
    if n >= 3:
        w[0] = w[-1] = 0.5
    return w


def rigid_links(model: Any, keypoints: tuple[str, ...], qpos: np.ndarray) -> list[Link]:
    """Links between each keypoint and its nearest keypoint ancestor that stay rigid over ``qpos``.

    Rigidity is checked, not assumed: the child's position in the parent's frame must not change
    across the given frames (a joint between them bends the pair and rules it out).
    """
    import mujoco

    ids = [int(model.body(k).id) for k in keypoints]
    pairs = []
    for c in ids:
        path, b = [c], int(model.body_parentid[c])
        while b > 0 and b not in ids:
            path.append(b)
            b = int(model.body_parentid[b])
        if b > 0:
            pairs.append((b, c, path[-1]))
    data = mujoco.MjData(model)
    rows = np.unique(np.linspace(0, len(qpos) - 1, 6).astype(int))
    offsets = np.zeros((len(rows), len(pairs), 3))
    for i, t in enumerate(rows):
        data.qpos[:] = qpos[t]
        mujoco.mj_kinematics(model, data)
        for j, (p, c, _) in enumerate(pairs):
            offsets[i, j] = data.xmat[p].reshape(3, 3).T @ (data.xpos[c] - data.xpos[p])
    out = []
    for j, (p, c, mover) in enumerate(pairs):
        off = offsets[:, j]
        if np.abs(off - off[0]).max() < 1e-6 and np.linalg.norm(off[0]) >= MIN_LINK:
            out.append(Link(model.body(p).name, model.body(c).name, model.body(mover).name, off[0]))
    return out


def _hinge_axes(model: Any, body: int) -> list[np.ndarray]:
    hinge = 3  # mjJNT_HINGE
    return [
        model.jnt_axis[j].copy()
        for j in range(model.njnt)
        if model.jnt_bodyid[j] == body and model.jnt_type[j] == hinge
    ]


def _foreign_axis(axes: list[np.ndarray], rng: np.random.Generator) -> np.ndarray | None:
    """A unit axis that none of a body's hinges turns about (None for three or more hinges)."""
    if len(axes) >= 3:
        return None
    if len(axes) == 2:
        a = np.cross(axes[0], axes[1])
    else:
        a = rng.normal(size=3)
        if axes:
            a -= (a @ axes[0]) / (axes[0] @ axes[0]) * axes[0]
    return np.asarray(a / np.linalg.norm(a))


def plant(
    kind: str,
    model: Any,
    info: Any,
    plan: Any,
    severity: float,
    rng: np.random.Generator,
) -> tuple[int, int, dict[str, Any]]:
    """Plant one kinematic failure of ``kind`` into ``plan``; return (start, stop, detail)."""
    s, q, ed = severity, plan.qpos, plan.edits
    T = len(q)
    arm = info.extra.get("arm_joints", ARM_JOINTS.get(info.task))
    fingers = info.extra.get("finger_close", FINGER_CLOSE.get(info.task))
    if arm is None or fingers is None:
        raise ValueError(f"scene {info.task!r} names no arm_joints / finger_close in SceneInfo.extra")
    slide = 2  # mjJNT_SLIDE
    detail: dict[str, Any]
    if kind == "link_stretch":
        links = rigid_links(model, info.keypoint_bodies, q)
        longest = max(x.length for x in links)
        link = links[int(rng.choice([i for i, x in enumerate(links) if x.length >= 0.5 * longest]))]
        k = float((0.1 + 0.4 * s) * rng.choice([-1.0, 1.0]))
        a, b = _span(rng, T, int(round(6 + 10 * s)))
        for t, w in zip(range(a, b), _ramp(b - a), strict=True):
            shifts = ed[t].setdefault("body_shift", {})
            shifts[link.mover] = shifts.get(link.mover, 0.0) + k * w * link.offset
        detail = {
            "link": [link.parent, link.child],
            "scale": round(1 + k, 4),
            "length": round(link.length, 4),
        }
    elif kind == "bend":
        kp = [int(model.body(n).id) for n in info.keypoint_bodies]
        cands = []
        for b_id in kp:
            below = [c for c in kp if c != b_id and _descends(model, c, b_id)]
            axis = _foreign_axis(_hinge_axes(model, b_id), rng)
            if below and axis is not None:
                cands.append((b_id, axis))
        body, axis = cands[int(rng.integers(len(cands)))]
        angle = float((0.25 + 0.65 * s) * rng.choice([-1.0, 1.0]))
        a, b = _span(rng, T, int(round(6 + 10 * s)))
        name = model.body(body).name
        for t, w in zip(range(a, b), _ramp(b - a), strict=True):
            ed[t].setdefault("body_rot", {})[name] = (axis, angle * w)
        detail = {"body": name, "axis": np.round(axis, 4).tolist(), "angle": round(angle, 4)}
    elif kind in ("jitter", "config_jump"):
        js = _joints(model, tuple(arm))
        adr = np.array([int(model.jnt_qposadr[j]) for j in js])
        if kind == "jitter":
            unit = np.array([SLIDE_PER_RAD if model.jnt_type[j] == slide else 1.0 for j in js])
            a, b = _span(rng, T, int(round(4 + 8 * s)))
            amp = 0.02 + 0.1 * s
            q[a:b, adr] += rng.normal(size=(b - a, len(js))) * amp * unit
            detail = {"joints": list(arm), "amplitude": round(amp, 4)}
        else:
            # The arm snaps part of the way towards the pose it has at the frame where its end effector
            # is farthest away, holds there and snaps back: a pose the arm really takes, so it stays in
            # view, reached without passing through the poses in between.
            a, b = _span(rng, T, int(round(2 + 4 * s)))
            ee = _body_path(model, q, info.ee_body)
            c = int(np.argmax(np.linalg.norm(ee - ee[a], axis=1)))
            frac = 0.4 + 0.6 * s
            q[a:b, adr] += frac * (q[c, adr] - q[a:b, adr])
            detail = {"joints": list(arm), "pose_of_frame": c, "fraction": round(frac, 4)}
    elif kind == "finger_pass":
        names = tuple(n for n, _ in fingers)
        js = _joints(model, names)
        a, b = _span(rng, T, int(round(6 + 8 * s)))
        past = []
        for j, (_, end) in zip(js, fingers, strict=True):
            lo, hi = model.jnt_range[j]
            extra = (0.006 + 0.024 * s) if model.jnt_type[j] == slide else (0.3 + 0.9 * s)
            target = lo - extra if end < 0 else hi + extra
            col = int(model.jnt_qposadr[j])
            q[a:b, col] += _ramp(b - a) * (target - q[a:b, col])
            past.append(round(float(extra), 4))
        detail = {"joints": list(names), "past_closed": past}
    else:
        raise ValueError(f"unknown kinematic failure {kind!r}")
    plan.src[a:b] = -1  # no frame of the window reproduces the faithful episode
    return a, b, detail


def _body_path(model: Any, qpos: np.ndarray, body: str) -> np.ndarray:
    """World position of ``body`` at every frame of ``qpos`` (forward kinematics only)."""
    import mujoco

    data = mujoco.MjData(model)
    bid = int(model.body(body).id)
    out = np.zeros((len(qpos), 3))
    for t, x in enumerate(qpos):
        data.qpos[:] = x
        mujoco.mj_kinematics(model, data)
        out[t] = data.xpos[bid]
    return out


def _descends(model: Any, body: int, ancestor: int) -> bool:
    b = int(model.body_parentid[body])
    while b > 0:
        if b == ancestor:
            return True
        b = int(model.body_parentid[b])
    return False
