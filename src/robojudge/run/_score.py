"""The scoring loop: (item, metric, config) tasks -> executor -> result store, exactly once.

Each row carries the fingerprint of the inputs its metric read (:mod:`robojudge.run._fingerprint`),
taken when the run is planned; a stored row whose inputs changed since is recomputed and superseded.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

import robojudge
from robojudge._lifeline import WorkerStartError, main_importable
from robojudge._raised import raised_reason, raised_traceback
from robojudge.metrics import (
    Input,
    MetricInputError,
    MetricResultError,
    MetricSpec,
    Provider,
    flow_readers,
    get_metric,
    missing_inputs,
    missing_texts,
    prefetch_main_video,
)
from robojudge.models import MissingWeightsError
from robojudge.run._cost import (
    SPLIT_ABOVE,
    CostModel,
    Outstanding,
    RunPace,
    item_size,
    sampling_groups,
    top_seconds,
)
from robojudge.run._executor import Executor, LocalProcessExecutor, guarded_call, make_executor, run_in_child
from robojudge.run._filehash import one_look
from robojudge.run._fingerprint import Fingerprints, metric_inputs, settle
from robojudge.run._libraries import library_versions, same_libraries
from robojudge.run._moved import take_over_moved
from robojudge.run._plan import Pending, plan_pending
from robojudge.run._timelimit import check_limit, stop_after
from robojudge.run._unscored import UnscoredKind, add_unscored
from robojudge.store import ResultRow, ResultStore, StoreError
from robojudge.store._store import dumps_json
from robojudge.suite import Item, tiling_known, tiling_sampling, tiling_warning
from robojudge.video import (
    Cell,
    VideoError,
    frame_cache,
    frame_sizes,
    read_cell,
    report_warnings,
    video_warnings,
)

if TYPE_CHECKING:
    from robojudge.run._judge_rows import JudgeRunSummary
    from robojudge.run._sets import SetRunSummary

_log = logging.getLogger(__name__)

@dataclass(frozen=True)
class MetricRequest:
    """A metric with a concrete config, ready to run.

    ``applicable_only``: run it only on the items that have every input it declares (the metrics
    ``--metrics all`` selects); without it an item lacking one gets an error row saying so.
    """

    spec: MetricSpec[Any]
    config: BaseModel
    config_hash: str
    applicable_only: bool = False

    @property
    def id(self) -> str:
        return self.spec.id

    @classmethod
    def build(cls, metric_id: str, config: dict[str, Any] | None = None, *,
              applicable_only: bool = False) -> MetricRequest:
        spec = get_metric(metric_id)
        cfg = spec.make_config(config)
        return cls(spec=spec, config=cfg, config_hash=spec.config_hash(cfg), applicable_only=applicable_only)


@dataclass(frozen=True)
class Task:
    """Metrics still to compute for one item; they run together so they share decoded frames.

    Usually all of the item's pending metrics; a large item's are split into one task per sampling
    (see :func:`split_task`). ``fingerprints`` holds, per request, the fingerprint of its inputs
    taken when the run was planned (empty: rows without fingerprint). ``size`` is the item's video
    in millions of frame-pixels (None: not known), for scheduling and the time estimate.
    ``timeout_s``: the most seconds each metric may take on the item (None: no limit; see
    :func:`compute_metric`).
    """

    item: Item
    requests: tuple[MetricRequest, ...]
    fingerprints: tuple[str, ...] = ()
    size: float | None = None
    timeout_s: float | None = None

    def fingerprint(self, i: int) -> str:
        return self.fingerprints[i] if i < len(self.fingerprints) else ""


def split_task(task: Task) -> list[Task]:
    """``task`` as one task per sampling its metrics read (metrics whose sampling config fields
    agree stay together, so each decode and flow is still computed once); the rows are the same."""
    groups = sampling_groups([r.config for r in task.requests])
    if len(groups) < 2:
        return [task]
    return [
        replace(task, requests=tuple(task.requests[i] for i in g),
                fingerprints=tuple(task.fingerprint(i) for i in g))
        for g in groups
    ]


def schedule(tasks: Sequence[Task], workers: int, split_above: float = SPLIT_ABOVE) -> list[Task]:
    """Tasks sized, and with several workers, split and ordered so that no worker idles long.

    An item at or above ``split_above`` million frame-pixels (or any item, when there are fewer
    items than workers) is split by :func:`split_task`; the largest items go first, so that a long
    video is not the last thing left running on one worker while the others wait.
    """
    sized = [
        replace(t, size=item_size(t.item)) if any(Input.video in r.spec.inputs for r in t.requests) else t
        for t in tasks
    ]
    if workers <= 1:
        return sized
    few = len(sized) < workers
    out: list[Task] = []
    for t in sized:
        big = t.size is not None and t.size >= split_above
        out.extend(split_task(t) if big or few else [t])
    return sorted(out, key=lambda t: -(t.size or 0.0))  # stable: an item's parts stay in order


#: How many error rows a :class:`RunSummary` keeps (the store has them all).
KEPT_ERRORS = 1000


@dataclass
class RunSummary:
    """What a call to :func:`score_items` did.

    ``skipped`` counts pairs already stored from the same inputs (and those kept with an unknown
    fingerprint or unavailable inputs), ``skipped_errors`` those of them stored as failures (kept until
    ``retry_errors``); ``stale`` the stored pairs whose inputs changed, recomputed
    in this run; ``unknown`` the stored pairs without a fingerprint (stored before schema version
    2); ``unavailable`` the stored pairs kept because a file they read cannot be read now.
    ``ok`` counts the rows computed without an error and stored, ``unscored`` those of them that found
    nothing to measure (NaN, with ``details["unscored_reason"]``), and ``unscored_reasons`` those results
    by kind of reason (:func:`unscored_lines` words them); ``failed`` the error rows stored.
    ``duplicates`` counts the rows computed here that another run stored first (two runs of the same
    items overlapping): the store kept that run's row, and they are in no other count. ``measured``
    counts the ``ok`` rows of metrics that read an input (every metric but the input-free baselines
    such as ``uniform_random``), duplicates too: with failures and none of these, the run measured
    nothing (:attr:`measured_nothing`).
    """

    total: int = 0
    skipped: int = 0
    skipped_errors: int = 0
    stale: int = 0
    unknown: int = 0
    unavailable: int = 0
    ok: int = 0
    measured: int = 0
    failed: int = 0
    duplicates: int = 0
    # Set when this run measured nothing: whether the store holds a measured (ok) result of these items
    # from an earlier run.
    measured_before: bool = False
    # Results computed and not stored because their inputs changed while they were computed (the
    # pairs stay to do), and the items they belong to.
    changed_inputs: int = 0
    changed_items: list[str] = field(default_factory=list)
    unscored: int = 0
    # The unscored results by kind of reason (reasons that differ only in their numbers are one kind).
    unscored_reasons: dict[str, UnscoredKind] = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False
    # Whether every block of the items is planned (a manifest read block by block): until then the
    # counts, the progress and the estimate are of the blocks planned so far.
    all_planned: bool = True
    # The first KEPT_ERRORS error rows (``failed`` counts them all): a long run whose share went away
    # kept every one in memory, about 1.6 KB each, to print 20 of them.
    errors: list[ResultRow] = field(default_factory=list)
    # Rows whose videos needed an assumption (details["video_warnings"]), and those warnings by item.
    warned: int = 0
    video_warnings: dict[str, list[str]] = field(default_factory=dict)
    # What metrics said about how they measured (details["notice"], e.g. a KIVA reader calibrated for an
    # older measure): each text once, with the number of rows that carry it.
    notices: dict[str, int] = field(default_factory=dict)
    # Per metric, the items it was not run on because they lack an input it needs (applicable_only),
    # and per metric what those items lack (an input, `meta.caption`) with how many lack it.
    not_applicable: dict[str, int] = field(default_factory=dict)
    not_applicable_lacking: dict[str, dict[str, int]] = field(default_factory=dict)
    # Worker seconds per metric (the rows' duration_s summed), and the estimated wall seconds the
    # rest of the run needs (None until a result has been measured; 0 when nothing is left).
    metric_seconds: dict[str, float] = field(default_factory=dict)
    estimate_s: float | None = None
    # Whether each metric still to compute has been measured on enough results for the estimate to
    # be shown (CostModel.settled; the estimate is kept either way), and those not measured at all,
    # which the estimate counts at the measured ones' mean.
    estimate_settled: bool = False
    estimate_unmeasured: list[str] = field(default_factory=list)
    # Stored results computed with other library versions, superseded to be computed again
    # (``rescore_libraries``).
    rescored_libraries: int = 0
    # Stored results kept (already stored) that were computed with other library versions than
    # installed (without ``rescore_libraries``).
    other_libraries: int = 0
    # Stored results of a configuration naming the same files by other paths (a moved project), stored
    # again under the requested configuration instead of being computed (robojudge.run._moved).
    taken_over: int = 0
    # Per (metric, stored version, installed version): stored results of another version of a metric
    # computed in this run (an upgrade changed the metric); they are kept beside the new ones.
    other_versions: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # Items an earlier run was computing in its own process when it ended (a crash or a kill), each
    # computed alone in a child process by this run, and those whose child died too.
    isolated: list[str] = field(default_factory=list)
    crashed_again: list[str] = field(default_factory=list)
    # Pairs another run of the same items stored while this one was going, found so before they were
    # computed here, and left to it (counted in ``skipped`` too: they are stored); the other runs seen
    # computing items of this run, as "host pid".
    by_other_run: int = 0
    other_runs: list[str] = field(default_factory=list)

    @property
    def computed(self) -> int:
        return self.ok + self.failed + self.changed_inputs + self.duplicates

    @property
    def stored(self) -> int:
        """Pairs the store holds now: stored before the run, by it, or by another run meanwhile."""
        return self.skipped + self.ok + self.failed + self.duplicates

    @property
    def measured_nothing(self) -> bool:
        """Tasks failed in this run and no result of a metric that reads an input came out, in this run
        or stored by an earlier one for these items: every video broken, unreadable or missing
        (``robojudge score`` then exits 1). A resume or ``--retry-errors`` run left with only the broken
        items of a suite that was measured is not this."""
        return self.failed > 0 and self.measured == 0 and not self.measured_before

    def top_metrics(self, n: int = 5) -> list[tuple[str, float]]:
        """The ``n`` metrics that took the most worker seconds in this run, with those seconds."""
        return top_seconds(self.metric_seconds, n)


ProgressCallback = Callable[[ResultRow, RunSummary], None]


class RunStoppedError(StoreError):
    """The store stopped taking results during a run (a full disk): nothing more was computed or
    sent, what was stored is kept, and the same call resumes.

    Attributes:
        summary: The run's summary so far (:class:`RunSummary`, or a judge run's ``JudgeRunSummary``).
        url: The store (:attr:`ResultStore.url`, its password masked).
        in_flight: Items whose results were not stored and whose in-flight note
            (:meth:`ResultStore.note_in_flight`) this run could not clear, the store taking no writes: the
            next run takes each for a crash and computes it alone in a child process.
    """

    def __init__(self, error: StoreError, summary: RunSummary | JudgeRunSummary, url: str,
                 in_flight: Sequence[str] = ()) -> None:
        super().__init__(str(error))
        self.summary = summary
        self.url = url
        self.in_flight = list(in_flight)


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (a notebook's "Interrupt kernel"; ``kill`` or a closed terminal under the
    CLI), raised once what finished is stored and the workers are stopped: the same call resumes.

    A ``KeyboardInterrupt``, so a caller that does not catch it stops as at any Ctrl-C (the rest of a
    notebook cell, a loop over runs) instead of going on with a partial run.

    Attributes:
        summary: The run's summary so far (:class:`RunSummary` with ``interrupted`` set, a judge run's
            ``JudgeRunSummary``, or a set run's ``SetRunSummary``).
        run: From :func:`~robojudge.run.score_suite` and :func:`~robojudge.run.judge_suite`, their
            outcome so far (``SuiteRun``, ``JudgeSuiteRun``: the store, the manifest rows left out); else
            None.
    """

    def __init__(self, summary: RunSummary | JudgeRunSummary | SetRunSummary, run: Any = None) -> None:
        super().__init__("interrupted: what finished is stored; the same call resumes")
        self.summary = summary
        self.run = run


def _error_row(
    item: Item, req: MetricRequest, message: str, seconds: float, fingerprint: str = "",
    details: dict[str, Any] | None = None,
) -> ResultRow:
    return ResultRow(
        item_id=item.item_id,
        metric=req.id,
        config_hash=req.config_hash,
        version=req.spec.version,
        status="error",
        value=None,
        error=message,
        duration_s=seconds,
        details=details,
        config=req.config.model_dump(mode="json"),
        fingerprint=fingerprint,
    )


def timed_out_message(seconds: float, what: str = "the metric was still computing") -> str:
    """The error of a row stopped by the time limit (``robojudge score --timeout``)."""
    return (f"stopped after the time limit of {seconds:g} s (--timeout): {what}; rerun with a larger "
            "--timeout (or none) and --retry-errors to compute it")


def refused_value(problem: str) -> str:
    """The error of a row whose computed value broke its metric's contract (per item or set-level):
    ``problem`` from :meth:`~robojudge.metrics.MetricSpec.value_problem`, and what to do."""
    return (f"{problem}: not stored as a value; correct the metric (or its native_range) and give it a new "
            "version")


def compute_metric(item: Item, req: MetricRequest, fingerprint: str = "",
                   timeout_s: float | None = None, tiled: str | None = None) -> ResultRow:
    """Run one metric on one item and return its result row; never raises for bad input.

    A metric that raises, returns no :class:`~robojudge.metrics.Score`, or a value that is infinite or
    outside its ``native_range`` (:meth:`~robojudge.metrics.MetricSpec.value_problem`, the check of
    ``results import``) gets an error row saying so; NaN is its "unscored" value, an ok row. A network's
    finite value outside the range (provider ``model``: its head is not bounded) is kept, the problem
    under ``details["outside_range"]``.
    ``fingerprint`` (of the inputs, see :func:`metric_fingerprint`) is stored with the row.
    ``timeout_s``: a metric still computing after this many seconds is stopped and its row is an
    error saying so (:mod:`robojudge.run._timelimit` says how, and where it cannot). ``tiled``: the
    warning that the item's video looks like several views tiled in one frame, added to the row's video
    warnings when the metric reads that video as one camera's (:func:`_reads_one_view`). A metric that
    compared the video with its ``reference_video`` (scored) gets the same warning of the reference
    when that looks tiled (:func:`_compares_with_reference`).

    An item whose video is a ``grid`` of views with a ``main_view`` is read by the metrics that read one
    camera's video as the main view's cell (:func:`main_cell`): every frame they sample of the video,
    and its probed size, are the cell's, and the row's ``details["grid_cell"]`` names it.
    """
    spec = req.spec
    missing = missing_inputs(spec, item)
    if missing:
        message = f"item has no {', '.join(missing)}, which {spec.id} needs"
        return _error_row(item, req, message, 0.0, fingerprint)
    tiled = tiled if _reads_one_view(spec, item) else None
    cell = main_cell(item) if _reads_main_cell(spec, item) else None
    start = time.perf_counter()
    try:
        # What had to be assumed about the videos this metric read, and the size it read them at.
        with video_warnings() as warned, frame_sizes() as sizes, stop_after(timeout_s) as stop, \
                _reading(item, cell):
            if tiled is not None:
                report_warnings(Path(item.video), [tiled])
            score = spec.compute(item, req.config)
            if score.scored and _compares_with_reference(spec, item):
                # a few small frames of the reference, once per file: an unscored row compared nothing
                reference = Path(str(item.reference_video))
                said = tiling_warning(reference, reference=True)
                if said is not None:
                    report_warnings(reference, [said])
        if stop.passed_after is not None:
            return _error_row(item, req, timed_out_message(stop.passed_after), time.perf_counter() - start,
                              fingerprint)
        # The metric broke its own contract: refused here as `results import` refuses such a value. A
        # network's output (provider "model": MUSIQ, LAION-AP, LPIPS) is bounded by no construction, only
        # nominally by the paper's range: a value past it is kept, with the problem noted in its details.
        problem = spec.value_problem(score.value) if score.scored else None
        details = score.details
        if problem is not None and spec.provider is Provider.model and math.isfinite(score.value):
            details = {**details, "outside_range": problem}
        elif problem is not None:
            return _error_row(item, req, refused_value(problem), time.perf_counter() - start, fingerprint)
        # Built here, under the same guard: whatever a metric returns costs its own row at most
        return ResultRow(
            item_id=item.item_id,
            metric=spec.id,
            config_hash=req.config_hash,
            version=spec.version,
            status="ok",
            value=score.value,
            duration_s=time.perf_counter() - start,
            details=as_stored(with_libraries(with_grid_cell(with_frame_size(
                with_video_warnings(details, warned), sizes.get(str(Path(item.video)))), cell), spec)),
            config=req.config.model_dump(mode="json"),
            fingerprint=fingerprint,
        )
    except VideoError as exc:
        return _error_row(item, req, f"video error: {exc}", time.perf_counter() - start, fingerprint)
    except (MetricInputError, MetricResultError, MissingWeightsError) as exc:
        return _error_row(item, req, str(exc), time.perf_counter() - start, fingerprint)
    except Exception as exc:  # a bug in a metric must cost one result, not the run
        # The reason stays one line; where it was raised goes into the row's details (and, under -v, the
        # whole traceback into the log), so that the item need not be run again under a debugger.
        _log.debug("%s / %s: metric raised", item.item_id, spec.id, exc_info=exc)
        return _error_row(item, req, f"metric raised {raised_reason(exc)}", time.perf_counter() - start,
                          fingerprint, {"traceback": raised_traceback(exc)})


def _reads_one_view(spec: MetricSpec[Any], item: Item) -> bool:
    """Whether ``spec`` reads the item's video as one camera's picture (not a declared grid, not views)."""
    return item.grid is None and Input.video in spec.inputs and Input.views not in spec.inputs


def _reads_main_cell(spec: MetricSpec[Any], item: Item) -> bool:
    """Whether ``spec`` reads one camera's video and ``item``'s is a grid of views with a ``main_view``:
    the metric then reads the main view's cell (:func:`main_cell`)."""
    return (item.grid is not None and item.main_view is not None and Input.video in spec.inputs
            and Input.views not in spec.inputs)


@dataclass(frozen=True)
class MainCell:
    """The cell of a grid item's video that the metrics reading one camera's video read."""

    view: str
    cell: Cell

    def label(self) -> str:
        """What the row's ``details["grid_cell"]`` says: the view, its row and column (from 0), the grid."""
        c = self.cell
        return f"{self.view} (row {c.row}, col {c.col} of a {c.rows}x{c.cols} grid)"


def main_cell(item: Item) -> MainCell | None:
    """The cell of ``item``'s ``grid`` video named by its ``main_view``, which the metrics that read one
    camera's video read; ``None`` for an item without a grid, or whose grid names no ``main_view`` (those
    metrics skip it: :func:`robojudge.metrics.missing_inputs`)."""
    if item.grid is None or item.main_view is None:
        return None
    row, col = item.grid.cells()[item.main_view]
    return MainCell(item.main_view, Cell(item.grid.rows, item.grid.cols, row, col))


def _reading(item: Item, cell: MainCell | None) -> AbstractContextManager[None]:
    """A block in which the item's video is read as ``cell`` (whole without one)."""
    return nullcontext() if cell is None else read_cell(item.video, cell.cell)


def _compares_with_reference(spec: MetricSpec[Any], item: Item) -> bool:
    """Whether ``spec`` reads the item's ``reference_video`` as one camera's picture: of an item whose
    video is a declared grid, only when the metric reads its main view's cell (:func:`main_cell`), which
    it then compares with the reference. (Without a ``main_view`` such metrics skip the item.)"""
    return (bool(item.reference_video) and Input.reference in spec.inputs and Input.views not in spec.inputs
            and (item.grid is None or _reads_main_cell(spec, item)))


class _CellReader:
    """A metric's config as a reader of one cell of the item's grid video: the samplings the config
    declares (taken as the metric reads the video, so a probe gives the cell's size), each of the cell, so
    that they are read in the same pass as the whole frames other metrics read."""

    def __init__(self, config: object, cell: MainCell) -> None:
        self.config = config
        self.cell = cell

    def main_video_samplings(self, item: Item) -> list[dict[str, Any]]:
        declared = getattr(self.config, "main_video_samplings", None)
        if declared is None:
            return []
        with read_cell(item.video, self.cell.cell):
            return [{**sampling, "cell": self.cell.cell} for sampling in declared(item)]


class _TilingCheck:
    """The check whether an item's video looks like several views tiled in one frame, as one more reader
    of the main video: it declares its few small frames (:func:`robojudge.suite.tiling_sampling`) so
    that they are read in the pass that reads the video for the metrics."""

    def main_video_samplings(self, item: Item) -> list[dict[str, Any]]:
        return [] if tiling_known(item.video) else [tiling_sampling(item.video)]


def _tiling_check(task: Task, readers: Sequence[BaseModel | None]) -> _TilingCheck | None:
    """The check, when a metric of the task reads the item's video as one camera's in the pass the task
    reads ahead: its config declares a sampling of it. A metric that refuses the video from its probes
    declares none, and one that samples it its own way (a network's preprocessing) declares nothing:
    beside those alone the check reads no frame."""
    item = task.item
    for req, cfg in zip(task.requests, readers, strict=True):
        declared = getattr(cfg, "main_video_samplings", None)
        if declared is None or not _reads_one_view(req.spec, item):
            continue
        try:
            if declared(item):
                return _TilingCheck()
        except Exception:  # noqa: BLE001, S112 - a video that cannot be probed: its metric reports it
            continue
    return None


def as_stored(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` as the store keeps them: through its JSON (numpy values as numbers and lists, NaN as
    null, any other object as its text). Done where the row is computed, so that a row from a worker
    process holds plain data that goes back to the parent whatever a metric put in it (a lock, an open
    file), and is the same as one computed in the parent's own process."""
    loaded: dict[str, Any] = json.loads(dumps_json(details))
    return loaded


def with_video_warnings(details: dict[str, Any] | None, warnings: list[str]) -> dict[str, Any] | None:
    """A row's details with ``video_warnings`` added when there are any (see :func:`video_warnings`)."""
    if not warnings:
        return details or None
    return {**(details or {}), "video_warnings": list(warnings)}


def with_grid_cell(details: dict[str, Any] | None, cell: MainCell | None) -> dict[str, Any] | None:
    """A row's details with ``grid_cell`` (:meth:`MainCell.label`) when the metric read one cell of the
    item's grid video; unchanged otherwise."""
    if cell is None:
        return details
    return {**(details or {}), "grid_cell": cell.label()}


def with_frame_size(details: dict[str, Any] | None, sizes: list[str] | None) -> dict[str, Any] | None:
    """A row's details with ``frame_size``: the size(s) at which the metric read the item's main
    video, ``"WxH"`` (several joined by ``", "``); unchanged when it read no frames of it."""
    if not sizes:
        return details
    return {**(details or {}), "frame_size": ", ".join(sizes)}


def with_libraries(details: dict[str, Any] | None, spec: MetricSpec[Any]) -> dict[str, Any]:
    """A row's details with ``libraries``: the versions of the libraries its value was computed with
    (:func:`robojudge.run._libraries.library_versions`), and ``robojudge``: the release that computed it
    (:func:`with_release`)."""
    return with_release({**(details or {}), "libraries": library_versions(spec)})


def with_release(details: dict[str, Any] | None) -> dict[str, Any]:
    """A row's details with ``robojudge``: the robojudge release that computed the row. The metric
    version covers a metric's own code, not what it shares with the others (frame reading, preprocessing)
    or the report; the release is outside the row's key and config hash, so an upgrade rescores nothing."""
    return {**(details or {}), "robojudge": robojudge.__version__}


def _note_warnings(summary: RunSummary, row: ResultRow) -> None:
    found = (row.details or {}).get("video_warnings")
    if found:
        summary.warned += 1
        seen = summary.video_warnings.setdefault(row.item_id, [])
        seen.extend(w for w in found if w not in seen)
    notice = (row.details or {}).get("notice")
    if notice:
        summary.notices[str(notice)] = summary.notices.get(str(notice), 0) + 1


def compute_task(task: Task) -> list[ResultRow]:
    """All of an item's pending metrics, decoding each distinct sampling of its videos once, and the
    samplings of the main video that the metrics' configs declare in one pass (``prefetch_main_video``)."""
    # (under -v: in a worker's own log too, so that its lines, and a stack it prints, can be matched to items)
    _log.debug("process %d computing %s / %s", os.getpid(), task.item.item_id,
               ", ".join(r.id for r in task.requests))
    with frame_cache(), flow_readers(req.spec.id for req in task.requests):
        configs = [None if missing_inputs(req.spec, task.item) else req.config for req in task.requests]
        cell = main_cell(task.item)
        # the metrics that read the main view's cell of a grid video declare samplings of the cell
        readers: list[object] = [
            _CellReader(cfg, cell) if cell is not None and _reads_main_cell(req.spec, task.item) else cfg
            for req, cfg in zip(task.requests, configs, strict=True) if cfg is not None]
        check = _tiling_check(task, configs)
        start = time.perf_counter()
        with stop_after(task.timeout_s) as stop:  # the shared read counts too: a decoder may hang as well
            prefetch_main_video(task.item, readers if check is None else [*readers, check])
            # whether the video looks tiled: from the frames just read (or, were they not, a few of its own)
            tiled = tiling_warning(task.item.video) if check is not None else None
        if stop.passed_after is not None:
            message = timed_out_message(stop.passed_after, "reading the frames the item's metrics share")
            took = time.perf_counter() - start
            return [_error_row(task.item, req, message, took, task.fingerprint(i))
                    for i, req in enumerate(task.requests)]
        return [compute_metric(task.item, req, task.fingerprint(i), task.timeout_s, tiled)
                for i, req in enumerate(task.requests)]


def _measured_before(store: ResultStore, items: set[str], requests: Sequence[MetricRequest]) -> bool:
    """Whether ``store`` holds a current ok result of one of ``items`` from a requested metric that reads
    an input."""
    for req in requests:
        if req.spec.inputs and any(r.item_id in items for r in store.iter_rows(metric=req.id, status="ok")):
            return True
    return False


def _inputs_now(task: Task, rows: list[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    """``(to store, changed)``: ``rows`` checked against their inputs as they are now, after computing
    (:func:`~robojudge.run._fingerprint.settle`). Checking costs a ``stat`` per file (digests are
    memoised by it)."""
    keep, changed = [], []
    with one_look():  # the task's metrics read the same files: each looked at once
        for req, row in zip(task.requests, rows, strict=True):
            settled = settle(row, metric_inputs(task.item, req.spec, req.config)) if row.fingerprint else row
            if settled is None:
                changed.append(row)
            else:
                keep.append(settled)
    return keep, changed


CRASHED_AGAIN = (
    "the process died while computing this item, in an earlier run and again in a child process that "
    "computed it alone"
)
"""How an item's error row starts when the child computing it died too (how it died follows)."""


#: How the time limit's hard guard ends a worker (``faulthandler.dump_traceback_later(exit=True)`` exits
#: with status 1 once it has printed the stacks), as :func:`robojudge.run._executor.how_it_died` says it.
HARD_TIMEOUT_EXIT = "(exit status 1)"


def crash_reason(reason: str, timeout_s: float | None) -> str:
    """``reason`` for a task whose worker died, and the way to try it again. Where the run has a time
    limit, whose hard guard ends a worker too (:mod:`robojudge.run._timelimit`), the row says which it was:
    a worker that exited with the guard's status (:data:`HARD_TIMEOUT_EXIT`) was stopped by the limit, one
    killed by a signal crashed; another end (another exit status, a Ray worker's death) may be either. The
    guard's status is 1, which native code calling ``exit(1)`` gives too: "most likely". A task whose
    worker lived on but sent no result back (``NO_RESULT``) gets no word of the limit."""
    died = " died while " in reason  # (the worker died: not NO_RESULT, whose worker lived on)
    if timeout_s is not None and died and reason.endswith(HARD_TIMEOUT_EXIT):
        reason = (f"{reason}: most likely a hard timeout, its code ran past the time limit ({timeout_s:g} s, "
                  "--timeout) without coming back to Python (else native code ended the process with "
                  "exit(1)); the worker printed the Python stack it was at on stderr, followed by a warning "
                  "naming this item")
    elif timeout_s is not None and died and "(killed by " not in reason:
        reason = (f"{reason}; or its code ran past the time limit ({timeout_s:g} s, --timeout) without "
                  "coming back to Python, in which case the worker's stderr shows where it was")
    return reason if "--retry-errors" in reason else f"{reason}; --retry-errors tries it again"


def crash_warning(item_id: str, metrics: Sequence[str], reason: str) -> None:
    """One WARNING line on stderr naming the item and metrics of a task whose process died, right after
    the stack that process printed (faulthandler: a native crash's, or the time limit's hard guard's), so
    that the stack can be told apart from those of other items. The tasks suspected of a crash run alone
    (:class:`~robojudge.run._executor.LocalProcessExecutor`), so the last stack before the line is theirs."""
    _log.warning("%s / %s: %s", item_id, ", ".join(metrics), reason.split(";")[0])


def _crash_rows(task: Task, reason: str) -> list[ResultRow]:
    reason = crash_reason(reason, task.timeout_s)
    crash_warning(task.item.item_id, [r.id for r in task.requests], reason)
    return [
        _error_row(task.item, req, reason, 0.0, task.fingerprint(i)) for i, req in enumerate(task.requests)
    ]


def _per_request(task: Task) -> list[Task]:
    """``task`` as one task per metric, each to be computed alone after the task's process died."""
    return [replace(task, requests=(req,), fingerprints=(task.fingerprint(i),))
            for i, req in enumerate(task.requests)]


def _one_per_child(reason: str) -> Callable[[Task, str], list[ResultRow]]:
    """What a task whose process died gets: with several metrics, each computed again alone in a child
    process (error rows, ``reason`` and how that child died, for those whose child dies too), so the
    metric that kills its process does not cost the item's others; with one, its error row."""

    def on_crash(task: Task, died: str) -> list[ResultRow]:
        if len(task.requests) < 2:
            return _crash_rows(task, died)
        rows: list[ResultRow] = []
        for alone in _per_request(task):
            rows += run_in_child(compute_task, alone, _crash_rows, reason)
        return rows

    return on_crash


def _plan(
    items: Sequence[Item],
    requests: Sequence[MetricRequest],
    store: ResultStore,
    retry_errors: bool,
    rescore_unknown: bool,
    rescore_libraries: bool = False,
) -> tuple[list[Task], Pending[MetricRequest]]:
    prints = Fingerprints()  # requests reading the same inputs with the same config share one
    lacking: dict[str, dict[str, int]] = {}

    def lacks(item: Item, r: MetricRequest) -> list[str]:
        # Under `all`: the declared inputs, and the per-item texts the config reads (sa_bleu's caption)
        return [*missing_inputs(r.spec, item), *missing_texts(r.config, item)] if r.applicable_only else []

    def applies(item: Item, r: MetricRequest) -> bool:
        return not lacks(item, r)

    def counted(item: Item, r: MetricRequest) -> bool:  # the planner's: what a pair left out lacks, counted
        missing = lacks(item, r)
        for name in missing:
            per = lacking.setdefault(r.id, {})
            per[name] = per.get(name, 0) + 1
        return not missing

    # A moved project names its files by other paths: their results are taken over, not recomputed
    # (first: rows taken over are then checked for their library versions as any others).
    taken = take_over_moved(items, requests, store, prints, applies)
    rescored = other = 0
    for r in requests:  # only where the metric runs now, so that each is computed again
        ids = [it.item_id for it in items if applies(it, r)]
        if rescore_libraries:  # those rows then count as missing; they stay in the store, superseded
            rescored += store.supersede_other_libraries(r.id, r.config_hash, r.spec.version,
                                                        same_libraries(r.spec), ids)
        else:  # kept, and said so: OpenCV's flow can move values by tens of percent between releases
            other += store.count_other_libraries(r.id, r.config_hash, r.spec.version,
                                                 same_libraries(r.spec), ids)
    plan = plan_pending(
        items,
        requests,
        lambda r: (r.id, r.config_hash, r.spec.version),
        store,
        lambda item, r: prints.metric(item, r.spec, r.config),
        retry_errors=retry_errors,
        rescore_unknown=rescore_unknown,
        applies=counted,
    )
    plan.lacking = lacking
    plan.rescored_libraries, plan.other_libraries, plan.taken_over = rescored, other, taken
    # Rows of another version of a metric to compute now (an upgrade changed it): kept, and said so.
    computing: dict[tuple[str, str], set[str]] = {}
    for item, pending, _ in plan.todo:
        for r in pending:
            computing.setdefault((r.id, r.spec.version), set()).add(item.item_id)
    for (metric, version), todo_ids in computing.items():
        for stored, n in store.count_other_versions(metric, version, todo_ids).items():
            plan.other_versions[metric, stored, version] = n
    return [Task(item, pending, fps) for item, pending, fps in plan.todo], plan


def plan_tasks(
    items: Sequence[Item],
    requests: Sequence[MetricRequest],
    store: ResultStore,
    *,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
) -> tuple[list[Task], int]:
    """One task per item with pending metrics, and how many (item, metric) pairs are stored and current.

    A pair is pending when the store has no current row for it, or one whose fingerprint differs
    from its inputs now (see :mod:`robojudge.run._plan`).
    """
    tasks, plan = _plan(items, requests, store, retry_errors, rescore_unknown)
    return tasks, plan.skipped


def score_items(
    items: Sequence[Item],
    requests: Sequence[MetricRequest],
    store: ResultStore,
    *,
    workers: int = 1,
    executor: Executor | None = None,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
    rescore_libraries: bool = False,
    progress: ProgressCallback | None = None,
    split_above: float = SPLIT_ABOVE,
    timeout_s: float | None = None,
) -> RunSummary:
    """Score every (item, metric) pair the store does not hold yet, or holds from other inputs.

    Work is grouped per item (the item's pending metrics run together and share decoded frames); with
    several workers a large item is split into one task per sampling (:func:`schedule`). Each
    task's results are committed as soon as they arrive, so a run killed at any point loses at
    most the tasks in flight; rerunning the same call skips what is stored and computes the rest. The store's
    unique key makes a second copy of a result impossible even if two runs overlap.

    Args:
        items: the items to score (already resolved to absolute paths).
        requests: metrics with their configs.
        store: where results go.
        workers: local worker processes when no ``executor`` is given (1 = in this process).
        executor: a custom executor (for example a cluster backend).
        retry_errors: delete the stored failures of these metrics on these items first, so they are tried
            again.
        rescore_unknown: also recompute stored results that have no inputs fingerprint (stored
            before schema version 2); by default they are kept.
        rescore_libraries: also recompute stored results computed with other library versions than
            this process has (``details["libraries"]``, :func:`library_versions`); the stored rows are
            marked superseded first, so a run killed before recomputing them leaves those pairs
            missing (a rerun computes them), never two current rows. By default they are kept.
        progress: called after each result is stored (or found stored by another run meanwhile) with the
            row and the running summary.
        split_above: millions of frame-pixels from which an item's metrics are split across
            workers (see :func:`schedule`).
        timeout_s: the most seconds one metric may take on one item, the frames its item's metrics
            share read within the same limit; a metric past it is stopped and its row is an error
            saying so, and the run goes on (:func:`compute_metric`, :mod:`robojudge.run._timelimit`).
            None: no limit.

    Raises:
        MetricInputError: Before anything runs, a config every item would refuse alike (a KIVA reader
            that is missing or too old: :func:`refuse_unusable`), of a metric left to compute in the
            first block of items.
        RunStoppedError: The store stopped taking results once work had started (a full disk): the
            run ends there, what was stored is kept, and the error holds the summary so far.
        RunInterrupted: Ctrl-C (a ``KeyboardInterrupt``) during the run: the results in flight are
            dropped, the workers stopped, what was stored is kept; the error holds the summary so far.
    """
    return score_blocks([items], requests, store, workers=workers, executor=executor,
                        retry_errors=retry_errors, rescore_unknown=rescore_unknown,
                        rescore_libraries=rescore_libraries, progress=progress, split_above=split_above,
                        timeout_s=timeout_s)


def _clear_after_stop(store: ResultStore, noted: dict[str, bool]) -> list[str]:
    """Clear this process's in-flight notes (``noted``: item -> whether its rows are stored) once the
    store stopped the run: their items were computed (a serial run computes nothing while it stores),
    not crashed on, and a note left behind made the next run call them "a crash or a kill". Returns the
    items whose note is left, the store taking no writes (a server gone, a full disk), and whose rows
    are not stored: the next run computes them as after a crash (one whose rows are stored is skipped,
    and its note cleared)."""
    if not noted:
        return []
    try:
        store.clear_in_flight(list(noted))
    except StoreError:
        return sorted(item for item, stored in noted.items() if not stored)
    return []


def _add_plan(summary: RunSummary, tasks: Sequence[Task], plan: Pending[MetricRequest]) -> None:
    summary.total += sum(len(t.requests) for t in tasks) + plan.skipped
    summary.skipped += plan.skipped
    summary.skipped_errors += plan.skipped_errors
    summary.stale += plan.stale
    summary.unknown += plan.unknown
    summary.unavailable += plan.unavailable
    summary.rescored_libraries += plan.rescored_libraries
    summary.other_libraries += plan.other_libraries
    summary.taken_over += plan.taken_over
    for key, n in plan.other_versions.items():
        summary.other_versions[key] = summary.other_versions.get(key, 0) + n
    for metric, n in plan.not_applicable.items():
        summary.not_applicable[metric] = summary.not_applicable.get(metric, 0) + n
    for metric, per in plan.lacking.items():
        mine = summary.not_applicable_lacking.setdefault(metric, {})
        for name, n in per.items():
            mine[name] = mine.get(name, 0) + n


def refuse_unimportable(requests: Sequence[MetricRequest]) -> None:
    """Refuse, before any worker process starts, metrics that the workers could not unpickle: those
    defined in a main module they cannot import (a notebook, ``python -c``, a script read from standard
    input). Each task would otherwise kill its worker and be stored as crashed.

    Raises:
        WorkerStartError: Naming the metrics and the ways round.
    """
    refuse_main_defined([r.id for r in requests if "__main__" in (r.spec.fn.__module__,
                                                                  type(r.config).__module__)])


def refuse_unusable(requests: Sequence[MetricRequest]) -> None:
    """Refuse, before anything runs, a metric whose config every item would refuse alike: its
    config's ``check_before_run(metric_id)`` (KIVA's checks its reader) raises once for the run, where
    each item would otherwise store the same error row.

    Raises:
        MetricInputError: The first such config's, saying what to do.
    """
    for r in requests:
        check = getattr(r.config, "check_before_run", None)
        if callable(check):
            check(r.id)


def refuse_main_defined(mine: Sequence[str]) -> None:
    """:func:`refuse_unimportable` for metrics already found to be defined in ``__main__`` (``mine``):
    refused when worker processes cannot import it.

    Raises:
        WorkerStartError: Naming the metrics and the ways round.
    """
    if mine and not main_importable():
        raise WorkerStartError(
            f"{'metric' if len(mine) == 1 else 'metrics'} {', '.join(repr(m) for m in mine)} "
            f"{'is' if len(mine) == 1 else 'are'} defined in __main__ (a notebook, `python -c`, a script "
            "read from standard input), which worker processes cannot import: score with "
            "workers=1, or define them in a module (a .py file you import, or one named in "
            "ROBOJUDGE_PLUGINS). Nothing was scored")


class _OtherRuns:
    """What other runs of the same items (the same command launched twice) do while this one goes on.

    The tasks are looked at in the store shortly before they are given to the executor, the next
    :attr:`AHEAD` at a time: a task whose results the store holds now (another run stored them since
    this run planned) is left out, counted in ``by_other_run``; one whose item a process still running
    on this host notes in flight (:meth:`ResultStore.in_flight_elsewhere`) is put off, with one warning
    per such process, and looked at again once the other tasks are given out: left out if stored by
    then, else computed here (the other run may have died or stopped). Without this, a second launch
    computed everything the first had not stored yet, and the store threw all of it away.

    A look costs a few milliseconds (two reads): it is taken at most every :attr:`SPACING` times as long
    as the last one took, so that it costs a few percent of a run of quick metrics, and before every
    task of slow ones.
    """

    AHEAD = 64
    SPACING = 20.0

    def __init__(self, store: ResultStore, summary: RunSummary, left: Outstanding) -> None:
        self.store, self.summary, self.left = store, summary, left
        self._took = 0.0
        self._last: float | None = None

    def screen(self, blocks: Iterable[Sequence[Task]]) -> Iterator[Task]:
        """The tasks of ``blocks`` (each block's planned tasks, planned when asked for), less those left to
        other runs. It looks ahead within a block only, so a block is planned when the one before is
        given out, as without the look (a resume whose blocks are mostly stored planned them all before
        its first result)."""
        later: list[Task] = []
        for block in blocks:
            upstream = iter(block)
            ahead: collections.deque[Task] = collections.deque()
            while True:
                while len(ahead) < self.AHEAD and (task := next(upstream, None)) is not None:
                    ahead.append(task)
                if not ahead:
                    break
                now = time.perf_counter()
                if self._last is None or now - self._last >= self.SPACING * self._took:
                    kept = self._look(list(ahead), later)
                    self._last, self._took = time.perf_counter(), time.perf_counter() - now
                    ahead = collections.deque(kept)
                    if not ahead:
                        continue
                yield ahead.popleft()
        if later:
            _log.info("looking again at the %d tasks left to another run", len(later))
            stored = self._stored(later)
            yield from (task for k, task in enumerate(later) if k not in stored)

    def _look(self, tasks: list[Task], later: list[Task]) -> list[Task]:
        """``tasks`` less those stored now and those put off (onto ``later``)."""
        stored = self._stored(tasks)
        busy = self.store.in_flight_elsewhere({r.id for task in tasks for r in task.requests})
        kept = []
        for k, task in enumerate(tasks):
            if k in stored:
                continue
            if task.item.item_id in busy:
                self._warn(busy[task.item.item_id], busy)
                later.append(task)
                continue
            kept.append(task)
        return kept

    def _stored(self, tasks: Sequence[Task]) -> set[int]:
        """The positions of the tasks whose every result the store holds now, from the inputs they were
        planned with; those are counted as stored by another run."""
        wanted: dict[tuple[str, str, str], set[str]] = {}
        for task in tasks:
            for r in task.requests:
                wanted.setdefault((r.id, r.config_hash, r.spec.version), set()).add(task.item.item_id)
        found = {key: self.store.current_fingerprints(*key, item_ids=sorted(ids))
                 for key, ids in wanted.items()}
        out: set[int] = set()
        for k, task in enumerate(tasks):
            item_id = task.item.item_id
            prints = [(found[(r.id, r.config_hash, r.spec.version)].get(item_id), task.fingerprint(i))
                      for i, r in enumerate(task.requests)]
            if all(got is not None and (not fp or got == fp) for got, fp in prints):
                out.add(k)
                self.summary.by_other_run += len(task.requests)
                self.summary.skipped += len(task.requests)
                for r in task.requests:
                    self.left.remove(r.id, task.size)
        return out

    def _warn(self, notes: Sequence[dict[str, Any]], busy: dict[str, list[dict[str, Any]]]) -> None:
        for note in notes:
            who = f"{note.get('host')} {note.get('pid')}"
            if who in self.summary.other_runs:
                continue
            self.summary.other_runs.append(who)
            theirs = [item for item, its in busy.items()
                      if any(f"{n.get('host')} {n.get('pid')}" == who for n in its)]
            _log.warning("another run (host %s, pid %s, computing since %s) is computing %d item(s) of this "
                         "run (%s): they are left to it and checked again at the end of this run",
                         note.get("host"), note.get("pid"), note.get("at"), len(theirs),
                         ", ".join(theirs[:3]))


def _marking_last(blocks: Iterable[Sequence[Item]], summary: RunSummary) -> Iterator[Sequence[Item]]:
    """``blocks``, each read one ahead, with ``summary.all_planned`` False until the last is given out
    (so the progress line and the estimate can say they cover the blocks planned so far)."""
    it = iter(blocks)
    ahead = next(it, None)
    while ahead is not None:
        current, ahead = ahead, next(it, None)
        summary.all_planned = ahead is None
        yield current


def score_blocks(
    blocks: Iterable[Sequence[Item]],
    requests: Sequence[MetricRequest],
    store: ResultStore,
    *,
    workers: int = 1,
    executor: Executor | None = None,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
    rescore_libraries: bool = False,
    progress: ProgressCallback | None = None,
    split_above: float = SPLIT_ABOVE,
    timeout_s: float | None = None,
) -> RunSummary:
    """:func:`score_items` over items that come in blocks (a large manifest read as it is scored).

    A block is planned and scheduled when the executor asks for more tasks than are planned, so
    memory holds the tasks of about one block whatever the number of items. The summary's counts
    (``total``, ``skipped`` ...) and the time estimate grow as blocks are planned; with one block
    this is :func:`score_items` exactly.

    With an executor that runs tasks in this process (:class:`SerialExecutor`, the default for one
    worker), a crash in a native library would end the run on the same item at every rerun. So each
    item is noted in the store while it is computed (:meth:`ResultStore.note_in_flight`), and an item
    a run was computing when it ended is computed by the next run alone in a child process: if that
    dies too, the item's metrics get error rows (``CRASHED_AGAIN``) and the run goes on. The summary
    lists those items (``isolated``, ``crashed_again``). A note of a run still going on on this host (an
    overlapping run of the same items) is not a crash: it is neither isolated nor cleared; one written
    on another host cannot be checked and is taken for a crash (:meth:`ResultStore.in_flight`).

    Another run of the same items going on at the same time (the same command launched twice) is left
    what it stores meanwhile, and put off what it notes in flight (:class:`_OtherRuns`): the tasks are
    looked at in the store shortly before they are computed.
    """
    check_limit(timeout_s)
    started = time.perf_counter()
    summary = RunSummary()
    ex = executor or make_executor(workers)
    if isinstance(ex, LocalProcessExecutor):
        refuse_unimportable(requests)
    costs, left = CostModel(), Outstanding()
    in_process = bool(getattr(ex, "in_process", False))
    # Items a run was computing in its own process when it ended (crash suspects), and every note of an
    # ended process (those of the tasks a pool's driver had handed out too: out of date once stored).
    earlier = set(store.in_flight(ended=True, queued=False))
    ended = set(store.in_flight(ended=True))
    met: set[str] = set()  # items of those notes this run plans
    noted: dict[str, bool] = {}  # items this process noted in flight and has not cleared: stored yet?
    handed: dict[str, collections.Counter[str]] = {}  # items with the workers (noted, queued): their metrics
    planned_ids: set[str] = set()  # every item of the run, to tell "nothing measured" (see below)

    def plan(block: Sequence[Item]) -> list[Task]:
        # Failures are deleted per block, of its items only: those of the blocks before are this run's own
        # rows by then (an item id is in one block only), and other manifests' items are not this run's.
        tasks, pending = _plan(block, requests, store, retry_errors, rescore_unknown, rescore_libraries)
        met.update(it.item_id for it in block if it.item_id in ended)
        planned_ids.update(it.item_id for it in block)
        _add_plan(summary, tasks, pending)
        scheduled = schedule(tasks, ex.workers, split_above)
        _log.debug("scheduled %d tasks of %d items on %d worker(s) (%s)", len(scheduled), len(block),
                   ex.workers, type(ex).__name__)
        if timeout_s is not None:
            scheduled = [replace(t, timeout_s=timeout_s) for t in scheduled]
        for t in scheduled:
            for r in t.requests:
                left.add(r.id, t.size)
        return scheduled

    # The first block is planned before anything runs (as a one-block run always was); the others
    # when the executor asks for their tasks.
    it = _marking_last(blocks, summary)
    results: Iterator[tuple[Task, list[ResultRow]]] | None = None
    try:
        head = plan(next(it, []))
        # Only a metric left to compute: one whose rows are all stored needs no reader (a review: a reader
        # moved after a complete run stopped every other metric of the run).
        pending = {(r.id, r.config_hash) for t in head for r in t.requests}
        refuse_unusable([r for r in requests if (r.id, r.config_hash) in pending])
        planned = _OtherRuns(store, summary, left).screen(itertools.chain([head], (plan(b) for b in it)))
        again_apart = _one_per_child(CRASHED_AGAIN)
        def guarded(task: Task) -> list[ResultRow]:
            item_id = task.item.item_id
            apart = item_id in earlier
            if apart and item_id not in summary.isolated:
                summary.isolated.append(item_id)
            def note() -> None:
                noted[item_id] = False
                store.note_in_flight(item_id, [r.id for r in task.requests])

            def clear() -> None:
                store.clear_in_flight([item_id])
                noted.pop(item_id, None)

            rows = guarded_call(compute_task, task, ran_before=apart, on_crash=again_apart,
                                reason=CRASHED_AGAIN, note=note, clear=clear)
            # (startswith: with --timeout the reason names the time limit's hard guard after it)
            crashed = any((r.error or "").startswith(CRASHED_AGAIN) for r in rows)
            if apart and crashed and item_id not in summary.crashed_again:
                summary.crashed_again.append(item_id)
            return rows

        # A local pool reruns a task that killed its worker alone, then (here) each of its metrics alone;
        # Ray runs each metric of such a task again as a task of its own.
        from robojudge.run._ray import RayExecutor

        def handing(tasks: Iterable[Task]) -> Iterator[Task]:
            # Worker processes compute: the item is noted (queued) as its task is handed out, so that the
            # same command launched again puts it off (_OtherRuns), and cleared once its rows are stored.
            for task in tasks:
                out = handed.setdefault(task.item.item_id, collections.Counter())
                out.update(r.id for r in task.requests)
                noted.setdefault(task.item.item_id, False)
                store.note_in_flight(task.item.item_id, list(out), queued=True)
                yield task

        if not in_process:
            planned = handing(planned)
        if isinstance(ex, RayExecutor):
            results = ex.map_unordered(compute_task, planned, _crash_rows, split=_per_request)
        else:
            on_crash = (_one_per_child("the worker process died while scoring this item")
                        if isinstance(ex, LocalProcessExecutor) else _crash_rows)
            results = ex.map_unordered(guarded if in_process else compute_task, planned, on_crash)
        pace = RunPace()
        for task, computed in results:
            rows, changed = _inputs_now(task, computed)
            # One transaction: a task's results land together or not at all; a row another run stored
            # meanwhile is not stored again (counted apart).
            stored = {row.key for row in store.add_new(rows)}
            if task.item.item_id in noted:
                noted[task.item.item_id] = True
            summary.changed_inputs += len(changed)
            if changed and task.item.item_id not in summary.changed_items:
                summary.changed_items.append(task.item.item_id)
            for row in changed:  # computed, not stored: the progress still counts them
                if progress is not None:
                    progress(row, summary)
            out, last = handed.get(task.item.item_id), True
            if out is not None:  # (a task Ray split comes back as its parts, a metric each)
                out.subtract(r.id for r in task.requests)
                last = not +out  # else other tasks of the item are still with the workers
                if last:
                    del handed[task.item.item_id]
            if last and (in_process or task.item.item_id in ended or out is not None):
                store.clear_in_flight([task.item.item_id])
                noted.pop(task.item.item_id, None)
            for row in rows:
                costs.add(row.metric, task.size, row.duration_s or 0.0)
                left.remove(row.metric, task.size)
                summary.metric_seconds[row.metric] = (
                    summary.metric_seconds.get(row.metric, 0.0) + (row.duration_s or 0.0))
            if not pace.first(time.perf_counter()):  # (the first task's wall time holds the start-up)
                pace.add(len(rows), sum(row.duration_s or 0.0 for row in rows))
            overhead = pace.overhead(time.perf_counter(), ex.workers)
            summary.estimate_s = costs.remaining(left, ex.workers, overhead)
            summary.estimate_settled = costs.settled(left)
            summary.estimate_unmeasured = costs.unmeasured(left)
            reads = {r.id for r in task.requests if r.spec.inputs}
            for row in rows:
                if row.status == "ok":
                    summary.measured += row.metric in reads
                if row.key not in stored:
                    summary.duplicates += 1
                elif row.status == "ok":
                    summary.ok += 1
                    if not row.scored:
                        summary.unscored += 1
                        reason = str((row.details or {}).get("unscored_reason") or "no reason given")
                        add_unscored(summary.unscored_reasons, reason, row.item_id)
                else:
                    summary.failed += 1
                    if len(summary.errors) < KEPT_ERRORS:
                        summary.errors.append(row)
                if row.key in stored:
                    _note_warnings(summary, row)
                if progress is not None:
                    progress(row, summary)
        # Every planned task is stored: an earlier run's note on an item of this run is out of date.
        store.clear_in_flight(met)
        if summary.failed and not summary.measured:  # rare: look whether an earlier run measured any
            summary.measured_before = _measured_before(store, planned_ids, requests)
    except KeyboardInterrupt:
        summary.interrupted = True
        if handed:  # (a stopped pool's tasks are no crash suspects: their notes would only linger)
            with contextlib.suppress(StoreError):
                store.clear_in_flight(list(handed))
    except StoreError as exc:
        if results is None:  # nothing ran: the store cannot be used at all
            raise
        # (the notes of tasks handed to workers are no crash suspects: the next run does not isolate them)
        unclear = _clear_after_stop(store, noted)
        raise RunStoppedError(exc, summary, store.url, unclear if in_process else []) from exc
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
        ex.shutdown()
        summary.seconds = time.perf_counter() - started
    if summary.interrupted:
        raise RunInterrupted(summary)
    return summary
