"""Expanding the word ``all`` in a list of metric ids (``robojudge score --metrics all``).

``all`` means every metric robojudge can compute here: the ``computed`` metrics, plus the ``model``
metrics whose network weights are all present on this machine (see ``robojudge weights status``).
Set-level metrics (:mod:`robojudge.metrics._sets`) are never part of a per-item ``all``.

``all`` also selects per item: a metric it brings in runs only on the items that have every input
it declares (:func:`missing_inputs`), so a suite of bare videos gets no error row per item for the
metrics that need a simulator state, a reference video or an instruction; one summary line names
them (:func:`inapplicable_summary`). A metric named explicitly runs on every item, and its error row
says what the item lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robojudge.metrics._presence import missing_weights, present_names, weights_present
from robojudge.metrics._registry import (
    Input,
    MetricSpec,
    Provider,
    UnknownMetricError,
    get_metric,
    list_metrics,
)
from robojudge.metrics._sets import is_set_metric
from robojudge.metrics._texts import item_text_fields
from robojudge.suite._schema import Item

#: The id that stands for every metric robojudge can compute here.
ALL_METRICS = "all"

_WHY: dict[Provider, str] = {
    Provider.judge: "come from a judge rubric: run them with `robojudge judge`",
    Provider.external: ("come from an external pipeline (policy replay or training in a simulator, or a "
                        "per-video 3D reconstruction): bring them in with `robojudge results import`"),
}


_INPUT_FIELDS: dict[Input, Callable[[Item], object]] = {
    Input.video: lambda it: it.video,
    Input.reference: lambda it: it.reference_video,
    Input.views: lambda it: it.views or it.grid,
    Input.state: lambda it: it.state,
    Input.instruction: lambda it: it.instruction,
    Input.initial_frame: lambda it: it.video,  # the first frame stands in when none is given
}


#: Inputs every item gives: a manifest row without a video is refused.
_ALWAYS = frozenset({Input.video, Input.initial_frame})


#: What a grid item lacks for a metric that reads one video: its ``video`` stitches several views, and
#: the metric would measure the stitched frame (seams, several cameras) as if it were one camera's.
GRID_VIDEO = "single-view video (its video is a grid of views)"


def missing_inputs(spec: MetricSpec[Any], item: Item) -> list[str]:
    """The inputs ``spec`` declares that ``item`` does not give (empty manifest field), sorted.

    Only whether the manifest names them: a named file that cannot be read is the metric's error.
    An item whose video is a ``grid`` of views lacks a single-view video for the metrics that read
    the video but not the views (:data:`GRID_VIDEO`).
    """
    missing = [i.value for i in spec.inputs if not _INPUT_FIELDS[i](item)]
    if item.grid is not None and Input.video in spec.inputs and Input.views not in spec.inputs:
        missing.append(GRID_VIDEO)
    return sorted(missing)


def inapplicable_summary(left_out: Mapping[str, int]) -> list[str]:
    """Lines naming the metrics ``all`` left out of some items for lack of inputs, and how many items.

    Args:
        left_out: metric id -> number of items it was not run on (``RunSummary.not_applicable``).
    """
    counts = {m: n for m, n in sorted(left_out.items()) if n}
    if not counts:
        return []
    parts = []
    for mid, n in counts.items():
        try:
            # Every item has a video (the manifest requires one), so name only what else it needs.
            spec = get_metric(mid)
            texts = [f"meta.{key}" for _, key in item_text_fields(spec.config_type)]
            needs = ", ".join([*sorted(i.value for i in spec.inputs if i not in _ALWAYS), *texts]) or "?"
        except UnknownMetricError:  # a plugin gone since the run: the count still stands
            needs = "inputs not known here"
        parts.append(f"{mid} ({n} item{'s' if n != 1 else ''}; needs {needs})")
    return [f"{len(counts)} metrics not run on items without their inputs (name a metric to run it "
            f"anyway and store why it fails): " + ", ".join(parts)]


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


#: The config field of a model metric that reads a model the user trains instead of published weights.
TRAINED_MODEL_FIELD = "reader"


def how_to_score(spec: MetricSpec[Any]) -> list[str]:
    """How a user gets ``spec``'s values on this machine, one line each (``robojudge metrics info``):
    the command that computes it, and what it needs first (weights missing here, a model to train)."""
    mid = spec.id
    if is_set_metric(mid):
        lines = [f"set-level, one value per group of items: `robojudge metrics sets SUITE -m {mid} --by "
                 "generator`"]
    elif spec.provider is Provider.judge:
        return ["comes from a VLM judge's rubric: run it with `robojudge judge SUITE` (docs/judges.md)"]
    elif spec.provider is Provider.external:
        return ["comes from an external pipeline (policy replay or training in a simulator, or a per-video "
                "3D reconstruction): bring its values in with `robojudge results import FILE` "
                "(docs/external.md)"]
    else:
        lines = [f"`robojudge score SUITE -m {mid}` (settings: `--set {mid}.FIELD=VALUE`)"]
    if TRAINED_MODEL_FIELD in spec.config_type.model_fields and not spec.weights:
        lines.append(f"needs a model you train: `--set {mid}.{TRAINED_MODEL_FIELD}=PATH` (for KIVA, "
                     "`robojudge kiva train` makes one: docs/kiva.md)")
    missing = missing_weights(spec, present_names([spec]))
    if missing:
        from robojudge.models import get_weights, how_to_provide

        ways = "; ".join(how_to_provide(get_weights(n)) for n in missing)
        lines.append(f"needs network weights missing here: {', '.join(missing)} ({ways}; docs/weights.md)")
    elif spec.weights:
        lines.append(f"network weights present here: {', '.join(spec.weights)}")
    return lines


def not_run_by_all() -> list[MetricSpec[Any]]:
    """Registered metrics that ``all`` leaves out on this machine."""
    specs = list_metrics()
    present = present_names(specs)
    return [s for s in specs if not runs_with_all(s, present)]


def not_run_summary() -> list[str]:
    """Lines saying which metrics ``all`` skips here, and why.

    Model metrics are listed first: those needing missing weights (the metrics on one line, the
    missing networks on the next),
    those that declare no weights (plugins), then set-level metrics, judge and external ones.
    """
    skipped = not_run_by_all()
    present = present_names(skipped)
    lines: list[str] = []
    model = [s for s in skipped if s.provider is Provider.model and not is_set_metric(s.id)]
    wired = [s for s in model if s.weights]
    # A metric that reads a model the user trains (KIVA's keypoint reader) has no weights to download.
    trained = [s for s in model if not s.weights and TRAINED_MODEL_FIELD in s.config_type.model_fields]
    undeclared = [s for s in model if not s.weights and s not in trained]
    if model:
        lines.append(f"{len(model)} model metrics not run: {len(wired)} need weights missing here"
                     + (f", {len(trained)} need a model you train" if trained else "")
                     + (f", {len(undeclared)} declare no weights" if undeclared else ""))
    if wired:  # two lines, however many: `robojudge weights list` says which metric loads which network
        needed = sorted({name for s in wired for name in missing_weights(s, present)})
        lines.append("  need weights: " + ", ".join(s.id for s in wired))
        lines.append(f"  missing weights ({len(needed)}; `robojudge weights status` says where each goes, "
                     "`robojudge weights list` which metrics load it): " + ", ".join(needed))
    if trained:
        lines.append(f"  need a model you train (--set METRIC.{TRAINED_MODEL_FIELD}=PATH; `robojudge metrics "
                     f"info METRIC` says how): {', '.join(s.id for s in trained)}")
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
