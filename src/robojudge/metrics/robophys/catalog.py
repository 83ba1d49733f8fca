"""The RoboPhys-3D metrics robojudge does not compute itself, registered so every taxonomy id resolves.

Each one is registered under its taxonomy id with its place, direction and range, and a provider:
``judge`` (a VLM-grounded score that comes from a built-in judge rubric of the same id) or
``external`` (produced by a pipeline outside robojudge: IDM replay or policy training in a simulator,
or a per-video 3D reconstruction; imported with ``robojudge results import``). A ``model`` row would
name a network robojudge does not run yet; there is none today, every model metric is implemented.
Computing one raises :class:`MetricInputError` that says where the value has to come from.

Only ids that no metric module computes belong here: the catalog registers every row, so a row for a
computed id fails as a duplicate registration (``tests/metrics/test_metrics_robophys_registry.py``
checks the rows against the taxonomy and the rubrics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input, NoConfig, Provider
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item
from robojudge.taxonomy import load_taxonomy


class Entry(NamedTuple):
    """Provider, family and what a not-computed metric needs (model names follow App. B.1-B.4)."""

    provider: Provider
    family: Family
    needs: str


J, X = Provider.judge, Provider.external
_VLM = "a Qwen3-VL judge"

# Rows in taxonomy order. Every other taxonomy id is computed by a metric module (provider
# ``computed`` or ``model``, see robojudge.registry.BUILTIN_MODULES["metric"]).
CATALOG: dict[str, Entry] = {
    "rbg_fidelity": Entry(X, Family.external, "COLMAP SfM and 3D Gaussian splatting trained per video"),
    "dc_perspectivity": Entry(J, Family.judge, _VLM),
    "rc_spatial_consistency": Entry(X, Family.external,
                                    "MegaSaM poses optimised per video, then DreamSim similarity"),
    "ta_mean_trajectory_length": Entry(X, Family.external, "IDM action replay in the RoboTwin 2.0 simulator"),
    "iq2_interaction_score": Entry(J, Family.judge, _VLM),
    "eaa_event_editing": Entry(J, Family.judge, _VLM),
    "eaa_subject_action": Entry(J, Family.judge, _VLM),
    "pla_physical_commonsense": Entry(J, Family.judge, _VLM),
    "sa_logics": Entry(J, Family.judge, _VLM),
    "sa_vlm1": Entry(J, Family.judge, f"{_VLM} with CLIP similarity"),
    "sa_subject_adherence": Entry(J, Family.judge, _VLM),
    "sa_scene_adherence": Entry(J, Family.judge, _VLM),
    "if_normalized_score": Entry(J, Family.judge, _VLM),
    "if_four_level_score": Entry(J, Family.judge, _VLM),
    "ts_action_planner": Entry(X, Family.external, "IDM action replay in the RoboTwin 2.0 simulator"),
    "ts_data_engine": Entry(X, Family.external, "pi0.5 policy training on generated data in RoboTwin 2.0"),
    "ts_vlm2": Entry(J, Family.judge, _VLM),
}

_GROUNDING_INPUTS: dict[str, set[Input]] = {
    "Reference-Free": {Input.video},
    "Video-Grounded": {Input.video, Input.reference},
    "VLM-Grounded": {Input.video, Input.instruction},
    "Simulator-Grounded": {Input.video, Input.state},
}


def unavailable_message(metric_id: str, entry: Entry) -> str:
    """Why ``robojudge score`` cannot compute this metric, and where its value comes from."""
    name = load_taxonomy()[metric_id].name
    if entry.provider is Provider.model:
        return (f"{metric_id} ({name}) needs {entry.needs}, which robojudge does not implement yet; "
                "`robojudge metrics list` shows the model-backed metrics it does run")
    if entry.provider is Provider.judge:
        return (f"{metric_id} ({name}) is VLM-grounded ({entry.needs} in the paper): it comes from a judge "
                "rubric, run with `robojudge judge`, not from `robojudge score`")
    return (f"{metric_id} ({name}) comes from an external pipeline ({entry.needs}); robojudge does not "
            f"compute it: import its values with `robojudge results import FILE --run RUN_DIR "
            f"--metric {metric_id}` (FILE: CSV, JSON Lines or Parquet with item_id and value columns)")


class _Unavailable:
    """A not-computed metric's function: raises why. A module-level callable rather than a closure,
    so worker processes (``--workers``) can unpickle the metric spec."""

    def __init__(self, metric_id: str, message: str) -> None:
        self.message = message
        self.__name__ = metric_id
        self.__doc__ = message
        self.__module__ = __name__

    def __call__(self, item: Item, config: NoConfig) -> Score:
        raise MetricInputError(self.message)


def is_unavailable(fn: object) -> bool:
    """Whether a registered metric function is one of this catalog's stubs (it only raises why)."""
    return isinstance(fn, _Unavailable)


def _stub(metric_id: str, entry: Entry) -> Callable[[Item, NoConfig], Score]:
    return _Unavailable(metric_id, unavailable_message(metric_id, entry))


def _register_catalog() -> None:
    for metric_id, entry in CATALOG.items():
        tax = load_taxonomy()[metric_id]
        robophys_metric(
            metric_id,
            family=entry.family,
            inputs=_GROUNDING_INPUTS[tax.grounding],
            description=f"{tax.name} ({tax.subdim} {tax.subdim_name}): provided by '{entry.provider.value}', "
            f"needs {entry.needs}.",
            provider=entry.provider,
        )(_stub(metric_id, entry))


_register_catalog()
