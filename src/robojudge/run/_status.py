"""``results status``: which stored results still match their inputs, read-only.

Every current row's fingerprint is compared with the fingerprint of its item's inputs as they are
now (the same recipe the runners use: :mod:`robojudge.run._fingerprint`). A row is

* *up to date*: same fingerprint;
* *stale*: another fingerprint -- its inputs changed since; the next run recomputes it;
* *inputs unavailable*: a file it reads cannot be read now (missing or unreadable); runs keep it
  until the file is back, then check it again. A model metric's network weights not installed here
  count so only for a row that records no digest of them (``details["network_weights"]``, stored
  before 2026-12-07): a row that does is checked with its recorded digests standing in
  (:func:`~robojudge.run._fingerprint.read_inputs`);
* *no fingerprint*: stored before result schema 2, or with a fingerprint of an older recipe
  (:attr:`Fingerprint.legacy`); kept by reruns unless ``--rescore-unknown``;
* *imported*: a value brought in by ``results import``, which records no fingerprint;
* *not checked*: its item is not in the manifest (``other_ids`` of them: a renamed or removed item),
  or its metric is unknown to this robojudge.

*No row* counts the other way: the manifest's items without a current row of the metric's
configuration (new or renamed items, or items the metric does not apply to); per-item metrics and
judges only, not set-level ones, whose rows are a group's.

Apart from those categories, *errors* counts the current failed rows, *unscored* the current rows that
ran and found nothing to measure (NaN, with ``details.unscored_reason``), and *other libraries* the
current scored rows computed with other versions of the libraries under the metric than this installation
has (``details.libraries``, :func:`robojudge.run.library_versions`); reruns keep them, and the report
warns where it compares them.

Superseded rows (old results of changed inputs, kept) are counted too, and the time the current
rows took to compute (total and median of their ``duration_s``; imported rows took none here).
Rows of a metric version other than the installed one are counted as any others, and flagged
(:attr:`MetricStatus.old_version`): a run computes that metric again, under the installed version.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robojudge._activity import step
from robojudge.judges import split_judge_metric_id
from robojudge.metrics import MetricSpec, UnknownMetricError, get_metric
from robojudge.metrics._presence import missing_weights
from robojudge.metrics._sets import ItemGroup, get_set_metric, group_items, list_set_metrics
from robojudge.run._fingerprint import Fingerprint, Fingerprints, metric_inputs, recorded_weights
from robojudge.run._libraries import same_libraries
from robojudge.store import ResultRow, ResultStore, default_db_url, served_models
from robojudge.suite import Item, ManifestProblem, load_suite

StatusKey = tuple[str, str, str]


@dataclass
class MetricStatus:
    """Counts for one (metric, config hash, version); see the module doc for the categories."""

    metric: str
    config_hash: str
    version: str
    current: int = 0
    up_to_date: int = 0
    stale: int = 0
    unavailable: int = 0
    unknown: int = 0
    imported: int = 0
    not_checked: int = 0
    other_ids: int = 0
    no_row: int = 0
    errors: int = 0
    unscored: int = 0
    superseded: int = 0
    other_libraries: int = 0
    # Seconds the current computed rows took (their duration_s): the sum and the median per row.
    seconds: float = 0.0
    median_s: float | None = None
    # The version this robojudge computes the metric at (None: a judge, or a metric it does not know);
    # rows of another version are counted above as they are, and a run computes the metric anew.
    installed_version: str | None = None

    @property
    def old_version(self) -> bool:
        """Stored under another version than this robojudge computes: `score` computes it again."""
        return self.installed_version is not None and self.installed_version != self.version


@dataclass(frozen=True)
class StaleResult:
    """A current row that a rerun would recompute (``stale``), could (``unknown``), or keeps for now
    (``unavailable``)."""

    item_id: str
    metric: str
    config_hash: str
    version: str
    reason: str


@dataclass
class StoreStatus:
    """What :func:`results_status` found: counts per metric and the rows that do not match."""

    metrics: list[MetricStatus] = field(default_factory=list)
    stale: list[StaleResult] = field(default_factory=list)
    unknown: list[StaleResult] = field(default_factory=list)
    unavailable: list[StaleResult] = field(default_factory=list)
    db_url: str = ""
    manifest_problems: list[ManifestProblem] = field(default_factory=list)
    #: Manifest items kept although a file of theirs is missing or unreadable now (their stored rows are
    #: checked; ``robojudge score`` leaves them out until the files are back).
    files_missing: list[ManifestProblem] = field(default_factory=list)
    # Items a run computing in its own process had started and not finished when it ended (a crash or
    # a kill), with the metrics it was computing: the next run computes each alone in a child process
    # (ResultStore.note_in_flight). A run going on now shows its current item here too.
    in_flight: dict[str, list[str]] = field(default_factory=dict)
    #: Of those, the notes of processes that have ended (a crash, a kill; or written on another host):
    #: what the next run computes alone in a child process.
    in_flight_ended: dict[str, list[str]] = field(default_factory=dict)
    # Per (metric, config hash, version): a few ids of rows whose item is not in the manifest, and of
    # manifest items without a row (MetricStatus.other_ids and no_row count them all).
    other_ids: dict[StatusKey, list[str]] = field(default_factory=dict)
    no_row: dict[StatusKey, list[str]] = field(default_factory=dict)
    #: Per judge (metric, config hash, version): current rows per model as the server named it in its
    #: replies (robojudge.store.served_models); two or more under one key mean mixed weights.
    served_models: dict[StatusKey, dict[str, int]] = field(default_factory=dict)


    def to_dict(self, rows: bool = False) -> dict[str, Any]:
        """Plain-JSON form (``robojudge results status --json``): the store; a record per metric
        configuration (the table's columns by their field names, with ``old_version`` and the first ids
        of rows not in the manifest and of items without a row); how many current rows are stale, have
        inputs unavailable or no fingerprint; the in-flight notes; the manifest's problems. With ``rows``
        (``--stale``), every row of those three kinds, each with its ``state``."""
        metrics = []
        for m in self.metrics:
            key = (m.metric, m.config_hash, m.version)
            metrics.append({**asdict(m), "old_version": m.old_version,
                            "other_ids_first": self.other_ids.get(key, []),
                            "no_row_first": self.no_row.get(key, []),
                            **({"served_models": self.served_models[key]} if key in self.served_models
                               else {})})
        out: dict[str, Any] = {
            "db_url": self.db_url,
            "metrics": metrics,
            "stale": len(self.stale),
            "unavailable": len(self.unavailable),
            "unknown": len(self.unknown),
            "in_flight": self.in_flight,
            "in_flight_ended": self.in_flight_ended,
            "manifest_problems": [p.to_dict() for p in self.manifest_problems],
            "files_missing": [p.to_dict() for p in self.files_missing],
        }
        if rows:
            out["rows"] = [{**asdict(r), "state": state}
                           for state, found in (("stale", self.stale), ("unavailable", self.unavailable),
                                                ("unknown", self.unknown))
                           for r in found]
        return out


class _Expected:
    """The fingerprint a stored row should carry if its inputs were unchanged (None: cannot tell)."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = {it.item_id: it for it in items}
        self.all = list(items)
        self._groups: dict[tuple[str, Any], dict[str, ItemGroup]] = {}
        self._sets: dict[tuple[str, str, str, Any], Fingerprint | None] = {}
        self._set_ids = {sm.id for sm in list_set_metrics()}  # once: listing sorts the registry
        self._specs: dict[str, MetricSpec[Any] | None] = {}
        self._prints = Fingerprints()  # as when scoring: metrics reading the same inputs share one
        self._known: dict[tuple[str, str, str, Any], Fingerprint] = {}  # with a row's recorded weights

    def forget(self) -> None:
        """Drop the items' fingerprints worked out so far (the groups and metric specs are kept)."""
        self._prints.forget()
        self._known.clear()

    def _spec(self, metric: str) -> MetricSpec[Any] | None:
        if metric not in self._specs:
            try:
                self._specs[metric] = get_metric(metric)
            except UnknownMetricError:
                self._specs[metric] = None
        return self._specs[metric]

    def __call__(self, row: ResultRow) -> Fingerprint | None:
        config = row.config or {}
        item = self.items.get(row.item_id)
        if split_judge_metric_id(row.metric) is not None:
            return None if item is None else self._prints.judge(item)
        spec = self._spec(row.metric)
        if spec is None:
            return None
        if row.metric in self._set_ids and "group_by" in config:
            want = self._set_fingerprint(row, config)
        else:
            want = None if item is None else self._prints.metric(item, spec, config)
        known = recorded_weights(row) if want is not None and want.unavailable and spec.weights else None
        if known is None:
            return want
        # The network weights are not readable here: the digests the row records stand in for them,
        # so that its other inputs are still checked (a video replaced since is stale here too).
        if item is not None and not (row.metric in self._set_ids and "group_by" in config):
            memo = (row.item_id, row.metric, row.config_hash, tuple(sorted(known.items())))
            if memo not in self._known:
                self._known[memo] = metric_inputs(item, spec, config, known)
            return self._known[memo]
        return self._set_fingerprint(row, config, known)

    def _set_fingerprint(self, row: ResultRow, config: dict[str, Any],
                         known: dict[str, str] | None = None) -> Fingerprint | None:
        from robojudge.run._sets import group_inputs, row_ids

        by = config["group_by"]
        sm = get_set_metric(row.metric)
        groups = self._groups.get((row.metric, by))
        if groups is None:
            try:
                found = group_items(self.all, by, look_alike=None)  # a check of stored rows: says nothing
            except ValueError:  # a grouping field this robojudge's items do not have
                found = []
            groups = {}
            for g in found:
                groups.update((i, g) for i in row_ids(sm, by, g))
            self._groups[(row.metric, by)] = groups
        group = groups.get(row.item_id)
        if group is None:
            return None
        cache_key = (row.metric, row.config_hash, group.key, tuple(sorted((known or {}).items())))
        if cache_key not in self._sets:
            own = {k: v for k, v in config.items() if k != "group_by"}
            try:
                cfg = sm.spec.make_config(own)
            except ValueError:
                self._sets[cache_key] = None
            else:
                self._sets[cache_key] = group_inputs(sm, group, cfg, known)
        return self._sets[cache_key]


def stale_rows(rows: Iterable[ResultRow], items: Sequence[Item]) -> list[ResultRow]:
    """The current rows among ``rows`` whose inputs changed since they were computed: the *stale* rows
    of :func:`results_status`, which the next run recomputes. Their values describe files that are no
    longer there, so a report or a leaderboard leaves them out. Rows without a fingerprint, of ids
    ``items`` does not hold, or whose inputs cannot be read now are not stale."""
    is_stale = stale_check(items)
    out = []
    rows = list(rows)
    with step("checking the inputs of stored results", total=len(rows), unit="rows") as checked:
        for row in rows:
            checked.advance()
            if is_stale(row):
                out.append(row)
    return out


def stale_check(items: Sequence[Item], *, by_item: bool = False) -> Callable[[ResultRow], bool]:
    """Whether a row is one :func:`stale_rows` finds, a row at a time: for a reader that streams a store's
    rows (an export) rather than holding them all.

    ``by_item``: the rows come grouped by item, as :meth:`robojudge.store.ResultStore.iter_rows` gives
    them; what was worked out for an item is forgotten once the next item's rows start, so the check
    holds one item's fingerprints, not the store's (rows out of that order are checked the same, only
    slower).
    """
    expected = _Expected(items)
    last: list[str] = [""]

    def is_stale(row: ResultRow) -> bool:
        if not row.current or not row.fingerprint:
            return False
        if by_item and row.item_id != last[0]:
            expected.forget()
            last[0] = row.item_id
        want = expected(row)
        return (want is not None and want.value != row.fingerprint and not want.unavailable
                and want.legacy != row.fingerprint)

    return is_stale


StaleFinder = Callable[[Sequence[ResultRow], Sequence[Item]], list[ResultRow]]


def remembered_stale(finder: StaleFinder) -> StaleFinder:
    """``finder`` (:func:`stale_rows`) that checks each row once: a report's summary, its HTML page and
    its label tables read the same rows, and checking every row's inputs twice was half the time of a
    report of a large store. A row is known by its key and fingerprint, with its item as given."""
    known: dict[tuple[object, ...], bool] = {}

    def find(rows: Sequence[ResultRow], items: Sequence[Item]) -> list[ResultRow]:
        sig = {it.item_id: it.model_dump_json() for it in items}

        def key(r: ResultRow) -> tuple[object, ...]:
            return (r.item_id, r.metric, r.config_hash, r.version, r.status, r.fingerprint,
                    sig.get(r.item_id))

        todo = [r for r in rows if key(r) not in known]
        if todo:
            found = {id(r) for r in finder(todo, items)}
            for r in todo:
                known[key(r)] = id(r) in found
        return [r for r in rows if known[key(r)]]

    return find


def _unavailable_reason(metric: str, absent: dict[str, list[str]]) -> str:
    """Why a row's inputs cannot be read now: a model metric's network weights count among its inputs,
    and where they are not on this machine, the row cannot be checked even with its video at hand."""
    if metric not in absent:
        try:
            absent[metric] = missing_weights(get_metric(metric))
        except UnknownMetricError:
            absent[metric] = []
    if absent[metric]:
        return (f"inputs cannot be read now: the network weights {', '.join(absent[metric])} are not on "
                "this machine (`robojudge weights status`), so whether its video or reference changed "
                "cannot be told here")
    return "inputs cannot be read now (missing or unreadable)"


def installed_version(metric: str, memo: dict[str, str | None]) -> str | None:
    """The version of ``metric`` this robojudge computes (None: a judge, or a metric it does not know)."""
    if metric not in memo:
        memo[metric] = None
        if split_judge_metric_id(metric) is None:
            with contextlib.suppress(UnknownMetricError):
                memo[metric] = get_metric(metric).version
    return memo[metric]


def results_status(store: ResultStore, items: Sequence[Item] | None) -> StoreStatus:
    """Compare every current row of ``store`` with the inputs of ``items`` as they are now.

    Args:
        store: The store (may be read-only).
        items: The manifest's items with absolute paths; ``None`` counts rows without checking.

    Returns:
        Counts per (metric, config hash, version), sorted, and the stale, unknown and unavailable rows.
    """
    expected = _Expected(items) if items is not None else None
    out = StoreStatus(db_url=store.url)
    by_key: dict[StatusKey, MetricStatus] = {}
    seen: dict[StatusKey, set[str]] = {}  # item ids with a current row
    grouped: set[StatusKey] = set()  # keys with set-level rows (a group's, whatever the registry knows)
    durations: dict[StatusKey, list[float]] = {}
    installed: dict[str, Callable[[str], bool] | None] = {}  # per metric: is a record the installed versions
    absent: dict[str, list[str]] = {}  # per metric: its network weights not on this machine
    versions: dict[str, str | None] = {}  # per metric: the version this robojudge computes
    for row in store.iter_rows(include_superseded=True):
        key = (row.metric, row.config_hash, row.version)
        counts = by_key.get(key)
        if counts is None:
            counts = by_key[key] = MetricStatus(*key)
        if not row.current:
            counts.superseded += 1
            continue
        counts.current += 1
        seen.setdefault(key, set()).add(row.item_id)
        group_row = row.item_id.startswith("group:")
        if group_row or "group_by" in (row.config or {}):
            grouped.add(key)
        if expected is not None and row.item_id not in expected.items and not group_row:
            counts.other_ids += 1
            _few(out.other_ids, key, row.item_id)
        counts.errors += row.status == "error"
        counts.unscored += row.status == "ok" and not row.scored
        if row.status == "ok" and row.metric.startswith("judge:"):
            for model in served_models(row.details):
                served = out.served_models.setdefault(key, {})
                served[model] = served.get(model, 0) + 1
        recorded = (row.details or {}).get("libraries")
        if row.status == "ok" and isinstance(recorded, str):
            if row.metric not in installed:
                try:
                    installed[row.metric] = same_libraries(get_metric(row.metric))
                except UnknownMetricError:
                    installed[row.metric] = None
            now = installed[row.metric]
            counts.other_libraries += now is not None and not now(recorded)
        imported = not row.fingerprint and (row.config or {}).get("provider") == "external"
        if not imported:
            durations.setdefault(key, []).append(row.duration_s)
        if not row.fingerprint:
            if imported:
                counts.imported += 1
            else:
                counts.unknown += 1
                # (a row of another version than installed is never recomputed: a run computes the
                # installed version, beside it; not among those --rescore-unknown recomputes)
                if installed_version(row.metric, versions) in (None, row.version):
                    why = "no inputs fingerprint (stored before schema 2)"
                    out.unknown.append(StaleResult(*row.key, why))
            continue
        want = expected(row) if expected is not None else None
        if want is None:
            counts.not_checked += 1
        elif want.value == row.fingerprint:
            counts.up_to_date += 1
        elif want.legacy is not None and want.legacy == row.fingerprint:
            counts.unknown += 1
            out.unknown.append(StaleResult(*row.key, "fingerprint of an older recipe (before the network "
                                           "weights, or what the metric reads of items that have it, "
                                           "were covered)"))
        elif want.unavailable:
            counts.unavailable += 1
            # (a row that records its weights was checked with them: a file of its own is missing)
            reason = (_unavailable_reason(row.metric, absent) if recorded_weights(row) is None
                      else "inputs cannot be read now (missing or unreadable)")
            out.unavailable.append(StaleResult(*row.key, reason))
        else:
            counts.stale += 1
            out.stale.append(StaleResult(*row.key, "inputs changed"))
    for k, seconds in durations.items():
        by_key[k].seconds = sum(seconds)
        by_key[k].median_s = statistics.median(seconds)
    for (metric, _, _), counts in by_key.items():
        counts.installed_version = installed_version(metric, versions)
    if expected is not None:
        for k, counts in by_key.items():
            judged = split_judge_metric_id(k[0]) is not None
            if k[0] in expected._set_ids or k in grouped or not counts.current:
                continue  # a set metric's rows are its groups'
            if not judged and expected._spec(k[0]) is None:
                continue  # a metric this robojudge does not know: which items it applies to is unknown
            lacking = [i for i in expected.items if i not in seen.get(k, set())]
            counts.no_row = len(lacking)
            for item_id in lacking:
                _few(out.no_row, k, item_id)
    out.metrics = [by_key[k] for k in sorted(by_key)]
    # A pool's notes of the tasks it had handed out when it ended are left out: no crash suspects, and
    # the next run clears them.
    out.in_flight_ended = dict(sorted(store.in_flight(ended=True, queued=False).items()))
    out.in_flight = dict(sorted(store.in_flight(lapsed=False).items()))
    return out


def _few(where: dict[StatusKey, list[str]], key: StatusKey, item_id: str, n: int = 3) -> None:
    ids = where.setdefault(key, [])
    if len(ids) < n:
        ids.append(item_id)


def status_suite(
    manifest: str | Path, *, db: str | None = None, run_dir: str | Path | None = None
) -> StoreStatus:
    """:func:`results_status` of the store of a manifest (default: the store of the run
    folder the manifest lies in, else ``runs/<manifest name>/results.sqlite``).

    The store is opened read-only; it must exist.
    """
    from robojudge.run._where import default_run_dir, refuse_run_folder

    refuse_run_folder(manifest, "results_status(ResultStore(run.db_url), run.items) with "
                                "run = robojudge.report.load_run_results(RUN)")
    suite = load_suite(manifest, strict=False, files="optional")  # a missing file: inputs unavailable
    url = db or default_db_url(Path(run_dir) if run_dir else default_run_dir(manifest))
    with ResultStore(url, read_only=True) as store:
        status = results_status(store, suite.items)
    status.manifest_problems = list(suite.problems)
    status.files_missing = suite.files_missing
    return status
