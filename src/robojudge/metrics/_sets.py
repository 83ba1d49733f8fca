"""Set-level metrics: values defined over a set of videos rather than one video at a time.

Some metrics cannot be computed item by item: FVD and the JEPA-feature MMD compare the feature
distribution of a generator's videos with that of the real references, the Inception Score
aggregates class predictions over a set, and V-JEPA manifold similarity scores each item against
the feature distribution of *all* real references of the manifest. They are registered here.

How to register one (stable interface; FVD and Inception Score use it too)::

    from robojudge.metrics._sets import ItemGroup, SetOutput, SetScores, set_metric

    @set_metric(
        "iq1_fvd",                       # a taxonomy id takes direction, range, place from the taxonomy
        output=SetOutput.group,          # one value per group (per generator)
        family="features",
        inputs={"video", "reference"},
        description="Frechet video distance of I3D features, per group against its references.",
        weights=("i3d_kinetics400",),
        min_items=2,                     # smaller groups get an error row instead of a value
    )
    def fvd(group: ItemGroup, config: MyConfig) -> SetScores:
        gen = [it.video for it in group.items]
        ref = group.references()         # distinct reference videos of the group, each once
        value = ...
        return SetScores(group=Score(value=value), warnings=["only 12 videos: FVD is unstable"])

* ``output=SetOutput.group``: the function returns ``SetScores(group=Score(...))``, one row per
  group. ``output=SetOutput.item``: it returns ``SetScores(items={item_id: Score(...)})``, one row
  per item of the group (items it leaves out get an error row saying so).
* The function may raise :class:`~robojudge.metrics.MetricInputError`,
  :class:`~robojudge.models.MissingWeightsError` or :class:`~robojudge.video.VideoError`: the group
  then gets one error row with that message; other exceptions are reported the same way, prefixed
  with their type, so one broken group never stops the others.
* Metadata (``family``, ``inputs``, ``higher_is_better``, ``native_range``, ``citation``,
  ``provider``, ``weights``) is the per-item registry's: :func:`set_metric` also registers the id
  in :func:`robojudge.metrics.list_metrics`, so ``robojudge metrics list`` and ``robojudge weights
  list`` show it. Its per-item entry raises :class:`MetricInputError` that points to
  ``robojudge metrics sets``, so ``robojudge score`` records a clear per-item message instead of a
  value, and ``--metrics all`` leaves set metrics out (it says so).

* ``references="all"``: the function reads the references of every item being scored
  (``group.references(scope="all")``), not only its group's; the fingerprint of its results then
  covers all of them, so a changed reference anywhere rescores it.

Scoring: :func:`score_sets` groups the manifest's items by an :class:`~robojudge.suite.Item` field
and returns :class:`SetRow` rows; :func:`write_set_rows` writes them as CSV or JSONL.
``robojudge metrics sets SUITE --metrics ... --by generator`` stores them in the result store
(:func:`robojudge.run.score_set_suite`): a group row under the item id :func:`group_item_id`
(``group:generator=modelA``; manifests cannot use the ``group:`` prefix), per-item rows under their
item ids, with a config hash that includes the grouping field, and resumes like ``robojudge score``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from robojudge._chars import look_alike_pairs, look_alike_reason
from robojudge._csv import SafeCsvWriter
from robojudge._files import replacing
from robojudge._json import json_ready
from robojudge._raised import raised_reason, raised_traceback
from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._presence import missing_weights, present_names, weights_present
from robojudge.metrics._registry import (
    METRICS,
    Family,
    Input,
    MetricSpec,
    NoConfig,
    Provider,
    UnknownMetricError,
    get_metric,
    hash_config_values,
    metric,
)
from robojudge.metrics._score import Score
from robojudge.registry import Registry
from robojudge.suite._schema import GROUP_PREFIX, MAX_ITEM_ID_BYTES, Item

_log = logging.getLogger(__name__)


class SetOutput(StrEnum):
    """What a set-level metric produces: one value per group, or one value per item of the group."""

    group = "group"
    item = "item"


class SetScores(BaseModel):
    """What a set-level metric function returns for one group.

    Attributes:
        group: The group's value (``SetOutput.group`` metrics).
        items: ``item_id -> Score`` (``SetOutput.item`` metrics).
        warnings: Caveats copied onto every row of the group (e.g. a sample too small for a stable
            estimate).
    """

    model_config = ConfigDict(extra="forbid")

    group: Score | None = None
    items: dict[str, Score] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class ItemGroup:
    """The items a set-level metric sees at once.

    Attributes:
        key: The value of the grouping field (``"all"`` when not grouped, ``"-"`` when unset: no
            item's value is ``"-"``, see :func:`group_items`).
        by: The grouping field (``None`` when not grouped).
        items: The group's items, manifest order.
        all_items: Every item being scored (all groups), for metrics whose reference pool is the
            whole manifest (V-JEPA manifold similarity).
    """

    key: str
    by: str | None
    items: tuple[Item, ...]
    all_items: tuple[Item, ...]

    def references(self, scope: str = "group") -> list[str]:
        """Distinct ``reference_video`` paths, each counted once, in first-seen order.

        Args:
            scope: ``"group"`` for this group's items, ``"all"`` for every item being scored.
        """
        pool = self.items if scope == "group" else self.all_items
        seen: dict[str, None] = {}
        for it in pool:
            if it.reference_video:
                seen.setdefault(it.reference_video, None)
        return list(seen)


SetFn = Callable[[ItemGroup, Any], SetScores]


@dataclass(frozen=True)
class SetMetricSpec:
    """A registered set-level metric: its per-item registry entry plus how it is scored.

    ``references`` is ``"group"`` when the function reads only its group's references, ``"all"``
    when it reads those of every item being scored.
    """

    id: str
    output: SetOutput
    fn: SetFn
    min_items: int
    references: str = "group"

    @property
    def spec(self) -> MetricSpec[Any]:
        """The metric's metadata in the main registry."""
        return get_metric(self.id)


SET_METRICS: Registry[SetMetricSpec] = Registry("set metric", loaded_by=METRICS)
"""Set-level metrics by id. :func:`set_metric` registers into it and into :data:`METRICS`, from the
metric modules, so loading it loads the metric registry."""


class _SetLevelOnly:
    """The per-item entry of a set-level metric: a module-level callable, so worker processes can
    unpickle the metric spec (a closure could not be pickled)."""

    def __init__(self, metric_id: str) -> None:
        self.metric_id = metric_id
        self.__name__ = metric_id
        self.__module__ = __name__

    def __call__(self, item: Item, config: Any) -> Score:
        mid = self.metric_id
        raise MetricInputError(
            f"{mid} is a set-level metric (computed over a group of videos, not one item): score it "
            f"with `robojudge metrics sets SUITE --metrics {mid} --by generator` or "
            "robojudge.metrics.score_sets()"
        )


def _per_item_stub(metric_id: str) -> Callable[[Item, Any], Score]:
    return _SetLevelOnly(metric_id)


def set_metric(
    id: str,
    *,
    output: SetOutput | str,
    family: Family | str,
    inputs: set[Input | str] | frozenset[Input | str],
    description: str,
    higher_is_better: bool | None = None,
    native_range: tuple[float | None, float | None] | None = None,
    version: str = "1",
    citation: str | None = None,
    config: type[BaseModel] = NoConfig,
    provider: Provider | str = Provider.model,
    weights: tuple[str, ...] = (),
    note: str = "",
    min_items: int = 1,
    references: str = "group",
) -> Callable[[SetFn], SetFn]:
    """Register ``fn(group, config) -> SetScores`` as a set-level metric.

    For a RoboPhys-3D taxonomy id, direction, native range, citation and taxonomy place come from
    the taxonomy (``higher_is_better``, ``native_range`` and ``citation`` must then be left out;
    ``note`` is appended to the citation). Other ids must give all three.

    Args:
        id: Metric id (shared namespace with per-item metrics).
        output: :class:`SetOutput`: one row per group or per item.
        family: Metric family.
        inputs: What each item of the group needs (``reference`` for metrics that use references).
        description: One or two sentences; say that the value is set-level and what the set is.
        higher_is_better: Direction (non-taxonomy ids).
        native_range: Range of raw values (non-taxonomy ids).
        version: Bump when values change.
        citation: Paper and section (non-taxonomy ids).
        config: Pydantic config type (``--set METRIC.KEY=VALUE``).
        provider: Usually ``model``.
        weights: Names of the networks it loads (see :mod:`robojudge.models`).
        note: Extra citation text for taxonomy ids.
        min_items: Groups with fewer items get an error row.
        references: ``"group"`` or ``"all"``: whose reference videos the function reads.

    Raises:
        ValueError: Bad metadata, or a repeated id.
    """
    from robojudge.taxonomy import load_taxonomy

    kind = SetOutput(output)
    if references not in ("group", "all"):
        raise ValueError(f"set metric {id!r}: references must be 'group' or 'all', got {references!r}")
    desc = f"[set-level, one value per {kind.value}] {description}"

    def deco(fn: SetFn) -> SetFn:
        if SET_METRICS.is_registered(id):
            by = SET_METRICS.get(id).fn.__module__
            raise ValueError(f"set metric {id!r} is already registered (by {by})")
        if id in load_taxonomy().ids:
            if higher_is_better is not None or native_range is not None or citation is not None:
                raise ValueError(f"set metric {id!r} is a taxonomy id: direction, range and citation come "
                                 "from the taxonomy")
            from robojudge.metrics.robophys._spec import robophys_metric

            robophys_metric(id, family=Family(family), inputs={Input(i) for i in inputs}, description=desc,
                            provider=Provider(provider), version=version, config=config, note=note,
                            weights=weights)(_per_item_stub(id))
        else:
            if higher_is_better is None or native_range is None or citation is None:
                raise ValueError(f"set metric {id!r} needs higher_is_better, native_range and citation")
            metric(id, family=family, inputs=inputs, higher_is_better=higher_is_better,
                   native_range=native_range, version=version, citation=citation, description=desc,
                   config=config, provider=provider, weights=weights)(_per_item_stub(id))
        sm = SetMetricSpec(id=id, output=kind, fn=fn, min_items=min_items, references=references)
        SET_METRICS.add(id, sm)
        return fn

    return deco


def is_set_metric(metric_id: str) -> bool:
    """Whether ``metric_id`` is a set-level metric (loads the built-in metrics first)."""
    return metric_id in SET_METRICS


def get_set_metric(metric_id: str) -> SetMetricSpec:
    """The set-level metric ``metric_id``.

    Raises:
        UnknownMetricError: Not registered at all (with suggestions).
        ValueError: Registered, but a per-item metric.
    """
    spec = get_metric(metric_id)  # unknown ids fail here with "did you mean"
    if metric_id not in SET_METRICS:
        raise ValueError(f"{spec.id} is a per-item metric: score it with `robojudge score`, not "
                         "`robojudge metrics sets`")
    return SET_METRICS.get(metric_id)


def list_set_metrics() -> list[SetMetricSpec]:
    """Every set-level metric, sorted by id."""
    return SET_METRICS.values()


@dataclass
class SetRow:
    """One result of :func:`score_sets`.

    ``item_id`` is ``None`` on a group row. ``status`` is ``ok`` or ``error``; ``value`` is NaN on
    errors. ``n_items`` is the group's size and ``n_references`` its distinct references.
    """

    metric: str
    group: str
    item_id: str | None
    status: str
    value: float
    error: str | None = None
    warning: str | None = None
    n_items: int = 0
    n_references: int = 0
    config_hash: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


GROUP_HASH_CHARS = 16
"""Hex digits of SHA-256 that end a shortened group id (:func:`group_item_id`)."""


def group_item_id(by: str | None, key: str) -> str:
    """The stored item id of a group's row: ``group:<field>=<value>``, or ``group:all`` ungrouped.

    Manifest item ids cannot start with ``group:``, so these never collide with an item. An id longer
    than an item id may be (:data:`~robojudge.suite.MAX_ITEM_ID_BYTES` bytes of UTF-8: a long instruction
    of ``--by instruction``) keeps the start of the value and ends with ``...#`` and the first
    :data:`GROUP_HASH_CHARS` hex digits of the SHA-256 of the whole value, so two long values that start
    alike still differ, and the id fits every store; the row's ``details.group`` holds the whole value.
    """
    if by is None:
        return f"{GROUP_PREFIX}all"
    whole = f"{GROUP_PREFIX}{by}={key}"
    data = whole.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_ITEM_ID_BYTES:
        return whole
    tail = "...#" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:GROUP_HASH_CHARS]
    return data[:MAX_ITEM_ID_BYTES - len(tail)].decode("utf-8", "ignore") + tail  # whole characters only


def set_config(config: BaseModel, by: str | None) -> dict[str, Any]:
    """What a set-level result is stored with as its config: the metric's, plus the grouping field.

    The grouping is part of the config (and of its hash) because the same metric over other
    groups gives other values.
    """
    return {**config.model_dump(mode="json"), "group_by": by}


def set_config_hash(config: BaseModel, by: str | None) -> str:
    """The config hash of set-level results, stored or written: :func:`set_config` hashed as metric
    configs are."""
    return hash_config_values(set_config(config, by))


#: The group key of the items without a value of the grouping field (stored as ``group:<field>=-``).
UNSET_KEY = "-"


def _text_valued(name: str) -> bool:
    """Whether the Item field ``name`` holds a text (or a named choice): what a group key can be."""
    ann = Item.model_fields[name].annotation
    kinds = [a for a in (typing.get_args(ann) or (ann,)) if a is not type(None)]
    return all(isinstance(a, type) and issubclass(a, str) for a in kinds)


#: The Item fields items can be grouped by: those holding a text (``views``, ``grid``, ``labels`` and
#: ``meta`` hold structures, whose printed form is no group name).
GROUP_BY_FIELDS = tuple(f for f in Item.model_fields if _text_valued(f))


class LookAlikeGroupsWarning(UserWarning):
    """Two groups of :func:`group_items` whose keys differ only in characters no table shows: they print
    alike but are measured apart (``robojudge metrics sets`` prints it as a ``warning:`` line)."""


MEASURED_APART = "each measured on its own items"
"""What two look-alike groups mean for set-level scoring (:func:`group_items`'s default ``look_alike``)."""


def group_items(items: Sequence[Item], by: str | None, *,
                look_alike: str | None = MEASURED_APART) -> list[ItemGroup]:
    """Split ``items`` into groups by the Item field ``by`` (one group ``all`` when ``by`` is None).

    Items without a value form the group :data:`UNSET_KEY`; an item whose value is spelt so is refused,
    since both would be one group, stored under one id (``group:generator=-``). A value too long for a
    whole group id (a long instruction) is stored under a shortened one (:func:`group_item_id`).

    Values are grouped as spelt: two that differ only in how their characters are composed (NFC/NFD)
    or in characters that print as nothing or as a space (:func:`robojudge._chars.look_alike_key`)
    are two groups, and a :class:`LookAlikeGroupsWarning` names both, escaped, and says what being
    two groups means for the caller (``look_alike``: "each measured on its own items"); with
    ``look_alike=None`` nothing is said (a caller that only looks groups up, beside a run that says it).

    Raises:
        ValueError: ``by`` is not one of :data:`GROUP_BY_FIELDS`, or an item's value of it is
            :data:`UNSET_KEY`.
    """
    every = tuple(items)
    if by is None:
        return [ItemGroup(key="all", by=None, items=every, all_items=every)]
    if by not in GROUP_BY_FIELDS:
        fields = ", ".join(sorted(GROUP_BY_FIELDS))
        what = "holds a structure, not a text" if by in Item.model_fields else "is not an item field"
        raise ValueError(f"--by {by!r} {what}; use one of {fields}")
    groups: dict[str, list[Item]] = {}
    clash: list[str] = []
    for it in every:
        raw = getattr(it, by)
        key = UNSET_KEY if raw is None else str(getattr(raw, "value", raw))
        if raw is not None and key == UNSET_KEY:
            clash.append(it.item_id)
        groups.setdefault(key, []).append(it)
    if clash:
        one = len(clash) == 1
        shown = ", ".join(map(repr, clash[:5])) + (f" and {len(clash) - 5} more" if len(clash) > 5 else "")
        raise ValueError(f"--by {by}: {'item' if one else f'{len(clash)} items'} {shown} "
                         f"{'has' if one else 'have'} the {by} {UNSET_KEY!r}, the name of the group of the "
                         f"items without a {by} (stored as {group_item_id(by, UNSET_KEY)!r}), so both would "
                         f"be one group; give {'it' if one else 'them'} another {by} in the manifest")
    for first, later in look_alike_pairs(groups) if look_alike is not None else ():
        a, b = len(groups[first]), len(groups[later])
        warnings.warn(
            f"--by {by}: groups {ascii(first)} ({a} item{'s' * (a != 1)}) and {ascii(later)} ({b} "
            f"item{'s' * (b != 1)}) differ only {look_alike_reason(first, later, 'their')}: they print alike "
            f"but are two groups, {look_alike}; spell the {by} one way in the manifest "
            "(`robojudge suite validate` names the items)", LookAlikeGroupsWarning, stacklevel=2)
    return [ItemGroup(key=k, by=by, items=tuple(v), all_items=every) for k, v in groups.items()]


def _error_rows(sm: SetMetricSpec, group: ItemGroup, message: str, chash: str,
                details: dict[str, Any] | None = None) -> list[SetRow]:
    base: dict[str, Any] = {
        "metric": sm.id, "group": group.key, "status": "error", "value": math.nan, "error": message,
        "n_items": len(group.items), "n_references": len(group.references()), "config_hash": chash,
        "details": dict(details or {}),
    }
    if sm.output is SetOutput.group:
        return [SetRow(item_id=None, **base)]
    return [SetRow(item_id=it.item_id, **base) for it in group.items]


def score_group(sm: SetMetricSpec, group: ItemGroup, cfg: BaseModel) -> list[SetRow]:
    """The rows of one metric over one group; failures become error rows, never exceptions."""
    from robojudge.models import MissingWeightsError
    from robojudge.video import VideoError

    chash = set_config_hash(cfg, group.by)  # the store's: the grouping is part of the config
    if len(group.items) < sm.min_items:
        return _error_rows(sm, group, f"{sm.id} needs at least {sm.min_items} items per group, group "
                           f"{group.key!r} has {len(group.items)}", chash)
    try:
        out = sm.fn(group, cfg)
    except (MetricInputError, MissingWeightsError, VideoError) as exc:
        return _error_rows(sm, group, str(exc), chash)
    except Exception as exc:  # a bug costs one group, not the run (where it was raised: in the details)
        _log.debug("group %r / %s: metric raised", group.key, sm.id, exc_info=exc)
        return _error_rows(sm, group, f"metric raised {raised_reason(exc)}", chash,
                           {"traceback": raised_traceback(exc)})
    warning = "; ".join(out.warnings) or None
    common: dict[str, Any] = {
        "metric": sm.id, "group": group.key, "warning": warning, "n_items": len(group.items),
        "n_references": len(group.references()), "config_hash": chash,
    }
    if sm.output is SetOutput.group:
        if out.group is None:
            return _error_rows(sm, group, f"{sm.id} returned no group value", chash)
        return [SetRow(item_id=None, status="ok", value=out.group.value, details=out.group.details, **common)]
    rows = []
    for it in group.items:
        sc = out.items.get(it.item_id)
        if sc is None:
            rows.append(SetRow(item_id=it.item_id, status="error", value=math.nan,
                               error=f"{sm.id} gave no value for item {it.item_id!r}", **common))
        else:
            rows.append(SetRow(item_id=it.item_id, status="ok", value=sc.value, details=sc.details, **common))
    return rows


def _load_items(manifest_or_items: str | Path | Iterable[Item]) -> list[Item]:
    if isinstance(manifest_or_items, (str, Path)):
        from robojudge.suite import load_suite

        return list(load_suite(manifest_or_items, strict=False).items)
    return list(manifest_or_items)


def set_metrics_run_by_all() -> list[str]:
    """The set metrics ``all`` runs here: those whose weights are all on this machine."""
    return [s.id for s in list_set_metrics() if weights_present(s.spec)]


def sets_not_run_summary() -> list[str]:
    """Lines saying which set metrics ``all`` leaves out here, and why (as :func:`not_run_summary`
    says it of ``robojudge score``'s ``all``); none when it leaves out none."""
    left = [s.spec for s in list_set_metrics() if not weights_present(s.spec)]
    if not left:
        return []
    present = present_names(left)
    wired = [s for s in left if s.weights]
    undeclared = [s for s in left if not s.weights]
    lines = [f"{len(left)} set-level metrics not run: " + ", ".join(
        ([f"{len(wired)} need weights missing here"] if wired else [])
        + ([f"{len(undeclared)} declare no weights"] if undeclared else []))]
    if wired:
        needed = sorted({n for s in wired for n in missing_weights(s, present)})
        lines.append("  need weights: " + ", ".join(s.id for s in wired))
        lines.append(f"  missing weights ({len(needed)}; `robojudge weights status` says where each goes, "
                     "`robojudge weights list` which metrics load it): " + ", ".join(needed))
    if undeclared:
        lines.append("  no weights declared (name them with set_metric(..., weights=...), or ask for them "
                     "by id): " + ", ".join(s.id for s in undeclared))
    return lines


def choose_set_metrics(
    metric_ids: Sequence[str], configs: Mapping[str, Mapping[str, Any]] | None = None
) -> list[tuple[SetMetricSpec, BaseModel]]:
    """The set metrics asked for (``all`` = those whose weights are present) with their configs.

    Raises:
        UnknownMetricError: An unknown id. ValueError: a per-item id or bad config.
    """
    ids: list[str] = []
    for mid in metric_ids:
        names = set_metrics_run_by_all() if mid == "all" else [mid]
        ids.extend(n for n in names if n not in ids)
    configs = configs or {}
    unknown = set(configs) - set(ids)
    if unknown:
        raise ValueError(f"config given for metrics that are not requested: {', '.join(sorted(unknown))}")
    return [(get_set_metric(m), get_metric(m).make_config(dict(configs.get(m, {})))) for m in ids]


def score_sets(
    manifest_or_items: str | Path | Iterable[Item],
    metric_ids: Sequence[str],
    by: str | None = "generator",
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[SetRow]:
    """Score set-level metrics over groups of items.

    Args:
        manifest_or_items: A suite manifest path (bad rows are skipped) or items with usable paths.
        metric_ids: Set-level metric ids; ``all`` means every set metric whose weights are present.
        by: Item field to group by (``generator``, ``task``, ``regime``, ...); ``None`` = one group.
        configs: ``{metric_id: {key: value}}`` config values.

    Returns:
        Rows in metric, then group order (``pandas.DataFrame([r.to_dict() for r in rows])`` for a
        table).

    Raises:
        UnknownMetricError: An unknown id. ValueError: a per-item id, a bad ``by`` or bad config.
    """
    chosen = choose_set_metrics(metric_ids, configs)
    groups = group_items(_load_items(manifest_or_items), by)
    rows: list[SetRow] = []
    for sm, cfg in chosen:
        for group in groups:
            rows.extend(score_group(sm, group, cfg))
    return rows


def _dumps(value: Any) -> str:
    return json.dumps(json_ready(value), sort_keys=True, default=str, allow_nan=False)


def write_set_rows(rows: Sequence[SetRow], path: str | Path) -> Path:
    """Write rows as CSV (``.csv``) or JSON lines (anything else); ``details`` is a JSON string in CSV.
    JSON holds NaN and infinities as null (strict JSON, as the store and ``results export`` write)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        names = list(SetRow.__dataclass_fields__)
        with replacing() as files, files.open(path, newline="") as fh:  # the old file or the whole new one
            writer = SafeCsvWriter(fh)  # a group or item id a spreadsheet would run stays text
            writer.writerow(names)
            for r in rows:
                d = r.to_dict()
                d["details"] = _dumps(d["details"])
                if isinstance(d.get("value"), float) and math.isnan(d["value"]):
                    d["value"] = None  # an empty cell, as every robojudge CSV writes no value
                writer.writerow([d.get(n) for n in names])
    else:
        with replacing() as files, files.open(path) as fh:
            for r in rows:
                fh.write(_dumps(r.to_dict()) + "\n")
    return path


__all__ = [
    "GROUP_PREFIX",
    "ItemGroup",
    "LookAlikeGroupsWarning",
    "SetMetricSpec",
    "SetOutput",
    "SetRow",
    "SetScores",
    "UnknownMetricError",
    "choose_set_metrics",
    "get_set_metric",
    "group_item_id",
    "group_items",
    "is_set_metric",
    "list_set_metrics",
    "score_group",
    "score_sets",
    "set_config",
    "set_config_hash",
    "set_metric",
    "write_set_rows",
]
