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
got the same inline name, or ``expected`` scores next to argmax fallbacks) are two judges. A judge
run again with changed rubric files keeps its older rows beside the new ones: its config then holds
several series per axis, and each rubric generation is a judge of its own (see :func:`group_judges`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
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
        first_stored: When its oldest row was stored (None when no row says); for a judge rubric,
            when this rubric generation was first judged. For display: the writing host's clock.
        first_row_id: The store's id of its oldest row (None for rows not read from a store): what
            orders series by when they were first written, whatever the hosts' clocks said.
    """

    key: SeriesKey
    label: str = ""
    values: dict[str, float] = field(default_factory=dict)
    unscored: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    config: dict[str, Any] | None = None
    first_stored: datetime | None = None
    first_row_id: int | None = None

    @property
    def metric(self) -> str:
        return self.key.metric

    @property
    def item_ids(self) -> set[str]:
        """Every item the series has a row for, scored or not."""
        return set(self.values) | self.unscored | self.failed


def split_series(rows: Iterable[Any], keep: Callable[[str], bool] = lambda m: True) -> list[Series]:
    """Rows grouped by (metric, config hash, version), sorted by key, labels unset.

    Should a store hold two rows of one key for an item, the last one written counts (by row id; by
    ``created_at`` among rows that have none).
    """
    ordered = sorted((r for r in rows if keep(r.metric)), key=_written)
    out: dict[SeriesKey, Series] = {}
    for r in ordered:
        key = SeriesKey(r.metric, r.config_hash, r.version)
        s = out.get(key)
        if s is None:
            s = out[key] = Series(key)
        if s.config is None and r.config is not None:
            s.config = r.config
        when = getattr(r, "created_at", None)  # (rows come by item, not by time: the earliest of all)
        if when is not None and (s.first_stored is None or when < s.first_stored):
            s.first_stored = when
        row_id = getattr(r, "row_id", None)
        if row_id is not None and (s.first_row_id is None or row_id < s.first_row_id):
            s.first_row_id = row_id
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


def _written(row: Any) -> tuple[Any, ...]:
    """A sort key of rows in the order they were written: by the store's row id (rows read from a store
    have one), then by ``created_at`` for rows that have no id."""
    row_id, when = getattr(row, "row_id", None), getattr(row, "created_at", None)
    return (row_id is not None, row_id or 0, when is not None, when or 0)


def _started(s: Series) -> tuple[Any, ...] | None:
    """When a series was first written, as a comparable key: its first row id, else (series of rows not
    read from a store) its first stored time; None when neither is known. Row ids follow the order rows
    were written; stored times are each writing host's clock, which may be off or stepped back."""
    if s.first_row_id is not None:
        return (1, s.first_row_id)
    return None if s.first_stored is None else (0, s.first_stored)


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

    @property
    def first_stored(self) -> datetime | None:
        """When its most recently started series (by the order rows were written, :func:`_started`)
        was first stored, by the writing host's clock: when this rubric generation was first judged,
        for display (None when a series does not say)."""
        started = [(key, s) for s in self.axes.values() if (key := _started(s)) is not None]
        if not started or len(started) < len(self.axes):
            return None
        return max(started, key=lambda ks: ks[0])[1].first_stored


def _judge_started(j: JudgeSeries) -> tuple[Any, ...] | None:
    """When a judge's most recently started series was first written (:func:`_started`); None when a
    series does not say."""
    times = [_started(s) for s in j.axes.values()]
    return None if None in times else max(t for t in times if t is not None)


def split_judge_id(metric: str) -> tuple[str, str] | None:
    """``(name, axis)`` of a judge's PA or IA metric id (``judge:NAME:pa``), else None."""
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
    apart (a judge entry with one axis), never merged. See :func:`group_judges` for a configuration
    judged with several rubric generations.
    """
    return group_judges(split_series(rows, lambda m: split_judge_id(m) is not None))


def group_judges(series: Iterable[Series]) -> list[JudgeSeries]:
    """:func:`judge_series` from series already split; series that are no judge's PA or IA are skipped.

    A configuration that holds several series of an axis was judged again with changed rubric files
    (new rows, the older ones kept). Its series are paired per rubric generation (:func:`_by_generation`):
    the newest PA with the newest IA, older ones when one run judged both; a series left over is a judge
    with one axis. These judges are labelled with their rubrics (``mk [rubrics pa v2, ia v2]``).
    """
    by_name: dict[str, list[tuple[str, Series]]] = defaultdict(list)
    for s in series:
        parts = split_judge_id(s.metric)
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
        entries: list[tuple[object, dict[str, Series]]] = []
        for gk, group in groups.items():
            entries += [(gk, e) for e in _by_generation(group)]
        entries.sort(key=lambda ge: tuple(sorted((a, s.key) for a, s in ge[1].items())))
        for (_, e), lab in zip(entries, _judge_labels(name, entries), strict=True):
            out.append(JudgeSeries(name, lab, e))
    return sorted(out, key=lambda j: j.label)


def _by_generation(group: Sequence[tuple[str, Series]]) -> list[dict[str, Series]]:
    """One judge configuration's series as entries (one entry when each axis has one series).

    With several series of an axis (rubric files changed between runs), the newest series of each
    axis, by when it was first written (:func:`_started`: the store's row ids, not the hosts' clocks),
    form the judge as it was last run. The older series, in the order they were first written, pair
    with the next one when that one is of the other axis (nothing else started between them: one run
    judged both); every other series is an entry of one axis. A series with neither a row id nor a
    stored time is never taken for the newest or paired.
    """
    def started(s: Series) -> tuple[Any, ...]:
        when = _started(s)
        return (when is not None, when or (), s.key)

    by_axis = {a: sorted((s for b, s in group if b == a), key=started, reverse=True) for a in JUDGE_AXES}
    newest = {a: ss[0] for a, ss in by_axis.items()
              if ss and (len(ss) == 1 or started(ss[1])[:2] < started(ss[0])[:2])}
    entries: list[dict[str, Series]] = []
    if len(newest) == len(JUDGE_AXES):
        entries.append(newest)
    rest = [(a, s) for a, s in group if len(newest) < len(JUDGE_AXES) or s is not newest[a]]
    dated = sorted(((a, s) for a, s in rest if _started(s) is not None), key=lambda m: started(m[1]))
    entries += [{a: s} for a, s in rest if _started(s) is None]
    i = 0
    while i < len(dated):
        if i + 1 < len(dated) and dated[i][0] != dated[i + 1][0]:
            entries.append(dict(dated[i:i + 2]))
            i += 2
        else:
            entries.append(dict(dated[i:i + 1]))
            i += 1
    return entries


def _rubric_of(s: Series) -> tuple[str, str]:
    """The (version, digest) of the rubric a judge series was scored with, from its stored config."""
    rubric = (s.config or {}).get("rubric")
    rubric = rubric if isinstance(rubric, Mapping) else {}
    return str(rubric.get("version", s.key.version)), str(rubric.get("digest") or s.key.config_hash)


def _rubric_text(entry: Mapping[str, Series], reworded: set[tuple[str, str]]) -> str:
    """``rubrics pa v2, ia v2``: the rubrics of an entry, each with its digest where ``reworded`` has
    its (axis, version) (two rubric texts under one version)."""
    parts = []
    for axis, s in sorted(entry.items(), key=lambda a: JUDGE_AXES.index(a[0])):
        version, digest = _rubric_of(s)
        parts.append(f"{axis} v{version}" + (f" #{digest[:8]}" if (axis, version) in reworded else ""))
    return ("rubrics " if len(parts) > 1 else "rubric ") + ", ".join(parts)


def _judge_labels(name: str, entries: Sequence[tuple[object, Mapping[str, Series]]]) -> list[str]:
    """Distinct labels for the entries of one judge name, each with the configuration it belongs to."""
    keys = [_entry_key(e) for _, e in entries]
    configs = [_without_rubric(next(iter(e.values())).config) for _, e in entries]
    per_config = Counter(g for g, _ in entries)
    if all(n == 1 for n in per_config.values()):
        return _labels_for(name, keys, configs)
    # Rubric generations of one configuration: what tells them apart is their rubrics.
    versions: dict[tuple[object, str, str], set[str]] = defaultdict(set)
    for g, e in entries:
        for axis, s in e.items():
            version, digest = _rubric_of(s)
            versions[g, axis, version].add(digest)
    reworded = {g: {(a, v) for (h, a, v), d in versions.items() if h == g and len(d) > 1} for g in per_config}
    diffs = config_differences(configs) if len(per_config) > 1 else None
    labels = []
    for i, ((g, _), k) in enumerate(zip(entries, keys, strict=True)):
        parts = [diffs[i]] if diffs and diffs[i] else []
        if per_config[g] > 1:
            parts.append(_rubric_text(entries[i][1], reworded[g]))
        elif not parts:
            parts.append(f"config {k.config_hash[:8]}")
        labels.append(f"{name} [{', '.join(parts)}]")
    if len(set(labels)) < len(labels):
        labels = [f"{name} [config {k.config_hash}, v{k.version}]" for k in keys]
    return labels


def rubric_owners(rows: Iterable[Any], judges: Sequence[JudgeSeries], *, stored: StoredSeries | None = None
                  ) -> dict[SeriesKey, tuple[str, str, Series]]:
    """``(judge label, rubric id, series)`` of every judge rubric's series: PA and IA under their judge's
    label; another rubric under the label of the one PA/IA configuration of its judge that shares its
    settings (config less the rubric), else under its own series' label (as ``judge draft`` takes it).
    ``stored``: the rows already split (``StoredSeries.of(rows)``), read instead of ``rows`` (labels are
    given per metric, so its series carry the labels a split of the judge rows alone gives)."""
    owners: dict[SeriesKey, tuple[str, str, Series]] = {}
    shared: dict[tuple[str, str], set[str]] = {}
    for j in judges:
        for a, ser in j.axes.items():
            owners[ser.key] = (j.label, a, ser)
            if (k := _judge_key(ser)) is not None:
                shared.setdefault((j.name, k), set()).add(j.label)
    taken: dict[tuple[str, str], list[Series]] = {}
    def other(m: str) -> bool:
        return m.startswith(JUDGE_PREFIX) and m.rpartition(":")[2] not in JUDGE_AXES

    others = (label_series(split_series(rows, other)) if stored is None
              else [ser for ser in stored.series if other(ser.metric)])
    for ser in others:
        name, _, rubric = ser.metric[len(JUDGE_PREFIX):].rpartition(":")
        if not name:
            continue
        k = _judge_key(ser)
        labels = shared.get((name, k), set()) if k is not None else set()
        label = next(iter(labels)) if len(labels) == 1 else name + ser.label[len(ser.metric):]
        owners[ser.key] = (label, rubric, ser)
        taken.setdefault((label, rubric), []).append(ser)
    for group in taken.values():
        if len(group) > 1:  # two generations of a rubric file under one judge label: their own labels
            for ser in group:
                _, rubric, _ = owners[ser.key]
                owners[ser.key] = (ser.metric[len(JUDGE_PREFIX):].rpartition(":")[0]
                                   + ser.label[len(ser.metric):], rubric, ser)
    return owners


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

    The errors list labels quoted for a shell (:func:`shlex.quote`), not with ``repr``: a label holding
    a backslash (a JSON config value) then reads back as itself when pasted onto a command line.

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
        choices = "; ".join(shlex.quote(j.label) for j in named)
        raise ValueError(f"judge {wanted!r} is stored under {len(named)} configurations, which are never "
                         f"merged; pick one of: {choices}{_latest_note(named)}")
    known = ", ".join(shlex.quote(j.label) for j in judges) or "none"
    raise ValueError(f"no scored rows of judge {wanted!r} (no rows under metric ids judge:{wanted}:pa / "
                     f":ia); stored judges: {known}")


def _latest_note(judges: Sequence[JudgeSeries]) -> str:
    """`` (the newest rubrics: LABEL)`` when ``judges`` are rubric generations of one configuration and
    one was first judged after all the others; empty otherwise (two models: neither is the newer)."""
    configs = {_judge_key(s) for j in judges for s in j.axes.values()}
    started = [(_judge_started(j), j.label) for j in judges]
    times = sorted(((when, label) for when, label in started if when is not None), reverse=True)
    if len(configs) > 1 or None in configs or len(times) < len(judges) or times[0][0] == times[1][0]:
        return ""
    return f" (the newest rubrics: {shlex.quote(times[0][1])})"


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


def pick_judge_rows(rows: Sequence[Any], wanted: str, rubrics: Sequence[str],
                    notes: list[str] | None = None) -> tuple[str, list[Any]]:
    """The rows of one stored configuration of a judge, for ``robojudge judge draft`` and ``judge texts``:
    ``(judge name, its rows of rubrics)``. A configuration's rows are never merged with another's.

    ``wanted`` is a judge label as ``leaderboard judges`` prints it (:func:`judge_series`; PA and IA),
    a label of a rubric's own series with the judge name for its metric id (``mk [fps=2]``, for the
    other rubrics), or a judge name whose rows of each rubric are of one configuration. A rubric the
    picked configuration has no rows of gives no rows. Rows stored without a config (older robojudge)
    cannot tell which configuration judged another rubric: there a rubric the picked label lacks is
    taken as is where the judge has a single series of it, and a line saying so is appended to
    ``notes``.

    Raises:
        ValueError: A name stored under several configurations of a rubric (the error lists their labels,
            quoted for a shell), or a label no stored configuration has.
    """
    judges = judge_series(rows)
    exact = next((j for j in judges if j.label == wanted), None)
    name = exact.name if exact is not None else wanted
    if exact is None and " [" in wanted and not any(str(r.metric).startswith(f"{JUDGE_PREFIX}{wanted}:")
                                                    for r in rows):
        name = wanted.partition(" [")[0]  # a rubric series' label, not a name
    picked: list[SeriesKey] = []
    for rubric in rubrics:
        metric = f"{JUDGE_PREFIX}{name}:{rubric}"
        series = label_series(split_series([r for r in rows if r.metric == metric]))
        if not series:
            continue
        if exact is not None and rubric in exact.axes:
            picked.append(exact.axes[rubric].key)
            continue
        if exact is not None:  # another rubric judged by the same configuration
            keys = {_judge_key(s) for s in exact.axes.values()}
            same = [s for s in series if _judge_key(s) is not None and _judge_key(s) in keys]
            if same:  # (its newest rubric generation)
                picked.append(max(same, key=lambda s: _started(s) or ()).key)
            elif len(series) == 1 and (None in keys or _judge_key(series[0]) is None):
                # No config to pair by, and only one configuration of this rubric: nothing to merge.
                picked.append(series[0].key)
                if notes is not None:
                    own_label = series[0].label[len(metric):].strip()
                    notes.append(f"{wanted}: judge {name!r} has one {rubric} series"
                                 + (f" {own_label}" if own_label else "") + ", taken as is (rows stored "
                                 "without a config cannot tell which configuration judged it)")
            continue
        own = {name + s.label[len(metric):]: s for s in series}
        if name != wanted:
            if wanted not in own:
                raise ValueError(f"no stored configuration of judge {name!r} is labelled {wanted!r}; stored: "
                                 + "; ".join(shlex.quote(label) for label in own))
            picked.append(own[wanted].key)
        elif len(series) == 1:
            picked.append(series[0].key)
        else:
            labels = ([j.label for j in judges if j.name == name and rubric in j.axes]
                      if rubric in JUDGE_AXES else list(own))
            choices = "; ".join(shlex.quote(label) for label in labels)
            raise ValueError(f"judge {wanted!r} is stored under {len(labels)} configurations (of rubric "
                             f"{rubric}), which are never merged; pick one of: {choices}")
    keep = set(picked)
    return name, [r for r in rows if SeriesKey(r.metric, r.config_hash, r.version) in keep]
