"""Specs of the simulator suite's robots, on the model files gymnasium-robotics and gym-aloha ship.

The keypoints are those the simulator records in its state files (``keypoint_names``); the joints are
the robot's joints in model order, as the state files' ``joint_names``. Links follow one rule
(:func:`robojudge.robots.suggest_links`): a keypoint is joined to its nearest keypoint ancestor in the
kinematic tree when their distance cannot change. That leaves out the Fetch fingers (prismatic), the
ADROIT middle and ring fingers' proximal-to-distal pairs (their middle phalanx, with a joint, is not a
keypoint), the little finger's base (on a metacarpal joint) and ALOHA's ViperX finger links (prismatic).
tests/robots checks each list against the rule.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from robojudge.robots._spec import RobotSpec

_FETCH_KEYPOINTS = [
    "robot0:shoulder_pan_link",
    "robot0:shoulder_lift_link",
    "robot0:upperarm_roll_link",
    "robot0:elbow_flex_link",
    "robot0:forearm_roll_link",
    "robot0:wrist_flex_link",
    "robot0:wrist_roll_link",
    "robot0:gripper_link",
    "robot0:r_gripper_finger_link",
    "robot0:l_gripper_finger_link",
]
_FETCH_JOINTS = [
    "robot0:slide0",
    "robot0:slide1",
    "robot0:slide2",
    "robot0:torso_lift_joint",
    "robot0:head_pan_joint",
    "robot0:head_tilt_joint",
    "robot0:shoulder_pan_joint",
    "robot0:shoulder_lift_joint",
    "robot0:upperarm_roll_joint",
    "robot0:elbow_flex_joint",
    "robot0:forearm_roll_joint",
    "robot0:wrist_flex_joint",
    "robot0:wrist_roll_joint",
    "robot0:r_gripper_finger_joint",
    "robot0:l_gripper_finger_joint",
]
_FETCH_LINKS = list(zip(_FETCH_KEYPOINTS[:7], _FETCH_KEYPOINTS[1:8], strict=True))

_ADROIT_KEYPOINTS = [
    "wrist",
    "palm",
    "ffproximal",
    "ffmiddle",
    "ffdistal",
    "mfproximal",
    "mfdistal",
    "rfproximal",
    "rfdistal",
    "lfproximal",
    "lfdistal",
    "thproximal",
    "thmiddle",
    "thdistal",
]
_ADROIT_JOINTS = [
    *("ARTx", "ARTy", "ARTz", "ARRx", "ARRy", "ARRz", "WRJ1", "WRJ0"),
    *(f"{f}J{i}" for f in ("FF", "MF", "RF") for i in (3, 2, 1, 0)),
    *(f"LFJ{i}" for i in (4, 3, 2, 1, 0)),
    *(f"THJ{i}" for i in (4, 3, 2, 1, 0)),
]
_ADROIT_LINKS = [
    ("wrist", "palm"),
    ("palm", "ffproximal"),
    ("ffproximal", "ffmiddle"),
    ("ffmiddle", "ffdistal"),
    ("palm", "mfproximal"),
    ("palm", "rfproximal"),
    ("palm", "thproximal"),
    ("thproximal", "thmiddle"),
    ("thmiddle", "thdistal"),
]

_VX_ARMS = ("vx300s_left", "vx300s_right")
_VX_LINKS = (
    "shoulder_link",
    "upper_arm_link",
    "upper_forearm_link",
    "lower_forearm_link",
    "wrist_link",
    "gripper_link",
    "left_finger_link",
    "right_finger_link",
)
_VX_JOINTS = (
    "waist",
    "shoulder",
    "elbow",
    "forearm_roll",
    "wrist_angle",
    "wrist_rotate",
    "left_finger",
    "right_finger",
)
_ALOHA_KEYPOINTS = [f"{arm}/{link}" for arm in _VX_ARMS for link in _VX_LINKS]
_ALOHA_JOINTS = [f"{arm}/{j}" for arm in _VX_ARMS for j in _VX_JOINTS]
# Each arm's chain from shoulder to gripper; the finger links slide.
_ALOHA_LINKS = [
    (f"{arm}/{a}", f"{arm}/{b}")
    for arm in _VX_ARMS
    for a, b in zip(_VX_LINKS[:5], _VX_LINKS[1:6], strict=True)
]


_PANDA_KEYPOINTS = [
    f"panda0_{b}" for b in ("link0", "link1", "link3", "link4", "link5", "link7", "leftfinger", "rightfinger")
]

#: Keypoint bodies of the simulator suite's scenes, by robot: the suite records these (its scenes take
#: them from here) and the built-in specs read them.
SIM_KEYPOINTS: dict[str, tuple[str, ...]] = {
    "fetch": tuple(_FETCH_KEYPOINTS),
    "adroit": tuple(_ADROIT_KEYPOINTS),
    "aloha": tuple(_ALOHA_KEYPOINTS),
    "franka": tuple(_PANDA_KEYPOINTS),
}
_PANDA_JOINTS = [
    *(f"robot:panda0_joint{i}" for i in range(1, 8)),
    "robot:panda0_finger_joint1",
    "robot:panda0_finger_joint2",
]
# The arm's chain; link 2 and 6 are not keypoints (their origins are those of links 1 and 5), and the
# joints between 1 and 3 and between 5 and 7 turn about axes through link 1's and link 5's origins.
_PANDA_LINKS = list(zip(_PANDA_KEYPOINTS[:5], _PANDA_KEYPOINTS[1:6], strict=True))


#: Finger pairs of the built-in robots, by name: ``(finger a, finger b, hand)`` keypoints, where the hand's
#: axis runs from the hand keypoint to the two fingers' midpoint (KIVA's finger check, robojudge's
#: addition). Two fingers on opposite slides swap sides when one passes through the other. ADROIT has
#: none: its planted finger failure curls fingers past their flexion limit, which no pair crossing shows.
FINGER_PAIRS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "fetch": (("robot0:l_gripper_finger_link", "robot0:r_gripper_finger_link", "robot0:wrist_roll_link"),),
    "aloha": tuple((f"{arm}/left_finger_link", f"{arm}/right_finger_link", f"{arm}/wrist_link")
                   for arm in ("vx300s_left", "vx300s_right")),
    "franka": (("panda0_leftfinger", "panda0_rightfinger", "panda0_link7"),),
}


def _package_folder(package: str, extra: str) -> Path:
    # find_spec locates a package without running it (gymnasium_robotics prints a notice on import and
    # pulls in gymnasium; gym_aloha's modules need dm_control).
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise RuntimeError(f"the built-in robots need {package}: {extra}")
    return Path(next(iter(found.submodule_search_locations)))


def _robotics_assets() -> Path:
    hint = "pip install '.[sim]' in a robojudge checkout"
    return _package_folder("gymnasium_robotics", hint) / "envs" / "assets"


def _fetch() -> RobotSpec:
    return RobotSpec(
        name="fetch",
        model=_robotics_assets() / "fetch" / "pick_and_place.xml",
        keypoints=_FETCH_KEYPOINTS,
        links=_FETCH_LINKS,
        fingers=list(FINGER_PAIRS["fetch"]),
        joints=_FETCH_JOINTS,
    )


def _adroit() -> RobotSpec:
    return RobotSpec(
        name="adroit",
        model=_robotics_assets() / "adroit_hand" / "adroit_relocate.xml",
        keypoints=_ADROIT_KEYPOINTS,
        links=_ADROIT_LINKS,
        joints=_ADROIT_JOINTS,
        # The simulator's relocate scene lets the arm reach 15 cm lower than the stock model does.
        limits={"ARTy": (-0.15, 0.2)},
    )


def _aloha() -> RobotSpec:
    # --no-deps: the wheel pins mujoco<3.9 and pulls dm-control, which its scene files do not need
    # (the Makefile installs it the same way, pinned).
    assets = _package_folder("gym_aloha", "pip install --no-deps gym-aloha==0.1.5 (its scene files; its "
                             "own requirements are not needed)") / "assets"
    return RobotSpec(
        name="aloha",
        model=assets / "bimanual_viperx_transfer_cube.xml",
        keypoints=_ALOHA_KEYPOINTS,
        links=_ALOHA_LINKS,
        fingers=list(FINGER_PAIRS["aloha"]),
        joints=_ALOHA_JOINTS,
    )


def _panda_model() -> Path:
    """An MJCF file of the Franka Kitchen arm alone, its base at the world origin.

    gymnasium-robotics ships the Panda as include files only (no model file of the arm by itself), so a
    small wrapper including them is written once to the cache folder; its name carries a hash of its
    text, which holds the installed package's path.
    """
    from robojudge import settings

    root = _robotics_assets() / "kitchen_franka" / "franka_assets"
    text = (
        '<mujoco model="franka_panda">\n'
        f'  <include file="{root}/assets.xml"/>\n'
        # assets.xml names its meshes relative to the kitchen model's folder; point at them directly.
        f'  <compiler meshdir="{root}/meshes"/>\n'
        f'  <worldbody><include file="{root}/chain.xml"/></worldbody>\n'
        "</mujoco>\n"
    )
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = settings.get().cache_dir / "robots" / f"franka_panda_{digest}.xml"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # atomic: a concurrent reader sees the whole file or none
    return path


def _franka() -> RobotSpec:
    return RobotSpec(
        name="franka",
        model=_panda_model(),
        keypoints=_PANDA_KEYPOINTS,
        links=_PANDA_LINKS,
        fingers=list(FINGER_PAIRS["franka"]),
        joints=_PANDA_JOINTS,
    )


BUILTIN_ROBOTS = {"fetch": _fetch, "adroit": _adroit, "aloha": _aloha, "franka": _franka}
"""Built-in robot name -> spec factory."""


def builtin_robot(name: str) -> RobotSpec:
    """The spec of a simulator robot (``fetch``, ``adroit``, ``aloha``, ``franka``), checked with its model.

    Raises:
        ValueError: unknown name. RuntimeError: the package with its model files is not installed.
    """
    from robojudge.robots._model import check_against_model, load_model

    if name not in BUILTIN_ROBOTS:
        raise ValueError(f"unknown built-in robot {name!r}; known: {', '.join(sorted(BUILTIN_ROBOTS))}")
    spec = BUILTIN_ROBOTS[name]()
    return check_against_model(spec, load_model(spec, f"built-in robot {name!r}"), f"built-in robot {name!r}")
