"""Stored results split by configuration: one series per (metric, config hash, version), never merged.

A metric scored twice with different settings (``fps=2`` and the default, say) or by two versions
of its code gives two series. Every table and model of the report reads series, so one column never
holds values from two configurations. A series is labelled by its metric id when the metric has a
single series in the store; otherwise the label adds what tells the series apart: the config keys
whose values differ (``flow [fps=2]``), the version (``flow [v2]``) or, when the rows carry no config,
the start of the config hash (``flow [config 1a2b3c4d]``).

A judge is stored as one metric per rubric (``judge:<name>:pa``, ``judge:<name>:ia``) whose config
holds the rubric, so the PA and IA series of one judge configuration have different hashes. They are
paired by their config without the rubric; two configurations under one judge name (two models that
got the same inline name, or ``expected`` scores next to argmax fallbacks) are two judges.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

JUDGE_PREFIX = "judge:"
JUDGE_AXES = ("pa", "ia")
#: Longest config value shown in a label before it is cut.
_VALUE_CHARS = 24


@dataclass(frozen=True, order=True)
class SeriesKey:
    """The identity of a series of stored results."""

    metric: str
    config_hash: str
    version: str


@dataclass
class Series:
    """The stored results of one metric under one config and version.

    Attributes:
        key: Metric, config hash and version.
        label: Unique display name among the series it was labelled with.
        values: Scored value per item id.
        unscored: Item ids with an ok row but no value (NaN: unparsable reply, nothing to measure).
        failed: Item ids with an error row.
        config: The config stored with the rows (None when they carry none).
    """

    key: SeriesKey
    label: str = ""
    values: dict[str, float] = field(default_factory=dict)
    unscored: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    config: dict[str, Any] | None = None

    @property
    def metric(self) -> str:
        return self.key.metric

    @property
    def item_ids(self) -> set[str]:
        """Every item the series has a row for, scored or not."""
        return set(self.values) | self.unscored | self.failed


def split_series(rows: Iterable[Any], keep: Callable[[str], bool] = lambda m: True) -> list[Series]:
    """Rows grouped by (metric, config hash, version), sorted by key, labels unset.

    Should a store hold two rows of one key for an item, the most recently stored one counts.
    """
    ordered = sorted((r for r in rows if keep(r.metric)),
                     key=lambda r: (r.created_at is not None, r.created_at or 0))
    out: dict[SeriesKey, Series] = {}
    for r in ordered:
        key = SeriesKey(r.metric, r.config_hash, r.version)
        s = out.get(key)
        if s is None:
            s = out[key] = Series(key)
        if s.config is None and r.config is not None:
            s.config = r.config
        for bucket in (s.unscored, s.failed):
            bucket.discard(r.item_id)
        s.values.pop(r.item_id, None)
        if r.status != "ok":
            s.failed.add(r.item_id)
        elif r.value is None or math.isnan(r.value):
            s.unscored.add(r.item_id)
        else:
            s.values[r.item_id] = float(r.value)
    return [out[k] for k in sorted(out)]


def unscored_reason(rows: Iterable[Any], metrics: Iterable[str]) -> str | None:
    """The most common ``details.unscored_reason`` among the current unscored rows of ``metrics``
    (with how many rows gave it, when not all), for a section that has nothing scored to show."""
    wanted = set(metrics)
    reasons: Counter[str] = Counter()
    for r in rows:
        if (r.metric in wanted and r.status == "ok" and r.superseded_at is None
                and (r.value is None or math.isnan(r.value))):
            reason = (r.details or {}).get("unscored_reason")
            reasons[str(reason) if reason else "no reason recorded"] += 1
    if not reasons:
        return None
    reason, n = reasons.most_common(1)[0]
    total = sum(reasons.values())
    return reason if n == total else f"{reason} ({n} of {total} rows)"


def _flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in config.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = json.dumps(v, sort_keys=True, default=str) if not isinstance(v, str) else v
    return out


def _short(value: str) -> str:
    return value if len(value) <= _VALUE_CHARS else value[:_VALUE_CHARS - 3] + "..."


def _differing_part(values: Sequence[str]) -> list[str]:
    """Each value cut to :data:`_VALUE_CHARS`, from where the values start to differ when they share a
    long beginning (``reader=.../adroit-11aa...`` rather than the same ``/tmp/run/kiva/...`` twice)."""
    common = len(os.path.commonprefix(list(values)))
    if common <= 3 or all(len(v) <= _VALUE_CHARS for v in values):
        return [_short(v) for v in values]
    return ["..." + _short(v[common:]) for v in values]


def config_differences(configs: Sequence[Mapping[str, Any] | None]) -> list[str] | None:
    """Per config, ``k=v`` text of the keys whose values differ among ``configs``; None if any is None."""
    if any(c is None for c in configs):
        return None
    flat = [_flatten(c) for c in configs if c is not None]
    keys = sorted({k for f in flat for k in f})
    differing = [k for k in keys if len({f.get(k, "(unset)") for f in flat}) > 1]
    shown = {k: _differing_part([f.get(k, "(unset)") for f in flat]) for k in differing}
    return [", ".join(f"{k}={shown[k][i]}" for k in differing) for i in range(len(flat))]


def _labels_for(name: str, keys: Sequence[SeriesKey], configs: Sequence[Mapping[str, Any] | None]
                ) -> list[str]:
    """Distinct labels for the series of one name (a metric, or a judge)."""
    if len(keys) == 1:
        return [name]
    parts: list[list[str]] = [[] for _ in keys]
    if len({k.version for k in keys}) > 1:
        for p, k in zip(parts, keys, strict=True):
            p.append(f"v{k.version}")
    diffs = config_differences(configs)
    if len({k.config_hash for k in keys}) > 1:
        for p, k, d in zip(parts, keys, diffs or [""] * len(keys), strict=True):
            p.append(d or f"config {k.config_hash[:8]}")
    labels = [f"{name} [{', '.join(p)}]" if p else name for p in parts]
    if len(set(labels)) < len(labels):
        # Configs that print alike (cut values, rubric-only changes): the full key tells them apart.
        labels = [f"{name} [config {k.config_hash}, v{k.version}]" for k in keys]
    return labels


def label_series(series: Sequence[Series]) -> list[Series]:
    """Give every series its label (see the module docstring); returns the same list."""
    by_metric: dict[str, list[Series]] = defaultdict(list)
    for s in series:
        by_metric[s.metric].append(s)
    for metric, group in by_metric.items():
        for s, lab in zip(group, _labels_for(metric, [s.key for s in group], [s.config for s in group]),
                          strict=True):
            s.label = lab
    return list(series)


def metric_series(rows: Iterable[Any]) -> list[Series]:
    """The labelled series of every stored metric that is not a judge score."""
    return label_series(split_series(rows, lambda m: not m.startswith(JUDGE_PREFIX)))


@dataclass
class JudgeSeries:
    """One judge configuration: its PA and IA series (either may be missing).

    Attributes:
        name: The judge name in the stored metric ids.
        label: Unique display name: the name, plus what tells its configurations apart when it has
            several.
        axes: ``axes["pa"]`` and ``axes["ia"]``: the series of each rubric it was run with.
    """

    name: str
    label: str
    axes: dict[str, Series]

    def values(self, axis: str) -> dict[str, float]:
        s = self.axes.get(axis)
        return s.values if s is not None else {}

    @property
    def n_scored(self) -> int:
        return sum(len(s.values) for s in self.axes.values())


def _split_judge_id(metric: str) -> tuple[str, str] | None:
    if not metric.startswith(JUDGE_PREFIX):
        return None
    name, _, rubric = metric[len(JUDGE_PREFIX):].rpartition(":")
    return (name, rubric) if name and rubric in JUDGE_AXES else None


def _without_rubric(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if config is None else {k: v for k, v in config.items() if k != "rubric"}


def _judge_key(s: Series) -> str | None:
    cfg = _without_rubric(s.config)
    if cfg is None:
        return None
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]


def judge_series(rows: Iterable[Any]) -> list[JudgeSeries]:
    """Every judge configuration with PA or IA rows, labelled, sorted by label.

    PA and IA series are paired when their configs agree once the rubric is left out; rows that carry
    no config pair up only when the judge name has exactly one series per axis. Anything else stays
    apart (a judge entry with one axis), never merged.
    """
    return group_judges(split_series(rows, lambda m: _split_judge_id(m) is not None))


def group_judges(series: Iterable[Series]) -> list[JudgeSeries]:
    """:func:`judge_series` from series already split; series that are no judge's PA or IA are skipped."""
    by_name: dict[str, list[tuple[str, Series]]] = defaultdict(list)
    for s in series:
        parts = _split_judge_id(s.metric)
        if parts is not None:
            by_name[parts[0]].append((parts[1], s))
    out: list[JudgeSeries] = []
    for name, members in sorted(by_name.items()):
        groups: dict[object, list[tuple[str, Series]]] = defaultdict(list)
        unkeyed = [(a, s) for a, s in members if _judge_key(s) is None]
        for a, s in members:
            k = _judge_key(s)
            if k is not None:
                groups[k].append((a, s))
        axes_of_unkeyed = [a for a, _ in unkeyed]
        if unkeyed and len(set(axes_of_unkeyed)) == len(axes_of_unkeyed):
            groups[("no config",)] = unkeyed
        else:
            for i, m in enumerate(unkeyed):
                groups[("no config", i)] = [m]
        entries: list[dict[str, Series]] = []
        for group in groups.values():
            axes = [a for a, _ in group]
            if len(set(axes)) == len(axes):
                entries.append(dict(group))
            else:
                entries += [{a: s} for a, s in group]
        entries.sort(key=lambda e: tuple(sorted((a, s.key) for a, s in e.items())))
        configs = [_without_rubric(next(iter(e.values())).config) for e in entries]
        keys = [_entry_key(e) for e in entries]
        for e, lab in zip(entries, _labels_for(name, keys, configs), strict=True):
            out.append(JudgeSeries(name, lab, e))
    return sorted(out, key=lambda j: j.label)


@dataclass(frozen=True)
class StoredSeries:
    """The rows split once into series, for callers that read them many times (the HTML report).

    Functions that take rows also take ``stored=StoredSeries.of(rows)``; they then read it instead of
    splitting the rows again, which is a sort of every row.

    Attributes:
        series: Every series (metrics, judge rubrics and any other), labelled.
        metrics: The series of metrics that are not judge scores (:func:`metric_series`).
        judges: The judge configurations (:func:`judge_series`).
    """

    series: tuple[Series, ...]
    metrics: tuple[Series, ...]
    judges: tuple[JudgeSeries, ...]

    @classmethod
    def of(cls, rows: Iterable[Any]) -> StoredSeries:
        every = label_series(split_series(rows))
        return cls(tuple(every), tuple(s for s in every if not s.metric.startswith(JUDGE_PREFIX)),
                   tuple(group_judges(every)))


def _entry_key(entry: Mapping[str, Series]) -> SeriesKey:
    """One key standing for a judge entry in labels: its PA series' (else its IA series') key."""
    s = entry.get("pa") or entry["ia"]
    return s.key


def resolve_judge(judges: Sequence[JudgeSeries], wanted: str) -> JudgeSeries:
    """The judge called ``wanted``: its exact label, or its name when that name has one configuration.

    Raises:
        ValueError: No such judge, or a name with several configurations (the error lists them).
    """
    for j in judges:
        if j.label == wanted:
            return j
    named = [j for j in judges if j.name == wanted]
    if len(named) == 1:
        return named[0]
    if named:
        choices = "; ".join(repr(j.label) for j in named)
        raise ValueError(f"judge {wanted!r} is stored under {len(named)} configurations, which are never "
                         f"merged; pick one of: {choices}")
    known = ", ".join(repr(j.label) for j in judges) or "none"
    raise ValueError(f"no scored rows of judge {wanted!r} (no rows under metric ids judge:{wanted}:pa / "
                     f":ia); stored judges: {known}")


#: Longest first error shown for a configuration that failed everywhere (the rest is in errors.csv).
_ERROR_CHARS = 300


@dataclass(frozen=True)
class FailedSeries:
    """A metric configuration every stored row of which is an error (nothing was measured).

    Attributes:
        key: Metric, config hash and version.
        label: Its label among the stored metric configurations.
        items: How many items it failed on.
        first_error: The error of its first item (by id), cut to a few hundred characters.
    """

    key: SeriesKey
    label: str
    items: int
    first_error: str


def failed_everywhere(rows: Iterable[Any], series: Sequence[Series] | None = None) -> list[FailedSeries]:
    """The metric configurations among ``rows`` that have error rows only, sorted by label.

    Judge rubrics are not included: a judge that failed on every item (its server was down) keeps its
    place in the report, which says so. A configuration with one ok row, scored or not, is kept.
    ``series``: the labelled metric series of ``rows`` when the caller has them (not split again).
    """
    rows = list(rows)
    series = metric_series(rows) if series is None else series
    dead = {s.key: s for s in series if s.failed and not s.values and not s.unscored}
    if not dead:
        return []
    first: dict[SeriesKey, tuple[str, str]] = {}
    for r in rows:
        key = SeriesKey(r.metric, r.config_hash, r.version)
        if key in dead and (key not in first or r.item_id < first[key][0]):
            first[key] = (r.item_id, str(r.error or ""))
    out = []
    for key, s in dead.items():
        error = first[key][1]
        error = error if len(error) <= _ERROR_CHARS else error[:_ERROR_CHARS - 3] + "..."
        out.append(FailedSeries(key, s.label, len(s.failed), error))
    return sorted(out, key=lambda f: f.label)
