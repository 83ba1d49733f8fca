"""Robots: kinematic specs, forward kinematics and projection into calibrated views.

A :class:`RobotSpec` names a robot model (MJCF or URDF), the bodies whose positions are keypoints and
the keypoint pairs joined by rigid links. :func:`forward_kinematics` turns ``(T, J)`` joint positions
into ``(T, K, 3)`` world positions; :func:`project` turns those into pixels of a calibrated
:class:`Camera`, with visibility. MuJoCo (MJCF) and yourdfpy (URDF) come with the ``sim`` extra and are
imported only when a model is loaded. See docs/robots.md.
"""

from robojudge.robots._builtin import BUILTIN_ROBOTS, FINGER_PAIRS, SIM_KEYPOINTS, builtin_robot
from robojudge.robots._camera import (
    ASPECT_TOLERANCE,
    DEPTH_MARGIN,
    Camera,
    load_calibration,
    mujoco_camera,
    pixel_scale,
    project,
    same_picture,
    size_mismatch,
)
from robojudge.robots._check import check_episode_files
from robojudge.robots._episode import EpisodeKinematics, episode_kinematics
from robojudge.robots._fk import (
    chain_pairs,
    forward_kinematics,
    link_lengths,
    rigid_pairs,
    sample_configurations,
    suggest_links,
)
from robojudge.robots._model import check_against_model, load_model, load_robot_spec
from robojudge.robots._spec import RobotSpec, RobotSpecError, read_robot_spec
from robojudge.robots._states import frame_mismatch, load_joint_states
from robojudge.robots._summary import LinkInfo, RobotSummary, summarize_robot

__all__ = [
    "SIM_KEYPOINTS",
    "BUILTIN_ROBOTS",
    "FINGER_PAIRS",
    "ASPECT_TOLERANCE",
    "DEPTH_MARGIN",
    "Camera",
    "EpisodeKinematics",
    "LinkInfo",
    "RobotSpec",
    "RobotSpecError",
    "RobotSummary",
    "builtin_robot",
    "chain_pairs",
    "check_against_model",
    "check_episode_files",
    "episode_kinematics",
    "forward_kinematics",
    "link_lengths",
    "load_calibration",
    "load_joint_states",
    "load_model",
    "frame_mismatch",
    "load_robot_spec",
    "mujoco_camera",
    "pixel_scale",
    "same_picture",
    "project",
    "read_robot_spec",
    "rigid_pairs",
    "sample_configurations",
    "size_mismatch",
    "suggest_links",
    "summarize_robot",
]
