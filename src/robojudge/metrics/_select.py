"""Expanding the word ``all`` in a list of metric ids (``robojudge score --metrics all``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robojudge.metrics._registry import MetricSpec, Provider, list_metrics

#: The id that stands for every metric robojudge computes itself.
ALL_METRICS = "all"

_WHY: dict[Provider, str] = {
    Provider.model: "need network weights that robojudge does not ship yet",
    Provider.judge: "come from a judge rubric: run them with `robojudge judge`",
    Provider.external: "come from an external pipeline (policy replay or training in a simulator)",
}


def expand_metric_ids(metric_ids: Sequence[str]) -> list[str]:
    """Replace ``all`` by the ids of every ``computed`` metric; keep order and drop repeats.

    Args:
        metric_ids: Requested ids, possibly containing ``all``.

    Returns:
        The ids to run; ``all`` expands to the computed metrics in id order at its position.
    """
    out: list[str] = []
    for mid in metric_ids:
        if mid == ALL_METRICS:
            names = [s.id for s in list_metrics() if s.provider is Provider.computed]
        else:
            names = [mid]
        out.extend(n for n in names if n not in out)
    return out


def not_run_by_all() -> list[MetricSpec[Any]]:
    """Registered metrics that ``all`` leaves out because robojudge does not compute them itself."""
    return [s for s in list_metrics() if s.provider is not Provider.computed]


def not_run_summary() -> list[str]:
    """One line per provider that ``all`` skips: how many, why, and which ids."""
    lines = []
    for provider, why in _WHY.items():
        ids = [s.id for s in not_run_by_all() if s.provider is provider]
        if ids:
            lines.append(f"{len(ids)} {provider.value} metrics not run ({why}): {', '.join(ids)}")
    return lines
