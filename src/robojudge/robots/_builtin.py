"""Specs of the simulator suite's robots, on the model files that gymnasium-robotics ships.

The keypoints are those the simulator records in its state files (``keypoint_names``); the joints are
the robot's joints in model order, as the state files' ``joint_names``. Links follow one rule
(:func:`robojudge.robots.suggest_links`): a keypoint is joined to its nearest keypoint ancestor in the
kinematic tree when their distance cannot change. That leaves out the Fetch fingers (prismatic), the
ADROIT middle and ring fingers' proximal-to-distal pairs (their middle phalanx, with a joint, is not a
keypoint) and the little finger's base (on a metacarpal joint). tests/robots checks each list against
the rule.
"""

from __future__ import annotations

import importlib.util
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


def _robotics_assets() -> Path:
    # find_spec locates the package without running it (its import prints a notice and pulls in gymnasium).
    found = importlib.util.find_spec("gymnasium_robotics")
    if found is None or found.origin is None:
        raise RuntimeError("the built-in robots need gymnasium-robotics: pip install 'robojudge[sim]'")
    return Path(found.origin).parent / "envs" / "assets"


def _fetch() -> RobotSpec:
    return RobotSpec(
        name="fetch",
        model=_robotics_assets() / "fetch" / "pick_and_place.xml",
        keypoints=_FETCH_KEYPOINTS,
        links=_FETCH_LINKS,
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


BUILTIN_ROBOTS = {"fetch": _fetch, "adroit": _adroit}
"""Built-in robot name -> spec factory."""


def builtin_robot(name: str) -> RobotSpec:
    """The spec of one of the simulator's robots (``fetch``, ``adroit``), checked against its model.

    Raises:
        ValueError: unknown name. RuntimeError: gymnasium-robotics is not installed.
    """
    from robojudge.robots._model import check_against_model, load_model

    if name not in BUILTIN_ROBOTS:
        raise ValueError(f"unknown built-in robot {name!r}; known: {', '.join(sorted(BUILTIN_ROBOTS))}")
    spec = BUILTIN_ROBOTS[name]()
    return check_against_model(spec, load_model(spec, f"built-in robot {name!r}"), f"built-in robot {name!r}")
