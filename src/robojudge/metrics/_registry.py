"""One typed registry of metrics, filled by the :func:`metric` decorator.

A metric is a pure function ``(item, config) -> Score``: it reads the item's files, never the
result store. Its metadata is checked when it registers, so a typo in a family or an input name fails
at import time rather than in the middle of a run.

:data:`METRICS` is a :class:`robojudge.registry.Registry`: before its first lookup it imports the
modules listed under ``"metric"`` in :data:`robojudge.registry.BUILTIN_MODULES`, then those of the
``robojudge.metrics`` entry-point group and of ``ROBOJUDGE_PLUGINS``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path, PurePath
from typing import Any, Generic, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from robojudge import settings
from robojudge._chars import short_enough
from robojudge.metrics._errors import MetricResultError, Unmeasurable
from robojudge.metrics._score import Score
from robojudge.metrics._texts import ITEM_TEXT
from robojudge.registry import Registry, UnknownNameError
from robojudge.suite._schema import Item


class Family(StrEnum):
    pixel = "pixel"
    flow = "flow"
    features = "features"
    quality = "quality"
    reference = "reference"
    state = "state"
    kinematics = "kinematics"
    multiview = "multiview"
    text = "text"
    baseline = "baseline"
    geometry = "geometry"
    judge = "judge"
    external = "external"


class Provider(StrEnum):
    """Who produces a metric's value.

    ``computed``: robojudge computes it with no learned weights. ``model``: robojudge computes it
    with a network whose weights are resolved by :mod:`robojudge.models`. ``judge``: a VLM-grounded
    score that comes from a judge rubric (``robojudge judge``). ``external``: produced by a pipeline
    outside robojudge (policy replay or training in a simulator) and imported, never computed here.
    """

    computed = "computed"
    model = "model"
    judge = "judge"
    external = "external"


class Input(StrEnum):
    """What a metric needs from an item; the runner checks these before it calls the metric."""

    video = "video"
    reference = "reference"
    views = "views"
    state = "state"
    instruction = "instruction"
    initial_frame = "initial_frame"


ALSO_READS = frozenset({"views", "embodiment", "robot"})
"""What a metric may read of an item when the item has it, beyond its required :class:`Input` s: the
views (with the rig's calibration), the ``embodiment`` field and the ``robot`` spec file. The runner
does not require them; the fingerprint covers them (:attr:`MetricSpec.also_reads`)."""


class NoConfig(BaseModel):
    """Config of a metric that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*")  # used with fullmatch: "$" would let a final newline in

C = TypeVar("C", bound=BaseModel)


class Resources(BaseModel):
    """What one worker running a metric reserves on a cluster (``--executor ray``); the local
    executors ignore it. A metric that declares none gets the Ray executor's defaults (one CPU;
    a model metric also a GPU when the cluster has one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cpus: float = Field(default=1.0, gt=0)
    gpus: float = Field(default=0.0, ge=0)
    memory_mb: int = Field(default=0, ge=0)


class TaxonomyPlace(BaseModel):
    """Where a metric sits in the RoboPhys-3D taxonomy (copied from ``load_taxonomy()`` at registration)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    subdim: str
    subdim_name: str
    level: int = Field(ge=1, le=4)
    level_name: str
    grounding: str
    normalization: str


def range_slack(bound: float) -> float:
    """How far past ``bound`` a value may lie and still count as inside a metric's range: a few units of
    rounding (1e-9 relative, at least 1e-9), so that a statistic computed at its bound is not refused."""
    return 1e-9 * max(1.0, abs(bound))


class MetricSpec(BaseModel, Generic[C]):
    """Metadata of a registered metric, plus the function that computes it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    id: str
    family: Family
    inputs: frozenset[Input]
    higher_is_better: bool
    native_range: tuple[float | None, float | None]
    version: str = Field(min_length=1)
    citation: str = Field(min_length=1)
    description: str = Field(min_length=1)
    config_type: type[BaseModel] = NoConfig
    fn: Callable[[Item, Any], Score]
    provider: Provider = Provider.computed
    taxonomy: TaxonomyPlace | None = None
    weights: tuple[str, ...] = ()
    resources: Resources | None = None
    also_reads: frozenset[str] = frozenset()

    @field_validator("id")
    @classmethod
    def _valid_id(cls, v: str) -> str:
        short_enough("metric id", v)
        if not _ID.fullmatch(v):
            raise ValueError(f"metric id {v!r} must be lowercase words joined by '_' or '.'")
        return v

    @field_validator("version")
    @classmethod
    def _short_version(cls, v: str) -> str:
        return short_enough("version", v)

    @field_validator("also_reads")
    @classmethod
    def _known_parts(cls, v: frozenset[str]) -> frozenset[str]:
        unknown = sorted(v - ALSO_READS)
        if unknown:
            raise ValueError(f"also_reads names {', '.join(unknown)}; known: {', '.join(sorted(ALSO_READS))}")
        return v

    @field_validator("native_range")
    @classmethod
    def _ordered(cls, v: tuple[float | None, float | None]) -> tuple[float | None, float | None]:
        lo, hi = v
        if lo is not None and hi is not None and lo >= hi:
            raise ValueError(f"native_range lower bound {lo} must be below the upper bound {hi}")
        return v

    def make_config(self, values: dict[str, Any] | None = None) -> BaseModel:
        """Build and validate this metric's config from plain values (defaults for the rest).

        A setting that names a file (:func:`file_fields`) is made absolute against the current folder:
        the stored config then names the file wherever a later command runs from (a worker, `results
        status` from another folder), and its spelling is kept out of the config hash.
        """
        try:
            config = self.config_type.model_validate(values or {})
        except ValidationError as exc:
            raise ValueError(f"invalid config for metric {self.id!r}: {self._problems(exc)}") from exc
        update = {}
        for name in file_fields(self.config_type):
            value = getattr(config, name)
            if isinstance(value, str | PurePath) and str(value) and not Path(value).is_absolute():
                absolute = os.path.abspath(value)
                update[name] = type(value)(absolute) if isinstance(value, PurePath) else absolute
        return config.model_copy(update=update) if update else config

    def _problems(self, exc: ValidationError) -> str:
        """A validation error as one line a user can act on: each field, what is wrong with it, and
        for an unknown setting the closest known one (no pydantic error codes or links)."""
        import difflib

        known = list(self.config_type.model_fields)
        parts = []
        for e in exc.errors(include_url=False):
            where = ".".join(str(p) for p in e["loc"])
            if e["type"] == "extra_forbidden":
                close = difflib.get_close_matches(where, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (its settings: {', '.join(known)})"
                parts.append(f"{where}: unknown setting{hint}")
            else:
                msg = str(e["msg"]).removeprefix("Value error, ")
                parts.append(f"{where}: {msg}" if where else msg)
        return "; ".join(parts)

    def config_hash(self, config: BaseModel) -> str:
        """A short stable hash of a config: same settings, same hash, whatever the key order.

        A field declared with :data:`HASH_WHEN_SET` is left out while it holds its default, so a
        setting added to a metric later does not change the hash (and the stored results) of the
        configs that do not use it.
        """
        return hash_config_values(hashed_values(config))

    def compute(self, item: Item, config: BaseModel | None = None) -> Score:
        """The metric's score of ``item``; NaN with the reason when the item gives it nothing to measure.

        Raises:
            MetricInputError: When an input is missing or unreadable for this metric.
            MetricResultError: When the metric's function returns something other than a ``Score``.
        """
        try:
            score = self.fn(item, config if config is not None else self.make_config())
        except Unmeasurable as exc:
            return Score.unscored(exc.reason, **exc.details)
        if not isinstance(score, Score):
            got = type(score).__name__
            if score is None or isinstance(score, int | float):  # a value is short: show it as well
                got = "None" if score is None else f"{got} {score!r}"
            raise MetricResultError(
                f"metric {self.id!r} returned {got}, not a robojudge.metrics.Score: its function must return "
                "Score(value=...), or Score.unscored(reason) when the item gives it nothing to measure")
        return score

    def value_problem(self, value: float, shown: str | None = None) -> str | None:
        """Why ``value`` cannot be a value of this metric, or None when it can: it is not a finite number,
        or it lies outside :attr:`native_range`. The one check of both ``robojudge score`` (a computed
        value) and ``robojudge results import`` (an imported one); ``shown`` is the value as the user
        wrote it (a file's cell), when not ``repr(value)``. NaN, the unscored value, is refused here too:
        a caller that takes it as unscored checks for it first. A value past an end by no more than
        :func:`range_slack` (rounding: the cosine of a video with itself comes out as 1.0000000000000002)
        is inside.
        """
        if not math.isfinite(value):
            shown = repr(value) if shown is None else shown
            return f"value {shown} is not a finite number (metric {self.id!r})"
        lo, hi = self.native_range
        below = lo is not None and value < lo - range_slack(lo)
        if below or (hi is not None and value > hi + range_slack(hi)):
            span = f"[{-math.inf if lo is None else lo:g}, {math.inf if hi is None else hi:g}]"
            origin = " (RoboPhys-3D taxonomy)" if self.taxonomy is not None else ""
            return f"{value!r} is outside the native range {span} of metric {self.id!r}{origin}"
        return None

    def describe(self) -> dict[str, Any]:
        """Metadata as plain JSON-able values (for ``robojudge metrics list --json``)."""
        return {
            "id": self.id,
            "family": self.family.value,
            "inputs": sorted(i.value for i in self.inputs),
            "also_reads": sorted(self.also_reads),
            "higher_is_better": self.higher_is_better,
            "native_range": list(self.native_range),
            "version": self.version,
            "citation": self.citation,
            "description": self.description,
            "config": self.config_type.model_json_schema().get("properties", {}),
            "provider": self.provider.value,
            "taxonomy": None if self.taxonomy is None else self.taxonomy.model_dump(),
            "weights": list(self.weights),
        }


_HINT = " Run `robojudge metrics list` to see all."


class UnknownMetricError(UnknownNameError):
    """Raised for a metric id that is not registered; the message suggests close matches."""

    def __init__(self, metric_id: str, known: list[str]) -> None:
        super().__init__("metric", metric_id, known, _HINT)
        self.metric_id = metric_id


def _plugin_modules() -> tuple[str, ...]:
    """Modules named in ``ROBOJUDGE_PLUGINS``: read from the environment of the process that loads, so
    plugin metrics reach ``--workers`` processes too."""
    return settings.get().plugins


def _check_spec(name: str, spec: MetricSpec[Any]) -> MetricSpec[Any]:
    # An entry-point object is imported lazily: refuse anything but a spec registered under its own id.
    if not isinstance(spec, MetricSpec) or spec.id != name:
        got = getattr(spec, "id", type(spec).__name__)
        raise TypeError(f"metric entry {name!r} must be a MetricSpec with id {name!r}, got {got!r}")
    if spec.taxonomy is not None:
        _check_place(name, spec.taxonomy)
    return spec


METRICS: Registry[MetricSpec[Any]] = Registry(
    "metric",
    entry_point_group="robojudge.metrics",
    extra_modules=_plugin_modules,
    hint=_HINT,
    check=_check_spec,
)
"""Every metric by id, built-ins and plugins (:func:`metric` registers into it)."""


E = TypeVar("E", bound=StrEnum)


def _enum_value(enum: type[E], value: E | str, metric_id: str, what: str) -> E:
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        msg = f"metric {metric_id!r}: unknown {what} {value!r}; expected one of {allowed}"
        raise ValueError(msg) from None


def metric(
    id: str,
    *,
    family: Family | str,
    inputs: set[Input | str] | frozenset[Input | str],
    higher_is_better: bool,
    native_range: tuple[float | None, float | None],
    version: str,
    citation: str,
    description: str,
    config: type[BaseModel] = NoConfig,
    provider: Provider | str = Provider.computed,
    taxonomy: TaxonomyPlace | None = None,
    weights: tuple[str, ...] = (),
    resources: Resources | None = None,
    also_reads: frozenset[str] | set[str] = frozenset(),
    replace: bool = False,
) -> Callable[[Callable[[Item, Any], Score]], Callable[[Item, Any], Score]]:
    """Register ``fn(item, config) -> Score`` as a metric. Metadata is validated here.

    ``provider`` says who produces the value (see :class:`Provider`); ``taxonomy`` places a
    RoboPhys-3D metric in its sub-dimension and level; ``weights`` names the networks (registered in
    :mod:`robojudge.models`) a ``model`` metric loads, so ``robojudge weights status`` and
    ``--metrics all`` can tell whether it can run here; ``resources`` what a cluster worker
    reserves for it (see :class:`Resources`); ``also_reads`` what it reads of an item that has it
    without requiring it (see :data:`ALSO_READS`), so that a changed one rescores it.

    An id can be registered once; ``replace=True`` lets a module register its own metric again (a
    notebook cell run again after an edit, a module reloaded): the new definition replaces the old one,
    whose direction and range are then forgotten (:mod:`robojudge.metric_info`). Another module's metric
    is never replaced. Give a changed metric a new ``version``, so its stored values are recomputed.
    """

    def deco(fn: Callable[[Item, Any], Score]) -> Callable[[Item, Any], Score]:
        if id == "all":
            raise ValueError("metric id 'all' is reserved: it stands for every computed metric")
        if taxonomy is not None:
            _check_place(id, taxonomy)
        if not fn.__module__.startswith("robojudge."):
            # A script's or a plugin's metric: the built-ins first (a no-op while the registry loads them
            # and its plugins), so one under a built-in's id is refused here, not later by the built-in's
            # own module on an unrelated lookup. robojudge's own modules skip it: imported on their own,
            # each registers only its metrics (tests/metrics/test_metric_modules.py).
            METRICS.load()
        if METRICS.is_registered(id):
            by = _registered_by(id)
            if by != fn.__module__:
                hint = f"; replace=True replaces only a metric of the same module ({fn.__module__})"
                raise ValueError(f"metric {id!r} is already registered (by {by}){hint if replace else ''}")
            if not replace:
                raise ValueError(f"metric {id!r} is already registered (by {by}); to register it again from "
                                 "there (a notebook cell run again), pass replace=True")
        spec: MetricSpec[Any] = MetricSpec(
            id=id,
            family=_enum_value(Family, family, id, "family"),
            inputs=frozenset(_enum_value(Input, i, id, "input") for i in inputs),
            higher_is_better=higher_is_better,
            native_range=native_range,
            version=version,
            citation=citation,
            description=description,
            config_type=config,
            fn=fn,
            provider=_enum_value(Provider, provider, id, "provider"),
            taxonomy=taxonomy,
            weights=tuple(weights),
            resources=resources,
            also_reads=frozenset(also_reads),
        )
        METRICS.add(id, spec, replace=replace)
        return fn

    return deco


def _check_place(metric_id: str, place: TaxonomyPlace) -> None:
    """Refuse a ``taxonomy=`` place that is not the taxonomy's own for ``metric_id``: the aggregation and
    the report read only the 50 RoboPhys-3D ids of :func:`robojudge.taxonomy.load_taxonomy`, so any
    other place would show in ``metrics list`` and count nowhere."""
    from robojudge.taxonomy import load_taxonomy

    tax = load_taxonomy()
    if metric_id not in tax:
        raise ValueError(
            f"metric {metric_id!r}: taxonomy={place.subdim} L{place.level} given, but only the "
            f"{len(tax.ids)} RoboPhys-3D ids have a place in the taxonomy, and {metric_id!r} is not one; "
            "leave taxonomy= out (docs/aggregate.md \"A metric of your own\" shows how to combine it "
            "with the unified scores)")
    entry = tax[metric_id]
    own = {"name": entry.name, "subdim": entry.subdim, "subdim_name": entry.subdim_name,
           "level": entry.level, "level_name": entry.level_name, "grounding": entry.grounding,
           "normalization": entry.normalization}
    differ = [f"{k} {v!r} (the taxonomy's: {own[k]!r})" for k, v in place.model_dump().items() if v != own[k]]
    if differ:
        raise ValueError(f"metric {metric_id!r}: its taxonomy place differs from the taxonomy's own in "
                         f"{'; '.join(differ)}; use robophys_metric(), which copies it")


def _registered_by(metric_id: str) -> str:
    try:
        return METRICS.get(metric_id).fn.__module__
    except ImportError:  # a lazy entry point that does not import
        return "an entry point"


def is_registered(metric_id: str) -> bool:
    """Whether ``metric_id`` is registered yet, without loading the built-in metrics first."""
    return METRICS.is_registered(metric_id)


#: ``json_schema_extra`` of a config field that enters the config hash only when it is not at its
#: default (a setting added after results were stored with the metric; see ``config_hash``).
HASH_WHEN_SET: dict[str, Any] = {"robojudge_hash": "when_set"}


INPUT_FILE = "input_file"
"""The ``json_schema_extra`` key (true) of a ``str`` config field that names a file the metric reads."""

def file_fields(config_type: type[BaseModel]) -> tuple[str, ...]:
    """The config fields that name a file the metric reads: typed as a path (``Path | None``...), or
    declaring ``json_schema_extra={"input_file": True}``, or naming a per-item texts file
    (``{"item_text": KEY}``). The run fingerprints such a file's content, not its name."""
    out = []
    for name, info in config_type.model_fields.items():
        extra = info.json_schema_extra
        declared = isinstance(extra, dict) and (extra.get(INPUT_FILE) is True
                                                or isinstance(extra.get(ITEM_TEXT), str))
        if declared or _names_path(info.annotation):
            out.append(name)
    return tuple(out)


def _names_path(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return True
    return any(_names_path(arg) for arg in get_args(annotation))


def hashed_values(config: BaseModel) -> dict[str, Any]:
    """The config values that make its hash: every field but :data:`HASH_WHEN_SET` ones at default, and
    a file a field names (:func:`file_fields`) by its real path, whatever its spelling: the same file
    named three ways is one configuration, two files (two readers of one robot) are two, and what a file
    holds is part of each result's fingerprint."""
    values = config.model_dump(mode="json")
    for name, info in type(config).model_fields.items():
        extra = info.json_schema_extra
        when_set = isinstance(extra, dict) and extra.get("robojudge_hash") == "when_set"
        if when_set and getattr(config, name) == info.get_default(call_default_factory=True):
            values.pop(name, None)
    for name in file_fields(type(config)):
        value = values.get(name)
        if isinstance(value, str) and value:
            values[name] = os.path.realpath(value)
    return values


def hash_config_values(values: Mapping[str, Any]) -> str:
    """The config hash of plain config values (:meth:`MetricSpec.config_hash`; set-level configs)."""
    canon = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def get_metric(metric_id: str) -> MetricSpec[Any]:
    """Look up a metric by id; raises :class:`UnknownMetricError` with suggestions."""
    try:
        return METRICS.get(metric_id)
    except UnknownNameError:
        raise UnknownMetricError(metric_id, METRICS.names()) from None


def list_metrics() -> list[MetricSpec[Any]]:
    """All registered metrics, sorted by id."""
    return METRICS.values()
