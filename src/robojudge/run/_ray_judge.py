"""``robojudge judge --executor ray``: items judged on cluster workers, rows stored by the driver.

The driver plans as for a local run (:func:`robojudge.run._judge.judge_items`) and sends the
pending items in chunks; a worker builds the judge's backend and engine, decodes the chunk's videos
and sends its requests with the judge's ``concurrency`` (so the server sees up to that many
requests per worker), and returns the rows and its request counters. Rows are stored by the
driver as chunks come back, with the store's insert that skips a stored key: a retried chunk adds
nothing. A chunk whose worker died on every attempt (a video that crashes the decoder) is judged again
one item per task, so that only the item that kills its worker alone gets error rows. Each worker keeps
its own response cache (the default cache folder of its machine).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from robojudge._aio import run_coroutine
from robojudge.judges import (
    FrameSpec,
    JudgeConfig,
    JudgeEngine,
    JudgeStats,
    ResponseCache,
    Scoring,
    make_backend,
)
from robojudge.run._executor import Executor, OpenFilesError
from robojudge.run._judge_rows import Writer, error_row, inputs_now, judge_one
from robojudge.run._ray import RayExecutor
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

if TYPE_CHECKING:
    from robojudge.run._judge_rows import JudgeProgress, JudgeRunSummary

Entry = tuple[Item, tuple[Any, ...], tuple[str, ...]]
"""An item, its pending :class:`~robojudge.run._judge.JudgePlan` s and their fingerprints."""


@dataclass(frozen=True)
class JudgeChunk:
    """Items a worker judges together, with what it needs to build the judge."""

    judge: JudgeConfig
    frames: FrameSpec
    scoring: Scoring
    samples: int
    reask_unparsable: bool
    entries: tuple[Entry, ...]


def chunks(entries: Sequence[Entry], size: int, **common: Any) -> list[JudgeChunk]:
    """``entries`` cut into chunks of at most ``size`` items."""
    size = max(1, size)
    return [JudgeChunk(entries=tuple(entries[i:i + size]), **common) for i in range(0, len(entries), size)]


def _counters(stats: JudgeStats) -> dict[str, float]:
    return {f.name: getattr(stats, f.name) for f in dataclasses.fields(stats)
            if isinstance(getattr(stats, f.name), int | float) and f.name != "in_flight"}


def add_counters(stats: JudgeStats, counters: dict[str, float]) -> None:
    """Add a worker's request counters to the driver's."""
    for name, value in counters.items():
        setattr(stats, name, getattr(stats, name) + value)


ChunkResult = tuple[list[ResultRow], dict[str, float], list[tuple[str, int]]]
"""A chunk's rows to store, its request counters, and its items whose video changed while they were
judged, each with its pairs not stored (:func:`~robojudge.run._judge_rows.inputs_now`)."""


def judge_chunk(chunk: JudgeChunk) -> ChunkResult:
    """Judge a chunk's items on this worker: its rows, request counters and items changed meanwhile."""

    cache = ResponseCache()
    engine = JudgeEngine(chunk.judge, make_backend(chunk.judge), cache, scoring=chunk.scoring,
                         samples=chunk.samples, reask_unparsable=chunk.reask_unparsable)
    gate = asyncio.Semaphore(max(1, chunk.judge.concurrency))

    changed: list[tuple[str, int]] = []

    async def one(entry: Entry) -> list[ResultRow]:
        item, plans, prints = entry
        async with gate:
            try:
                rows = await judge_one(item, plans, prints, engine, chunk.frames, cache, None)
            except OpenFilesError as exc:
                # This worker ran out of file descriptors on this item: its finished rubrics are kept
                # and the others are error rows of this item alone (the rest of the chunk goes on; a
                # worker's limit is its own, so the run is not stopped from here); --retry-errors
                # judges them again.
                done = {row.metric for row in exc.rows}
                why = f"{exc.__cause__ or exc}: this worker's limit on open files was reached"
                unfinished = [(plan, fp) for plan, fp in zip(plans, prints, strict=True)
                              if plan.metric_id not in done]
                rows = exc.rows + [error_row(item, plan, why, fp) for plan, fp in unfinished]
        # Checked here, where the video was read: the driver may not see the worker's files.
        rows, dropped = inputs_now(item, rows)
        if dropped:
            changed.append((item.item_id, len(dropped)))
        return rows

    async def run() -> list[list[ResultRow]]:
        try:
            return await asyncio.gather(*(one(e) for e in chunk.entries))
        finally:
            await engine.backend.aclose()

    try:
        found = run_coroutine(run())  # an in-process executor runs this in the caller's thread (a notebook's)
    finally:
        cache.close()
    return [row for rows in found for row in rows], _counters(engine.stats), changed


def one_per_item(chunk: JudgeChunk) -> list[JudgeChunk]:
    """``chunk`` as chunks of one item each: on Ray, a chunk whose worker died is judged again item by
    item, so that a video that crashes its worker (a decoder's segfault) costs that item only."""
    return [dataclasses.replace(chunk, entries=(entry,)) for entry in chunk.entries]


def crash_rows(chunk: JudgeChunk, reason: str) -> ChunkResult:
    """Error rows for every pair of a chunk whose worker could not finish it (on Ray, a chunk of one item
    once its worker died: :func:`one_per_item`)."""

    rows = [error_row(item, plan, reason, fp) for item, plans, prints in chunk.entries
            for plan, fp in zip(plans, prints, strict=True)]
    return rows, {}, []


def judge_distributed(
    executor: Executor,
    todo: Sequence[Entry],
    engine: JudgeEngine,
    frames: FrameSpec,
    store: ResultStore,
    summary: JudgeRunSummary,
    progress: JudgeProgress | None,
    *,
    samples: int,
    reask_unparsable: bool,
) -> None:
    """Judge ``todo`` through ``executor`` (chunks of twice the judge's concurrency), storing each
    chunk's rows as it comes back and adding its request counters to ``summary.stats``. On Ray, a chunk
    whose worker died is judged again one item per task before any of its items gets an error row."""

    writer = Writer(store, summary, progress)
    judge = engine.config
    chunked = chunks(todo, 2 * judge.concurrency, judge=judge, frames=frames, scoring=engine.scoring,
                     samples=samples, reask_unparsable=reask_unparsable)
    if isinstance(executor, RayExecutor):
        results = executor.map_unordered(judge_chunk, chunked, crash_rows, split=one_per_item,
                                         doing="judging")
    else:
        results = executor.map_unordered(judge_chunk, chunked, crash_rows)
    try:
        for _, (rows, counters, changed) in results:
            add_counters(summary.stats, counters)
            for item_id, n in changed:
                summary.changed_inputs += n
                summary.changed_items.append(item_id)
            writer.put(rows)
            writer.flush()
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
        executor.shutdown()
