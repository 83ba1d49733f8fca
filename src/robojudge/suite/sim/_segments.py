"""Segment-level reference labels: a Bad / Medium / Good verdict per 16-frame segment of a rollout.

RoboWorM (paper 001, App. D) rates embodied physics per short segment and validates KIVA per
16-frame segment against those ratings. Here the verdict is derived from the kinematic failures
planted in each segment, so it judges the robot's own motion only: scene, interaction and
instruction failures (and ``deformation``, which changes geom sizes, not the kinematics) never
lower it. A failure counts only on the frames where the main view shows it (its keypoints seen
there, :func:`keypoints_seen`): a rater of the video cannot see the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from robojudge.suite.sim._kinematic import KINEMATIC_TYPES
from robojudge.suite.sim._scenes import CLASS_IDS

SEGMENT_FRAMES = 16
BAD_SEVERITY = 0.5  # the same cut as the checklist's "severe" (item_score)
BAD_FRAMES = 4  # frames of a segment a severe failure must cover (a third difference spans 4 frames)


def segment_bounds(n_frames: int, size: int = SEGMENT_FRAMES) -> list[tuple[int, int]]:
    """``[start, stop)`` of consecutive segments of ``size`` frames; a remainder is a shorter last one."""
    if n_frames < 0 or size < 1:
        raise ValueError(f"need n_frames >= 0 and size >= 1, got {n_frames} and {size}")
    return [(a, min(a + size, n_frames)) for a in range(0, n_frames, size)]


def keypoints_seen(uv: np.ndarray, visible: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(T, K) bool: which keypoints one view shows, from its state arrays.

    ``uv`` (T, K, 2) projected pixels, ``visible`` (T, K) the state's ``keypoints_visible`` of that view,
    ``masks`` (T, S, S) its class masks. A keypoint is seen when it is visible, or when it projects inside
    the image onto a pixel the robot is drawn on. The second case matters for thick links: a keypoint is
    a body origin, often deeper inside its link's shell than the visibility test's margin (the Panda's,
    by up to 14 cm), so the state calls it hidden while the link around it is in plain view.
    """
    uv = np.asarray(uv, float)
    T, S = len(uv), masks.shape[-1]
    inside = np.all(np.isfinite(uv) & (uv >= 0) & (uv < S), axis=-1)
    px = np.clip(np.nan_to_num(uv), 0, S - 1).astype(int)
    on_robot = masks[np.arange(T)[:, None], px[..., 1], px[..., 0]] == CLASS_IDS["robot"]
    return np.asarray(np.asarray(visible, bool) | (inside & on_robot))


def failure_seen(
    failure: dict[str, Any], keypoints_visible: np.ndarray | None, keypoint_names: Sequence[str] | None
) -> np.ndarray:
    """Per frame of the rollout (``keypoints_visible``'s rows), whether the main view shows ``failure``.

    A failure is seen on a frame where at least two of its keypoints (``detail.keypoints``, written by
    the planting code; all of them when it names fewer than two) are seen in the main view (a (T, K)
    bool array such as :func:`keypoints_seen` gives). Without it, or without named keypoints, every
    frame counts as seen (the rule before visibility).
    """
    keys = (failure.get("detail") or {}).get("keypoints")
    if keypoints_visible is None or not keys:
        n = int(failure["stop"]) if keypoints_visible is None else len(keypoints_visible)
        return np.ones(n, bool)
    if keypoint_names is None:
        raise ValueError("keypoints_visible needs keypoint_names (its columns)")
    names = list(keypoint_names)
    missing = [k for k in keys if k not in names]
    if missing:
        raise ValueError(f"failure {failure['type']!r}: keypoints {missing} are not among {names}")
    cols = np.asarray(keypoints_visible, bool)[:, [names.index(k) for k in keys]]
    need = min(2, len(keys))
    return np.asarray(cols.sum(axis=1) >= need)


def segment_verdicts(
    failures: Iterable[dict[str, Any]],
    n_frames: int,
    size: int = SEGMENT_FRAMES,
    *,
    keypoints_visible: np.ndarray | None = None,
    keypoint_names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Planted verdict of every segment of a rollout of ``n_frames`` frames.

    Rule (documented in docs/sim_suite.md), over kinematic failures only (types in
    ``KINEMATIC_TYPES``; each a dict with ``type``, ``severity``, ``start``, ``stop``, stop exclusive),
    counting only a failure's *seen* frames (:func:`failure_seen`: its keypoints seen in the main view,
    given as ``keypoints_visible`` (T, K) with ``keypoint_names``, which the suite fills with
    :func:`keypoints_seen` of its main view; without them every frame is seen):

    * **Bad** when a failure of severity >= 0.5 is seen on at least 4 frames of the segment, or on all
      of its own frames when it is shorter (a severe two-frame jump inside a segment is Bad);
    * **Medium** when any kinematic failure is seen on at least one frame of it;
    * **Good** otherwise (a failure the main view never shows there leaves it Good).

    Each segment lists the kinematic failures that touch it, with the frames they cover there
    (``frames``), the frames of those the main view shows (``visible_frames``) and ``visible``
    (``visible_frames > 0``).
    """
    if keypoints_visible is not None and len(keypoints_visible) != n_frames:
        raise ValueError(f"keypoints_visible has {len(keypoints_visible)} frames, the rollout {n_frames}")
    kin = [f for f in failures if f["type"] in KINEMATIC_TYPES]
    seen = [failure_seen(f, keypoints_visible, keypoint_names) for f in kin]
    out = []
    for a, b in segment_bounds(n_frames, size):
        touching, bad, medium = [], False, False
        for f, on in zip(kin, seen, strict=True):
            lo, hi = max(a, int(f["start"])), min(b, int(f["stop"]))
            if hi <= lo:
                continue
            sev = float(f["severity"])
            shown = int(on[lo:hi].sum())
            touching.append(
                {"type": f["type"], "severity": sev, "frames": hi - lo, "visible_frames": shown,
                 "visible": shown > 0}
            )
            own = int(f["stop"]) - int(f["start"])
            bad |= sev >= BAD_SEVERITY and shown >= min(BAD_FRAMES, own)
            medium |= shown > 0
        verdict = "Bad" if bad else "Medium" if medium else "Good"
        out.append({"start": a, "stop": b, "verdict": verdict, "rater": "planted", "failures": touching})
    return out
