"""What the metric registry and the built-in rubrics know about a stored metric id: its direction and
its native range, or that they do not know them.

Metrics come from the metric registry (``robojudge metrics list``); judge scores
(``judge:<name>:<rubric>``) from the built-in rubric they were asked with. An id neither knows (a
plugin no longer installed, a user rubric file, an imported column) has no known direction and no
known range: the report says so instead of guessing.

The report (``robojudge.report``) does not import the metric registry or the judges; the callers that
may (the CLI, the demo, user scripts) pass these lookups in, as ``higher_is_better`` and
``native_range``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from robojudge.taxonomy import load_taxonomy

if TYPE_CHECKING:
    from robojudge.judges import Rubric


def _rubric(metric: str) -> Rubric | None:
    from robojudge.judges import RUBRICS, UnknownNameError, split_judge_metric_id

    parts = split_judge_metric_id(metric)
    if parts is None:
        return None
    try:
        return RUBRICS.get(parts[1])
    except UnknownNameError:
        return None


def _spec(metric: str) -> Any:
    from robojudge.metrics import UnknownMetricError, get_metric

    try:
        return get_metric(metric)
    except UnknownMetricError:
        return None


@functools.lru_cache(maxsize=4096)
def registry_direction(metric: str) -> bool | None:
    """True if a higher value of ``metric`` is better, False if lower is, None if nobody knows.

    A judge score on a built-in rubric grows with quality, unless the rubric feeds a taxonomy metric,
    whose direction it then shares.
    """
    spec = _spec(metric)
    if spec is not None:
        return bool(spec.higher_is_better)
    rubric = _rubric(metric)
    if rubric is None:
        return None
    if rubric.taxonomy:
        return registry_direction(rubric.taxonomy)
    return True


@functools.lru_cache(maxsize=4096)
def registry_range(metric: str) -> tuple[float | None, float | None] | None:
    """``(low, high)`` bounds of ``metric``'s values (either may be None: unbounded), or None if unknown."""
    spec = _spec(metric)
    if spec is not None:
        lo, hi = spec.native_range
        return lo, hi
    rubric = _rubric(metric)
    if rubric is None:
        return None
    return float(rubric.score_min), float(rubric.score_max)


def default_direction(metric: str) -> bool | None:
    """The metric registry's direction of ``metric``, else the taxonomy's, else None (unknown)."""
    known = registry_direction(metric)
    if known is not None:
        return known
    tax = load_taxonomy()
    return tax[metric].higher_is_better if metric in tax else None
