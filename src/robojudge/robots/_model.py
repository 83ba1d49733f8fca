"""Loading a spec's model file (MJCF with MuJoCo, URDF with yourdfpy) and checking the spec against it.

Loaded models are cached by path, modification time and size, so forward kinematics over many videos
parses each file once. Both libraries are imported inside the functions that need them (the ``sim``
extra); the rest of robojudge does not pay for them.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.robots._spec import RobotSpec, RobotSpecError


@dataclass(frozen=True)
class UrdfJoint:
    """One URDF joint, prepared for vectorised forward kinematics."""

    name: str
    kind: str  # revolute, continuous, prismatic, fixed, floating, planar
    parent: str
    child: str
    origin: np.ndarray  # (4, 4) child frame at q = 0, in the parent link's frame
    axis: np.ndarray  # (3,) unit axis in the joint frame
    mimic: tuple[str, float, float] | None  # (source joint, multiplier, offset)


@dataclass(frozen=True)
class LoadedModel:
    """What forward kinematics and spec checks need from a model file.

    Attributes:
        format: ``"mjcf"`` or ``"urdf"``.
        bodies: Names that may be keypoints (MJCF bodies, URDF links), in model order.
        joints: Movable 1-DoF joints that joint states may set, in model order (URDF mimic joints
            are left out: they follow their source joint).
        limits: Position limits of the limited joints among ``joints``.
        handle: The ``mujoco.MjModel``, or the URDF joints in an order where parents come first.
        parents: Each body's/link's parent in the kinematic tree (the root is left out).
        base: The URDF root link (``""`` for MJCF).
    """

    format: str
    bodies: tuple[str, ...]
    joints: tuple[str, ...]
    limits: dict[str, tuple[float, float]]
    handle: Any
    parents: dict[str, str]
    base: str = ""
    urdf_joints: tuple[UrdfJoint, ...] = field(default_factory=tuple)


def _load_mjcf(path: str) -> LoadedModel:
    import mujoco

    m = mujoco.MjModel.from_xml_path(path)
    movable = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    bodies = tuple(m.body(i).name for i in range(1, m.nbody))
    joints, limits = [], {}
    for j in range(m.njnt):
        if int(m.jnt_type[j]) in movable:
            name = m.joint(j).name
            joints.append(name)
            if m.jnt_limited[j]:
                limits[name] = (float(m.jnt_range[j, 0]), float(m.jnt_range[j, 1]))
    parents = {m.body(i).name: m.body(int(m.body_parentid[i])).name for i in range(1, m.nbody)}
    return LoadedModel("mjcf", bodies, tuple(joints), limits, m, parents)


def _load_urdf(path: str) -> LoadedModel:
    import yourdfpy

    urdf = yourdfpy.URDF.load(
        path, build_scene_graph=False, build_collision_scene_graph=False, load_meshes=False
    )
    robot = urdf.robot
    by_parent: dict[str, list[Any]] = {}
    for j in robot.joints:
        by_parent.setdefault(j.parent, []).append(j)
    # yourdfpy finds the root only when it builds a scene graph; the root is the link no joint moves.
    children = {j.child for j in robot.joints}
    roots = [link.name for link in robot.links if link.name not in children]
    if len(roots) != 1:
        raise ValueError(
            f"a URDF needs exactly one root link (a link that is no joint's child); found {roots}"
        )
    base = roots[0]
    ordered: list[UrdfJoint] = []
    stack = [base]
    while stack:  # parents before children, so one pass composes every link frame
        link = stack.pop()
        for j in by_parent.get(link, []):
            axis = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), float)
            origin = np.eye(4) if j.origin is None else np.asarray(j.origin, float)
            mimic = None
            if j.mimic is not None:  # URDF defaults: multiplier 1, offset 0 (an explicit 0 stays 0)
                mult, off = j.mimic.multiplier, j.mimic.offset
                mimic = (
                    j.mimic.joint,
                    1.0 if mult is None else float(mult),
                    0.0 if off is None else float(off),
                )
            ordered.append(
                UrdfJoint(j.name, j.type, j.parent, j.child, origin, axis / np.linalg.norm(axis), mimic)
            )
            stack.append(j.child)
    joints, limits = [], {}
    for j in robot.joints:
        if j.type in ("revolute", "continuous", "prismatic") and j.mimic is None:
            joints.append(j.name)
            lim = j.limit
            if j.type != "continuous" and lim is not None and lim.lower is not None and lim.upper is not None:
                limits[j.name] = (float(lim.lower), float(lim.upper))
    bodies = tuple(link.name for link in robot.links)
    parents = {j.child: j.parent for j in robot.joints}
    return LoadedModel("urdf", bodies, tuple(joints), limits, None, parents, base, tuple(ordered))


@lru_cache(maxsize=16)
def _load_cached(path: str, fmt: str, stamp: tuple[int, ...]) -> LoadedModel:
    return _load_mjcf(path) if fmt == "mjcf" else _load_urdf(path)


def load_model(spec: RobotSpec, source: str = "") -> LoadedModel:
    """The spec's model, parsed once per file version.

    Raises:
        RobotSpecError: the file is missing or the library cannot load it.
    """
    where = source or spec.name
    path = spec.model
    try:
        st = os.stat(path)
    except OSError:
        raise RobotSpecError(f"{where}: field model: file not found: {path}") from None
    try:
        # ctime and inode too: a file copied in with the same size and time (cp -p) is another model
        return _load_cached(str(path), spec.format, (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino))
    except ImportError as e:
        extra = "mujoco" if spec.format == "mjcf" else "yourdfpy"
        raise RobotSpecError(
            f"{where}: field model: reading {spec.format.upper()} needs {extra}"
            f" (pip install '.[sim]' in a robojudge checkout): {e}"
        ) from None
    except Exception as e:  # noqa: BLE001 - either library raises its own types for a bad file
        raise RobotSpecError(f"{where}: field model: cannot load {path}: {e}") from None


def _unknown(where: str, field: str, name: str, kind: str, known: tuple[str, ...]) -> RobotSpecError:
    guess = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
    return RobotSpecError(f"{where}: field {field}: {name!r} is not a {kind} of the model{hint}")


def check_against_model(spec: RobotSpec, model: LoadedModel, source: str = "") -> RobotSpec:
    """The spec with its keypoints and joints checked against the model and its defaults filled in.

    An empty ``joints`` becomes every movable joint of the model; a joint without ``limits`` takes the
    model's limit when it has one.

    Raises:
        RobotSpecError: a keypoint is not a body/link, or a joint is not a movable 1-DoF joint.
    """
    where = source or spec.name
    kind = "body" if model.format == "mjcf" else "link"
    bodies = set(model.bodies)
    for i, k in enumerate(spec.keypoints):
        if k not in bodies:
            raise _unknown(where, f"keypoints[{i}]", k, kind, model.bodies)
    movable = set(model.joints)
    for i, j in enumerate(spec.joints):
        if j not in movable:
            raise _unknown(where, f"joints[{i}]", j, "movable 1-DoF joint", model.joints)
    joints = list(spec.joints) or list(model.joints)
    for name in spec.limits:
        if name not in joints:
            raise _unknown(where, f"limits.{name}", name, "movable 1-DoF joint", model.joints)
    limits = {j: model.limits[j] for j in joints if j in model.limits}
    limits.update(spec.limits)
    return spec.model_copy(update={"joints": joints, "limits": limits})


def load_robot_spec(path: str | Path) -> RobotSpec:
    """Read a robot spec file (TOML), load its model and check the spec against it.

    Returns:
        The spec with ``model`` absolute, ``joints`` filled in when the file left them out, and the
        model's limits added for joints the file gives none.

    Raises:
        RobotSpecError: naming the file and the field, for a missing file, bad TOML, a bad field, a
            missing or unloadable model, a keypoint that is no body/link, an unknown joint.
    """
    from robojudge.robots._spec import read_robot_spec

    spec = read_robot_spec(path)
    return check_against_model(spec, load_model(spec, str(path)), str(path))
