"""What the metric registry, the built-in rubrics and the taxonomy know about a stored metric id: its
direction and its native range.

:func:`direction` is the one place a metric's direction is looked up: the metric registry
(``robojudge metrics list``) first, then the built-in rubric of a judge score
(``judge:<name>:<rubric>``), then the RoboPhys-3D taxonomy. An id none of them knows (a plugin no
longer installed, a user rubric file, an imported column) is an error naming the id, never a guess;
the report catches it and marks that column's direction unknown.

The report (``robojudge.report``) does not load the metric registry or the judges; the callers that
may (the CLI, the demo, user scripts) pass :func:`direction`, :func:`registry_range`,
:func:`registry_config_key` and :func:`registry_networks` in, as ``higher_is_better``,
``native_range``, ``config_key`` and ``networks``; the report's own default is
:func:`taxonomy_direction`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from robojudge.registry import UnknownNameError, generation
from robojudge.taxonomy import load_taxonomy

__all__ = ["NOT_VIDEO_QUALITY", "NetworkInfo", "direction", "registry_config_key", "registry_networks",
           "registry_range", "taxonomy_direction"]

#: Stored metric ids that say nothing about a video's quality: ``uniform_random`` is a random baseline
#: (a draw per item id), and ``sim_task_success`` and ``cs_collision_count`` read the simulator's own record
#: of the outcome (task solved, collisions), which no video from a real world model comes with. The
#: calibrated judge does not learn from them and the acceleration audit's Q does not average them.
NOT_VIDEO_QUALITY: frozenset[str] = frozenset({"uniform_random", "sim_task_success", "cs_collision_count"})

_UNKNOWN_HINT = (
    " Its direction is unknown: it is not a registered metric (`robojudge metrics list`), a judge score"
    " on a built-in rubric or a RoboPhys-3D metric."
)

if TYPE_CHECKING:
    from robojudge.judges import Rubric


def _rubric(metric: str) -> Rubric | None:
    from robojudge.judges import RUBRICS, split_judge_metric_id

    parts = split_judge_metric_id(metric)
    if parts is None:
        return None
    try:
        return RUBRICS.get(parts[1])
    except KeyError:  # the judges' unknown-name error
        return None


def _spec(metric: str) -> Any:
    from robojudge.metrics import get_metric

    try:
        return get_metric(metric)
    except KeyError:  # the registry's unknown-metric error
        return None


def direction(metric: str) -> bool:
    """True if a higher value of ``metric`` is better, False if a lower one is.

    The metric registry's direction, else the built-in rubric's for a judge score (a judge score grows
    with quality, unless its rubric feeds a taxonomy metric, whose direction it then shares), else the
    taxonomy's.

    Raises:
        UnknownNameError: (a ``KeyError``) none of them knows ``metric``; the message names it and
            suggests close ids.
    """
    return _direction(metric, generation())


# The caches below key on the registries' generation: a metric registered, replaced or removed since (a
# notebook cell run again) is never answered for from what was there before.
@functools.lru_cache(maxsize=4096)
def _direction(metric: str, _generation: int) -> bool:
    spec = _spec(metric)
    if spec is not None:
        return bool(spec.higher_is_better)
    rubric = _rubric(metric)
    if rubric is not None:
        return direction(rubric.taxonomy) if rubric.taxonomy else True
    try:
        return taxonomy_direction(metric)
    except UnknownNameError:
        from robojudge.metrics import list_metrics

        known = sorted({s.id for s in list_metrics()} | set(load_taxonomy().ids))
        raise UnknownNameError("metric", metric, known, _UNKNOWN_HINT) from None


def taxonomy_direction(metric: str) -> bool:
    """The RoboPhys-3D taxonomy's direction of ``metric`` (what the report knows without the registry).

    Raises:
        UnknownNameError: ``metric`` is not a taxonomy id.
    """
    tax = load_taxonomy()
    if metric not in tax:
        raise UnknownNameError("RoboPhys-3D metric", metric, list(tax.ids), _UNKNOWN_HINT)
    return tax[metric].higher_is_better


def registry_config_key(metric: str, values: Mapping[str, Any] | None) -> tuple[str, str]:
    """The ``(config hash, version)`` a registered metric with config ``values`` (None: its defaults) is
    stored under now (:data:`robojudge.meta.ConfigKey`, what :func:`robojudge.meta.current_configs`
    chooses a metric's configuration by).

    Raises:
        robojudge.metrics.UnknownMetricError: Not a registered metric (a ``KeyError``).
        ValueError: A value the metric does not accept.
    """
    from robojudge.metrics import get_metric

    spec = get_metric(metric)
    return spec.config_hash(spec.make_config(None if values is None else dict(values))), spec.version


def registry_defaults(metric: str) -> dict[str, Any] | None:
    """The default config of a registered metric, as its rows store a config (JSON values); None for an
    id the registry does not know (a judge score, a metric whose plugin is not installed)."""
    spec = _spec(metric)
    if spec is None:
        return None
    try:
        return dict(spec.make_config(None).model_dump(mode="json"))
    except ValueError:  # defaults it refuses (a plugin's required setting)
        return None


def registry_range(metric: str) -> tuple[float | None, float | None] | None:
    """``(low, high)`` bounds of ``metric``'s values (either may be None: unbounded), or None if unknown."""
    return _registry_range(metric, generation())


@functools.lru_cache(maxsize=4096)
def _registry_range(metric: str, _generation: int) -> tuple[float | None, float | None] | None:
    spec = _spec(metric)
    if spec is not None:
        lo, hi = spec.native_range
        return lo, hi
    rubric = _rubric(metric)
    if rubric is None:
        return None
    return float(rubric.score_min), float(rubric.score_max)


@dataclass(frozen=True)
class NetworkInfo:
    """A network a metric computes its values with, as the weights catalogue describes it
    (``robojudge weights list``, docs/weights.md).

    Attributes:
        name: The catalogue name (``clip_vit_b32``), also the folder under ``$ROBOJUDGE_WEIGHTS``.
        description: What the network is, in words.
        source: Where the published file is (``hf://REPO@REVISION``, a download address).
        pinning: How that exact file is fixed (a hub revision, a SHA-256, ``not pinned``).
        unverified: robojudge reads the checkpoint with code of its own that has never run on the
            published file (only on tiny random networks in the same layout): its values have not
            been compared with the publisher's.
    """

    name: str
    description: str
    source: str
    pinning: str
    unverified: bool


def registry_networks(metric: str) -> tuple[NetworkInfo, ...]:
    """The networks a registered metric computes with (none for a weights-free metric, a judge score,
    or an id the registry does not know)."""
    return _registry_networks(metric, generation())


@functools.lru_cache(maxsize=4096)
def _registry_networks(metric: str, _generation: int) -> tuple[NetworkInfo, ...]:
    spec = _spec(metric)
    if spec is None:
        return ()
    from robojudge.models import get_weights

    out = []
    for name in spec.weights:
        w = get_weights(name)
        out.append(NetworkInfo(name=w.name, description=w.description, source=w.source(),
                               pinning=w.pinning(), unverified=w.unverified))
    return tuple(out)
