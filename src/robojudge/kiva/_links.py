"""Which keypoints a reader reads and which pairs of them are rigid links.

A robot is named by a spec file or a built-in name (:mod:`robojudge.robots`). The keypoints decide which
episodes of a manifest are training data (their state files must hold them all). The rigid links come
from the spec when it lists them; otherwise they are measured on the training episodes' 3D keypoints:
a pair is rigid when its 3D distance varies by less than :data:`RIGID_TOL` of its mean over every
frame, and is at least :data:`MIN_LENGTH` metres long (coincident origins say nothing about stretching).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The built-in robots' finger pairs (their specs declare them), re-exported for KIVA's finger check.
from robojudge.robots import FINGER_PAIRS as FINGER_PAIRS
from robojudge.robots import RobotSpec

RIGID_TOL = 0.005
MIN_LENGTH = 0.02



@dataclass(frozen=True)
class RobotKeypoints:
    """A robot's name, keypoints and rigid links (``None``: measure them on the training data)."""

    name: str
    keypoints: tuple[str, ...]
    links: tuple[tuple[str, str], ...] | None
    source: str
    fingers: tuple[tuple[str, str, str], ...] = ()
    # Links the spec lists that a joint lengthens (robojudge.robots.rigid_pairs): left out of ``links``.
    not_rigid: tuple[tuple[str, str], ...] = ()


def resolve_robot(robot: str) -> RobotKeypoints:
    """The keypoints and links of a built-in robot (``robojudge.robots.BUILTIN_ROBOTS``) or a spec file.

    A spec file is checked against its model when the model loads, as ``robojudge robots check`` does: a
    keypoint that is no body of the model is an error (with its "did you mean"), and a link a joint
    lengthens (one across a prismatic joint, say) is not rigid (``robojudge.robots.rigid_pairs``):
    measuring its rigidity would count the robot's own motion as a failure, so it is left out
    (``not_rigid``). When every listed link is left out, the links are measured on the training data.
    A spec whose model does not load (no such file, mujoco not installed) is used as written, since
    training needs only the names, and ``source`` says that its links were not checked.

    Raises:
        ValueError: Neither a built-in name nor an existing spec file (``RobotSpecError`` for a bad spec).
    """
    from robojudge.robots import BUILTIN_ROBOTS, builtin_robot, read_robot_spec

    not_rigid: tuple[tuple[str, str], ...] = ()
    if robot in BUILTIN_ROBOTS:
        spec = builtin_robot(robot)
        source = f"built-in robot {robot!r}"
    elif Path(robot).is_file():
        spec = read_robot_spec(robot)
        source = f"robot spec {robot}"
        not_rigid, unchecked = _not_rigid(robot, spec)
        if unchecked is not None:
            source += (f" (links not checked against the model: {unchecked}; `robojudge robots check "
                       f"{robot}` says more)")
    else:
        known = ", ".join(sorted(BUILTIN_ROBOTS))
        guess = difflib.get_close_matches(robot, list(BUILTIN_ROBOTS), n=1, cutoff=0.6)
        hint = f"; did you mean {guess[0]!r}?" if guess else ""
        raise ValueError(f"robot {robot!r}: not a built-in robot ({known}) nor an existing robot spec "
                         f"file{hint}")
    links = tuple((a, b) for a, b in spec.links if (a, b) not in not_rigid) or None
    if not_rigid:
        source += f" (left out, not rigid: {', '.join(f'{a} - {b}' for a, b in not_rigid)})"
    fingers = tuple((a, b, h) for a, b, h in spec.fingers)
    return RobotKeypoints(spec.name, tuple(spec.keypoints), links, source, fingers, not_rigid)


def _not_rigid(path: str, spec: RobotSpec) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The links of the spec at ``path`` whose length a joint changes, and why they could not be checked
    (``None``: checked). A model that does not load leaves the robot as its spec says.

    Raises:
        RobotSpecError: The model loads and the spec does not fit it (a keypoint that is no body).
    """
    from robojudge.robots import RobotSpecError, check_against_model, load_model, rigid_pairs

    try:
        model = load_model(spec, path)
    except RobotSpecError as exc:  # names the file and why: missing, unloadable, its library not installed
        return (), str(exc).split(": field model: ", 1)[-1]
    try:
        checked = check_against_model(spec, model, path)
    except RobotSpecError as exc:
        if ": field keypoints[" in str(exc):
            raise  # KIVA reads these: a keypoint that is no body is the spec's error, with its suggestion
        # A stale joint entry: KIVA reads no joints, so the robot is used with its keypoints as written.
        return (), str(exc).split(": field ", 1)[-1]
    if not spec.links:
        return (), None
    try:
        rigid = set(rigid_pairs(checked))
    except (ImportError, RuntimeError) as exc:
        return (), str(exc) or type(exc).__name__
    return tuple((a, b) for a, b in spec.links if (a, b) not in rigid and (b, a) not in rigid), None


def finger_indices(fingers: Sequence[Sequence[str]], keypoints: Sequence[str]) -> list[tuple[int, int, int]]:
    """Finger pairs as keypoint indices ``(a, b, hand)``; a triple with a name not among ``keypoints``
    (a reader trained on other keypoints) is left out."""
    pos = {k: i for i, k in enumerate(keypoints)}
    return [(pos[a], pos[b], pos[h]) for a, b, h in fingers if a in pos and b in pos and h in pos]


def measured_links(
    keypoints_3d: Sequence[np.ndarray], tol: float = RIGID_TOL, min_length: float = MIN_LENGTH
) -> list[tuple[int, int]]:
    """Index pairs whose 3D distance stays within ``tol`` of its mean over all frames of all episodes."""
    pts = np.concatenate([np.asarray(k, dtype=np.float64) for k in keypoints_3d])
    if pts.ndim != 3 or pts.shape[-1] != 3:
        raise ValueError(f"keypoints_3d must be (T, K, 3), got {pts.shape}")
    out = []
    for i in range(pts.shape[1]):
        for j in range(i + 1, pts.shape[1]):
            d = np.linalg.norm(pts[:, i] - pts[:, j], axis=-1)
            mean = float(d.mean())
            if mean >= min_length and float(np.abs(d - mean).max()) <= tol * mean:
                out.append((i, j))
    return out
