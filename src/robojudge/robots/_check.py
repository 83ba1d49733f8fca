"""Checking an episode's robot, joint-state and calibration files before a run reads them."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from robojudge.robots._camera import load_calibration
from robojudge.robots._model import load_robot_spec
from robojudge.robots._spec import RobotSpecError
from robojudge.robots._states import frame_mismatch, load_joint_states


def check_episode_files(
    robot: str | Path | None,
    joint_states: str | Path | None,
    calibration: str | Path | None,
    views: Collection[str] | None = None,
    video_frames: int | None = None,
) -> list[tuple[str, str]]:
    """``(field, message)`` for each of the files that cannot be used as forward kinematics reads it.

    The robot spec must load with its model; the joint states must hold every joint of the spec (they
    are only read when the spec loads, since the spec says which joints to look for) and, given
    ``video_frames`` (the frame count the item's video declares), one row per frame of it; the
    calibration must load, and name only the item's ``views`` (without views: exactly one camera, for
    the video).
    """
    out: list[tuple[str, str]] = []
    spec = None
    if robot is not None:
        try:
            spec = load_robot_spec(robot)
        except RobotSpecError as e:
            out.append(("robot", str(e)))
    if joint_states is not None and spec is not None:
        try:
            q = load_joint_states(joint_states, spec.joints)
        except ValueError as e:
            out.append(("joint_states", str(e)))
        else:
            wrong = frame_mismatch(len(q), video_frames)
            if wrong is not None:
                out.append(("joint_states", f"{joint_states}: {wrong}"))
    if calibration is not None:
        try:
            cams = load_calibration(calibration)
        except ValueError as e:
            out.append(("calibration", str(e)))
        else:
            if views:
                extra = [v for v in cams if v not in views]
                if extra:
                    out.append(
                        ("calibration", f"camera {extra[0]!r} is not one of the item's views {sorted(views)}")
                    )
            elif len(cams) != 1:
                out.append(
                    (
                        "calibration",
                        f"an item without views needs one camera (for its video); found {len(cams)}",
                    )
                )
    return out
