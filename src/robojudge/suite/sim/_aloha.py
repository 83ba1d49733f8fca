"""The bimanual ALOHA scene: two ViperX 300s arms from gym-aloha's MJCF, a small env, and a relay policy.

gym-aloha ships its MuJoCo scenes as package data; its Python env modules need dm_control (and pin an
older MuJoCo), so only the XML and meshes are used here, loaded with the project's MuJoCo. The env is
ours: :class:`AlohaEnv` steps the physics with the scene's position servos, one recorded frame per
``STEPS_PER_FRAME`` physics steps (0.1 s, the suite's 10 fps).

The task is a relay through the middle of the table: the right arm picks the cube up on the right half
and puts it down at the table's centre line, then the left arm picks it up there and places it on the
goal on the left half. Both arms grasp from above with the gripper tilted down, so neither needs to
reach past the other. Arm motions are joint-space interpolations between inverse-kinematics solutions
(damped least squares on MuJoCo's body Jacobian), solved when each move starts, from where the cube
actually is then.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.suite.sim._ik import ramp_controls

ARMS = ("vx300s_left", "vx300s_right")
ARM_JOINTS = ("waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate")
HOME = (0.0, -0.96, 1.16, 0.0, -0.3, 0.0)  # gym-aloha's start pose of each arm
FINGER_OPEN, FINGER_CLOSED = 0.057, 0.021  # left finger slide range; the right finger mirrors it
GRASP_OFFSET = 0.125  # m along the gripper link's x axis: between the finger pads
PITCH = np.deg2rad(65.0)  # the gripper points this far below the horizontal when grasping
STEPS_PER_FRAME = 50  # physics steps (0.002 s) per recorded frame: 0.1 s
MIDDLE_X = 0.0  # the relay point lies on the table's centre line (x = 0)


def aloha_assets() -> Path:
    """Folder of gym-aloha's MJCF files and meshes, found without importing the package."""
    spec = importlib.util.find_spec("gym_aloha")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the bimanual scene needs gym-aloha's scene files: pip install --no-deps gym-aloha")
    return Path(next(iter(spec.submodule_search_locations))) / "assets"


def prepare_spec(spec: Any) -> None:
    """ALOHA-specific edits of the loaded spec, made before the common scene extensions."""
    # The stock keyframe lists the stock qpos only; the added free bodies would make it the wrong size.
    for key in list(spec.keys):
        spec.delete(key)
    # The near plane is znear x the model's extent, and the parked spare bodies make the extent ~20 m:
    # gym-aloha's znear (0.1) would clip everything within 2 m of the cameras.
    spec.visual.map.znear = 0.01
    # gym-aloha's own cameras target bodies; ours are the calibrated rig, so drop theirs.
    for cam in list(spec.cameras):
        spec.delete(cam)


def joint_adr(model: Any, arm: str) -> np.ndarray:
    """qpos addresses of an arm's six joints."""
    return np.array([int(model.joint(f"{arm}/{j}").qposadr[0]) for j in ARM_JOINTS])


def finger_adr(model: Any, arm: str) -> np.ndarray:
    """qpos addresses of an arm's two finger slides (left, right)."""
    return np.array([int(model.joint(f"{arm}/{f}").qposadr[0]) for f in ("left_finger", "right_finger")])


class AlohaEnv:
    """A minimal env over the extended model: ``reset`` and ``step`` with 14-d joint-space actions.

    An action holds, per arm (left, then right), six joint targets (rad) and a gripper opening in
    [0, 1] (0 closed, 1 open), as in ALOHA's joint-space datasets. Within a frame the servo targets move
    linearly from the previous action to the new one, so the motion stays smooth at 10 fps.
    """

    def __init__(self, model: Any) -> None:
        import mujoco

        self.mj = mujoco
        self.model = model
        self.data = mujoco.MjData(model)
        self.action_space = type("Box", (), {"shape": (14,)})()
        self.adr = {a: joint_adr(model, a) for a in ARMS}
        self.fingers = {a: finger_adr(model, a) for a in ARMS}
        self.last = home_action()

    def reset(self, seed: int | None = None) -> None:
        """Arms at the home pose with open grippers; the rest of the state as compiled."""
        self.mj.mj_resetData(self.model, self.data)
        for arm in ARMS:
            self.data.qpos[self.adr[arm]] = HOME
            self.data.qpos[self.fingers[arm]] = (FINGER_OPEN, -FINGER_OPEN)
        self.last = home_action()
        self.data.ctrl[:] = action_to_ctrl(self.last)
        self.mj.mj_forward(self.model, self.data)

    def step(self, action: np.ndarray) -> None:
        """Advance one frame (``STEPS_PER_FRAME`` physics steps) towards the action's targets."""
        a0, a1 = action_to_ctrl(self.last), action_to_ctrl(np.asarray(action, float))
        ramp_controls(self.mj, self.model, self.data, a0, a1, STEPS_PER_FRAME)
        self.last = np.asarray(action, float).copy()


def home_action() -> np.ndarray:
    """Both arms at the home pose, grippers open."""
    out: np.ndarray = np.r_[HOME, 1.0, HOME, 1.0]
    return out


def action_to_ctrl(action: np.ndarray) -> np.ndarray:
    """The 16 actuator targets of a 14-d action (actuators: left arm and fingers, then right)."""
    out = []
    for k in range(2):
        a = action[7 * k : 7 * k + 7]
        f = FINGER_CLOSED + (FINGER_OPEN - FINGER_CLOSED) * float(np.clip(a[6], 0.0, 1.0))
        out.extend([*a[:6], f, -f])
    return np.asarray(out)


def grasp_frame(arm_base: np.ndarray, target: np.ndarray, pitch: float = PITCH) -> np.ndarray:
    """Gripper link orientation (columns x, y, z in world axes) for a tilted top grasp at ``target``.

    x (the pointing axis) leans from the arm's base towards the target and ``pitch`` below the
    horizontal; y (the fingers' closing axis) is horizontal.
    """
    h = np.r_[(target - arm_base)[:2], 0.0]
    h /= max(float(np.linalg.norm(h)), 1e-9)
    x = np.cos(pitch) * h + np.sin(pitch) * np.array([0.0, 0.0, -1.0])
    y = np.cross([0.0, 0.0, 1.0], x)
    y /= np.linalg.norm(y)
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=1)


def solve_ik(
    model: Any, scratch: Any, arm: str, q0: np.ndarray, pos: np.ndarray, rot: np.ndarray, iters: int = 60
) -> np.ndarray:
    """Six joint angles that put the arm's grasp point at ``pos`` with gripper orientation ``rot``."""
    from robojudge.suite.sim._ik import solve_ik as ik

    joints = [f"{arm}/{j}" for j in ARM_JOINTS]
    offset = np.array([GRASP_OFFSET, 0.0, 0.0])
    return ik(model, scratch, joints, f"{arm}/gripper_link", offset, q0, pos, rot, iters)


def grasp_point(model: Any, data: Any, arm: str) -> np.ndarray:
    """World position of an arm's grasp point (between the finger pads)."""
    body = model.body(f"{arm}/gripper_link").id
    out: np.ndarray = data.xpos[body] + data.xmat[body].reshape(3, 3)[:, 0] * GRASP_OFFSET
    return out


# Moves of one pick-and-place, in frames: above, down, close, lift, over, down, open, up.
PICK_FRAMES = (5, 3, 2, 3, 4, 3, 2, 2)
LIFT = 0.08  # m above the grasp point for approach and carry
GRASP_Z = 0.014  # m: grasp this far above the cube's centre (keeps the fingertips off the table)


def run_relay(
    env: AlohaEnv,
    body: str,
    middle: np.ndarray,
    place: np.ndarray | None,
    record: Callable[[np.ndarray], None],
    n_frames: int,
    wander: list[np.ndarray] | None = None,
) -> None:
    """Right arm: ``body`` to ``middle``; left arm: from there to ``place``; record each frame.

    With ``wander`` (the ``unrelated`` variant) both arms instead visit those points high above the
    table, grippers open, touching nothing.
    """
    import mujoco

    from robojudge.suite.sim._ik import min_jerk

    m, d = env.model, env.data
    scratch = mujoco.MjData(m)
    bases = {a: np.asarray(m.body(a).pos, float) for a in ARMS}
    bid = m.body(body).id
    action = home_action()
    frames = 0

    def move(
        arm: str, target: np.ndarray | None, grip: float, n: int, other: np.ndarray | None = None
    ) -> None:
        """Move ``arm`` to ``target`` (grasp point; None: stay) and its gripper to ``grip`` over n frames.

        ``other`` optionally moves the other arm's joints at the same time (to its given targets).
        """
        nonlocal action, frames
        k = ARMS.index(arm)
        start = action.copy()
        goal = action.copy()
        if target is not None:
            scratch.qpos[:] = d.qpos
            goal[7 * k : 7 * k + 6] = solve_ik(
                m, scratch, arm, start[7 * k : 7 * k + 6], target, grasp_frame(bases[arm], target)
            )
        goal[7 * k + 6] = grip
        if other is not None:
            j = 1 - k
            goal[7 * j : 7 * j + 6] = other
        for f in min_jerk(n):
            if frames >= n_frames:
                return
            action = start + (goal - start) * f
            env.step(action)
            record(action)
            frames += 1

    if wander is not None:
        for i, p in enumerate(wander):
            move(ARMS[1 - i % 2], p, 1.0, 5)
    else:
        above = np.array([0.0, 0.0, LIFT])
        up = np.array([0.0, 0.0, GRASP_Z])
        a, b, c, lift, over, down, rel, ret = PICK_FRAMES
        right, left = ARMS[1], ARMS[0]
        obj = d.xpos[bid].copy()
        move(right, obj + above, 1.0, a)
        move(right, d.xpos[bid] + up, 1.0, b)
        move(right, None, 0.0, c)
        move(right, d.xpos[bid] + above, 0.0, lift)
        move(right, middle + above, 0.0, over)
        move(right, middle + up, 0.0, down)
        move(right, None, 1.0, rel)
        # The right arm goes home while the left arm comes over the cube.
        move(left, d.xpos[bid] + above, 1.0, a, other=np.asarray(HOME))
        move(left, d.xpos[bid] + up, 1.0, b)
        move(left, None, 0.0, c)
        move(left, d.xpos[bid] + above, 0.0, lift)
        if place is not None:
            move(left, place + above, 0.0, over)
            move(left, place + up, 0.0, down)
            move(left, None, 1.0, rel)
            move(left, place + above, 1.0, ret)
    while frames < n_frames:
        env.step(action)
        record(action)
        frames += 1


# -- layouts and policy variants -------------------------------------------------------------------------
RIGHT_HALF = ((0.1, 0.38), (0.24, 0.64))  # (x, y) lo, hi: where the cube and the distractor start
LEFT_HALF = ((-0.24, 0.38), (-0.1, 0.64))  # where goals lie
REACH = ((-0.3, 0.3), (0.3, 0.78))  # (x, y) lo, hi: where a wrong target may lie (on the table, in reach)


def relay_point(start: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """Where the right arm leaves the cube: on the centre line, halfway between start and goal in y."""
    return np.array([MIDDLE_X, 0.5 * (start[1] + goal[1]), start[2]])


def wrong_target(start: np.ndarray, goal: np.ndarray, severity: float, sign: float) -> np.ndarray:
    """The ``wrong_target`` place: the relay-to-goal direction turned a quarter turn, (0.9 + 0.5 s) x as
    far."""
    mid = relay_point(start, goal)
    d = goal - mid
    out: np.ndarray = mid + sign * np.array([-d[1], d[0], 0.0]) * (0.9 + 0.5 * severity)
    return out


def sample_layout(rng: np.random.Generator, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Object, distractor and goal (centres at height ``z``) and the side of the wrong target's turn.

    The object and the distractor start on the right half, at least 10 cm apart and 10 cm from both
    relay points (the object's and, for ``wrong_object``, the distractor's); the goal is on the left half.
    """
    lo, hi = np.array(REACH[0]), np.array(REACH[1])
    for _ in range(1000):
        obj = np.r_[rng.uniform(*RIGHT_HALF), z]
        dis = np.r_[rng.uniform(*RIGHT_HALF), z]
        goal = np.r_[rng.uniform(*LEFT_HALF), z]
        if np.linalg.norm(obj - dis) < 0.1:
            continue
        points = (relay_point(obj, goal), relay_point(dis, goal))
        if any(min(np.linalg.norm(p - obj), np.linalg.norm(p - dis)) < 0.1 for p in points):
            continue
        for sign in (1.0, -1.0):
            wrong = [wrong_target(obj, goal, s, sign)[:2] for s in (0.0, 1.0)]
            if all(np.all(w >= lo) and np.all(w <= hi) for w in wrong):
                return obj, dis, goal, sign
    raise RuntimeError("could not place the bimanual scene")  # pragma: no cover


def run_variant(
    env: AlohaEnv,
    kind: str,
    obj: np.ndarray,
    dis: np.ndarray,
    goal: np.ndarray,
    wrong_sign: float,
    severity: float,
    rng: np.random.Generator,
    record: Callable[[np.ndarray], None],
    n_frames: int,
    object_body: str,
) -> None:
    """Run the relay (``faithful``) or one of its instruction-alignment variants.

    ``wrong_object`` relays the distractor to the goal; ``stop_short`` leaves the cube (1 - s) of the way
    from the relay point to the goal; ``wrong_target`` places it at :func:`wrong_target`; ``unrelated``
    moves both arms between random points 17 cm above the table, touching nothing.
    """
    body, start, place = object_body, obj, goal
    if kind == "wrong_object":
        body, start = "distractor", dis
    elif kind == "stop_short":
        mid = relay_point(obj, goal)
        place = mid + (1.0 - severity) * (goal - mid)
    elif kind == "wrong_target":
        place = wrong_target(obj, goal, severity, wrong_sign)
    wander = None
    if kind == "unrelated":
        halves = (RIGHT_HALF, LEFT_HALF)
        wander = [np.r_[rng.uniform(*halves[i % 2]), 0.17] for i in range(8)]
    run_relay(env, body, relay_point(start, goal), place, record, n_frames, wander)
