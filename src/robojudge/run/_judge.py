"""The judge runner: (item, rubric) judgments from one VLM judge into the result store, resumable.

Each judgment is one row with metric id ``judge:<judge name>:<rubric id>``, version = the rubric's
version, and a config hash over what decides the answer (backend, model, rubric content, frame
sampling, scoring mode, samples, decoding settings) -- never the endpoint URL or the API key.
Rows are written in the main process as items finish (small batches), so a killed run keeps what
was done, and a rerun judges only what is missing; the response cache means the requests of
items that were in flight are not paid for twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robojudge._aio import run_coroutine
from robojudge._files import replacing
from robojudge.judges import (
    RUBRICS,
    Backend,
    FrameSpec,
    JudgeConfig,
    JudgeEngine,
    ResponseCache,
    Rubric,
    Scoring,
    get_rubric,
    judge_metric_id,
    make_backend,
)
from robojudge.judges._draft import DraftScore, JudgeOpinion, draft_labels
from robojudge.run._executor import Executor, OpenFilesError, ensure_open_files, make_executor
from robojudge.run._filehash import tree_digest
from robojudge.run._fingerprint import Fingerprints
from robojudge.run._judge_rows import (
    JudgePlan,
    JudgeProgress,
    JudgeRunSummary,
    Writer,
    inputs_now,
    judge_one,
)
from robojudge.run._moved import take_over_moved_judges
from robojudge.run._plan import Pending, plan_pending
from robojudge.run._score import RunInterrupted, RunStoppedError
from robojudge.run._status import stale_rows
from robojudge.run._where import claim_store, default_run_dir, raise_if_no_items
from robojudge.store import ResultRow, ResultStore, StoreError, default_db_url
from robojudge.suite import Item, ManifestError, ManifestProblem, load_suite
from robojudge.video import DecoderPool, shared_decoder

_log = logging.getLogger(__name__)

OPEN_FILES_BASE = 32
"""Open files a local judge run needs besides one connection per request in flight: the interpreter's,
the result store's, the caches' (each with its WAL), the decoder processes' pipes: a resource audit
counted about 26 at every concurrency, with two decoder processes."""


def with_model_files(judge: JudgeConfig) -> JudgeConfig:
    """``judge`` with :attr:`JudgeConfig.model_files` set when it loads its model from a local folder
    (``hf``): new weights written into the same folder (a judge trained again into its ``--out``) are
    then another configuration, and never get the old model's stored rows or cached replies."""
    if judge.backend != "hf" or not judge.model:
        return judge
    try:
        local = Path(judge.model).is_dir()
    except (OSError, ValueError):
        local = False
    return judge.model_copy(update={"model_files": tree_digest(judge.model)}) if local else judge


def plan_judgments(
    items: Sequence[Item],
    plans: Sequence[JudgePlan],
    store: ResultStore,
    *,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
) -> tuple[list[tuple[Item, tuple[JudgePlan, ...]]], int]:
    """Items with rubrics still to judge, and how many (item, rubric) pairs are stored and current.

    A stored judgment whose video or instruction changed since (another fingerprint) is judged
    again; one without a fingerprint only with ``rescore_unknown``; one whose video cannot be read
    now is kept (see :mod:`robojudge.run._plan`). With ``retry_errors`` the stored error and
    unscored rows of ``plans`` on ``items`` are deleted first.
    """
    plan = _plan_judges(items, plans, store, retry_errors=retry_errors, rescore_unknown=rescore_unknown)
    return [(item, ps) for item, ps, _ in plan.todo], plan.skipped


def _plan_judges(
    items: Sequence[Item],
    plans: Sequence[JudgePlan],
    store: ResultStore,
    *,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
) -> Pending[JudgePlan]:
    """:func:`plan_pending` for judge rubrics, with each item's fingerprint taken once.

    A judgment stored under its plan's argmax fallback (an expected score the backend gave no
    log-probabilities for) counts as the plan's own: the planner looks under both config hashes,
    so such a pair is not asked again on every rerun.
    """
    prints = Fingerprints()  # the judge reads the same of an item whatever the rubric
    # The same model files in another folder (a moved project): their judgments are taken over.
    taken = take_over_moved_judges(items, plans, store, prints)
    plan = plan_pending(
        items,
        plans,
        lambda p: (p.metric_id, p.config_hash, p.version),
        store,
        lambda item, p: prints.judge(item),
        retry_errors=retry_errors,
        rescore_unknown=rescore_unknown,
        unscored=True,
        also=lambda p: None if p.fallback is None else (p.fallback.metric_id, p.fallback.config_hash,
                                                         p.fallback.version),
    )
    plan.taken_over = taken
    return plan


class _DecodeNotes:
    """The crash guard of videos decoded in this process (see :func:`judge_items`).

    A video decoded in a thread here (``--decode-workers 0``, or while the decoder processes start)
    is noted in the store for the time of its decode (:meth:`ResultStore.note_in_flight`, under the
    run's metric ids). An item noted when the run starts, by a process that has ended, was being
    decoded, or computed by ``robojudge score``, when that process ended: it is decoded in a decoder
    process, where a crash costs that item only (a video error row), and this run's notes on it are
    cleared. The note of a run still going on on this host is neither (a note of another host is taken
    for a crash: see :meth:`ResultStore.in_flight`). ``uncleared``: items whose note could not be cleared,
    the store taking no writes (a full disk); the run that stops on it names them.
    """

    def __init__(self, store: ResultStore, metrics: Sequence[str], decoder: DecoderPool | None) -> None:
        self.store = store
        self.metrics = list(metrics)
        notes = store.in_flight(ended=True)
        self.earlier = set(store.in_flight(ended=True, queued=False))
        self.ours = {item for item, noted in notes.items() if set(noted) & set(self.metrics)}
        self._decoder = decoder
        self._apart: DecoderPool | None = None
        self.uncleared: set[str] = set()

    @contextlib.contextmanager
    def noted(self, item_id: str) -> Iterator[None]:
        self.store.note_in_flight(item_id, self.metrics)
        try:
            yield
        finally:  # a decode that ends in any way but a crash (Ctrl-C included) leaves no note
            try:
                self.store.clear_in_flight([item_id])
            except StoreError:  # the store takes no writes: the decode is good, its rows stop the run
                self.uncleared.add(item_id)

    def left_after_stop(self) -> list[str]:
        """Once the store stopped the run: the items whose note is still there (cleared now if the store
        takes that write), which the next run decodes in a decoder process as after a crash."""
        if not self.uncleared:
            return []
        try:
            self.store.clear_in_flight(sorted(self.uncleared))
        except StoreError:
            return sorted(self.uncleared)
        return []

    def apart(self, item_id: str) -> DecoderPool | None:
        """The pool to decode ``item_id`` in if an earlier run ended on it, else None."""
        if item_id not in self.earlier:
            return None
        if self._apart is None:
            self._apart = self._decoder if self._decoder is not None else shared_decoder(1)
        return self._apart

    def done(self, item_ids: Sequence[str]) -> None:
        """``item_ids`` are judged: an earlier run's note of this run's metrics on them is out of date, and
        so is this run's own note where clearing it after the decode failed (a store locked a moment),
        which the next run would otherwise take for a crash."""
        ids = [i for i in item_ids if i in self.ours or i in self.uncleared]
        self.store.clear_in_flight(ids)
        self.uncleared.difference_update(ids)


class _OtherRuns:
    """Another run of the same items at the same time (the same ``judge`` command launched twice).

    Items another process still running on this host notes in flight (decoding their video) are put
    last, with one warning per such process; and each item is looked at in the store just before its
    requests are sent: if another run stored its judgments since this run planned, nothing is sent for
    it (counted in ``by_other_run`` and ``skipped``). Before, a second launch sent every request the first
    had not stored yet, and the store threw the replies away: the judge's bill twice.
    """

    def __init__(self, store: ResultStore, summary: JudgeRunSummary) -> None:
        self.store, self.summary = store, summary
        self.said = False

    def order(self, todo: list[TodoEntry]) -> list[TodoEntry]:
        """``todo`` with the items other running processes note in flight last, said once per process."""
        busy = self.store.in_flight_elsewhere({p.metric_id for _, plans, _ in todo for plan in plans
                                               for p in (plan, plan.fallback) if p is not None})
        later = [entry for entry in todo if entry[0].item_id in busy]
        by_process: dict[tuple[str, str], list[str]] = {}
        since: dict[tuple[str, str], str] = {}
        for item, _, _ in later:
            for note in busy[item.item_id]:
                who = (str(note.get("host")), str(note.get("pid")))
                by_process.setdefault(who, []).append(item.item_id)
                since[who] = min(since.get(who, str(note.get("at"))), str(note.get("at")))
        for (host, pid), ids in by_process.items():
            _log.warning("another run (host %s, pid %s, since %s) is working on %d item(s) of this run (%s): "
                         "they are left to it and checked again at the end of this run", host, pid,
                         since[host, pid], len(ids), ", ".join(ids[:3]))
        return [entry for entry in todo if entry[0].item_id not in busy] + later

    def stored(self, item: Item, plans: Sequence[JudgePlan], prints: Sequence[str]) -> bool:
        """Whether the store now holds every judgment of ``item`` by ``plans`` from its inputs as planned
        (under a plan's fallback too); if so, they are counted as stored by another run."""
        for plan, fp in zip(plans, prints, strict=True):
            if not any(self._has(item.item_id, p, fp) for p in (plan, plan.fallback) if p is not None):
                return False
        self.summary.by_other_run += len(plans)
        self.summary.skipped += len(plans)
        if not self.said:
            self.said = True
            _log.warning("another run stored judgments of items of this run while it went on (the same "
                         "command launched twice?): those are left to it, their requests not sent again")
        return True

    def _has(self, item_id: str, plan: JudgePlan, fp: str) -> bool:
        found = self.store.current_fingerprints(plan.metric_id, plan.config_hash, plan.version,
                                                item_ids=[item_id])
        return item_id in found and (not fp or found[item_id] == fp)


TodoEntry = tuple[Item, tuple[JudgePlan, ...], tuple[str, ...]]


async def _judge_async(
    todo: list[tuple[Item, tuple[JudgePlan, ...], tuple[str, ...]]],
    engine: JudgeEngine,
    spec: FrameSpec,
    cache: ResponseCache,
    store: ResultStore,
    summary: JudgeRunSummary,
    progress: JudgeProgress | None,
    workers: int,
    decoder: DecoderPool | None,
    notes: _DecodeNotes,
) -> None:
    writer = Writer(store, summary, progress)
    others = _OtherRuns(store, summary)
    queue: asyncio.Queue[TodoEntry] = asyncio.Queue()
    for entry in others.order(todo):
        queue.put_nowait(entry)

    done = 0
    halted: OpenFilesError | None = None

    async def worker() -> None:
        nonlocal done, halted
        while not queue.empty() and writer.failed is None and halted is None:
            item, plans, prints = queue.get_nowait()
            if others.stored(item, plans, prints):  # another run stored them meanwhile: nothing to send
                continue
            apart = notes.apart(item.item_id)
            if apart is not None:
                summary.isolated.append(item.item_id)
            try:
                rows = await judge_one(item, plans, prints, engine, spec, cache, decoder,
                                       in_process=functools.partial(notes.noted, item.item_id), apart=apart)
            except OpenFilesError as exc:
                # Out of file descriptors here: every item after it would fail the same way, and none of
                # those failures is the server's or the video's. Nothing more is sent; the requests in
                # flight are answered into the cache.
                if halted is None:
                    halted = exc
                    engine.stop(f"not sent: {exc}")
                if exc.rows:  # the item's rubrics that finished before it
                    kept, changed = inputs_now(item, exc.rows)
                    summary.changed_inputs += len(changed)
                    writer.put(kept)
                return
            if halted is not None:  # what failed after the stop is judged again by the next run
                rows = [row for row in rows if row.status != "error"]
            rows, changed = inputs_now(item, rows)
            if changed:  # the video was rewritten while it was judged: not stored, judged by the next run
                summary.changed_inputs += len(changed)
                summary.changed_items.append(item.item_id)
            writer.put(rows)
            done += 1
            if done % 64 == 0:
                # A cached item never waits on anything, so a warm rerun would otherwise run start
                # to end without letting the progress ticker or the row writer in.
                await asyncio.sleep(0)

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.25)
            if progress is not None:
                progress(None, summary)

    def stop(exc: StoreError) -> None:
        # The store takes no more rows (a full disk): replies to come could not be stored, so none is
        # asked for; the items in flight finish, their replies going to the cache.
        engine.stop(f"not sent: the result store takes no more rows ({exc})")

    background = [asyncio.create_task(writer.run(on_failure=stop)), asyncio.create_task(ticker())]
    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(workers, len(todo))))))
    finally:
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        try:
            if writer.failed is None:
                writer.flush()  # whatever finished, also on Ctrl-C
        finally:
            await engine.backend.aclose()
    if writer.failed is not None:
        raise writer.failed
    if halted is not None:
        raise halted


def judge_items(
    items: Sequence[Item],
    judge: JudgeConfig,
    rubrics: Sequence[Rubric | str] | str,
    store: ResultStore,
    *,
    frames: FrameSpec | None = None,
    scoring: Scoring | str = Scoring.argmax,
    samples: int = 1,
    cache: ResponseCache | None = None,
    backend: Backend | None = None,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
    progress: JudgeProgress | None = None,
    items_in_flight: int | None = None,
    decode_workers: int | None = None,
    executor: Executor | str | None = None,
    address: str | None = None,
    workers: int | None = None,
) -> JudgeRunSummary:
    """Judge every (item, rubric) pair the store does not hold yet.

    Args:
        items: Items with absolute paths (see :meth:`Item.resolve`).
        judge: The judge.
        rubrics: Rubrics to judge with, or their ids (:func:`judge_arguments`); one row per (item, rubric).
        store: Where rows go.
        frames: Frame sampling (RoboJudge's 4 fps / 32 frames by default).
        scoring: ``argmax`` or ``expected``.
        samples: Turns per pair; above 1, the stored value is the majority vote.
        cache: The response cache; the default opens the user cache folder.
        backend: A ready backend (tests, plugins); built from ``judge`` when ``None``.
        retry_errors: Delete this judge's stored error and unscored rows of ``items`` first, so they are
            tried again; unscored ones are asked again past their cached (unparsable) replies.
        rescore_unknown: Judge again the pairs whose stored row has no inputs fingerprint (rows
            written before result schema 2); by default they are kept (see :mod:`robojudge.run._plan`).
        progress: Called with each stored row and, while requests are in flight, with ``None``.
        items_in_flight: Items worked on at once (default: twice the judge's concurrency).
        decode_workers: Processes that decode videos (default ``$ROBOJUDGE_DECODE_WORKERS``, else
            one per core but one, at most 4); 0 decodes in threads of this process. They start
            only when a video has to be decoded, and are shared by later runs in this process.
        executor: Where items are judged: default here (asyncio, ``items_in_flight``); an
            executor, or ``ray`` with ``address`` and ``workers`` (see
            :func:`robojudge.run.make_executor`), judges chunks of items on workers, each with the
            judge's concurrency and its own response cache (:mod:`robojudge.run._ray_judge`).

    Returns:
        Counts, request statistics, parse-failure and agreement rates.

    Raises:
        RunStoppedError: The store stopped taking rows during the run (a full disk): nothing more was
            sent, the requests in flight were answered into the cache, what was stored is kept; the
            error holds the summary so far.
        RunInterrupted: Ctrl-C (a ``KeyboardInterrupt``) during the run: nothing more was sent, what was
            stored is kept; the error holds the summary so far.
        OpenFilesError: Run here (no ``executor``), the judge's concurrency needs more open files than
            the hard ``ulimit -n`` allows (the soft limit is raised toward the hard one when that suffices):
            refused before anything is sent or stored. Or this process ran out of file descriptors
            during the run: nothing more was sent, no error row was stored for it, the circuit breaker
            did not count it, and what finished is stored; the error holds the summary so far.
    """
    started = time.perf_counter()
    judge, rubrics = judge_arguments(judge, rubrics)
    spec = frames or FrameSpec()
    judge = with_model_files(judge)
    if executor is not None and backend is not None:
        raise ValueError("a ready backend cannot travel to executor workers; pass the judge config only")
    if executor is None:
        # One connection per request in flight, besides the store, the caches, decoder pipes and the
        # interpreter's own (about 28 at the default concurrency of 4): refused now, not as error rows.
        ensure_open_files(OPEN_FILES_BASE + judge.concurrency, f"judge {judge.name!r} at concurrency "
                          f"{judge.concurrency}", "lower --concurrency (per endpoint in a fleet)")
    ex = make_executor(workers, executor, address) if isinstance(executor, str) else executor
    own_cache = cache is None
    cache = cache if cache is not None else ResponseCache()
    stopped: StoreError | None = None
    out_of_files: OpenFilesError | None = None
    notes: _DecodeNotes | None = None
    try:
        be = backend if backend is not None else make_backend(judge)
        engine = JudgeEngine(
            judge, be, cache, scoring=Scoring(scoring), samples=samples, reask_unparsable=retry_errors
        )
        plans = [
            JudgePlan.build(judge, r, spec, engine.scoring, samples, engine.temperature()) for r in rubrics
        ]
        by_id: dict[str, Rubric] = {}
        for r in rubrics:
            if r.id in by_id:
                raise ValueError(
                    f"two rubrics with the id {r.id!r} were requested: {by_id[r.id].source} and {r.source}"
                )
            by_id[r.id] = r
        planned = _plan_judges(
            items, plans, store, retry_errors=retry_errors, rescore_unknown=rescore_unknown
        )
        summary = JudgeRunSummary(
            total=sum(len(ps) for _, ps, _ in planned.todo) + planned.skipped,
            skipped=planned.skipped,
            skipped_errors=planned.skipped_errors,
            stale=planned.stale,
            unknown=planned.unknown,
            unavailable=planned.unavailable,
            taken_over=planned.taken_over,
            stats=engine.stats,
        )
        in_flight = items_in_flight or max(2, 2 * judge.concurrency)
        try:
            if ex is not None:
                from robojudge.run._ray_judge import judge_distributed

                run_coroutine(be.aclose())  # the driver's backend sends nothing: workers build their own
                judge_distributed(ex, planned.todo, engine, spec, store, summary, progress,
                                  samples=samples, reask_unparsable=retry_errors)
            else:
                decoder = shared_decoder(decode_workers)
                notes = _DecodeNotes(store, [p.metric_id for p in plans], decoder)
                run_coroutine(_judge_async(planned.todo, engine, spec, cache, store, summary, progress,
                                           in_flight, decoder, notes))
                notes.done([it.item_id for it in items])  # every item is judged or was stored already
        except KeyboardInterrupt:
            summary.interrupted = True
        except StoreError as exc:  # the store stopped taking rows (a full disk): what it holds is kept
            stopped = exc
        except OpenFilesError as exc:  # out of file descriptors: what finished is stored
            out_of_files = exc
        report = getattr(be, "report", None)  # a fleet says how each of its servers fared
        if ex is None and callable(report):
            summary.endpoints = report()
    finally:
        if own_cache:
            cache.close()
        else:
            cache.flush()
    if cache.write_error is not None and cache.path is not None:
        where = cache.path.parent
        summary.cache_error = f"cannot write the judge response cache in {where}: {cache.write_error}"
        summary.cache_unsaved = cache.unsaved
    summary.seconds = time.perf_counter() - started
    if stopped is not None:
        left = notes.left_after_stop() if notes is not None else []
        raise RunStoppedError(stopped, summary, store.url, left) from stopped
    if out_of_files is not None:
        out_of_files.summary = summary
        raise out_of_files
    if summary.interrupted:
        raise RunInterrupted(summary)
    return summary


@dataclass
class JudgeSuiteRun:
    """The outcome of :func:`judge_suite`."""

    summary: JudgeRunSummary
    db_url: str
    manifest_problems: list[ManifestProblem] = field(default_factory=list)


def judge_arguments(
    judge: JudgeConfig, rubrics: Sequence[Rubric | str] | str
) -> tuple[JudgeConfig, list[Rubric]]:
    """A judge run's judge and rubrics, checked: rubric ids are looked up (a string may name several,
    ``"pa,ia"``, as ``--rubric`` does).

    Raises:
        TypeError: The judge is not a :class:`~robojudge.judges.JudgeConfig` (a dict of values: build
            it with :func:`robojudge.judges.make_judge`), or a rubric is neither a rubric nor an id.
        UnknownNameError: An unknown rubric id (a ``KeyError``; the message suggests close ids).
    """
    if not isinstance(judge, JudgeConfig):
        raise TypeError(f"judge must be a JudgeConfig, got {type(judge).__name__}: build it from its values "
                        "with robojudge.judges.make_judge(...)")
    if isinstance(rubrics, str):
        rubrics = [r.strip() for r in rubrics.split(",") if r.strip()]
    out = []
    for r in rubrics:
        if isinstance(r, str):
            r = get_rubric(r)
        elif not isinstance(r, Rubric):
            raise TypeError(f"rubrics must be Rubric objects or rubric ids (str), got {type(r).__name__} "
                            f"{r!r}")
        out.append(r)
    return judge, out


def judge_suite(
    manifest: str | Path,
    judge: JudgeConfig,
    rubrics: Sequence[Rubric | str] | str,
    *,
    db: str | None = None,
    run_dir: str | Path | None = None,
    confine: str | Path | None = None,
    only_items: Collection[str] | None = None,
    **kwargs: Any,
) -> JudgeSuiteRun:
    """Judge the items of ``manifest`` into the store at ``db`` (default: the store of the run
    folder the manifest lies in, else ``runs/<manifest name>/results.sqlite``).

    ``only_items``: judge only the items with these ids (a training export's held-out split,
    :func:`robojudge.train.split_items`); a ``ValueError`` when the manifest holds none of them.

    Keyword arguments go to :func:`judge_items`. Manifest rows that do not validate are skipped and
    returned in ``manifest_problems``. Rerunning with the same arguments resumes. ``rubrics`` may name
    built-in or registered rubrics by id; a judge or rubric of the wrong type fails before the store is
    made (:func:`judge_arguments`). Ctrl-C raises :class:`~robojudge.run.RunInterrupted` once what was
    judged is stored; its ``run`` is this call's outcome so far.
    """
    judge, rubrics = judge_arguments(judge, rubrics)
    # Confinement (default $ROBOJUDGE_CONFINE) leaves out items whose files lie outside the folder,
    # so no frame of them is ever sent to the judge.
    suite = load_suite(manifest, strict=False, confine=confine)
    raise_if_no_items([suite])
    chosen = suite.items
    if only_items is not None:
        wanted = set(only_items)
        chosen = [it for it in suite.items if it.item_id in wanted]
        if not chosen:
            raise ValueError(f"{manifest}: none of its {len(suite.items)} items is among the {len(wanted)} "
                             "items asked for (a split of another suite's export?)")
        if len(chosen) < len(wanted):
            _log.warning("%d of the %d items asked for are not in %s; judging the %d that are",
                         len(wanted) - len(chosen), len(wanted), manifest, len(chosen))
    url = db or default_db_url(Path(run_dir) if run_dir else default_run_dir(manifest))
    with ResultStore(url) as store:
        claim_store(store, manifest, suite.items)
        try:
            summary = judge_items(chosen, judge, rubrics, store, **kwargs)
        except RunInterrupted as stop:  # the caller learns the store and the rows left out too
            if isinstance(stop.summary, JudgeRunSummary):
                stop.run = JudgeSuiteRun(stop.summary, store.url, list(suite.problems))
            raise
        return JudgeSuiteRun(summary=summary, db_url=store.url, manifest_problems=list(suite.problems))


def judge_texts(store: ResultStore, metric: str, *, suite: str | Path | None = None) -> dict[str, str]:
    """The texts a text rubric (``caption``, ``key_steps``) stored, by item id.

    As ``robojudge judge texts``, rows whose inputs changed since they were judged (a video replaced
    after it was captioned) are left out, with a warning on the ``robojudge.run`` logger: see
    :func:`without_stale_rows`.

    Args:
        store: The result store the judge wrote to.
        metric: The stored id, for example ``judge:qwen:caption`` (see :func:`judge_metric_id`).
        suite: The manifest the judged items come from, to find those rows by; by default the manifests
            noted in the store.

    Returns:
        ``{item_id: text}`` for every judged row that holds a text (unscored and error rows are left
        out), as :func:`texts_from_rows`.

    Raises:
        ValueError: The metric is stored under several configurations (``robojudge judge texts`` lists
            them and takes one; or pass one configuration's rows to :func:`texts_from_rows`).
        ManifestError: ``suite`` cannot be loaded.
    """
    rows, stale = without_stale_rows(store, store.rows(metric=metric), suite)
    _warn_stale(stale)
    refuse_mixed_configurations(rows, metric)
    return texts_from_rows(rows)


def without_stale_rows(store: ResultStore, rows: Sequence[ResultRow], suite: str | Path | None = None
                       ) -> tuple[list[ResultRow], list[ResultRow]]:
    """``rows`` of ``store`` split into those kept and those left out as stale: their inputs (video,
    reference, instruction...) changed since they were judged (:func:`stale_rows`), so their scores and
    texts describe files that are no longer there.

    The items are those of ``suite``, else of every manifest noted in the store that still exists (one of
    them that no longer loads is passed over); with none, no row is stale. ``robojudge judge draft`` and
    ``judge texts`` leave the same rows out, as :func:`draft_from_store` and :func:`judge_texts` do; those
    two say so with a warning on this module's logger.

    Raises:
        ManifestError: ``suite`` cannot be loaded (``OSError``: it cannot be read).
    """
    manifests = [Path(suite)] if suite is not None else [p for p, _ in store.manifests() if p.is_file()]
    items: list[Item] = []
    seen: set[str] = set()
    for manifest in manifests:
        try:
            found = load_suite(manifest, strict=False, files="optional").items
        except (ManifestError, OSError, ValueError):
            if suite is not None:
                raise
            continue
        items += [it for it in found if it.item_id not in seen]
        seen.update(it.item_id for it in found)
    stale = stale_rows(rows, items) if items else []
    gone = {id(r) for r in stale}
    return [r for r in rows if id(r) not in gone], stale


def _warn_stale(stale: Sequence[ResultRow]) -> None:
    """Say on the logger how many rows :func:`without_stale_rows` left out (as the CLI's note does)."""
    if stale:
        _log.warning("%d stored result(s) of %d item(s) left out: their inputs (video, reference, "
                     "instruction...) changed since they were judged; judge them again to use them",
                     len(stale), len({r.item_id for r in stale}))


def texts_from_rows(rows: Iterable[ResultRow]) -> dict[str, str]:
    """``{item_id: text}`` of the ok rows of one text rubric that hold a text (one configuration's rows:
    should two rows of an item come, the one the store wrote last counts)."""
    out: dict[str, tuple[ResultRow, str]] = {}
    for row in rows:
        text = (row.details or {}).get("text")
        if row.status != "ok" or not isinstance(text, str) or not text:
            continue
        prev = out.get(row.item_id)
        if prev is None or _written_after(row, prev[0]):
            out[row.item_id] = (row, text)
    return {item: text for item, (_, text) in sorted(out.items())}


def refuse_mixed_configurations(rows: Iterable[ResultRow], metric: str) -> None:
    """Refuse rows of ``metric`` stored under several configurations (config hash and version), which
    are never merged: item by item, the newest row would mix them.

    Raises:
        ValueError: Naming the metric and its configurations.
    """
    found = sorted({(r.config_hash, r.version) for r in rows if r.metric == metric})
    if len(found) > 1:
        shown = ", ".join(f"config {h[:8]} v{v}" for h, v in found)
        raise ValueError(f"{metric} is stored under {len(found)} configurations ({shown}), which are never "
                         "merged; `robojudge judge draft` / `judge texts` list their labels and take one")


def write_judge_texts(texts: dict[str, str], path: str | Path, field_name: str = "caption") -> Path:
    """Write ``{item_id: text}`` as JSON Lines (``{"item_id": ..., "<field_name>": ...}``, one per line).

    This is the captions file the ``sa_bleu`` metric reads (see docs/judges.md, "Captions"). It is
    written beside ``path`` and renamed onto it once whole: a full disk or a kill leaves the old file
    (or none), never a cut one that ``sa_bleu`` would fail on.
    """
    import json

    p = Path(path)
    with replacing() as files, files.open(p) as fh:
        for item_id, text in texts.items():
            fh.write(json.dumps({"item_id": item_id, field_name: text}, ensure_ascii=False) + "\n")
    return p


def _written_after(row: ResultRow, other: ResultRow) -> bool:
    """Whether the store wrote ``row`` after ``other`` (row ids grow in the order rows are written)."""
    return (row.row_id or 0) > (other.row_id or 0)


def _newest_rows(rows: Iterable[ResultRow]) -> dict[str, ResultRow]:
    """The row of each item written last, among ``rows`` (the current rows of one metric)."""
    out: dict[str, ResultRow] = {}
    for row in rows:
        prev = out.get(row.item_id)
        if prev is None or _written_after(row, prev):
            out[row.item_id] = row
    return out


def draft_from_store(
    store: ResultStore,
    judges: Sequence[str],
    rubrics: Sequence[str] = ("pa", "ia"),
    *,
    min_judges: int = 1,
    suite: str | Path | None = None,
) -> dict[str, dict[str, DraftScore]]:
    """Draft labels from several judges' stored rows (RoboJudge App. A.2): ``{item: {rubric: draft}}``.

    As :func:`draft_from_rows`, with each judge's rows of ``rubrics`` read from ``store``. As
    ``robojudge judge draft``, rows whose inputs changed since they were judged (a video replaced after
    it was judged) are left out, with a warning on the ``robojudge.run`` logger: they are checked against
    ``suite``, by default the manifests noted in the store (:func:`without_stale_rows`). A judge whose
    rows of a rubric are stored under several configurations is refused (the newest row per item would
    mix them); ``robojudge judge draft`` lists their labels and takes one.

    Raises:
        ValueError: Fewer than one judge, a judge with no rows for any of ``rubrics``, or one stored under
            several configurations.
        ManifestError: ``suite`` cannot be loaded.
    """
    read = {(judge, rubric): store.rows(metric=judge_metric_id(judge, rubric))
            for judge in judges for rubric in rubrics}
    _, stale = without_stale_rows(store, [r for rows in read.values() for r in rows], suite)
    _warn_stale(stale)
    gone = {id(r) for r in stale}
    chosen: dict[str, list[ResultRow]] = {judge: [] for judge in judges}
    for (judge, rubric), rows in read.items():
        rows = [r for r in rows if id(r) not in gone]
        refuse_mixed_configurations(rows, judge_metric_id(judge, rubric))
        chosen[judge] += rows
    return draft_from_rows(chosen, rubrics, min_judges=min_judges, where=store.url)


def draft_from_rows(
    judges: Mapping[str, Iterable[ResultRow]],
    rubrics: Sequence[str] = ("pa", "ia"),
    *,
    min_judges: int = 1,
    where: str = "the store",
) -> dict[str, dict[str, DraftScore]]:
    """Draft labels from several judges' rows: ``{item: {rubric: draft}}``.

    ``judges``: each judge's rows, under the name the drafts give it; the rows of one configuration
    of the judge (``judge:<name>:<rubric>`` of each rubric), which the caller picks. The row written
    last per (item, rubric) counts; unscored (NaN) and error rows count as no score. Items any judge has
    a row for are drafted. Labels are clipped to the built-in rubric's range (1-5 for PA and IA, and
    for rubric ids robojudge does not know). ``where`` names the store in errors.

    Raises:
        ValueError: Fewer than one judge, or a judge with no rows for any of ``rubrics``.
    """
    if not judges:
        raise ValueError("give at least one judge to draft from")
    opinions: dict[str, dict[str, dict[str, JudgeOpinion]]] = {}
    ranges: dict[str, tuple[float, float]] = {}
    for rubric in rubrics:
        if rubric in RUBRICS:
            ranges[rubric] = (RUBRICS.get(rubric).score_min, RUBRICS.get(rubric).score_max)
    for judge, rows in judges.items():
        by_rubric: dict[str, list[ResultRow]] = {}
        for row in rows:
            by_rubric.setdefault(row.metric.rpartition(":")[2], []).append(row)
        found = 0
        for rubric in rubrics:
            for item_id, row in _newest_rows(by_rubric.get(rubric, [])).items():
                found += 1
                details = row.details or {}
                reasoning = details.get("reasoning")
                score = row.value if row.status == "ok" else None
                opinions.setdefault(item_id, {}).setdefault(rubric, {})[judge] = JudgeOpinion(
                    score, reasoning if isinstance(reasoning, str) else None
                )
        if not found:
            wanted = ", ".join(judge_metric_id(judge, r) for r in rubrics)
            raise ValueError(f"judge {judge!r} has no stored rows ({wanted}) in {where}")
    return draft_labels(opinions, list(rubrics), ranges=ranges, min_judges=min_judges)


def write_drafts(drafts: dict[str, dict[str, DraftScore]], path: str | Path) -> Path:
    """Write drafts as JSON Lines: ``{"item_id": ..., "<rubric>": {label, mean, spread, judges...}}``
    (through a temporary file beside ``path``, as :func:`write_judge_texts`)."""
    import json

    p = Path(path)
    with replacing() as files, files.open(p) as fh:
        for item_id, per_rubric in drafts.items():
            record = {"item_id": item_id, **{r: d.to_json() for r, d in per_rubric.items()}}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return p
