"""Expanding the word ``all`` in a list of metric ids (``robojudge score --metrics all``).

``all`` means every metric robojudge can compute here: the ``computed`` metrics, plus the ``model``
metrics whose network weights are all present on this machine (see ``robojudge weights status``).
Set-level metrics (:mod:`robojudge.metrics._sets`) are never part of a per-item ``all``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from robojudge.metrics._presence import missing_weights, present_names, weights_present
from robojudge.metrics._registry import MetricSpec, Provider, list_metrics
from robojudge.metrics._sets import is_set_metric

#: The id that stands for every metric robojudge can compute here.
ALL_METRICS = "all"

_WHY: dict[Provider, str] = {
    Provider.judge: "come from a judge rubric: run them with `robojudge judge`",
    Provider.external: ("come from an external pipeline (policy replay or training in a simulator, or a "
                        "per-video 3D reconstruction): bring them in with `robojudge results import`"),
}


def runs_with_all(spec: MetricSpec[Any], present: Mapping[str, bool] | None = None) -> bool:
    """Whether ``all`` includes ``spec`` on this machine."""
    if is_set_metric(spec.id):
        return False
    if spec.provider is Provider.computed:
        return True
    return spec.provider is Provider.model and weights_present(spec, present)


def expand_metric_ids(metric_ids: Sequence[str]) -> list[str]:
    """Replace ``all`` by the ids of every metric runnable here; keep order and drop repeats.

    Args:
        metric_ids: Requested ids, possibly containing ``all``.

    Returns:
        The ids to run; ``all`` expands, at its position and in id order, to the ``computed``
        metrics and the ``model`` metrics whose weights are all present (set-level metrics excluded).
    """
    out: list[str] = []
    for mid in metric_ids:
        if mid == ALL_METRICS:
            specs = list_metrics()
            present = present_names(specs)
            names = [s.id for s in specs if runs_with_all(s, present)]
        else:
            names = [mid]
        out.extend(n for n in names if n not in out)
    return out


def not_run_by_all() -> list[MetricSpec[Any]]:
    """Registered metrics that ``all`` leaves out on this machine."""
    specs = list_metrics()
    present = present_names(specs)
    return [s for s in specs if not runs_with_all(s, present)]


def not_run_summary() -> list[str]:
    """Lines saying which metrics ``all`` skips here, and why.

    Model metrics are listed first: those needing missing weights (named, with where to look),
    those that declare no weights (plugins), then set-level metrics, judge and external ones.
    """
    skipped = not_run_by_all()
    present = present_names(skipped)
    lines: list[str] = []
    model = [s for s in skipped if s.provider is Provider.model and not is_set_metric(s.id)]
    wired = [s for s in model if s.weights]
    undeclared = [s for s in model if not s.weights]
    if model:
        lines.append(f"{len(model)} model metrics not run: {len(wired)} need weights missing here"
                     + (f", {len(undeclared)} declare no weights" if undeclared else ""))
    for s in wired:
        names = ", ".join(missing_weights(s, present))
        lines.append(f"  {s.id}: needs weights {names} (robojudge weights status)")
    if undeclared:
        lines.append(f"  no weights declared (name them with metric(..., weights=...)): "
                     f"{', '.join(s.id for s in undeclared)}")
    sets = [s for s in skipped if is_set_metric(s.id)]
    if sets:
        lines.append(f"{len(sets)} set-level metrics not run per item (score them with "
                     f"`robojudge metrics sets`): " + ", ".join(s.id for s in sets))
    for provider, why in _WHY.items():
        ids = [s.id for s in skipped if s.provider is provider and not is_set_metric(s.id)]
        if ids:
            lines.append(f"{len(ids)} {provider.value} metrics not run ({why}): {', '.join(ids)}")
    return lines


def metrics_by_weights() -> dict[str, list[str]]:
    """``weights name -> ids of the metrics that load it`` over the whole registry."""
    out: dict[str, list[str]] = {}
    for s in list_metrics():
        for name in s.weights:
            out.setdefault(name, []).append(s.id)
    return out
