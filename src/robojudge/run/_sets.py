"""Set-level metrics (FVD, Inception Score, JEPA similarities) into the result store, resumable.

A group's result is stored like any other: a per-group metric as one row whose item id is
``group:<field>=<value>`` (:func:`~robojudge.metrics._sets.group_item_id`), a per-item metric as one
row per member under its own item id. The stored config is the metric's plus ``group_by`` (so the
same metric over other groups gets its own config hash), and the fingerprint is the group's:
its members' ids and input fingerprints (:func:`~robojudge.run._fingerprint.set_fingerprint`).
A rerun computes only the groups with no current rows or whose fingerprint changed (a member added,
removed or whose video changed); the superseded rows are kept. Error rows count as done unless
``retry_errors``. A stored group a file of which cannot be read now (missing or unreadable: a drive
not mounted) is kept as it is and counted as unavailable: recomputing it would store error rows over
good values (see :mod:`robojudge.run._plan`); a group with no stored row is computed.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from robojudge.metrics import MetricSpec, MissingLibrariesError, Provider, missing_libraries
from robojudge.metrics._sets import (
    ItemGroup,
    SetMetricSpec,
    SetOutput,
    SetRow,
    _error_rows,
    choose_set_metrics,
    group_item_id,
    group_items,
    list_set_metrics,
    score_group,
    set_config,
    set_config_hash,
)
from robojudge.run._executor import (
    Executor,
    LocalProcessExecutor,
    SerialExecutor,
    guarded_call,
    make_executor,
)
from robojudge.run._filehash import one_look
from robojudge.run._fingerprint import Fingerprint, set_inputs, settle
from robojudge.run._libraries import library_versions, same_libraries
from robojudge.run._score import (
    RunInterrupted,
    crash_reason,
    refuse_main_defined,
    refused_value,
    timed_out_message,
    with_release,
)
from robojudge.run._timelimit import check_limit, stop_after
from robojudge.run._where import claim_store, default_run_dir, other_manifests, raise_if_no_items
from robojudge.store import ResultRow, ResultStore, StoreError, default_db_url
from robojudge.suite import Item, ManifestProblem, load_suite

SetProgress = Callable[[SetMetricSpec, ItemGroup, list[SetRow]], None]
"""Called after each group is scored (not for groups already stored)."""

_SET_DETAILS = ("group_by", "group", "n_items", "n_references", "warning")


@dataclass
class SetRunSummary:
    """What :func:`score_sets_into` did.

    Attributes:
        rows: Every group's rows, computed now or read back from the store (metric, group order).
        groups: (metric, group) pairs asked for.
        skipped: Pairs already stored from the same members and inputs.
        stale: Pairs stored from other members or inputs; recomputed.
        unavailable: Stored pairs kept because a file they read cannot be read now (in ``skipped``).
        computed: Pairs computed in this run (including ``stale``).
        rescored_libraries: Stored rows computed with other library versions than installed, marked
            superseded so that their groups were computed again (``rescore_libraries``).
        db_url: The store.
        manifest_problems: Manifest rows that did not validate (with :func:`score_set_suite`).
        isolated: ``(metric, group)`` pairs an earlier run was computing in its own process when it
            ended (a crash, a kill): computed alone in a child process this time.
        crashed_again: Those of them whose child died too (their rows are errors: ``CRASHED_AGAIN``).
        changed: ``(metric, group)`` pairs computed and not stored because a file they read changed
            while they were computed (:func:`inputs_now`); the next run computes them again.
    """

    rows: list[SetRow] = field(default_factory=list)
    groups: int = 0
    skipped: int = 0
    stale: int = 0
    unavailable: int = 0
    computed: int = 0
    rescored_libraries: int = 0
    db_url: str = ""
    manifest_problems: list[ManifestProblem] = field(default_factory=list)
    isolated: list[tuple[str, str]] = field(default_factory=list)
    crashed_again: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)


CRASHED_AGAIN = (
    "the process died while computing this group, in an earlier run and again in a child process that "
    "computed it alone"
)
"""How a group's error rows start when the child computing it died too (how it died follows)."""


def row_ids(sm: SetMetricSpec, by: str | None, group: ItemGroup) -> list[str]:
    """The stored item ids of a group's rows: the group's id, or its members' ids."""
    if sm.output is SetOutput.group:
        return [group_item_id(by, group.key)]
    return [it.item_id for it in group.items]


def group_inputs(sm: SetMetricSpec, group: ItemGroup, config: BaseModel,
                 weights_known: Mapping[str, str] | None = None) -> Fingerprint:
    """The fingerprint stored with a group's rows (see the module doc), and whether a file is unavailable.
    ``weights_known``: as for :func:`~robojudge.run._fingerprint.read_inputs`."""
    pool = group.references(scope="all") if sm.references == "all" else None
    return set_inputs(sm.spec, group.items, config.model_dump(mode="json"), pool, weights_known)


def inputs_now(task: SetTask, rows: list[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    """``(to store, changed)``: a computed group's rows checked against its inputs as they are now
    (:func:`~robojudge.run._fingerprint.settle`): a member's video (or a reference of the pool)
    rewritten while the group was computed leaves its rows unstored, and the group stays to compute."""
    with one_look():  # a member's video and reference may be read by several members' fingerprints
        now = group_inputs(task.sm, task.group, task.config)
    settled = [(row, settle(row, now)) for row in rows]
    return [s for _, s in settled if s is not None], [row for row, s in settled if s is None]


def to_result_rows(
    rows: Sequence[SetRow], sm: SetMetricSpec, by: str | None, config: BaseModel, fingerprint: str
) -> list[ResultRow]:
    """A group's :class:`SetRow` results as store rows (group facts go into ``details``)."""
    chash, version, stored_config = set_config_hash(config, by), sm.spec.version, set_config(config, by)
    out = []
    for r in rows:
        details = {**r.details, "group_by": by, "group": r.group, "n_items": r.n_items,
                   "n_references": r.n_references}
        if r.warning:
            details["warning"] = r.warning
        ok = r.status == "ok"
        error = r.error
        if ok and not math.isnan(r.value) and (problem := sm.spec.value_problem(r.value)) is not None:
            # the metric broke its contract: as compute_metric does with a per-item value, kept with a note
            # where it is a network's finite output (FVD, IS: their features' nets), else refused
            if sm.spec.provider is Provider.model and math.isfinite(r.value):
                details["outside_range"] = problem
            else:
                ok, error = False, refused_value(problem)
        out.append(ResultRow(
            item_id=r.item_id or group_item_id(by, r.group), metric=r.metric, config_hash=chash,
            version=version, status="ok" if ok else "error", value=r.value if ok else None, error=error,
            details=details, config=stored_config, fingerprint=fingerprint,
        ))
    return out


def from_result_row(row: ResultRow, group_level: bool) -> SetRow:
    """A stored set-level row as a :class:`SetRow` again."""
    details = dict(row.details or {})
    facts = {k: details.pop(k, None) for k in _SET_DETAILS}
    value = math.nan if row.value is None else row.value
    return SetRow(
        metric=row.metric, group=str(facts["group"]), item_id=None if group_level else row.item_id,
        status=row.status, value=value, error=row.error, warning=facts["warning"],
        n_items=int(facts["n_items"] or 0), n_references=int(facts["n_references"] or 0),
        config_hash=row.config_hash, details=details,
    )


@dataclass(frozen=True)
class SetTask:
    """One metric over one group, to compute; ``fingerprint`` is the group's when planned; ``timeout_s``
    the most seconds it may take (None: no limit; see :func:`compute_set_task`)."""

    sm: SetMetricSpec
    group: ItemGroup
    config: BaseModel
    fingerprint: str
    timeout_s: float | None = None

    @property
    def spec(self) -> MetricSpec[Any]:
        """The metric's registry entry (what an executor reads its resources from)."""
        return self.sm.spec


def compute_set_task(task: SetTask) -> list[SetRow]:
    """A group's rows (failures as error rows; see :func:`~robojudge.metrics._sets.score_group`); each
    scored row records the library versions it was computed with (``details["libraries"]``, where it is
    computed: on a Ray worker, that worker's) and the robojudge release (``details["robojudge"]``), as
    per-item rows do. A group still computing after
    ``task.timeout_s`` is stopped: its rows are errors saying so (:mod:`robojudge.run._timelimit`)."""
    libraries = library_versions(task.spec)
    with stop_after(task.timeout_s) as stop:
        rows = score_group(task.sm, task.group, task.config)
    if stop.passed_after is not None:
        message = timed_out_message(stop.passed_after, "the metric was still computing the group")
        return _error_rows(task.sm, task.group, message, set_config_hash(task.config, task.group.by))
    return [replace(r, details=with_release({**r.details, "libraries": libraries})) if r.status == "ok" else r
            for r in rows]


def _set_crash_rows(task: SetTask, reason: str) -> list[SetRow]:
    return _error_rows(task.sm, task.group, crash_reason(reason, task.timeout_s),
                       set_config_hash(task.config, task.group.by))


def _note_id(task: SetTask) -> str:
    """The id a group's in-flight note is kept under (its group row's id, for either output)."""
    return group_item_id(task.group.by, task.group.key)


def _guarded(store: ResultStore, summary: SetRunSummary) -> Callable[[SetTask], list[SetRow]]:
    """:func:`compute_set_task` for an executor that runs it in this process, with the crash guard of
    :func:`score_items`: the (group, metric) is noted in the store while it is computed, and one an
    earlier run was computing when its process ended is computed alone in a child process (not one a
    run still going on on this host is computing: see :meth:`ResultStore.in_flight`)."""
    earlier = store.in_flight(ended=True, queued=False)

    def compute(task: SetTask) -> list[SetRow]:
        note, pair = _note_id(task), (task.sm.id, task.group.key)
        apart = task.sm.id in earlier.get(note, ())
        if apart:
            summary.isolated.append(pair)
        rows = guarded_call(
            compute_set_task, task, ran_before=apart, on_crash=_set_crash_rows, reason=CRASHED_AGAIN,
            note=lambda: store.note_in_flight(note, [task.sm.id]),
            clear=lambda: store.clear_in_flight([note]))
        if apart and any((r.error or "").startswith(CRASHED_AGAIN) for r in rows):  # (--timeout adds to it)
            summary.crashed_again.append(pair)
        return rows

    return compute


def score_sets_into(
    store: ResultStore,
    items: Sequence[Item],
    metric_ids: Sequence[str],
    *,
    by: str | None = "generator",
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    retry_errors: bool = False,
    progress: SetProgress | None = None,
    executor: Executor | None = None,
    rescore_libraries: bool = False,
    rescore_unknown: bool = False,
    timeout_s: float | None = None,
) -> SetRunSummary:
    """Score set-level metrics per group into ``store``, computing only missing or changed groups.

    Args:
        store: Where rows go.
        items: The items (absolute paths).
        metric_ids: Set-level metric ids; ``all`` = those whose weights are present.
        by: Item field to group by; ``None`` = one group of every item.
        configs: ``{metric_id: {key: value}}``.
        retry_errors: Delete the stored failures of these metrics on these groups first, so they are
            computed again (other groups' are left as they are).
        progress: Called after each computed group.
        executor: Where groups are computed (default: one after another in this process); with
            Ray, each group is a task on a worker holding the metric's declared resources, and
            its rows are stored here as they arrive.
        rescore_libraries: Compute again the groups with a stored row computed with other library
            versions than this process has (the old rows are kept, superseded); rows without a record
            are kept.
        rescore_unknown: Compute again the groups stored with a fingerprint of an older recipe
            (:attr:`~robojudge.run._fingerprint.Fingerprint.legacy`); by default they are kept.
        timeout_s: The most seconds one metric may take on one group; past it the group's rows are
            errors saying so and the run goes on (as :func:`robojudge.run.score_items`). None: no limit.

    Raises:
        UnknownMetricError: An unknown id. ValueError: a per-item id, a bad ``by`` or bad config, a
            ``timeout_s`` that is not positive.
        RunInterrupted: Ctrl-C while groups were computed: the groups done are stored, the workers
            stopped; the error holds the summary so far (its ``rows`` not read back).
        StoreError: The store cannot be read or stopped taking rows (a full disk, a server gone): the
            groups stored are kept, and the in-flight note of the group being stored is cleared where the
            store still takes that.
    """
    check_limit(timeout_s)
    chosen = choose_set_metrics(metric_ids, configs)
    ex = executor or SerialExecutor()
    # Before anything is cleared or superseded below (a set metric of a notebook killed every worker)
    if isinstance(ex, LocalProcessExecutor):
        refuse_main_defined([sm.id for sm, _ in chosen if sm.fn.__module__ == "__main__"])
    groups = group_items(items, by)
    summary = SetRunSummary(db_url=store.url)
    tasks: list[SetTask] = []
    for sm, cfg in chosen:
        key = (sm.id, set_config_hash(cfg, by), sm.spec.version)
        ids = [i for group in groups for i in row_ids(sm, by, group)]
        if retry_errors:
            store.clear_errors(*key, item_ids=ids)
        if rescore_libraries:
            summary.rescored_libraries += store.supersede_other_libraries(*key, same_libraries(sm.spec),
                                                                          ids)
        stored = store.current_fingerprints(*key)
        for group in groups:
            summary.groups += 1
            fp = group_inputs(sm, group, cfg)
            ids = row_ids(sm, by, group)
            have = {stored.get(i) for i in ids}
            older = fp.legacy is not None and have == {fp.legacy}
            if have == {fp.value} or (older and not rescore_unknown):
                summary.skipped += 1  # (a group stored with an older recipe's fingerprint is kept)
                continue
            if fp.unavailable and have != {None}:
                summary.unavailable += 1
                summary.skipped += 1
                continue
            summary.stale += int(have != {None})
            tasks.append(SetTask(sm, group, cfg, fp.value, timeout_s))
    in_process = bool(getattr(ex, "in_process", False))
    results = ex.map_unordered(_guarded(store, summary) if in_process else compute_set_task, tasks,
                               _set_crash_rows)
    noted: str | None = None  # the group computed here whose note is not cleared yet (one at a time)
    try:
        for task, rows in results:
            noted = _note_id(task) if in_process else None
            keep, changed = inputs_now(task, to_result_rows(rows, task.sm, by, task.config, task.fingerprint))
            if changed:
                summary.changed.append((task.sm.id, task.group.key))
            if keep:
                store.add(keep)
            store.clear_in_flight([_note_id(task)])
            noted = None
            summary.computed += 1
            if progress is not None:
                progress(task.sm, task.group, rows)
    except KeyboardInterrupt:  # raised once the workers are stopped (below)
        raise RunInterrupted(summary) from None
    except StoreError:
        # The store stopped taking writes (a full disk, a server gone) while a group's rows were stored:
        # the group was computed, not crashed on, so its note goes, as a per-item run's does
        # (robojudge.run._score._clear_after_stop). A store that takes no writes at all keeps it, and the
        # next run computes that group alone, as after a crash.
        if noted is not None:
            with contextlib.suppress(StoreError):
                store.clear_in_flight([noted])
        raise
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
        ex.shutdown()
    for sm, cfg in chosen:
        key = (sm.id, set_config_hash(cfg, by), sm.spec.version)
        mine = (r for r in store.iter_rows(metric=sm.id) if (r.config_hash, r.version) == key[1:])
        current = {r.item_id: r for r in mine}
        for group in groups:
            summary.rows.extend(
                from_result_row(current[i], sm.output is SetOutput.group)
                for i in row_ids(sm, by, group) if i in current
            )
    return summary


def score_set_suite(
    manifest: str | Path,
    metric_ids: Sequence[str],
    *,
    by: str | None = "generator",
    db: str | None = None,
    run_dir: str | Path | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    retry_errors: bool = False,
    progress: SetProgress | None = None,
    executor: Executor | str | None = None,
    address: str | None = None,
    workers: int | None = None,
    rescore_libraries: bool = False,
    rescore_unknown: bool = False,
    timeout_s: float | None = None,
) -> SetRunSummary:
    """Score set-level metrics over the groups of ``manifest`` into the store at ``db``.

    ``db`` defaults to ``results.sqlite`` in ``run_dir``, which defaults to the run folder the manifest
    lies in, else ``runs/<manifest name>`` (the store ``robojudge score`` uses). Manifest rows that do not
    validate are left out and returned in ``manifest_problems``. Rerunning resumes (see
    :func:`score_sets_into`, also for
    ``rescore_libraries``, ``rescore_unknown`` and ``timeout_s``).
    ``executor``: an executor, or ``ray`` with ``address`` and ``workers`` (see
    :func:`robojudge.run.make_executor`); default: the groups one after another in this process.
    """
    check_limit(timeout_s)
    chosen = choose_set_metrics(metric_ids, configs)  # bad ids and configs fail before a store is created
    missing = {sm.id: mods for sm, _ in chosen if (mods := missing_libraries(sm.spec))}
    if missing:  # one line naming the extra, before any video is read (not an error row per group)
        raise MissingLibrariesError(missing)
    suite = load_suite(manifest, strict=False)
    raise_if_no_items([suite])
    url = db or default_db_url(Path(run_dir) if run_dir else default_run_dir(manifest))
    ex: Executor | None
    if isinstance(executor, str) or (executor is None and address is not None):
        ex = make_executor(workers, executor or "local", address)
    else:
        ex = executor
    grouped = any(sm.output is SetOutput.group for sm, _ in chosen)
    with ResultStore(url) as store:
        # both checked against the manifests noted before this one, once it is noted (see claim_store)
        groups = functools.partial(refuse_partial_groups, store, manifest, suite.items, by)
        claim_store(store, manifest, suite.items, groups if grouped else None)
        summary = score_sets_into(store, suite.items, metric_ids, by=by, configs=configs,
                                  retry_errors=retry_errors, progress=progress, executor=ex,
                                  rescore_libraries=rescore_libraries, rescore_unknown=rescore_unknown,
                                  timeout_s=timeout_s)
    summary.manifest_problems = list(suite.problems)
    return summary


def refuse_partial_groups(store: ResultStore, manifest: str | Path, items: Sequence[Item],
                          by: str | None, others: Iterable[Path] | None = None) -> None:
    """Refuse to score groups of ``manifest`` that another manifest noted in ``store`` (one that still
    exists) gives members this one lacks; ``others``: the manifests to check, by default every one noted
    (see :func:`robojudge.run._where.refuse_shared_ids`).

    A group's row is stored under ``group:<by>=<value>`` whatever manifest it came from, so two
    manifests with a generator of the same name in one store would replace each other's row of that
    generator, each computed over its own part of the videos, and the report would show whichever ran
    last. A manifest whose groups hold every member the other has (a later, larger manifest of the same
    generator) is scored as before.

    Raises:
        ValueError: Naming the group, the other manifest, how many of its members this one lacks (with
            one of them) and how to go on.
    """
    # The scoring run says which of this manifest's groups look alike; the other manifests' are not ours.
    mine = {g.key: {it.item_id for it in g.items} for g in group_items(items, by, look_alike=None)}
    for path, theirs in other_manifests(store, manifest, others):
        try:
            their_groups = group_items(theirs, by, look_alike=None)
        except ValueError:  # its groups cannot be formed (a value spelt as the unset group): it claims none
            continue
        for group in their_groups:
            members = mine.get(group.key)
            lacking = sorted({it.item_id for it in group.items} - members) if members is not None else []
            if lacking:
                raise ValueError(
                    f"{store.url} holds results of another manifest, {path}, whose group "
                    f"{group_item_id(by, group.key)!r} has {len(lacking)} member(s) {manifest} lacks "
                    f"(e.g. {lacking[0]!r}): a group's row is kept under its name, so scoring this "
                    "manifest would replace the row computed over those members. Score one manifest "
                    "listing all of the group's videos, or give this one a store of its own (--run-dir "
                    "or --db)")


def group_column(items: Sequence[Item], by: str) -> Callable[[ResultRow], str | None]:
    """The value of the item field ``by`` for each stored row, as an export column.

    An item's row gets its item's value (``-`` when unset, as :func:`group_items` names that
    group); a set-level row grouped by ``by`` gets its group; other rows stay empty. With this
    column an export is a long table that ``robojudge aggregate scores --by <by>`` reads, set-level
    and per-item metrics side by side.

    Raises:
        ValueError: ``by`` is not an item field.

    Warns:
        LookAlikeGroupsWarning: Two values of ``by`` print alike (:func:`group_items`).
    """
    keys = {it.item_id: g.key for g in group_items(items, by, look_alike=f"two values of the {by} column")
            for it in g.items}
    set_ids = {sm.id for sm in list_set_metrics()}  # once, not per row: listing sorts the registry

    def cell(row: ResultRow) -> str | None:
        details = row.details or {}
        config = row.config or {}
        if "group_by" in config and row.metric in set_ids:
            return str(details["group"]) if config["group_by"] == by and "group" in details else None
        return keys.get(row.item_id)

    return cell
