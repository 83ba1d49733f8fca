"""One real episode's kinematics: its robot spec, joint states and calibration, read together."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.robots._camera import Camera, load_calibration
from robojudge.robots._fk import forward_kinematics
from robojudge.robots._model import load_robot_spec
from robojudge.robots._spec import RobotSpec
from robojudge.robots._states import load_joint_states


@dataclass(frozen=True)
class EpisodeKinematics:
    """Forward kinematics of one episode.

    Attributes:
        spec: The robot.
        joint_positions: ``(T, J)`` positions in ``spec.joints`` order, one row per video frame.
        keypoints_3d: ``(T, K, 3)`` world positions of ``spec.keypoints``.
        cameras: The calibrated views by name (empty without a calibration).
    """

    spec: RobotSpec
    joint_positions: np.ndarray
    keypoints_3d: np.ndarray
    cameras: dict[str, Camera] = field(default_factory=dict)

    def keypoints_2d(self, view: str, depth: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """``(T, K, 2)`` pixels and ``(T, K)`` visibility of the keypoints in one calibrated view.

        Raises:
            KeyError: the calibration has no such view.
        """
        if view not in self.cameras:
            raise KeyError(f"no camera {view!r} in the calibration (views: {sorted(self.cameras)})")
        return self.cameras[view].project(self.keypoints_3d, depth=depth)


def episode_kinematics(
    robot: str | Path | RobotSpec, joint_states: str | Path, calibration: str | Path | None = None
) -> EpisodeKinematics:
    """Read an episode's robot spec, joint states and calibration (a manifest item's ``robot``,
    ``joint_states`` and ``calibration``) and run forward kinematics.

    Raises:
        RobotSpecError: the spec or its model. ValueError: the joint states or the calibration, each
            naming its file.
    """
    spec = robot if isinstance(robot, RobotSpec) else load_robot_spec(robot)
    q = load_joint_states(joint_states, spec.joints)
    cams = load_calibration(calibration) if calibration is not None else {}
    return EpisodeKinematics(spec, q, forward_kinematics(spec, q), cams)
