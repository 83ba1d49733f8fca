"""Planted failures: edits of a recorded episode that a stand-in video generator "makes".

Physical-adherence failures edit the state sequence (or the model, per frame) of an episode and are
rendered by the simulator, so an artifact looks like the scene. Instruction-alignment failures are
whole simulated episodes of a different policy variant (see ``_policy``), optionally with physical
failures on top. Every failure is recorded as a :class:`Failure` with a severity in (0, 1].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from robojudge.suite.sim._kinematic import KINEMATIC_TYPES, MainView, plant
from robojudge.suite.sim._multiview import MULTIVIEW_TYPES
from robojudge.suite.sim._policy import Episode
from robojudge.suite.sim._render import Plan
from robojudge.suite.sim._scenes import SCENES, scene_name

# failure type -> (axis, checklist item it violates)
FAILURE_TYPES: dict[str, tuple[str, str]] = {
    "teleport": ("pa", "scene_consistency"),
    "vanish": ("pa", "scene_consistency"),
    "appear": ("pa", "scene_consistency"),
    "duplicate": ("pa", "scene_consistency"),
    "flicker": ("pa", "scene_consistency"),
    "frozen": ("pa", "scene_consistency"),
    "camera_drift": ("pa", "scene_consistency"),
    "interpenetration": ("pa", "interaction_realism"),
    "telekinesis": ("pa", "interaction_realism"),
    "floating": ("pa", "interaction_realism"),
    "deformation": ("pa", "agent_consistency"),
    # Kinematic failures (see ``_kinematic``): drawn only by the kinematic profiles.
    **{k: ("pa", "agent_consistency") for k in KINEMATIC_TYPES},
    # Multi-view failures (see ``_multiview``): one view contradicts the others; drawn only by the
    # multi-view profiles, and drawn after rendering rather than by ``Editor.apply``.
    **{k: ("pa", "scene_consistency") for k in MULTIVIEW_TYPES},
    "stop_short": ("ia", "goal_completion"),
    "wrong_target": ("ia", "goal_completion"),
    "wrong_object": ("ia", "object_correctness"),
    "unrelated": ("ia", "object_correctness"),
}
# What ``Editor.apply`` plants (the multi-view types are drawn per view by ``_multiview``).
PA_TYPES = tuple(k for k, v in FAILURE_TYPES.items() if v[0] == "pa" and k not in MULTIVIEW_TYPES)
IA_TYPES = tuple(k for k, v in FAILURE_TYPES.items() if v[0] == "ia")

# Failure types that make no sense in a scene (profiles never draw them there). For push and slide the
# grasp-based ones are adapted (see ``Editor``):
# "grasp" is the first frame the object moves, "release" the frame after it comes to rest, and
# ``floating`` lifts the object off the table while it is pushed or slides (the blocked gripper
# cannot open).
NOT_APPLICABLE: dict[str, frozenset[str]] = {
    "pick_and_place": frozenset(),
    # ``deformation`` swells primitive geoms (scaling geom_size leaves a mesh as it is). ADROIT's hand is
    # drawn with meshes (its capsules are collision geoms in group 4, which is not drawn), and the ALOHA
    # and Panda robots with meshes only: it would plant a failure nobody can see.
    "relocate": frozenset({"deformation"}),
    "push": frozenset(),
    "slide": frozenset(),
    "transfer_cube": frozenset({"deformation"}),
    "panda_pick_and_place": frozenset({"deformation"}),
}


def applicable(scene: str, types: tuple[str, ...]) -> tuple[str, ...]:
    """The failure types of ``types`` that apply to a scene (in the given order)."""
    skip = NOT_APPLICABLE.get(scene_name(scene), frozenset())
    return tuple(k for k in types if k not in skip)


@dataclass(frozen=True)
class Failure:
    """One planted failure: its type, the axis and checklist item it violates, severity, frame window.

    ``detail`` says what exactly was planted where a type has parameters worth checking (the link
    and scale of a ``link_stretch``, ...); it is left out of the JSON form when absent.
    """

    type: str
    axis: str
    item: str
    severity: float
    start: int
    stop: int
    detail: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = asdict(self)
        if self.detail is None:
            del out["detail"]
        return out


def failure_record(
    kind: str, severity: float, start: int, stop: int, detail: dict[str, Any] | None = None
) -> Failure:
    axis, item = FAILURE_TYPES[kind]
    return Failure(kind, axis, item, round(float(severity), 3), int(start), int(stop), detail)


class Editor:
    """Applies physical-adherence failures to a plan built from an episode."""

    def __init__(self, model: Any, episode: Episode, object_pos: np.ndarray) -> None:
        self.model = model
        self.info = SCENES[scene_name(episode.embodiment)]
        self.surface = self.info.task in ("push", "slide")  # the object is never lifted
        self.ep = episode
        T = len(episode.qpos)
        self.T = T
        self.plan = Plan(
            qpos=episode.qpos.copy(),
            src=np.arange(T) if episode.variant == "faithful" else -np.ones(T, int),
            edits=[{} for _ in range(T)],
            base=np.arange(T),
        )
        z0 = object_pos[0, 2]
        if self.surface:  # handled: from the first frame it moves to the frame after it comes to rest
            step = np.r_[0.0, np.linalg.norm(np.diff(object_pos[:, :2], axis=0), axis=1)]
            lifted = np.flatnonzero(step > 0.002)
        else:
            lifted = np.flatnonzero(object_pos[:, 2] > z0 + 0.005)
        self.grasp = int(lifted[0]) if lifted.size else T // 3
        self.release = int(lifted[-1]) + 1 if lifted.size else 2 * T // 3
        if self.info.is_fetch:
            a = int(model.joint("object0:joint").qposadr[0])
            self.obj_adr = np.arange(a, a + 3)
            self.finger_adr = [
                int(model.joint(n).qposadr[0])
                for n in ("robot0:l_gripper_finger_joint", "robot0:r_gripper_finger_joint")
            ]
            self.finger_open: float | np.ndarray = 0.05
        elif "object_joint" in self.info.extra:  # scenes added later (ALOHA): addresses from SceneInfo.extra
            a = int(model.joint(self.info.extra["object_joint"]).qposadr[0])
            self.obj_adr = np.arange(a, a + 3)
            self.finger_adr = [int(model.joint(n).qposadr[0]) for n, _ in self.info.extra["finger_close"]]
            self.finger_open = np.asarray(self.info.extra["finger_open"], float)
        else:
            self.obj_adr = np.array([int(model.joint(n).qposadr[0]) for n in ("OBJTx", "OBJTy", "OBJTz")])
            self.finger_adr = [
                int(model.joint(n).qposadr[0])
                for n in ("FFJ1", "FFJ2", "MFJ1", "MFJ2", "RFJ1", "RFJ2", "LFJ1", "LFJ2", "THJ0")
            ]
            self.finger_open = 0.0
        d = int(model.joint("duplicate:joint").qposadr[0])
        self.dup_adr = np.arange(d, d + 3)
        # The main view of the unedited rollout, when known: kinematic failures go where it shows them.
        self.view: MainView | None = None

    def _novel(self, frames: range) -> None:
        self.plan.src[list(frames)] = -1

    def apply(
        self, kind: str, severity: float, rng: np.random.Generator, window: tuple[int, int] | None = None
    ) -> Failure:
        """Plant one failure of ``kind``; return its record. ``window`` (frames ``[lo, hi)``, kinematic
        failures only) keeps the failure inside a chunk of a rollout rendered with a depth."""
        T, q, ed, s = self.T, self.plan.qpos, self.plan.edits, severity
        size = self.info.object_size
        half = self.info.half_height
        if kind in KINEMATIC_TYPES:
            a, b, detail = plant(
                kind, self.model, self.info, self.plan, s, rng, view=self.view, window=window
            )
            return failure_record(kind, s, a, b, detail)
        if kind == "teleport":
            a = int(rng.integers(1, max(2, self.grasp - 4)))
            b = min(T, a + int(3 + 4 * s))
            ang = rng.uniform(0, 2 * np.pi)
            q[a:b, self.obj_adr[:2]] += (0.05 + 0.1 * s) * np.array([np.cos(ang), np.sin(ang)])
            self._novel(range(a, b))
        elif kind in ("vanish", "appear"):
            n = int(4 + 12 * s)
            a = 0 if kind == "appear" else int(rng.integers(self.grasp, max(self.grasp + 1, T - n)))
            b = min(T, a + n)
            for t in range(a, b):
                ed[t].setdefault("hide", []).append(self.info.object_body)
        elif kind == "duplicate":
            a = int(rng.integers(2, T // 2))
            b = T
            off = np.array([0.0, 1.0, 0.0]) * (2.6 * size) * rng.choice([-1, 1])
            q[a:b, self.dup_adr] = q[0, self.obj_adr] + off + self._obj_base()
            self._novel(range(a, b))
        elif kind == "flicker":
            a, b = 2, T
            for t in rng.choice(np.arange(a, b), size=int(3 + 8 * s), replace=False):
                ed[int(t)]["light"] = float(1 + rng.choice([-0.55, 0.9]) * (0.4 + 0.6 * s))
        elif kind == "frozen":
            n = int(4 + 14 * s)
            a = int(rng.integers(3, T - n))
            b = a + n
            q[a:b] = q[a]
            self.plan.src[a:b] = self.plan.src[a]
            for t in range(a, b):
                ed[t] = dict(ed[a])
        elif kind == "camera_drift":
            a, b = int(rng.integers(2, T // 3)), T
            direction = rng.normal(size=3)
            direction /= np.linalg.norm(direction)
            for t in range(a, b):
                ed[t]["cam_shift"] = direction * (0.05 + 0.25 * s) * (t - a) / (b - a)
        elif kind == "interpenetration":
            a, b = min(self.release + 1, T - 4), T
            q[a:b, self.obj_adr[2]] -= (0.8 + 1.4 * s) * half
            self._novel(range(a, b))
        elif kind == "telekinesis":
            a, b = 1, max(3, self.grasp - 3)
            ang = rng.uniform(0, 2 * np.pi)
            bump = np.sin(np.pi * np.linspace(0, 1, b - a))[:, None]
            q[a:b, self.obj_adr[:2]] += bump * (0.04 + 0.1 * s) * np.array([np.cos(ang), np.sin(ang)])
            self._novel(range(a, b))
        elif kind == "floating" and self.surface:
            # The object rises off the table while it is pushed or slides, and sinks back at rest.
            a, b = max(1, self.grasp), min(T, self.release + 1)
            a = min(a, T - 3)
            b = max(b, a + 3)
            n = max(3, int((b - a) * (0.5 + 0.5 * s)))
            bump = np.minimum(1.0, np.sin(np.pi * np.linspace(0, 1, n + 2)[1:-1]) * 2.5)
            q[a : a + n, self.obj_adr[2]] += bump * (1.5 + 2.5 * s) * half
            self._novel(range(a, a + n))
            b = a + n
        elif kind == "floating":
            a, b = self.grasp + 2, min(T, self.release - 1)
            a = min(a, b - 1)
            n = max(1, int((b - a) * (0.4 + 0.6 * s)))
            q[a : a + n, self.finger_adr] = self.finger_open
            self._novel(range(a, a + n))
            b = a + n
        elif kind == "deformation":
            a = int(rng.integers(2, T // 2))
            b = min(T, a + int(6 + 14 * s))
            bump = np.sin(np.pi * np.linspace(0, 1, b - a))
            for t, k in zip(range(a, b), bump, strict=True):
                ed[t]["robot_scale"] = float(1 + (0.5 + 1.5 * s) * k)
        else:
            raise ValueError(f"unknown physical failure {kind!r}")
        return failure_record(kind, s, a, b)

    def _obj_base(self) -> np.ndarray:
        """World offset between the object's joint coordinates and its position."""
        if self.info.is_fetch or "object_joint" in self.info.extra:  # a free joint: qpos is the position
            return np.zeros(3)
        return np.asarray(self.model.body(self.info.object_body).pos)

    def benign(self, rng: np.random.Generator) -> dict[str, float]:
        """Faithful replay with small, harmless variation: a playback-speed change and a light level."""
        speed = float(rng.uniform(0.85, 1.0))
        idx = np.minimum(np.round(np.arange(self.T) * speed).astype(int), self.T - 1)
        self.plan.qpos = self.plan.qpos[idx]
        self.plan.src = self.plan.src[idx]
        self.plan.base = np.arange(self.T)[idx]
        light = 1.0
        if rng.random() < 0.3:
            light = float(rng.uniform(0.85, 1.1))
            for t in range(self.T):
                self.plan.edits[t]["light"] = light
        return {"speed": round(speed, 3), "light": round(light, 3)}


def ia_failure(kind: str, severity: float, episode_len: int) -> Failure:
    """Record of an instruction-alignment failure (the whole episode is the other policy variant)."""
    return failure_record(kind, severity, 0, episode_len)
