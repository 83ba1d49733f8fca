"""Stored metric ids of judge scores, and the RoboPhys-3D taxonomy metric each one feeds.

A judge's score for a rubric is stored under ``judge:<judge name>:<rubric id>`` (for example
``judge:qwen:pa`` or ``judge:qwen:pla_physical_commonsense``). The built-in RoboPhys-3D rubrics
declare ``taxonomy = "<metric id>"`` (their rubric id is that same metric id), so a stored judge
score maps to exactly one taxonomy metric, on that metric's native scale; ``aggregate`` normalizes it
with the taxonomy's rule (App. B.5 of RoboPhys-3D). Each judged row also carries the id in
``details["taxonomy_id"]``, which covers user rubric files that declare ``taxonomy`` too.
"""

from __future__ import annotations

from robojudge.judges._rubric import RUBRICS
from robojudge.registry import UnknownNameError

PREFIX = "judge:"


def judge_metric_id(judge: str, rubric: str) -> str:
    """The stored metric id of a judge's rubric: ``judge:<judge>:<rubric>``."""
    return f"{PREFIX}{judge}:{rubric}"


def split_judge_metric_id(metric: str) -> tuple[str, str] | None:
    """``(judge, rubric)`` of a ``judge:<judge>:<rubric>`` id, or ``None`` for any other metric id."""
    if not metric.startswith(PREFIX):
        return None
    judge, sep, rubric = metric[len(PREFIX) :].rpartition(":")
    if not sep or not judge or not rubric:
        return None
    return judge, rubric


def judge_taxonomy_id(metric: str) -> str | None:
    """The RoboPhys-3D taxonomy metric a stored judge score feeds, or ``None``.

    ``judge:qwen:dc_perspectivity`` gives ``dc_perspectivity``; ``judge:qwen:pa`` (RoboJudge PA, not
    a RoboPhys-3D metric), a caption rubric, an unknown rubric or a non-judge id give ``None``.
    """
    parts = split_judge_metric_id(metric)
    if parts is None:
        return None
    try:
        return RUBRICS.get(parts[1]).taxonomy
    except UnknownNameError:
        return None


def taxonomy_rubrics() -> dict[str, str]:
    """Built-in rubric id -> taxonomy metric id, for every rubric that feeds one."""
    out: dict[str, str] = {}
    for name in RUBRICS.names():
        tax = RUBRICS.get(name).taxonomy
        if tax:
            out[name] = tax
    return out
