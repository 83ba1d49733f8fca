"""Planted multi-view failures: one camera of the rig shows something the others contradict.

A multi-view world model generates several synchronised views of one rollout; RoboWorM's RIGIS (paper
001, Fig. 3b, App. D, Table D5) scores whether they agree as views of one scene from a fixed, calibrated
rig. These failures break that agreement in one view only, so every view on its own still looks like a
plausible video:

* ``view_pose``: for a window of frames one view is rendered from a state where the object (or the arm)
  is somewhere else;
* ``view_lag``: one view runs ``k`` frames behind the others (it holds its first frame ``k`` frames);
* ``view_shake``: one camera shakes (random small translation and turn per frame) for a window;
* ``view_drift``: one camera slides and turns steadily away from where it is mounted;
* ``view_ghost``: an extra copy of the object is drawn in one view only.

The cameras' calibration (state ``R``, ``t``; the manifest's ``calibration`` file) stays the nominal
rig: the rig is declared fixed, and it is the video that disagrees. The state file keeps the consensus
state (what the other views show); only ``masks`` follow what the failing view draws.

Each failure is planned first (:func:`plan_view_failure`, drawing from the profile's random stream) and
drawn after the rollout's clean render (:func:`draw_view_failures`), by re-rendering the failing view's
frames (pose, shake, drift, ghost) or shifting them in time (lag, applied last).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from robojudge.suite.sim._kinematic import ARM_JOINTS, SLIDE_PER_RAD

MULTIVIEW_TYPES = ("view_pose", "view_lag", "view_shake", "view_drift", "view_ghost")


@dataclass(frozen=True)
class ViewFailure:
    """A planned multi-view failure: the view it hits, its frame window and what is drawn there.

    ``qpos_delta`` is added to the state of the window's frames (pose, ghost); ``cam_shift`` ((n, 3)
    metres, world frame) and ``cam_turn`` ((n, 3) axis-angle vectors in the camera's own frame, rad)
    move the camera per window frame (shake, drift); ``lag`` delays the view.
    """

    kind: str
    severity: float
    view: int
    start: int
    stop: int
    detail: dict[str, Any]
    qpos_delta: np.ndarray | None = None
    cam_shift: np.ndarray | None = None
    cam_turn: np.ndarray | None = None
    lag: int = 0


def lag_frames(severity: float) -> int:
    """Frames a ``view_lag`` of this severity delays its view: 1 + round(5 s) (2 to 6 for s >= 0.15)."""
    return 1 + int(np.floor(5 * severity + 0.5))


def _window(rng: np.random.Generator, T: int, n: int) -> tuple[int, int]:
    """``n`` frames with at least one untouched frame before and after."""
    n = max(1, min(n, T - 2))
    a = int(rng.integers(1, T - n))
    return a, a + n


def plan_view_failure(
    kind: str, severity: float, rng: np.random.Generator, *, editor: Any, views: int, view_names: list[str]
) -> ViewFailure:
    """Draw the parameters of one multi-view failure of ``kind`` for the episode ``editor`` holds.

    Raises:
        ValueError: For an unknown kind, or a rig of fewer than two views (nothing to disagree with).
    """
    if views < 2:
        raise ValueError(f"{kind}: a multi-view failure needs at least 2 views, the suite renders {views}")
    s = severity
    T = editor.T
    nq = editor.plan.qpos.shape[1]
    view = int(rng.integers(views))
    detail: dict[str, Any] = {"view": view_names[view]}
    if kind == "view_pose":
        a, b = _window(rng, T, int(round(8 + 16 * s)))
        delta = np.zeros((b - a, nq))
        target = str(rng.choice(["object", "arm"]))
        if target == "object":
            dist = 0.03 + 0.09 * s
            ang = rng.uniform(0, 2 * np.pi)
            delta[:, editor.obj_adr[:2]] = dist * np.array([np.cos(ang), np.sin(ang)])
            detail.update(target="object", shift_m=round(dist, 4))
        else:
            info, model = editor.info, editor.model
            names = info.extra.get("arm_joints", ARM_JOINTS.get(info.task))
            if names is None:
                raise ValueError(f"scene {info.task!r} names no arm_joints in SceneInfo.extra")
            js = [int(model.joint(n).id) for n in names]
            unit = np.array([SLIDE_PER_RAD if model.jnt_type[j] == 2 else 1.0 for j in js])  # 2: slide
            amp = 0.1 + 0.3 * s
            direction = rng.normal(size=len(js))
            direction /= np.abs(direction).max()  # the largest joint offset is exactly ``amp``
            cols = [int(model.jnt_qposadr[j]) for j in js]
            delta[:, cols] = amp * direction * unit
            detail.update(target="arm", joints=list(names), amplitude_rad=round(amp, 4))
        return ViewFailure(kind, s, view, a, b, detail, qpos_delta=delta)
    if kind == "view_lag":
        k = min(lag_frames(s), T - 1)
        detail["lag_frames"] = k
        return ViewFailure(kind, s, view, 0, T, detail, lag=k)
    if kind == "view_shake":
        a, b = _window(rng, T, int(round(10 + 20 * s)))
        sd_m, sd_deg = 0.004 + 0.016 * s, 0.3 + 1.2 * s
        shift = rng.normal(size=(b - a, 3)) * sd_m
        turn = rng.normal(size=(b - a, 3)) * np.deg2rad(sd_deg)
        detail.update(shift_sd_m=round(sd_m, 4), turn_sd_deg=round(sd_deg, 3))
        return ViewFailure(kind, s, view, a, b, detail, cam_shift=shift, cam_turn=turn)
    if kind == "view_drift":
        a = int(rng.integers(2, max(3, T // 3)))
        b = T
        dist, deg = 0.03 + 0.12 * s, 1.0 + 4.0 * s
        d = rng.normal(size=3)
        axis = rng.normal(size=3)
        ramp = (np.arange(a, b) - a + 1)[:, None] / (b - a)
        shift = ramp * d / np.linalg.norm(d) * dist
        turn = ramp * axis / np.linalg.norm(axis) * np.deg2rad(deg)
        detail.update(shift_m=round(dist, 4), turn_deg=round(deg, 3))
        return ViewFailure(kind, s, view, a, b, detail, cam_shift=shift, cam_turn=turn)
    if kind == "view_ghost":
        a, b = _window(rng, T, int(round(8 + 24 * s)))
        delta = np.zeros((b - a, nq))
        side = float(rng.choice([-1.0, 1.0]))
        off = np.array([0.0, side * 2.6 * editor.info.object_size, 0.0])
        # From its parking place to the table beside the object's start, as the ``duplicate`` failure
        # puts it, but drawn in one view only.
        q = editor.plan.qpos
        spot = q[0, editor.obj_adr] + off + editor._obj_base()
        delta[:, editor.dup_adr] = spot - q[a:b][:, editor.dup_adr]
        detail["offset_m"] = np.round(off, 4).tolist()
        return ViewFailure(kind, s, view, a, b, detail, qpos_delta=delta)
    raise ValueError(f"unknown multi-view failure {kind!r}; known: {', '.join(MULTIVIEW_TYPES)}")


def _quat_of(rotvec: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(rotvec))
    if angle < 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    axis = rotvec / angle
    return np.asarray(np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis], dtype=float)


def _qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    w1, v1, w2, v2 = p[0], p[1:], q[0], q[1:]
    return np.asarray(np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)], dtype=float)


def _redraw(renderer: Any, plan: Any, f: ViewFailure, frames: np.ndarray, masks: np.ndarray) -> None:
    """Re-render the failing view over the window with its edited state or moved camera."""
    mj, m, d = renderer.mj, renderer.model, renderer.data
    cid = renderer.cam_ids[f.view]
    pos0, quat0 = m.cam_pos[cid].copy(), m.cam_quat[cid].copy()
    try:
        for i, t in enumerate(range(f.start, f.stop)):
            renderer._apply(plan.edits[t])
            if f.cam_shift is not None and f.cam_turn is not None:
                # MuJoCo's cam_quat turns camera axes (x right, y up, z backward) into the body's;
                # a turn by a small vector in the camera's own frame is right-multiplied.
                m.cam_pos[cid] = m.cam_pos[cid] + f.cam_shift[i]
                m.cam_quat[cid] = _qmul(quat0, _quat_of(f.cam_turn[i]))
            q = plan.qpos[t] if f.qpos_delta is None else plan.qpos[t] + f.qpos_delta[i]
            d.qpos[:] = q
            mj.mj_forward(m, d)
            rgb, seg, _ = renderer._render_views(only=f.view)
            frames[f.view, t], masks[t, f.view] = rgb[0], seg[0]
    finally:
        m.cam_quat[cid] = quat0
        m.cam_pos[cid] = pos0
        renderer._apply({})


def _delay(frames: np.ndarray, masks: np.ndarray, view: int, k: int) -> None:
    """View ``view`` frame ``t`` becomes its frame ``max(0, t - k)``: it starts ``k`` frames late."""
    idx = np.maximum(np.arange(frames.shape[1]) - k, 0)
    frames[view] = frames[view][idx]
    masks[:, view] = masks[idx, view]


def draw_view_failures(
    renderer: Any, plan: Any, frames: np.ndarray, state: dict[str, np.ndarray], failures: list[ViewFailure]
) -> None:
    """Draw ``failures`` into a clean render: ``frames`` (V, T, H, W, 3) and ``state['masks']``, in place.

    Re-rendered failures go first and lags last, so a lagging view lags whatever else it shows.
    """
    masks = state["masks"]
    for f in failures:
        if not f.lag:
            _redraw(renderer, plan, f, frames, masks)
    for f in failures:
        if f.lag:
            _delay(frames, masks, f.view, f.lag)


def multiview_labels(failures: list[dict[str, Any]]) -> dict[str, Any]:
    """Video-level multi-view consistency label from the planted failures (docs/sim_suite.md).

    ``score`` (1-5) = max(1, 5 - round(2.5 x sum of multi-view severities)), the PA rule on these
    failures alone; ``verdict`` is Good without one, Bad when the worst has severity >= 0.5, else Medium.
    Other failure types are ignored: they are not about the views agreeing.
    """
    sev = [float(f["severity"]) for f in failures if f["type"] in MULTIVIEW_TYPES]
    score = max(1, 5 - int(np.floor(2.5 * sum(sev) + 0.5)))
    verdict = "Good" if not sev else ("Bad" if max(sev) >= 0.5 else "Medium")
    return {"score": score, "verdict": verdict, "rater": "planted"}


def calibration_json(
    K: np.ndarray, R: np.ndarray, t: np.ndarray, names: list[str], size: int
) -> dict[str, Any]:
    """The nominal rig as a manifest calibration object (docs/manifest.md): ``K``, ``R``, ``t``, ``size``.

    ``R`` and ``t`` are the first frame's: the rig is declared fixed (the default ``camera_drift``
    failure moves the main camera after frame 0, which then shows as a rig that disagrees).
    """
    return {
        n: {"K": K[v].tolist(), "R": R[0, v].tolist(), "t": t[0, v].tolist(), "size": [size, size]}
        for v, n in enumerate(names)
    }
