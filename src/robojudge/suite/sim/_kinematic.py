"""Planted kinematic failures: the robot itself moves in ways no real robot can.

Each function edits a :class:`~robojudge.suite.sim._render.Plan` in place (joint positions in
``qpos`` or per-frame model edits ``body_shift`` / ``body_rot``) and returns the frame window and a
small JSON-ready record of what was planted. The renderer draws the edited model, so the video, the
keypoints in the state file (positions of the bodies as rendered) and the joint positions all show it.

Which joints count as the arm and which as fingers comes from ``SceneInfo.extra`` (``arm_joints``;
``finger_close``: pairs of joint name and the end of its range that means "closed", -1 lower, +1
upper) and falls back to the tables below for the built-in scenes.

Given a :class:`MainView` (the unedited rollout's projected keypoints and their visibility in the main
view, from its state), ``link_stretch``, ``bend`` and ``joint_limit`` are planted where the main view
shows them: on links whose two ends are visible, and at least ``MIN_VIEW_FRAC`` of the image diagonal
apart, on every frame of the failure's window. Every record names the keypoints that show the failure
(``detail["keypoints"]``), so the segment verdicts can count only the frames the main view shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from robojudge.suite.sim._render import KEYPOINT_MARGIN

KINEMATIC_TYPES = ("link_stretch", "bend", "jitter", "config_jump", "finger_pass", "joint_limit")

_FETCH_ARM = tuple(
    f"robot0:{j}_joint"
    for j in (
        "shoulder_pan",
        "shoulder_lift",
        "upperarm_roll",
        "elbow_flex",
        "forearm_roll",
        "wrist_flex",
        "wrist_roll",
    )
)
_FETCH_FINGERS = (("robot0:l_gripper_finger_joint", -1), ("robot0:r_gripper_finger_joint", -1))
ARM_JOINTS: dict[str, tuple[str, ...]] = {
    "pick_and_place": _FETCH_ARM,
    "push": _FETCH_ARM,
    "slide": _FETCH_ARM,
    "relocate": ("ARTx", "ARTy", "ARTz", "ARRx", "ARRy", "ARRz", "WRJ1", "WRJ0"),
}
FINGER_CLOSE: dict[str, tuple[tuple[str, int], ...]] = {
    "pick_and_place": _FETCH_FINGERS,
    "push": _FETCH_FINGERS,
    "slide": _FETCH_FINGERS,
    # The three flexion joints of each long finger close towards their upper limit.
    "relocate": tuple((f"{f}J{i}", 1) for f in ("FF", "MF", "RF", "LF") for i in (2, 1, 0)),
}
SLIDE_PER_RAD = 0.08  # m of a slide joint's noise or jump per rad of a hinge's (ADROIT's arm slides)
MIN_LINK = 0.02  # m: shorter rigid links (finger pads on their knuckles) are never stretched
MIN_VIEW_FRAC = 0.03  # of the image diagonal: a shorter link in the main view is too small to read
EDGE_FRAC = 0.1  # of the image side: an edited pose must keep its keypoints this far inside the border


@dataclass(frozen=True)
class MainView:
    """The unedited rollout as the main view sees it: where to plant a failure so the video shows it.

    ``uv`` (T, K, 2) projected keypoints in pixels, ``visible`` (T, K) bool, which keypoints it shows
    (the state's ``keypoints_2d[:, 0]`` and ``_segments.keypoints_seen`` of its main view), ``size`` the
    image side in pixels; optional ``K`` (3, 3), ``R`` (T, 3, 3), ``t`` (T, 3), the main camera (the
    state's ``K[0]``, ``R[:, 0]``, ``t[:, 0]``), and ``robot_geoms``, the robot's geom ids, to check
    that an edited pose stays in view (:meth:`sees`).
    """

    uv: np.ndarray
    visible: np.ndarray
    size: int
    K: np.ndarray | None = None
    R: np.ndarray | None = None
    t: np.ndarray | None = None
    robot_geoms: frozenset[int] = frozenset()

    def in_picture(self, frame: int, points: np.ndarray) -> np.ndarray:
        """Which world ``points`` (N, 3) project in front of the main camera and inside its image, at
        least ``EDGE_FRAC`` of its side from the border, at ``frame`` (occlusion is not checked); all
        True without a camera."""
        if self.K is None or self.R is None or self.t is None:
            return np.ones(len(points), bool)
        cam = points @ self.R[frame].T + self.t[frame]
        z = cam[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = cam[:, :2] / z[:, None] * self.K[[0, 1], [0, 1]] + self.K[[0, 1], [2, 2]]
        edge = EDGE_FRAC * self.size
        return np.asarray((z > 0) & np.all((uv >= edge) & (uv < self.size - edge), axis=-1))

    def sees(
        self, model: Any, qpos: np.ndarray, bodies: list[str], frame: int, data: Any = None
    ) -> np.ndarray:
        """Which ``bodies`` the main camera would see at ``frame`` with the robot in pose ``qpos``: in
        the picture (:meth:`in_picture`), and the ray from the camera meets nothing more than
        ``KEYPOINT_MARGIN`` in front of the body's origin (the renderer's own test) or first meets the
        robot (the pixel shows the robot, as ``keypoints_seen`` counts it). ``data``: an ``MjData`` of
        ``model`` to reuse (its state is overwritten)."""
        import mujoco

        data = mujoco.MjData(model) if data is None else data
        data.qpos[:] = qpos
        mujoco.mj_kinematics(model, data)
        pts = data.xpos[[int(model.body(b).id) for b in bodies]]
        out = self.in_picture(frame, pts)
        if self.R is None or self.t is None:
            return out
        eye = -self.R[frame].T @ self.t[frame]
        drawn = np.array([1, 1, 1, 0, 0, 0], np.uint8)  # the renderer's geom groups (MjvOption default)
        hit_geom = np.zeros(1, np.int32)
        for n in np.flatnonzero(out):
            ray = pts[n] - eye
            dist = float(np.linalg.norm(ray))
            hit = mujoco.mj_ray(model, data, eye, ray / dist, drawn, 1, -1, hit_geom)
            out[n] = hit < 0 or hit >= dist - KEYPOINT_MARGIN or int(hit_geom[0]) in self.robot_geoms
        return out

    def shown(self, a: int, b: int, i: int, j: int) -> float:
        """How well frames ``[a, b)`` show keypoints ``i`` and ``j`` together: 0 when either is hidden
        on one of them or they are closer than ``MIN_VIEW_FRAC`` of the diagonal there, else their
        smallest distance as a fraction of the diagonal."""
        if not (self.visible[a:b, i] & self.visible[a:b, j]).all():
            return 0.0
        d = float(np.linalg.norm(self.uv[a:b, i] - self.uv[a:b, j], axis=-1).min()) / (self.size * 2**0.5)
        return d if d >= MIN_VIEW_FRAC else 0.0

    def best_pair(self, a: int, b: int, ix: list[int], to: list[int] | None = None) -> float:
        """The best :meth:`shown` score of a pair of keypoints ``ix`` (or of one of ``ix`` with one of
        ``to``) over frames ``[a, b)``; 0 when no pair is shown."""
        to = ix if to is None else to
        keep_i = [i for i in ix if self.visible[a:b, i].all()]
        keep_j = [j for j in to if self.visible[a:b, j].all()]
        if not keep_i or not keep_j:
            return 0.0
        uv = self.uv[a:b]
        d = np.linalg.norm(uv[:, keep_i, None] - uv[:, None, keep_j], axis=-1).min(axis=0)
        d[np.equal.outer(keep_i, keep_j)] = 0.0  # a keypoint with itself
        best = float(d.max()) / (self.size * 2**0.5)
        return best if best >= MIN_VIEW_FRAC else 0.0


@dataclass(frozen=True)
class Link:
    """Two keypoint bodies held at a fixed offset by the model; ``mover`` is the body to shift.

    ``offset`` is the child keypoint's position in the parent keypoint's frame; ``mover`` is the body
    on the way from parent to child whose parent is the parent keypoint, so adding ``k * offset`` to
    its ``body_pos`` moves the child (and all below it) by ``k`` times the link.
    """

    parent: str
    child: str
    mover: str
    offset: np.ndarray

    @property
    def length(self) -> float:
        return float(np.linalg.norm(self.offset))


def _joints(model: Any, names: tuple[str, ...]) -> list[int]:
    return [int(model.joint(n).id) for n in names]


def _span(
    rng: np.random.Generator, T: int, n: int, window: tuple[int, int] | None = None
) -> tuple[int, int]:
    """A window of ``n`` frames with at least one untouched frame before and after it, inside
    ``window`` (``[lo, hi)``, a rollout chunk) when given; shortened to fit."""
    first, stop, n = _starts(T, n, window)
    a = int(rng.integers(first, stop))
    return a, a + n


def _starts(T: int, n: int, window: tuple[int, int] | None) -> tuple[int, int, int]:
    """The first frame a window may start at, one past the last, and its length (see :func:`_span`)."""
    lo, hi = (1, T - 1) if window is None else (max(1, window[0]), min(T - 1, window[1]))
    if hi - lo < 1:
        raise ValueError(f"window {window} leaves no frame to plant in (a rollout of {T} frames)")
    n = max(1, min(n, T - 3, hi - lo))
    return lo, hi - n + 1, n


def _ramp(n: int) -> np.ndarray:
    """Strength over a window: full inside, half on the first and last frame (a one-frame onset)."""
    w = np.ones(n)
    if n >= 3:
        w[0] = w[-1] = 0.5
    return w


def rigid_links(model: Any, keypoints: tuple[str, ...], qpos: np.ndarray) -> list[Link]:
    """Links between each keypoint and its nearest keypoint ancestor that stay rigid over ``qpos``.

    Rigidity is checked, not assumed: the child's position in the parent's frame must not change
    across the given frames (a joint between them bends the pair and rules it out).
    """
    import mujoco

    ids = [int(model.body(k).id) for k in keypoints]
    pairs = []
    for c in ids:
        path, b = [c], int(model.body_parentid[c])
        while b > 0 and b not in ids:
            path.append(b)
            b = int(model.body_parentid[b])
        if b > 0:
            pairs.append((b, c, path[-1]))
    data = mujoco.MjData(model)
    rows = np.unique(np.linspace(0, len(qpos) - 1, 6).astype(int))
    offsets = np.zeros((len(rows), len(pairs), 3))
    for i, t in enumerate(rows):
        data.qpos[:] = qpos[t]
        mujoco.mj_kinematics(model, data)
        for j, (p, c, _) in enumerate(pairs):
            offsets[i, j] = data.xmat[p].reshape(3, 3).T @ (data.xpos[c] - data.xpos[p])
    out = []
    for j, (p, c, mover) in enumerate(pairs):
        off = offsets[:, j]
        if np.abs(off - off[0]).max() < 1e-6 and np.linalg.norm(off[0]) >= MIN_LINK:
            out.append(Link(model.body(p).name, model.body(c).name, model.body(mover).name, off[0]))
    return out


def _hinge_axes(model: Any, body: int) -> list[np.ndarray]:
    hinge = 3  # mjJNT_HINGE
    return [
        model.jnt_axis[j].copy()
        for j in range(model.njnt)
        if model.jnt_bodyid[j] == body and model.jnt_type[j] == hinge
    ]


def _foreign_axis(axes: list[np.ndarray], rng: np.random.Generator) -> np.ndarray | None:
    """A unit axis that none of a body's hinges turns about (None for three or more hinges)."""
    if len(axes) >= 3:
        return None
    if len(axes) == 2:
        a = np.cross(axes[0], axes[1])
    else:
        a = rng.normal(size=3)
        if axes:
            a -= (a @ axes[0]) / (axes[0] @ axes[0]) * axes[0]
    return np.asarray(a / np.linalg.norm(a))


def _keypoints_moved_by(model: Any, keypoints: tuple[str, ...], bodies: list[int]) -> list[str]:
    """Keypoints that show a change at ``bodies``: for each, its nearest keypoint ancestor (the pivot
    the change turns or pushes against) and every keypoint at or below it, in keypoint order."""
    ids = [int(model.body(k).id) for k in keypoints]
    keep: set[int] = set()
    for body in bodies:
        b = int(model.body_parentid[body])
        while b > 0 and b not in ids:
            b = int(model.body_parentid[b])
        if b > 0:
            keep.add(b)
        keep |= {k for k in ids if k == body or _descends(model, k, body)}
    return [k for k, i in zip(keypoints, ids, strict=True) if i in keep]


def _placed(
    rng: np.random.Generator,
    T: int,
    n: int,
    window: tuple[int, int] | None,
    view: MainView | None,
    score: Any,
    count: int,
) -> tuple[int, int, int]:
    """A window of ``n`` frames and a candidate (index < ``count``) that the main view shows.

    Every window :func:`_span` could draw is paired with every candidate, and one pair that the main
    view shows (``score(a, b, i) > 0``) is drawn uniformly. When no pair is shown (or there is no
    view), a window is drawn as :func:`_span` does and a candidate among all.
    """
    if view is not None:
        first, stop, m = _starts(T, n, window)
        ok = [(a, i) for a in range(first, stop) for i in range(count) if score(a, a + m, i) > 0]
        if ok:
            a, i = ok[int(rng.integers(len(ok)))]
            return a, a + m, i
    a, b = _span(rng, T, n, window)
    return a, b, int(rng.integers(count))


def plant(
    kind: str,
    model: Any,
    info: Any,
    plan: Any,
    severity: float,
    rng: np.random.Generator,
    *,
    view: MainView | None = None,
    window: tuple[int, int] | None = None,
) -> tuple[int, int, dict[str, Any]]:
    """Plant one kinematic failure of ``kind`` into ``plan``; return (start, stop, detail).

    ``view``: where the main view shows the robot (``link_stretch``, ``bend`` and ``joint_limit`` go
    where it shows them); ``window``: the frames ``[lo, hi)`` the failure must lie in (a chunk).
    """
    s, q, ed = severity, plan.qpos, plan.edits
    T = len(q)
    kps = tuple(info.keypoint_bodies)
    arm = info.extra.get("arm_joints", ARM_JOINTS.get(info.task))
    fingers = info.extra.get("finger_close", FINGER_CLOSE.get(info.task))
    if arm is None or fingers is None:
        raise ValueError(f"scene {info.task!r} names no arm_joints / finger_close in SceneInfo.extra")
    slide = 2  # mjJNT_SLIDE
    detail: dict[str, Any]
    if kind == "link_stretch":
        links = rigid_links(model, kps, q)
        if view is None:  # no view to consult: among the longer links (the rule before views)
            longest = max(x.length for x in links)
            links = [x for x in links if x.length >= 0.5 * longest]
        k = float((0.1 + 0.4 * s) * rng.choice([-1.0, 1.0]))
        ends = [(kps.index(x.parent), kps.index(x.child)) for x in links]
        a, b, pick = _placed(rng, T, int(round(6 + 10 * s)), window, view,
                             lambda a, b, i: view.shown(a, b, *ends[i]) if view else 1.0, len(links))
        link = links[pick]
        for t, w in zip(range(a, b), _ramp(b - a), strict=True):
            shifts = ed[t].setdefault("body_shift", {})
            shifts[link.mover] = shifts.get(link.mover, 0.0) + k * w * link.offset
        detail = {
            "link": [link.parent, link.child],
            "scale": round(1 + k, 4),
            "length": round(link.length, 4),
            "keypoints": [link.parent, link.child],
        }
    elif kind == "bend":
        kp = [int(model.body(n).id) for n in kps]
        cands = []
        for i, b_id in enumerate(kp):
            below = [j for j, c in enumerate(kp) if c != b_id and _descends(model, c, b_id)]
            axis = _foreign_axis(_hinge_axes(model, b_id), rng)
            if below and axis is not None:
                cands.append((b_id, axis, i, below))
        angle = float((0.25 + 0.65 * s) * rng.choice([-1.0, 1.0]))

        def bend_shown(a: int, b: int, c: int) -> float:  # the pivot and a keypoint it swings
            _, _, i, below = cands[c]
            return view.best_pair(a, b, [i], below) if view else 1.0

        a, b, pick = _placed(rng, T, int(round(6 + 10 * s)), window, view, bend_shown, len(cands))
        body, axis = cands[pick][:2]
        name = model.body(body).name
        for t, w in zip(range(a, b), _ramp(b - a), strict=True):
            ed[t].setdefault("body_rot", {})[name] = (axis, angle * w)
        detail = {"body": name, "axis": np.round(axis, 4).tolist(), "angle": round(angle, 4),
                  "keypoints": _keypoints_moved_by(model, kps, [body])}
    elif kind in ("jitter", "config_jump"):
        js = _joints(model, tuple(arm))
        adr = np.array([int(model.jnt_qposadr[j]) for j in js])
        if kind == "jitter":
            unit = np.array([SLIDE_PER_RAD if model.jnt_type[j] == slide else 1.0 for j in js])
            a, b = _span(rng, T, int(round(4 + 8 * s)), window)
            amp = 0.02 + 0.1 * s
            q[a:b, adr] += rng.normal(size=(b - a, len(js))) * amp * unit
            detail = {"joints": list(arm), "amplitude": round(amp, 4)}
        else:
            # The arm snaps part of the way towards the pose it has at the frame where its end effector
            # is farthest away, holds there and snaps back: a pose the arm really takes, so it stays in
            # view, reached without passing through the poses in between.
            a, b = _span(rng, T, int(round(2 + 4 * s)), window)
            ee = _body_path(model, q, info.ee_body)
            c = int(np.argmax(np.linalg.norm(ee - ee[a], axis=1)))
            frac = 0.4 + 0.6 * s
            q[a:b, adr] += frac * (q[c, adr] - q[a:b, adr])
            detail = {"joints": list(arm), "pose_of_frame": c, "fraction": round(frac, 4)}
        detail["keypoints"] = _keypoints_moved_by(model, kps, [int(model.jnt_bodyid[j]) for j in js])
    elif kind == "finger_pass":
        names = tuple(n for n, _ in fingers)
        js = _joints(model, names)
        a, b = _span(rng, T, int(round(6 + 8 * s)), window)
        past = []
        for j, (_, end) in zip(js, fingers, strict=True):
            lo, hi = model.jnt_range[j]
            extra = (0.006 + 0.024 * s) if model.jnt_type[j] == slide else (0.3 + 0.9 * s)
            target = lo - extra if end < 0 else hi + extra
            col = int(model.jnt_qposadr[j])
            q[a:b, col] += _ramp(b - a) * (target - q[a:b, col])
            past.append(round(float(extra), 4))
        detail = {"joints": list(names), "past_closed": past,
                  "keypoints": _keypoints_moved_by(model, kps, [int(model.jnt_bodyid[j]) for j in js])}
    elif kind == "joint_limit":
        a, b, detail = _joint_limit(model, kps, tuple(arm), q, s, rng, window, view)
    else:
        raise ValueError(f"unknown kinematic failure {kind!r}")
    plan.src[a:b] = -1  # no frame of the window reproduces the faithful episode
    return a, b, detail


def _joint_limit(
    model: Any,
    kps: tuple[str, ...],
    arm: tuple[str, ...],
    q: np.ndarray,
    s: float,
    rng: np.random.Generator,
    window: tuple[int, int] | None,
    view: MainView | None,
) -> tuple[int, int, dict[str, Any]]:
    """One limited arm hinge driven (0.25+0.65s) rad past the end of its range nearer to where it is."""
    hinge = 3  # mjJNT_HINGE
    js = [j for j in _joints(model, arm) if model.jnt_type[j] == hinge and model.jnt_limited[j]]
    if not js:
        raise ValueError(f"no limited hinge among the arm joints {list(arm)}")
    moved = [_keypoints_moved_by(model, kps, [int(model.jnt_bodyid[j])]) for j in js]
    past = 0.25 + 0.65 * s
    import mujoco

    data = mujoco.MjData(model)  # one for every pose tried: allocating it is most of a check's cost

    def target(j: int, frame: int) -> tuple[float, bool]:  # past the end of the range nearer to it
        lo, hi = (float(x) for x in model.jnt_range[j])
        now = float(q[frame, int(model.jnt_qposadr[j])])
        upper = hi - now < now - lo
        return (hi + past if upper else lo - past), upper

    def shown(a: int, b: int, c: int) -> float:
        """Two of its keypoints apart and in view before, and two still seen once turned."""
        if view is None:
            return 1.0
        ix = [kps.index(k) for k in moved[c]]
        score = view.best_pair(a, b, ix)
        if score > 0:
            mid = (a + b) // 2
            row = q[mid].copy()
            row[int(model.jnt_qposadr[js[c]])] = target(js[c], mid)[0]
            seen = view.sees(model, row, [kps[i] for i in ix], mid, data)
            score *= float(seen.sum() >= min(2, len(ix)))
        return score

    a, b, pick = _placed(rng, len(q), int(round(6 + 10 * s)), window, view, shown, len(js))
    j = js[pick]
    lo, hi = (float(x) for x in model.jnt_range[j])
    col = int(model.jnt_qposadr[j])
    goal, upper = target(j, (a + b) // 2)
    q[a:b, col] += _ramp(b - a) * (goal - q[a:b, col])
    detail = {"joint": model.joint(j).name, "range": [round(lo, 4), round(hi, 4)],
              "end": "upper" if upper else "lower", "past": round(past, 4), "keypoints": moved[pick]}
    return a, b, detail


def _body_path(model: Any, qpos: np.ndarray, body: str) -> np.ndarray:
    """World position of ``body`` at every frame of ``qpos`` (forward kinematics only)."""
    import mujoco

    data = mujoco.MjData(model)
    bid = int(model.body(body).id)
    out = np.zeros((len(qpos), 3))
    for t, x in enumerate(qpos):
        data.qpos[:] = x
        mujoco.mj_kinematics(model, data)
        out[t] = data.xpos[bid]
    return out


def _descends(model: Any, body: int, ancestor: int) -> bool:
    b = int(model.body_parentid[body])
    while b > 0:
        if b == ancestor:
            return True
        b = int(model.body_parentid[b])
    return False
