"""Expanding the word ``all`` in a list of metric ids (``robojudge score --metrics all``).

``all`` means every metric robojudge can compute here: the ``computed`` metrics, plus the ``model``
metrics whose network weights are all present on this machine (see ``robojudge weights status``) and
whose libraries are installed (the ``torch`` extra, ``iqa`` for pyiqa's networks: :func:`missing_libraries`).
Set-level metrics (:mod:`robojudge.metrics._sets`) are never part of a per-item ``all``. A model metric
named explicitly whose libraries are not installed is refused before anything is read
(:class:`MissingLibrariesError`), rather than failing on every item.

``all`` also selects per item: a metric it brings in runs only on the items that have every input
it declares (:func:`missing_inputs`), so a suite of bare videos gets no error row per item for the
metrics that need a simulator state, a reference video or an instruction; one summary line names
them (:func:`inapplicable_summary`). A metric named explicitly runs on every item, and its error row
says what the item lacks.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
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


#: What a grid item without a ``main_view`` lacks for a metric that reads one video: its ``video``
#: stitches several views, and the metric would measure the stitched frame (seams, several cameras) as if
#: it were one camera's. With a ``main_view``, such a metric reads that view's cell.
GRID_VIDEO = ("single-view video (its video is a grid of views and it names no main_view: set main_view to "
              "the view whose cell single-view metrics read)")


def missing_inputs(spec: MetricSpec[Any], item: Item) -> list[str]:
    """The inputs ``spec`` declares that ``item`` does not give (empty manifest field), sorted.

    Only whether the manifest names them: a named file that cannot be read is the metric's error.
    An item whose video is a ``grid`` of views and that names no ``main_view`` lacks a single-view video
    for the metrics that read the video but not the views (:data:`GRID_VIDEO`); with a ``main_view``,
    they read that view's cell (:func:`robojudge.run.compute_metric`).
    """
    missing = [i.value for i in spec.inputs if not _INPUT_FIELDS[i](item)]
    if (item.grid is not None and item.main_view is None and Input.video in spec.inputs
            and Input.views not in spec.inputs):
        missing.append(GRID_VIDEO)
    return sorted(missing)


def inapplicable_summary(left_out: Mapping[str, int],
                         lacking: Mapping[str, Mapping[str, int]] | None = None) -> list[str]:
    """Lines naming the metrics ``all`` left out of some items for lack of inputs, and how many items.

    Args:
        left_out: metric id -> number of items it was not run on (``RunSummary.not_applicable``).
        lacking: metric id -> what those items lack -> how many lack it
            (``RunSummary.not_applicable_lacking``): named instead of every input the metric declares,
            so a metric needing an instruction and a caption, on items that have the instruction, says
            ``lack meta.caption``. A per-item text names the setting that gives it from a file too.
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
            needs = ", ".join([*sorted(i.value for i in spec.inputs if i not in _ALWAYS), *texts])
            if not needs:  # every item has a video: what it lacked is a video of one view
                needs = GRID_VIDEO if Input.video in spec.inputs and Input.views not in spec.inputs else "?"
        except UnknownMetricError:  # a plugin gone since the run: the count still stands
            spec, needs = None, "inputs not known here"
        lacked = (lacking or {}).get(mid)
        if lacked:
            lack = "items lack" if n != 1 else "item lacks"
            parts.append(f"{mid} ({n} {lack} {_lacked(mid, spec, lacked, n)})")
            continue
        parts.append(f"{mid} ({n} item{'s' if n != 1 else ''}; needs {needs})")
    return [f"{len(counts)} metrics not run on items without their inputs (name a metric to run it "
            f"anyway and store why it fails): " + ", ".join(parts)]


def _lacked(mid: str, spec: MetricSpec[Any] | None, lacked: Mapping[str, int], n: int) -> str:
    """``meta.caption or a captions file (--set sa_bleu.captions=FILE)``, ``reference, state (12)``: what
    ``n`` items left out lack, each with its count where fewer than all of them lack it."""
    files = {f"meta.{key}": name for name, key in item_text_fields(spec.config_type)} if spec else {}
    out = []
    for what, count in sorted(lacked.items()):
        text = f"{what} or a {files[what]} file (--set {mid}.{files[what]}=FILE)" if what in files else what
        out.append(text if count >= n else f"{text} ({count})")
    return ", ".join(out)


#: The modules each loader library of a network (``WeightSpec.library``) imports. Depth Anything 3's own
#: package is left out: no extra installs it, and its metrics say how to install it when it is missing.
_LIBRARY_MODULES: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "torchscript": ("torch",),
    "torchvision": ("torch", "torchvision"),
    "transformers": ("torch", "transformers"),
    "pyiqa": ("torch", "torchvision", "pyiqa"),
    "depth_anything_3": ("torch",),
    # robojudge's own ViCLIP network (models._viclip_net): torch and torchvision, and openai-clip's
    # byte-pair tokenizer, which comes with pyiqa.
    "viclip": ("torch", "torchvision", "clip"),
}
#: The extra of pyproject.toml that installs each of those modules, in the order extras are named.
_MODULE_EXTRAS: dict[str, str] = {"torch": "torch", "torchvision": "torch", "transformers": "torch",
                                  "pyiqa": "iqa", "clip": "iqa"}
_EXTRAS_ORDER = ("torch", "iqa")


def _installed(module: str, known: MutableMapping[str, bool] | None = None) -> bool:
    """Whether ``module`` can be imported here, asked without importing it (memoised in ``known``)."""
    if known is not None and module in known:
        return known[module]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module in sys.modules without a spec: it is imported
        found = module in sys.modules
    if known is not None:
        known[module] = found
    return found


def _required_modules(spec: MetricSpec[Any]) -> list[str]:
    """The modules ``spec`` imports to load its networks, as far as robojudge knows them: those of the
    library of each network it declares and, for a built-in metric that reads a model the user trains
    (KIVA's keypoint reader, a torch network), torch."""
    from robojudge.models import get_weights

    out: list[str] = []
    for name in spec.weights:
        try:
            library = get_weights(name).library
        except KeyError:  # a network nobody registered: weights_present already leaves it out
            continue
        out += [m for m in _LIBRARY_MODULES.get(library, ()) if m not in out]
    trained = not spec.weights and TRAINED_MODEL_FIELD in spec.config_type.model_fields
    if trained and spec.provider is Provider.model and spec.fn.__module__.startswith("robojudge."):
        out.append("torch")  # declares no weights, so nothing above named it
    return out


def missing_libraries(spec: MetricSpec[Any], known: MutableMapping[str, bool] | None = None) -> list[str]:
    """The modules ``spec`` needs to load its networks that are not installed here (empty: none known
    missing). ``known`` memoises which modules are installed across calls."""
    if spec.provider is not Provider.model:
        return []
    return [m for m in _required_modules(spec) if not _installed(m, known)]


def install_hint(modules: Iterable[str]) -> str:
    """``pip install '.[...]' in a robojudge checkout`` naming the extras that install ``modules`` (torch,
    pyiqa, ...): robojudge is not on PyPI (a package of that name there is not this project)."""
    extras = {_MODULE_EXTRAS.get(m, "torch") for m in modules}
    ordered = [e for e in _EXTRAS_ORDER if e in extras] + sorted(extras - set(_EXTRAS_ORDER))
    return f"pip install '.[{','.join(ordered)}]' in a robojudge checkout"


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


class MissingLibrariesError(ValueError):
    """Metrics named explicitly whose networks need libraries that are not installed here; the message is
    one line naming the metrics, the missing modules and the extra that installs them."""

    def __init__(self, metrics: Mapping[str, Sequence[str]]) -> None:
        self.metrics = {m: list(mods) for m, mods in metrics.items()}
        modules: list[str] = []
        for mods in self.metrics.values():
            modules += [m for m in mods if m not in modules]
        ids = ", ".join(repr(m) for m in self.metrics)
        who = f"metric {ids} needs" if len(self.metrics) == 1 else f"metrics {ids} need"
        verb = "is" if len(modules) == 1 else "are"
        super().__init__(f"{who} {_and(modules)}, which {verb} not installed here: {install_hint(modules)}")


def runs_with_all(spec: MetricSpec[Any], present: Mapping[str, bool] | None = None,
                  known: MutableMapping[str, bool] | None = None) -> bool:
    """Whether ``all`` includes ``spec`` on this machine (``known``: see :func:`missing_libraries`)."""
    if is_set_metric(spec.id):
        return False
    if spec.provider is Provider.computed:
        return True
    return (spec.provider is Provider.model and weights_present(spec, present)
            and not missing_libraries(spec, known))


def _refuse_missing_libraries(metric_ids: Iterable[str]) -> None:
    """Raise :class:`MissingLibrariesError` for the named model metrics whose libraries are not installed.

    Unknown ids are left to the caller's lookup (its error suggests close names), and set-level metrics
    to the per-item runner, which says they are scored by ``robojudge metrics sets``.
    """
    known: dict[str, bool] = {}
    missing: dict[str, list[str]] = {}
    for mid in metric_ids:
        try:
            spec = get_metric(mid)
        except UnknownMetricError:
            continue
        if not is_set_metric(mid) and (mods := missing_libraries(spec, known)):
            missing[mid] = mods
    if missing:
        raise MissingLibrariesError(missing)


def expand_metric_ids(metric_ids: Sequence[str]) -> list[str]:
    """Replace ``all`` by the ids of every metric runnable here; keep order and drop repeats.

    Args:
        metric_ids: Requested ids, possibly containing ``all``.

    Returns:
        The ids to run; ``all`` expands, at its position and in id order, to the ``computed``
        metrics and the ``model`` metrics whose weights are all present and whose libraries are
        installed (set-level metrics excluded).

    Raises:
        MissingLibrariesError: (a ``ValueError``) A ``model`` metric named explicitly needs a library
            that is not installed (torch without the ``torch`` extra, pyiqa without ``iqa``).
    """
    _refuse_missing_libraries(m for m in metric_ids if m != ALL_METRICS)
    out: list[str] = []
    for mid in metric_ids:
        if mid == ALL_METRICS:
            specs = list_metrics()
            present = present_names(specs)
            known: dict[str, bool] = {}
            names = [s.id for s in specs if runs_with_all(s, present, known)]
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
    modules = missing_libraries(spec)
    if modules:
        lines.append(f"needs {_and(modules)}, not installed here: {install_hint(modules)}")
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

    Model metrics are listed first: those needing libraries not installed here (a line per extra that
    installs them), those needing missing weights (the metrics on one line, the missing networks on the
    next), those that read a model you train, those that declare no weights (plugins), then set-level
    metrics, judge and external ones.
    """
    skipped = not_run_by_all()
    present = present_names(skipped)
    lines: list[str] = []
    model = [s for s in skipped if s.provider is Provider.model and not is_set_metric(s.id)]
    # Libraries first: without them neither weights nor a trained model would help.
    known: dict[str, bool] = {}
    unlibbed = {s.id: mods for s in model if (mods := missing_libraries(s, known))}
    model_here = [s for s in model if s.id not in unlibbed]
    wired = [s for s in model_here if s.weights]
    # A metric that reads a model the user trains (KIVA's keypoint reader) has no weights to download.
    trained = [s for s in model_here if not s.weights and TRAINED_MODEL_FIELD in s.config_type.model_fields]
    undeclared = [s for s in model_here if not s.weights and s not in trained]
    if model:
        counts = ([f"{len(unlibbed)} need libraries not installed here"] if unlibbed else []) + (
            [f"{len(wired)} need weights missing here"] if wired or not unlibbed else [])
        lines.append(f"{len(model)} model metrics not run: {', '.join(counts)}"
                     + (f", {len(trained)} need a model you train" if trained else "")
                     + (f", {len(undeclared)} declare no weights" if undeclared else ""))
    by_hint: dict[str, tuple[list[str], list[str]]] = {}
    for mid, mods in unlibbed.items():
        ids, modules = by_hint.setdefault(install_hint(mods), ([], []))
        ids.append(mid)
        modules += [m for m in mods if m not in modules]
    for hint, (ids, modules) in by_hint.items():
        lines.append(f"  need {_and(modules)}, not installed here ({hint}): {', '.join(ids)}")
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
