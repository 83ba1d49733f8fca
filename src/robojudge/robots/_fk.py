"""Forward kinematics: joint positions over time -> world positions of the keypoint bodies/links.

MJCF goes through MuJoCo's own ``mj_kinematics`` on one fresh ``MjData`` per call (joints the spec does
not list stay at the model's ``qpos0``), so the result is what the simulator computes. URDF is composed
here from yourdfpy's parsed joints, vectorised over time, because yourdfpy's scene graph updates one
configuration at a time; the tests check it against yourdfpy's own transforms.
"""

from __future__ import annotations

import numpy as np

from robojudge.robots._model import LoadedModel, check_against_model, load_model
from robojudge.robots._spec import RobotSpec


def _as_positions(spec: RobotSpec, joint_positions: object) -> np.ndarray:
    q = np.asarray(joint_positions, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] != len(spec.joints):
        raise ValueError(
            f"{spec.name}: joint positions must be (frames, {len(spec.joints)}) in the order of the "
            f"spec's joints {spec.joints}; got shape {q.shape}"
        )
    if not np.all(np.isfinite(q)):
        bad = np.argwhere(~np.isfinite(q))[0]
        raise ValueError(
            f"{spec.name}: joint position of {spec.joints[bad[1]]!r} at frame {bad[0]} is not finite"
        )
    return q


def _fk_mjcf(spec: RobotSpec, model: LoadedModel, q: np.ndarray) -> np.ndarray:
    import mujoco

    m = model.handle
    d = mujoco.MjData(m)
    adr = np.array([m.jnt_qposadr[m.joint(n).id] for n in spec.joints], dtype=int)
    ids = np.array([m.body(n).id for n in spec.keypoints], dtype=int)
    out = np.empty((len(q), len(ids), 3))
    for t in range(len(q)):
        d.qpos[adr] = q[t]
        mujoco.mj_kinematics(m, d)
        out[t] = d.xpos[ids]
    return out


def _motion(kind: str, axis: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(T, 4, 4) joint motion: rotation about or translation along the unit ``axis``."""
    out = np.tile(np.eye(4), (len(q), 1, 1))
    if kind == "prismatic":
        out[:, :3, 3] = q[:, None] * axis
    elif kind in ("revolute", "continuous"):
        x, y, z = axis
        k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        s, c = np.sin(q)[:, None, None], np.cos(q)[:, None, None]
        out[:, :3, :3] = c * np.eye(3) + s * k + (1 - c) * np.outer(axis, axis)
    return out


def _fk_urdf(spec: RobotSpec, model: LoadedModel, q: np.ndarray) -> np.ndarray:
    T = len(q)
    col = {n: i for i, n in enumerate(spec.joints)}
    zero = np.zeros(T)
    frames: dict[str, np.ndarray] = {model.base: np.tile(np.eye(4), (T, 1, 1))}
    for j in model.urdf_joints:
        if j.mimic is not None:
            src, mult, off = j.mimic
            qj = (q[:, col[src]] if src in col else zero) * mult + off
        else:
            qj = q[:, col[j.name]] if j.name in col else zero
        frames[j.child] = frames[j.parent] @ j.origin @ _motion(j.kind, j.axis, qj)
    return np.stack([frames[k][:, :3, 3] for k in spec.keypoints], axis=1)


def forward_kinematics(spec: RobotSpec, joint_positions: object) -> np.ndarray:
    """World positions of the spec's keypoints for each frame of joint positions.

    Args:
        spec: The robot (from :func:`load_robot_spec` or :func:`builtin_robot`).
        joint_positions: ``(T, J)`` positions in the order of ``spec.joints`` (radians, metres).

    Returns:
        ``(T, K, 3)`` float64 world positions of the keypoint body (MJCF) or link (URDF) frames.

    Raises:
        ValueError: wrong shape or non-finite values. RobotSpecError: the spec does not fit its model.
    """
    model = load_model(spec)
    spec = check_against_model(spec, model)
    q = _as_positions(spec, joint_positions)
    if model.format == "mjcf":
        return _fk_mjcf(spec, model, q)
    return _fk_urdf(spec, model, q)


def link_lengths(points: np.ndarray, links: list[tuple[int, int]]) -> np.ndarray:
    """``(..., L)`` distances between the keypoints of each link in ``(..., K, D)`` points."""
    p = np.asarray(points, dtype=np.float64)
    if not links:
        return np.zeros((*p.shape[:-2], 0))
    a, b = np.asarray(links).T
    out: np.ndarray = np.linalg.norm(p[..., a, :] - p[..., b, :], axis=-1)
    return out


def sample_configurations(spec: RobotSpec, n: int, seed: int = 0) -> np.ndarray:
    """``(n, J)`` joint positions drawn uniformly within the limits (unlimited joints: -pi..pi)."""
    rng = np.random.default_rng(seed)
    lo = np.array([spec.limits.get(j, (-np.pi, np.pi))[0] for j in spec.joints])
    hi = np.array([spec.limits.get(j, (-np.pi, np.pi))[1] for j in spec.joints])
    out: np.ndarray = lo + (hi - lo) * rng.random((n, len(spec.joints)))
    return out


def rigid_pairs(
    spec: RobotSpec, samples: int = 64, seed: int = 0, tol: float = 1e-9
) -> list[tuple[str, str]]:
    """Every keypoint pair whose distance stays within ``tol`` (metres) over random configurations.

    A check for hand-written ``links``: a pair is rigid when no joint moves one keypoint relative to
    the other (the joints between them turn about axes through both, or there are none).
    """
    spec = check_against_model(spec, load_model(spec))
    pts = forward_kinematics(spec, sample_configurations(spec, samples, seed))
    k = len(spec.keypoints)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    lengths = link_lengths(pts, pairs)
    spread = lengths.max(axis=0) - lengths.min(axis=0)
    return [
        (spec.keypoints[i], spec.keypoints[j]) for (i, j), s in zip(pairs, spread, strict=True) if s <= tol
    ]


def chain_pairs(spec: RobotSpec) -> list[tuple[str, str]]:
    """Each keypoint paired with its nearest keypoint ancestor in the model's kinematic tree."""
    model = load_model(spec)
    kp = set(spec.keypoints)
    out = []
    for k in spec.keypoints:
        p = model.parents.get(k)
        while p is not None and p not in kp:
            p = model.parents.get(p)
        if p is not None:
            out.append((p, k))
    return out


def suggest_links(
    spec: RobotSpec, samples: int = 64, seed: int = 0, tol: float = 1e-9
) -> list[tuple[str, str]]:
    """The rigid links of a spec by the rule the built-in robots use.

    A link joins a keypoint to its nearest keypoint ancestor in the kinematic tree (:func:`chain_pairs`)
    when the two stay at a fixed distance over random configurations (:func:`rigid_pairs`): consecutive
    bodies of the chain with nothing between them that stretches or bends the segment.
    """
    rigid = set(rigid_pairs(spec, samples, seed, tol))
    return [(a, b) for a, b in chain_pairs(spec) if (a, b) in rigid or (b, a) in rigid]
