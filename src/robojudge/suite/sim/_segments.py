"""Segment-level reference labels: a Bad / Medium / Good verdict per 16-frame segment of a rollout.

RoboWorM (paper 001, App. D) rates embodied physics per short segment and validates KIVA per
16-frame segment against those ratings. Here the verdict is derived from the kinematic failures
planted in each segment, so it judges the robot's own motion only: scene, interaction and
instruction failures (and ``deformation``, which changes geom sizes, not the kinematics) never
lower it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from robojudge.suite.sim._kinematic import KINEMATIC_TYPES

SEGMENT_FRAMES = 16
BAD_SEVERITY = 0.5  # the same cut as the checklist's "severe" (item_score)
BAD_FRAMES = 4  # frames of a segment a severe failure must cover (a third difference spans 4 frames)


def segment_bounds(n_frames: int, size: int = SEGMENT_FRAMES) -> list[tuple[int, int]]:
    """``[start, stop)`` of consecutive segments of ``size`` frames; a remainder is a shorter last one."""
    if n_frames < 0 or size < 1:
        raise ValueError(f"need n_frames >= 0 and size >= 1, got {n_frames} and {size}")
    return [(a, min(a + size, n_frames)) for a in range(0, n_frames, size)]


def segment_verdicts(
    failures: Iterable[dict[str, Any]], n_frames: int, size: int = SEGMENT_FRAMES
) -> list[dict[str, Any]]:
    """Planted verdict of every segment of a rollout of ``n_frames`` frames.

    Rule (documented in docs/sim_suite.md), over kinematic failures only (types in
    ``KINEMATIC_TYPES``; each a dict with ``type``, ``severity``, ``start``, ``stop``, stop exclusive):

    * **Bad** when a failure of severity >= 0.5 covers at least 4 frames of the segment, or all of
      its own frames when it is shorter (a severe two-frame jump inside a segment is Bad);
    * **Medium** when any kinematic failure covers at least one frame of it;
    * **Good** otherwise.

    Each segment lists the kinematic failures that touch it, with the frames they cover there.
    """
    kin = [f for f in failures if f["type"] in KINEMATIC_TYPES]
    out = []
    for a, b in segment_bounds(n_frames, size):
        touching, bad = [], False
        for f in kin:
            lo, hi = max(a, int(f["start"])), min(b, int(f["stop"]))
            if hi <= lo:
                continue
            sev = float(f["severity"])
            touching.append({"type": f["type"], "severity": sev, "frames": hi - lo})
            own = int(f["stop"]) - int(f["start"])
            bad |= sev >= BAD_SEVERITY and hi - lo >= min(BAD_FRAMES, own)
        verdict = "Bad" if bad else "Medium" if touching else "Good"
        out.append({"start": a, "stop": b, "verdict": verdict, "rater": "planted", "failures": touching})
    return out
