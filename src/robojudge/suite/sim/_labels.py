"""Generator profiles and the rule that turns planted failures into reference labels.

The rule follows the RoboJudge rubric (paper 000, Sec. 3.2, App. A.1, App. B.1): physical adherence
(PA) ignores the instruction and looks at the agent, the scene and the interaction; instruction
alignment (IA) checks the agent, the object and whether the goal is reached.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from robojudge.suite._schema import CHECKLIST_ITEMS
from robojudge.suite.sim._kinematic import KINEMATIC_TYPES
from robojudge.suite.sim._multiview import MULTIVIEW_TYPES

PA_ITEMS = CHECKLIST_ITEMS[:3]
IA_ITEMS = CHECKLIST_ITEMS[3:]


@dataclass(frozen=True)
class Profile:
    """A stand-in generator: how often and how badly it fails on each axis.

    ``pa_count`` is (min, max) number of physical failures per rollout, each drawn with probability
    ``pa_rate`` from ``pa_types``; ``ia_rate`` is the chance of one instruction failure from ``ia_types``.
    Severities are drawn uniformly from the given ranges.
    """

    name: str
    pa_rate: float
    pa_count: tuple[int, int]
    pa_severity: tuple[float, float]
    pa_types: tuple[str, ...]
    ia_rate: float
    ia_severity: tuple[float, float]
    ia_types: tuple[str, ...]
    description: str


_ALL_PA = (
    "teleport",
    "vanish",
    "appear",
    "duplicate",
    "flicker",
    "frozen",
    "camera_drift",
    "interpenetration",
    "telekinesis",
    "floating",
    "deformation",
)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "oracle",
            0.0,
            (0, 0),
            (0.1, 0.1),
            (),
            0.0,
            (0.1, 0.1),
            (),
            "faithful replays with benign variation (playback speed, light level)",
        ),
        Profile(
            "steady",
            0.5,
            (1, 1),
            (0.15, 0.35),
            ("flicker", "camera_drift", "frozen"),
            0.0,
            (0.1, 0.1),
            (),
            "occasional mild temporal artifacts; always does the task",
        ),
        Profile(
            "sloppy",
            0.3,
            (1, 1),
            (0.15, 0.35),
            ("flicker", "camera_drift"),
            0.8,
            (0.75, 1.0),
            ("stop_short", "wrong_target"),
            "clean pictures, but often misses the goal",
        ),
        Profile(
            "drifty",
            1.0,
            (1, 1),
            (0.3, 0.6),
            ("teleport", "flicker", "camera_drift", "floating", "vanish"),
            0.3,
            (0.75, 1.0),
            ("stop_short",),
            "one moderate physical artifact per video",
        ),
        Profile(
            "glitchy",
            1.0,
            (2, 2),
            (0.6, 1.0),
            _ALL_PA,
            0.3,
            (0.75, 1.0),
            ("wrong_target", "stop_short"),
            "two severe physical artifacts per video",
        ),
        Profile(
            "chaotic",
            1.0,
            (2, 3),
            (0.7, 1.0),
            _ALL_PA,
            0.8,
            (0.75, 1.0),
            ("wrong_object", "unrelated"),
            "several severe artifacts and usually the wrong behaviour",
        ),
    )
}

KINEMATIC_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "kin_mild",
            1.0,
            (1, 1),
            (0.15, 0.45),
            KINEMATIC_TYPES,
            0.0,
            (0.1, 0.1),
            (),
            "one mild kinematic failure per video (the robot's own motion only)",
        ),
        Profile(
            "kin_severe",
            1.0,
            (1, 2),
            (0.6, 1.0),
            KINEMATIC_TYPES,
            0.0,
            (0.1, 0.1),
            (),
            "one or two severe kinematic failures per video",
        ),
    )
}
"""Opt-in profiles that plant only kinematic failures; never part of the default suite."""

MULTIVIEW_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "mv_mild",
            1.0,
            (1, 1),
            (0.15, 0.45),
            MULTIVIEW_TYPES,
            0.0,
            (0.1, 0.1),
            (),
            "one mild multi-view failure per video (one view disagrees with the others)",
        ),
        Profile(
            "mv_severe",
            1.0,
            (1, 2),
            (0.6, 1.0),
            MULTIVIEW_TYPES,
            0.0,
            (0.1, 0.1),
            (),
            "one or two severe multi-view failures per video",
        ),
    )
}
"""Opt-in profiles that plant only multi-view failures (need ``views >= 2``); never in the default suite."""

# Appended after the others: a built-in profile's random stream is seeded by its index here.
ALL_PROFILES: dict[str, Profile] = {**PROFILES, **KINEMATIC_PROFILES, **MULTIVIEW_PROFILES}
"""Every built-in profile, by name (the default suite renders ``PROFILES`` only)."""


def draws_multiview(profile: Profile) -> bool:
    """Whether a profile can plant a multi-view failure."""
    return any(t in MULTIVIEW_TYPES for t in profile.pa_types)

TRUE_RANKING = {
    "pa": ("oracle", "sloppy", "steady", "drifty", "glitchy", "chaotic"),
    # drifty and glitchy fail IA equally often (p=0.3) and every failure they draw (stop_short or
    # wrong_target at s >= 0.75) scores IA 2: the rule cannot tell them apart
    "ia": ("oracle = steady", "drifty = glitchy", "sloppy", "chaotic"),
}
"""Expected order, best first, from the profile parameters (expected PA penalty, IA failure rate);
``a = b`` are equal in expectation under :func:`planted_labels`."""


def _round(x: float) -> int:
    return int(math.floor(x + 0.5))


def item_score(severities: Iterable[float]) -> int:
    """0-2 checklist score from the severities of the failures on that item: none 2, mild 1, severe 0."""
    worst = max(severities, default=0.0)
    if worst <= 0:
        return 2
    return 1 if worst < 0.5 else 0


def planted_labels(failures: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Reference labels for a rollout from its planted failures (dicts with axis, item, severity, type).

    Rule (documented in docs/sim_suite.md):

    * checklist: each item scores 2 without failures on it, 1 if its worst failure has severity < 0.5,
      else 0. ``unrelated`` motion also sets ``agent_match`` to 1; every IA failure
      sets ``goal_completion`` to 0, except a ``stop_short`` of severity < 0.5 (scored 1).
    * PA = max(1, 5 - round(2.5 * sum of PA severities)); instruction failures never lower PA.
    * IA = 5 without IA failures; otherwise start from goal_completion (2 -> 4, 1 -> 3, 0 -> 2), minus 1
      if object_correctness is 0, minus 1 if agent_match is below 2, clipped to 1-5. PA failures never
      lower IA.
    * overall = PA + IA (2-10).
    """
    fs = list(failures)
    sev: dict[str, list[float]] = {k: [] for k in CHECKLIST_ITEMS}
    pa_sum = 0.0
    ia = [f for f in fs if f["axis"] == "ia"]
    for f in fs:
        sev[f["item"]].append(float(f["severity"]))
        if f["axis"] == "pa":
            pa_sum += float(f["severity"])
    checklist = {k: item_score(v) for k, v in sev.items()}
    for f in ia:
        if f["type"] == "unrelated":
            checklist["agent_match"] = min(checklist["agent_match"], 1)
        if f["type"] != "stop_short" or f["severity"] >= 0.5:
            checklist["goal_completion"] = 0
    pa = max(1, 5 - _round(2.5 * pa_sum))
    if not ia:
        ia_score = 5
    else:
        ia_score = {2: 4, 1: 3, 0: 2}[checklist["goal_completion"]]
        ia_score -= checklist["object_correctness"] == 0
        ia_score -= checklist["agent_match"] < 2
        ia_score = min(5, max(1, ia_score))
    parts = [
        f"{f['type']} ({f['axis'].upper()}, severity {f['severity']:.2f}, frames {f['start']}-{f['stop']})"
        for f in fs
    ]
    evidence = "planted: " + ("; ".join(parts) if parts else "no failures (faithful replay)")
    return {
        "pa": pa,
        "ia": ia_score,
        "checklist": checklist,
        "overall": pa + ia_score,
        "evidence": evidence,
        "rater": "planted",
    }
