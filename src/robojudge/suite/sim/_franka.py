"""The Franka Panda tabletop scene: the Franka Kitchen arm on a plain table, a small env, and a policy.

gymnasium-robotics ships the Panda of its Franka Kitchen env as include files (``kitchen_franka/
franka_assets``: defaults and meshes, the kinematic chain, the position actuators). The kitchen itself
is left out: :func:`load_spec` wraps the arm's files in a scene of our own (a table the arm stands on, a
floor, a light, a cube) and loads it with ``mujoco.MjSpec``. :class:`FrankaEnv` steps the physics,
one recorded frame per ``STEPS_PER_FRAME`` physics steps (0.1 s).

Changes to the robot, stated plainly: the arm is gravity-compensated; the joint damping of the kitchen
model (100 on joints 1-4, 10 on joints 5-7) is lowered to 30 and 3, because with the stock damping and
force limits the joints cannot turn faster than ~0.9 rad/s and the arm lags its targets by 20-30 cm in a
4.8 s episode; the base's collision with the table it stands on is excluded.

The policy is the suite's waypoint program (above the cube, down, close, lift, above the goal, down,
open, up; see ``_policy._program``), each waypoint reached by a joint-space move between inverse
kinematics solutions with the hand pointing straight down.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.suite.sim._ik import ramp_controls

ARM_JOINTS = tuple(f"robot:panda0_joint{i}" for i in range(1, 8))
FINGER_JOINTS = ("robot:panda0_finger_joint1", "robot:panda0_finger_joint2")
FINGER_OPEN = 0.04  # m per finger slide (0 closed)
HAND = "panda0_link7"
GRASP_OFFSET = np.array([0.0, 0.0, 0.24])  # m in the hand link's frame: between the finger pads
HOME = (0.211, -0.499, -0.184, -2.427, -0.093, 0.363, 0.083)  # hand down, 35 cm above the table
STEPS_PER_FRAME = 50  # physics steps (0.002 s) per recorded frame: 0.1 s
DAMPING = (30.0, 3.0)  # joints 1-4, joints 5-7 (kitchen model: 100 and 10)
GRASP_Z = 0.008  # m: grasp this far above the cube's centre (keeps the fingertips off the table)
# Frames per move of the waypoint program: above, down, close, lift, over, down, open, up.
MOVE_FRAMES = (6, 4, 3, 4, 6, 4, 3, 4)


def franka_assets() -> Path:
    """Folder of the Franka Kitchen arm's include files, found without importing gymnasium-robotics."""
    found = importlib.util.find_spec("gymnasium_robotics")
    if found is None or found.origin is None:
        raise ImportError("the Franka scene needs gymnasium-robotics: pip install '.[sim]' in a robojudge "
                          "checkout")
    return Path(found.origin).parent / "envs" / "assets" / "kitchen_franka" / "franka_assets"


def scene_xml(root: Path) -> str:
    """The tabletop scene around the arm's include files (absolute paths, so it loads from a string)."""
    return f"""<mujoco model="panda_tabletop">
  <include file="{root}/assets.xml"/>
  <include file="{root}/actuator.xml"/>
  <asset>
    <material name="matte" specular="0.05" shininess="0.1"/>
  </asset>
  <worldbody>
    <light name="key" directional="true" diffuse="0.4 0.4 0.4" pos="0.5 -0.5 2" dir="0 0.3 -1"/>
    <light name="fill" directional="true" diffuse="0.2 0.2 0.2" pos="-0.5 0.5 2" dir="0.3 -0.2 -1"/>
    <geom name="floor" type="plane" pos="0 0 -0.75" size="3 3 0.1" rgba="0.25 0.25 0.28 1"/>
    <body name="table" pos="0.35 0 -0.375">
      <geom name="table" type="box" size="0.75 0.6 0.375" material="matte" rgba="0.42 0.4 0.37 1"/>
    </body>
    <include file="{root}/chain.xml"/>
    <body name="cube" pos="0.5 0 0.025">
      <freejoint name="cube_joint"/>
      <geom name="cube" type="box" size="0.025 0.025 0.025" mass="0.1"/>
    </body>
  </worldbody>
</mujoco>"""


def load_spec() -> Any:
    """The scene's :class:`mujoco.MjSpec`, with the robot changes listed in the module doc."""
    import mujoco

    root = franka_assets()
    spec = mujoco.MjSpec.from_string(scene_xml(root))
    # Mesh paths come out relative to the include's folder, but the files live under meshes/.
    for mesh in spec.meshes:
        mesh.file = str(root / "meshes" / Path(mesh.file).relative_to(root))
    stack = [spec.body("panda0_link0")]
    while stack:
        body = stack.pop()
        body.gravcomp = 1.0
        stack.extend(body.bodies)
    spec.add_exclude(bodyname1="panda0_link0", bodyname2="table")
    for i, name in enumerate(ARM_JOINTS):
        spec.joint(name).damping = [DAMPING[0] if i < 4 else DAMPING[1], 0.0, 0.0]
    return spec


def down_frame() -> np.ndarray:
    """Hand orientation (columns: the hand link's axes in world axes): pointing down, fingers along x."""
    yaw = np.deg2rad(-45.0)
    c, s = np.cos(yaw), np.sin(yaw)
    out: np.ndarray = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.diag([1.0, -1.0, -1.0])
    return out


class FrankaEnv:
    """A minimal env: 8-d actions (seven joint targets in rad, gripper opening 0 closed .. 1 open).

    Within a frame the servo targets move linearly from the previous action to the new one.
    """

    def __init__(self, model: Any) -> None:
        import mujoco

        self.mj = mujoco
        self.model = model
        self.data = mujoco.MjData(model)
        self.action_space = type("Box", (), {"shape": (8,)})()
        self.arm = np.array([int(model.joint(j).qposadr[0]) for j in ARM_JOINTS])
        self.fingers = np.array([int(model.joint(j).qposadr[0]) for j in FINGER_JOINTS])
        self.last = home_action()

    def reset(self, seed: int | None = None) -> None:
        """Arm at the home pose, gripper open; the rest of the state as compiled."""
        self.mj.mj_resetData(self.model, self.data)
        self.data.qpos[self.arm] = HOME
        self.data.qpos[self.fingers] = FINGER_OPEN
        self.last = home_action()
        self.data.ctrl[:] = action_to_ctrl(self.last)
        self.mj.mj_forward(self.model, self.data)

    def step(self, action: np.ndarray) -> None:
        """Advance one frame (``STEPS_PER_FRAME`` physics steps) towards the action's targets."""
        a0, a1 = action_to_ctrl(self.last), action_to_ctrl(np.asarray(action, float))
        ramp_controls(self.mj, self.model, self.data, a0, a1, STEPS_PER_FRAME)
        self.last = np.asarray(action, float).copy()


def home_action() -> np.ndarray:
    """Arm at the home pose, gripper open."""
    out: np.ndarray = np.r_[HOME, 1.0]
    return out


def action_to_ctrl(action: np.ndarray) -> np.ndarray:
    """The 9 actuator targets (seven joints, two finger slides) of an 8-d action."""
    f = FINGER_OPEN * float(np.clip(action[7], 0.0, 1.0))
    out: np.ndarray = np.r_[action[:7], f, f]
    return out


def run_program(
    env: FrankaEnv,
    program: Sequence[tuple[np.ndarray, float]],
    record: Callable[[np.ndarray], None],
    n_frames: int,
) -> None:
    """Reach each waypoint (grasp point, closure 0 open .. 1 closed) in turn; record every frame."""
    import mujoco

    from robojudge.suite.sim._ik import min_jerk, solve_ik

    m, d = env.model, env.data
    scratch = mujoco.MjData(m)
    rot = down_frame()
    action = home_action()
    frames = 0
    for (point, closure), n in zip(program, MOVE_FRAMES, strict=False):
        start, goal = action.copy(), action.copy()
        scratch.qpos[:] = d.qpos
        target = np.asarray(point, float) + (0.0, 0.0, GRASP_Z)
        goal[:7] = solve_ik(m, scratch, ARM_JOINTS, HAND, GRASP_OFFSET, start[:7], target, rot)
        goal[7] = 1.0 - closure
        for f in min_jerk(n):
            if frames >= n_frames:
                return
            action = start + (goal - start) * f
            env.step(action)
            record(action)
            frames += 1
    while frames < n_frames:
        env.step(action)
        record(action)
        frames += 1
