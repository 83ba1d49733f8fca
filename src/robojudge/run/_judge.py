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
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from robojudge.judges import (
    RUBRICS,
    Backend,
    FrameLoader,
    FrameSpec,
    JudgeConfig,
    JudgeEngine,
    JudgeStats,
    ResponseCache,
    Rubric,
    RubricResult,
    Scoring,
    judge_metric_id,
    make_backend,
    short_hash,
)
from robojudge.judges._draft import DraftScore, JudgeOpinion, draft_labels
from robojudge.judges._scoring import EXPECTED_FALLBACK
from robojudge.run._executor import Executor, make_executor
from robojudge.run._fingerprint import Fingerprints, judge_inputs
from robojudge.run._plan import Pending, plan_pending
from robojudge.store import ResultRow, ResultStore, default_db_url
from robojudge.suite import Item, ManifestProblem, load_suite
from robojudge.video import DecoderPool, VideoError, shared_decoder


@dataclass(frozen=True)
class JudgePlan:
    """One rubric of one judge with every setting that decides its rows' identity."""

    judge: JudgeConfig
    rubric: Rubric
    metric_id: str
    config_hash: str
    config: dict[str, Any]
    fallback: JudgePlan | None = None
    """With ``expected`` scoring: where judgments the backend gave no log-probabilities for go
    (scored ``argmax``, under a config that says so, so they never mix with expected scores)."""

    @classmethod
    def build(
        cls,
        judge: JudgeConfig,
        rubric: Rubric,
        frames: FrameSpec,
        scoring: Scoring,
        samples: int,
        temperature: float,
    ) -> JudgePlan:
        # Expected scoring needs one score token; checks, labels and texts are argmax whatever was asked.
        mode = Scoring(scoring) if rubric.kind == "score" else Scoring.argmax
        config = {
            **judge.identity(),
            "rubric": {"id": rubric.id, "version": rubric.version, "digest": rubric.digest},
            "frames": frames.as_dict(),
            "scoring": mode.value,
            "samples": samples,
            "effective_temperature": temperature,
        }
        metric = judge_metric_id(judge.name, rubric.id)
        fallback = None
        if mode is Scoring.expected:
            fb = {**config, "scoring": Scoring.argmax.value, "scoring_note": EXPECTED_FALLBACK}
            fallback = cls(judge, rubric, metric, short_hash(fb), fb)
        return cls(judge, rubric, metric, short_hash(config), config, fallback)

    def for_result(self, res: RubricResult) -> JudgePlan:
        """The plan a result is stored under: the fallback's for an expected judgment scored argmax."""
        if self.fallback is not None and (res.details or {}).get("scoring_mode") == Scoring.argmax.value:
            return self.fallback
        return self

    @property
    def version(self) -> str:
        return self.rubric.version


@dataclass
class JudgeRunSummary:
    """What a call to :func:`judge_items` did.

    Attributes:
        total: (item, rubric) pairs asked for.
        skipped: Pairs already stored from the same inputs (and those kept with an unknown
            fingerprint or an unavailable video).
        stale: Stored pairs whose video or instruction changed since; judged again in this run.
        unknown: Stored pairs without a fingerprint (stored before result schema 2); judged again
            only with ``rescore_unknown``.
        unavailable: Stored pairs kept because their video cannot be read now (missing or unreadable).
        scored: Pairs judged with a score.
        unscored: Pairs judged but unparsable (NaN with the reason and raw output).
        failed: Pairs whose requests failed (error rows; ``--retry-errors`` tries them again).
        seconds: Wall time.
        interrupted: The run was stopped (Ctrl-C); what finished is stored.
        errors: The error and unscored rows.
        stats: Request counters: in flight, sent, cache hits, retries, tokens, cost.
        agreement: Items whose turns all agreed (``samples > 1``), and items voted on.
        score_std: Sum of per-item score standard deviations (``samples > 1``).
    """

    total: int = 0
    skipped: int = 0
    stale: int = 0
    unknown: int = 0
    unavailable: int = 0
    scored: int = 0
    unscored: int = 0
    failed: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    errors: list[ResultRow] = field(default_factory=list)
    stats: JudgeStats = field(default_factory=JudgeStats)
    agreement: list[int] = field(default_factory=lambda: [0, 0])
    score_std: float = 0.0

    @property
    def computed(self) -> int:
        return self.scored + self.unscored + self.failed

    @property
    def parse_failure_rate(self) -> float:
        """Unscored pairs over pairs that got a reply."""
        judged = self.scored + self.unscored
        return self.unscored / judged if judged else 0.0

    @property
    def agreement_rate(self) -> float | None:
        """Share of voted items whose turns gave identical scores (RoboWorM Table D3), or ``None``."""
        return self.agreement[0] / self.agreement[1] if self.agreement[1] else None

    @property
    def mean_score_std(self) -> float | None:
        return self.score_std / self.agreement[1] if self.agreement[1] else None

    @property
    def latency_per_video_second(self) -> float | None:
        """Request seconds per second of judged video (requests actually sent)."""
        s = self.stats
        return s.request_seconds / s.video_seconds if s.video_seconds > 0 and s.sent else None


JudgeProgress = Callable[[ResultRow | None, JudgeRunSummary], None]
"""Called with each stored row, and with ``None`` a few times a second while requests are in flight."""


def _row(item: Item, plan: JudgePlan, res: RubricResult, fingerprint: str) -> ResultRow:
    return ResultRow(
        item_id=item.item_id,
        metric=plan.metric_id,
        config_hash=plan.config_hash,
        version=plan.version,
        status=res.status,
        value=res.value,
        error=res.error,
        duration_s=res.duration_s,
        details=res.details or None,
        config=plan.config,
        fingerprint=fingerprint,  # taken when the run was planned: what the judge was asked about
    )


def _error_row(item: Item, plan: JudgePlan, message: str, fingerprint: str) -> ResultRow:
    return ResultRow(
        item_id=item.item_id,
        metric=plan.metric_id,
        config_hash=plan.config_hash,
        version=plan.version,
        status="error",
        value=None,
        error=message,
        config=plan.config,
        fingerprint=fingerprint,
    )


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
    unscored rows of ``plans`` are deleted first.
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
    return plan_pending(
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


class _Writer:
    """Collects finished rows and stores them in small batches from the event loop's thread."""

    def __init__(self, store: ResultStore, summary: JudgeRunSummary, progress: JudgeProgress | None) -> None:
        self.store = store
        self.summary = summary
        self.progress = progress
        self.pending: list[ResultRow] = []
        self.wake = asyncio.Event()

    def put(self, rows: list[ResultRow]) -> None:
        self.pending.extend(rows)
        self.wake.set()

    def flush(self) -> None:
        rows, self.pending = self.pending, []
        if not rows:
            return
        self.store.add(rows)
        s = self.summary
        for row in rows:
            if row.status == "error":
                s.failed += 1
                s.errors.append(row)
            elif row.value is not None and math.isnan(row.value):
                s.unscored += 1
                s.errors.append(row)
            else:
                s.scored += 1
            details = row.details or {}
            if "agreement" in details:
                s.agreement[0] += int(bool(details["agreement"]))
                s.agreement[1] += 1
                s.score_std += float(details.get("std") or 0.0)
            if self.progress is not None:
                self.progress(row, s)

    async def run(self, interval: float = 0.25) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            await asyncio.sleep(interval)  # let a burst of finished items share one transaction
            self.flush()


def _failed_on_unavailable(item: Item, rows: list[ResultRow]) -> list[ResultRow]:
    """``rows``, with error rows carrying the fingerprint of the inputs now when the video cannot be
    read now: it went away after planning, and once back it must be judged again."""
    if all(row.status != "error" for row in rows):
        return rows
    now = judge_inputs(item)
    if not now.unavailable:
        return rows
    return [replace(row, fingerprint=now.value) if row.status == "error" else row for row in rows]


async def _judge_one(
    item: Item,
    plans: tuple[JudgePlan, ...],
    prints: tuple[str, ...],
    engine: JudgeEngine,
    spec: FrameSpec,
    cache: ResponseCache,
    decoder: DecoderPool | None,
) -> list[ResultRow]:
    quality = getattr(engine.backend, "frame_jpeg_quality", None)
    frames = FrameLoader(
        item.video,
        spec,
        cache,
        decoder=decoder,
        jpeg_quality=quality if isinstance(quality, int) else None,
        before_decode=engine.start_backend,
    )
    stopped = engine.not_sent_error()
    if stopped is not None and not frames.known():  # the breaker is open: decoding would be wasted
        return [_error_row(item, p, stopped, fp) for p, fp in zip(plans, prints, strict=True)]
    try:
        await frames.prepare()
        if frames.from_cache:  # replies most likely cached too: no tasks to schedule
            results = [await engine.judge(p.rubric, item.instruction, frames) for p in plans]
        else:  # the rubrics' requests go out together
            results = await asyncio.gather(*(engine.judge(p.rubric, item.instruction, frames) for p in plans))
    except asyncio.CancelledError:
        raise
    except VideoError as exc:
        return [_error_row(item, p, f"video error: {exc}", fp) for p, fp in zip(plans, prints, strict=True)]
    except Exception as exc:  # a backend bug costs this item, not the run
        reason = f"judge raised {type(exc).__name__}: {engine.redact.message(exc)}"
        return [_error_row(item, p, reason, fp) for p, fp in zip(plans, prints, strict=True)]
    finally:
        frames.release()
    return [_row(item, p.for_result(r), r, fp) for p, r, fp in zip(plans, results, prints, strict=True)]


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
) -> None:
    writer = _Writer(store, summary, progress)
    queue: asyncio.Queue[tuple[Item, tuple[JudgePlan, ...], tuple[str, ...]]] = asyncio.Queue()
    for entry in todo:
        queue.put_nowait(entry)

    done = 0

    async def worker() -> None:
        nonlocal done
        while not queue.empty():
            item, plans, prints = queue.get_nowait()
            rows = await _judge_one(item, plans, prints, engine, spec, cache, decoder)
            writer.put(_failed_on_unavailable(item, rows))
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

    background = [asyncio.create_task(writer.run()), asyncio.create_task(ticker())]
    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(workers, len(todo))))))
    finally:
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        writer.flush()  # whatever finished, also on Ctrl-C
        await engine.backend.aclose()


def judge_items(
    items: Sequence[Item],
    judge: JudgeConfig,
    rubrics: Sequence[Rubric],
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
        rubrics: Rubrics to judge with; one row per (item, rubric).
        store: Where rows go.
        frames: Frame sampling (RoboJudge's 4 fps / 32 frames by default).
        scoring: ``argmax`` or ``expected``.
        samples: Turns per pair; above 1, the stored value is the majority vote.
        cache: The response cache; the default opens the user cache folder.
        backend: A ready backend (tests, plugins); built from ``judge`` when ``None``.
        retry_errors: Delete this judge's stored error and unscored rows first, so they are tried
            again; unscored ones are asked again past their cached (unparsable) replies.
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
    """
    started = time.perf_counter()
    spec = frames or FrameSpec()
    if executor is not None and backend is not None:
        raise ValueError("a ready backend cannot travel to executor workers; pass the judge config only")
    ex = make_executor(workers, executor, address) if isinstance(executor, str) else executor
    own_cache = cache is None
    cache = cache if cache is not None else ResponseCache()
    try:
        be = backend if backend is not None else make_backend(judge)
        engine = JudgeEngine(
            judge, be, cache, scoring=Scoring(scoring), samples=samples, reask_unparsable=retry_errors
        )
        plans = [
            JudgePlan.build(judge, r, spec, engine.scoring, samples, engine.temperature()) for r in rubrics
        ]
        if len({p.metric_id for p in plans}) != len(plans):
            raise ValueError("two rubrics with the same id were requested")
        planned = _plan_judges(
            items, plans, store, retry_errors=retry_errors, rescore_unknown=rescore_unknown
        )
        summary = JudgeRunSummary(
            total=sum(len(ps) for _, ps, _ in planned.todo) + planned.skipped,
            skipped=planned.skipped,
            stale=planned.stale,
            unknown=planned.unknown,
            unavailable=planned.unavailable,
            stats=engine.stats,
        )
        in_flight = items_in_flight or max(2, 2 * judge.concurrency)
        try:
            if ex is not None:
                from robojudge.run._ray_judge import judge_distributed

                asyncio.run(be.aclose())  # the driver's backend sends nothing: workers build their own
                judge_distributed(ex, planned.todo, engine, spec, store, summary, progress,
                                  samples=samples, reask_unparsable=retry_errors)
            else:
                decoder = shared_decoder(decode_workers)
                asyncio.run(_judge_async(planned.todo, engine, spec, cache, store, summary, progress,
                                         in_flight, decoder))
        except KeyboardInterrupt:
            summary.interrupted = True
    finally:
        if own_cache:
            cache.close()
        else:
            cache.flush()
    summary.seconds = time.perf_counter() - started
    return summary


@dataclass
class JudgeSuiteRun:
    """The outcome of :func:`judge_suite`."""

    summary: JudgeRunSummary
    db_url: str
    manifest_problems: list[ManifestProblem] = field(default_factory=list)


def judge_suite(
    manifest: str | Path,
    judge: JudgeConfig,
    rubrics: Sequence[Rubric],
    *,
    db: str | None = None,
    run_dir: str | Path | None = None,
    confine: str | Path | None = None,
    **kwargs: Any,
) -> JudgeSuiteRun:
    """Judge the items of ``manifest`` into the store at ``db`` (default ``runs/<manifest>/results.sqlite``).

    Keyword arguments go to :func:`judge_items`. Manifest rows that do not validate are skipped and
    returned in ``manifest_problems``. Rerunning with the same arguments resumes.
    """
    # Confinement (default $ROBOJUDGE_CONFINE) leaves out items whose files lie outside the folder,
    # so no frame of them is ever sent to the judge.
    suite = load_suite(manifest, strict=False, confine=confine)
    url = db or default_db_url(Path(run_dir) if run_dir else Path("runs") / Path(manifest).stem)
    with ResultStore(url) as store:
        summary = judge_items(suite.items, judge, rubrics, store, **kwargs)
        return JudgeSuiteRun(summary=summary, db_url=store.url, manifest_problems=list(suite.problems))


def judge_texts(store: ResultStore, metric: str) -> dict[str, str]:
    """The texts a text rubric (``caption``, ``key_steps``) stored, by item id.

    Args:
        store: The result store the judge wrote to.
        metric: The stored id, for example ``judge:qwen:caption`` (see :func:`judge_metric_id`).

    Returns:
        ``{item_id: text}`` for every judged row that holds a text (unscored and error rows are left
        out). When the store holds rows of several configurations, the newest row of each item wins.
    """
    out: dict[str, tuple[Any, str]] = {}
    for row in store.rows(metric=metric, status="ok"):
        text = (row.details or {}).get("text")
        if not isinstance(text, str) or not text:
            continue
        prev = out.get(row.item_id)
        if prev is None or (row.created_at is not None and prev[0] is not None and row.created_at > prev[0]):
            out[row.item_id] = (row.created_at, text)
    return {item: text for item, (_, text) in sorted(out.items())}


def write_judge_texts(texts: dict[str, str], path: str | Path, field_name: str = "caption") -> Path:
    """Write ``{item_id: text}`` as JSON Lines (``{"item_id": ..., "<field_name>": ...}``, one per line).

    This is the captions file the ``sa_bleu`` metric reads (see docs/judges.md, "Captions").
    """
    import json

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for item_id, text in texts.items():
            fh.write(json.dumps({"item_id": item_id, field_name: text}, ensure_ascii=False) + "\n")
    return p


def _newest_rows(store: ResultStore, metric: str) -> dict[str, ResultRow]:
    out: dict[str, ResultRow] = {}
    for row in store.rows(metric=metric):
        prev = out.get(row.item_id)
        if prev is None or (
            row.created_at is not None and prev.created_at is not None and row.created_at > prev.created_at
        ):
            out[row.item_id] = row
    return out


def draft_from_store(
    store: ResultStore,
    judges: Sequence[str],
    rubrics: Sequence[str] = ("pa", "ia"),
    *,
    min_judges: int = 1,
) -> dict[str, dict[str, DraftScore]]:
    """Draft labels from several judges' stored rows (RoboJudge App. A.2): ``{item: {rubric: draft}}``.

    Each judge's newest row per (item, rubric) counts; unscored (NaN) and error rows count as no
    score. Items any judge has a row for are drafted. Labels are clipped to the built-in rubric's
    range (1-5 for PA and IA, and for rubric ids robojudge does not know).

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
    for judge in judges:
        found = 0
        for rubric in rubrics:
            for item_id, row in _newest_rows(store, judge_metric_id(judge, rubric)).items():
                found += 1
                details = row.details or {}
                reasoning = details.get("reasoning")
                score = row.value if row.status == "ok" else None
                opinions.setdefault(item_id, {}).setdefault(rubric, {})[judge] = JudgeOpinion(
                    score, reasoning if isinstance(reasoning, str) else None
                )
        if not found:
            wanted = ", ".join(judge_metric_id(judge, r) for r in rubrics)
            raise ValueError(f"judge {judge!r} has no stored rows ({wanted}) in {store.url}")
    return draft_labels(opinions, list(rubrics), ranges=ranges, min_judges=min_judges)


def write_drafts(drafts: dict[str, dict[str, DraftScore]], path: str | Path) -> Path:
    """Write drafts as JSON Lines: ``{"item_id": ..., "<rubric>": {label, mean, spread, judges...}}``."""
    import json

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for item_id, per_rubric in drafts.items():
            record = {"item_id": item_id, **{r: d.to_json() for r, d in per_rubric.items()}}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return p
