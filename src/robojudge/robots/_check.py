"""Checking an episode's robot, joint-state and calibration files before a run reads them."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from robojudge.robots._camera import load_calibration, size_mismatch
from robojudge.robots._model import load_robot_spec
from robojudge.robots._spec import RobotSpecError
from robojudge.robots._states import frame_mismatch, load_joint_states


def check_episode_files(
    robot: str | Path | None,
    joint_states: str | Path | None,
    calibration: str | Path | None,
    views: Collection[str] | None = None,
    video_frames: int | None = None,
    view_sizes: Mapping[str, tuple[int, int]] | None = None,
    video_size: tuple[int, int] | None = None,
) -> list[tuple[str, str, str]]:
    """``(field, message, severity)`` for each of the files that cannot be used as forward kinematics
    reads it (severity ``"error"``), or that deserves a look (``"warning"``).

    The robot spec must load with its model; the joint states must hold every joint of the spec (they
    are only read when the spec loads, since the spec says which joints to look for) and, given
    ``video_frames`` (the frame count the item's video declares), one row per frame of it; the
    calibration must load (without views: exactly one camera, for the video). A camera of a calibration
    that names none of the item's ``views`` is a warning: one rig file serves every episode, also one
    whose recording lacks a view, and nothing reads that camera for this item. Given the frame size of
    each view (``view_sizes``, ``(width, height)`` by name) or of the video of an item without views
    (``video_size``), a camera must be for frames of that aspect ratio (:func:`size_mismatch`: a crop or
    padding is another framing, which scaling ``K`` does not undo).
    """
    out: list[tuple[str, str, str]] = []
    spec = None
    if robot is not None:
        try:
            spec = load_robot_spec(robot)
        except RobotSpecError as e:
            out.append(("robot", str(e), "error"))
    if joint_states is not None and spec is not None:
        try:
            q = load_joint_states(joint_states, spec.joints)
        except ValueError as e:
            out.append(("joint_states", str(e), "error"))
        else:
            wrong = frame_mismatch(len(q), video_frames)
            if wrong is not None:
                out.append(("joint_states", f"{joint_states}: {wrong}", "error"))
    if calibration is not None:
        try:
            cams = load_calibration(calibration)
        except ValueError as e:
            out.append(("calibration", str(e), "error"))
        else:
            if views:
                extra = [v for v in cams if v not in views]
                if extra:
                    out.append(("calibration", f"{calibration}: camera(s) {extra} of no view of the item "
                                f"(its views: {sorted(views)}); not read for this item", "warning"))
                sizes = {v: size for v, size in (view_sizes or {}).items() if v in cams}
            elif len(cams) != 1:
                out.append(("calibration", f"an item without views needs one camera (for its video); found "
                            f"{len(cams)}", "error"))
                sizes = {}
            else:
                sizes = {next(iter(cams)): video_size} if video_size is not None else {}
            for v, (w, h) in sizes.items():
                why = size_mismatch(cams[v], w, h, v)
                if why is not None:
                    out.append(("calibration", f"{calibration}: {why}", "error"))
    return out
