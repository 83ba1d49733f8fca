"""What one judged item becomes: its plans, rows, the run summary and the writer that stores rows as
they come; shared by the local judge runner (:mod:`robojudge.run._judge`) and the Ray one
(:mod:`robojudge.run._ray_judge`)."""

from __future__ import annotations

import asyncio
import errno
import logging
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from robojudge._raised import raised_reason, raised_traceback
from robojudge.judges import (
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
    judged_input,
    out_of_files,
    short_hash,
)
from robojudge.judges._scoring import EXPECTED_FALLBACK
from robojudge.run import _score
from robojudge.run._executor import OpenFilesError, open_files_limit
from robojudge.run._fingerprint import judge_inputs, settle
from robojudge.store import ResultRow, ResultStore, StoreError
from robojudge.suite import Item
from robojudge.video import DecoderPool, VideoError

_log = logging.getLogger(__name__)


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
        default_top = JudgeConfig.model_fields["top_logprobs"].default
        if mode is Scoring.expected and judge.top_logprobs != default_top:
            # An expected score weighs the score token's alternatives, so how many were asked for is part
            # of the value (kept out at its default, so configs stored before it was added keep their hash).
            config["top_logprobs"] = judge.top_logprobs
        metric = judge_metric_id(judge.name, rubric.id)
        fallback = None
        if mode is Scoring.expected:
            # (an argmax value weighs no alternatives: top_logprobs does not split its configuration)
            fb = {**{k: v for k, v in config.items() if k != "top_logprobs"}, "scoring": Scoring.argmax.value,
                  "scoring_note": EXPECTED_FALLBACK}
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
class TurnAgreement:
    """A rubric's items judged with several turns in one run (RoboWorM App. D, Tables D2-D3): how often
    the turns agreed, how far their scores spread, and how long the requests took per video second.

    Attributes:
        voted: Items judged with several turns.
        agreed: Of those, items whose turns all gave the same score.
        std_sum: Sum of the items' standard deviations of their turns' scores (on the rubric's scale).
        latency_sum: Sum of the items' ``details.latency_per_video_s`` (every turn's request seconds
            over the seconds of video judged), over the ``timed`` items that have one.
    """

    voted: int = 0
    agreed: int = 0
    std_sum: float = 0.0
    latency_sum: float = 0.0
    timed: int = 0

    def add(self, details: dict[str, Any]) -> None:
        """Count one voted row's ``details``."""
        self.voted += 1
        self.agreed += int(bool(details["agreement"]))
        self.std_sum += float(details.get("std") or 0.0)
        latency = details.get("latency_per_video_s")
        if isinstance(latency, int | float) and math.isfinite(latency):
            self.latency_sum += float(latency)
            self.timed += 1

    @property
    def agreement_rate(self) -> float:
        """Share of voted items whose turns gave identical scores (RoboWorM Table D3's Agree)."""
        return self.agreed / self.voted if self.voted else math.nan

    @property
    def mean_score_std(self) -> float:
        """Mean over voted items of their turns' score standard deviation (Table D3's Score Std)."""
        return self.std_sum / self.voted if self.voted else math.nan

    @property
    def latency_per_video_second(self) -> float | None:
        """Mean request seconds per video second over the voted items that say (Table D3's Latency)."""
        return self.latency_sum / self.timed if self.timed else None


@dataclass
class JudgeRunSummary:
    """What a call to :func:`judge_items` did.

    Attributes:
        total: (item, rubric) pairs asked for.
        skipped: Pairs already stored from the same inputs (and those kept with an unknown
            fingerprint or an unavailable video).
        skipped_errors: Those of ``skipped`` whose stored row is a failure (kept: ``--retry-errors``
            asks again).
        stale: Stored pairs whose video or instruction changed since; judged again in this run.
        unknown: Stored pairs without a fingerprint (stored before result schema 2); judged again
            only with ``rescore_unknown``.
        unavailable: Stored pairs kept because their video cannot be read now (missing or unreadable).
        taken_over: Stored judgments of the same local model files in another folder (a moved project),
            stored again under this judge's configuration before planning (:mod:`robojudge.run._moved`).
        scored: Pairs judged with a score (and stored).
        unscored: Pairs judged but unparsable (NaN with the reason and raw output).
        failed: Pairs whose requests failed (error rows; ``--retry-errors`` tries them again).
        duplicates: Pairs judged here that another run stored first (two runs of the same items
            overlapping): the store kept that run's row; in none of the three counts above.
        by_other_run: Pairs another run stored while this one went on, found so before their requests
            were sent here, and left to it (counted in ``skipped`` too).
        seconds: Wall time.
        interrupted: The run was stopped (Ctrl-C); what finished is stored.
        errors: The first ``KEPT_ERRORS`` (1,000) error and unscored rows (``failed`` and ``unscored``
            count them all), leaving out those the circuit breaker stopped (``breaker_stopped`` counts
            them: they all carry its message, ``stats.stopped``).
        stats: Request counters: in flight, sent, cache hits, retries, tokens, cost.
        consistency: Per rubric id, the items of this run judged with several turns (``samples > 1``):
            how many agreed, their score spread and latency (:class:`TurnAgreement`). Kept per rubric:
            rubrics score on different scales (PA and IA 1-5, ``roboworm_physics`` 1-3), so a rate or a
            standard deviation pooled over them would be no rubric's.
        endpoints: A fleet's servers as the run left them (judged in this process): masked URL,
            requests sent, answered and failed, probes, and whether it is taken out.
        isolated: Items whose video an earlier run was decoding in its own process when it ended
            (a crash in the decoder, a kill): decoded in a decoder process this time.
        changed_inputs: Pairs judged and not stored because the video changed while it was judged
            (:func:`inputs_now`; judged again by the next run), and ``changed_items`` their items.
        cache_error: Why replies could not be written to the response cache, and ``cache_unsaved`` how
            many of this run's replies are not in it (a rerun sends those requests again).
        truncated: Rows stored by this run with a reply cut off at the token limit
            (``details.truncated``: scored when the cut-off reply still ended with its answer, else
            unscored after the repair prompt); a count that grows says ``sampling.max_tokens`` is too small.
        warned: Rows stored with ``details.video_warnings`` (what had to be assumed about the video, and
            how non-square pixels were sent), and ``video_warnings`` those warnings by item.
    """

    total: int = 0
    skipped: int = 0
    skipped_errors: int = 0
    stale: int = 0
    unknown: int = 0
    unavailable: int = 0
    taken_over: int = 0
    scored: int = 0
    unscored: int = 0
    failed: int = 0
    duplicates: int = 0
    by_other_run: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    errors: list[ResultRow] = field(default_factory=list)
    breaker_stopped: int = 0
    stats: JudgeStats = field(default_factory=JudgeStats)
    consistency: dict[str, TurnAgreement] = field(default_factory=dict)
    endpoints: list[dict[str, Any]] = field(default_factory=list)
    isolated: list[str] = field(default_factory=list)
    changed_inputs: int = 0
    changed_items: list[str] = field(default_factory=list)
    cache_error: str | None = None
    cache_unsaved: int = 0
    truncated: int = 0
    warned: int = 0
    video_warnings: dict[str, list[str]] = field(default_factory=dict)

    @property
    def computed(self) -> int:
        return self.scored + self.unscored + self.failed + self.duplicates + self.changed_inputs

    @property
    def stored(self) -> int:
        """Pairs the store holds now: stored before the run, by it, or by another run meanwhile."""
        return self.skipped + self.scored + self.unscored + self.failed + self.duplicates

    @property
    def judged_nothing(self) -> bool:
        """Pairs failed in this run and not one got a reply (every request or video failed: a server
        down, a wrong key, every video unreadable); ``robojudge judge`` then exits 1."""
        return self.failed > 0 and self.scored + self.unscored + self.duplicates == 0

    @property
    def parse_failure_rate(self) -> float:
        """Unscored pairs over pairs that got a reply."""
        judged = self.scored + self.unscored
        return self.unscored / judged if judged else 0.0

    @property
    def latency_per_video_second(self) -> float | None:
        """Request seconds per second of judged video (requests actually answered)."""
        s = self.stats
        return s.request_seconds / s.video_seconds if s.video_seconds > 0 and s.answered else None


JudgeProgress = Callable[[ResultRow | None, JudgeRunSummary], None]
"""Called with each stored row, and with ``None`` a few times a second while requests are in flight."""


def _row(item: Item, plan: JudgePlan, res: RubricResult, fingerprint: str, warnings: list[str],
         judged: dict[str, Any]) -> ResultRow:
    return ResultRow(
        item_id=item.item_id,
        metric=plan.metric_id,
        config_hash=plan.config_hash,
        version=plan.version,
        status=res.status,
        value=res.value,
        error=res.error,
        duration_s=res.duration_s,
        # what the judge was sent: the file, the view it shows, a grid's layout and the cell sent
        # and the robojudge release that judged it (outside the key: an upgrade judges nothing again)
        details=_score.with_release({**(_score.with_video_warnings(res.details, warnings) or {}),
                                     "judged": judged}),
        config=plan.config,
        fingerprint=fingerprint,  # taken when the run was planned: what the judge was asked about
    )


def error_row(item: Item, plan: JudgePlan, message: str, fingerprint: str,
              details: dict[str, Any] | None = None) -> ResultRow:
    return ResultRow(
        item_id=item.item_id,
        metric=plan.metric_id,
        config_hash=plan.config_hash,
        version=plan.version,
        status="error",
        value=None,
        error=message,
        details=details,
        config=plan.config,
        fingerprint=fingerprint,
    )


def _raised(engine: JudgeEngine, item: Item, exc: BaseException) -> tuple[str, dict[str, Any]]:
    """The error and the details of the rows of an item whose judging raised unexpectedly: ``judge raised
    Type: message (notes)`` and the end of its traceback, secrets masked (logged under -v too)."""
    where = raised_traceback(exc, mask=engine.redact.text)
    _log.debug("%s: judging raised: %s", item.item_id, where)
    return f"judge raised {engine.redact.text(raised_reason(exc))}", {"traceback": where}


class Writer:
    """Collects finished rows and stores them in small batches from the event loop's thread."""

    def __init__(self, store: ResultStore, summary: JudgeRunSummary, progress: JudgeProgress | None) -> None:
        self.store = store
        self.summary = summary
        self.progress = progress
        self.pending: list[ResultRow] = []
        self.wake = asyncio.Event()
        self.failed: StoreError | None = None
        """The store's error when :meth:`run` could not store a batch; nothing more is stored then."""

    def put(self, rows: list[ResultRow]) -> None:
        self.pending.extend(rows)
        self.wake.set()

    def flush(self) -> None:
        rows, self.pending = self.pending, []
        if not rows:
            return
        stored = {row.key for row in self.store.add_new(rows)}
        s = self.summary
        for row in rows:
            if row.key not in stored:  # another run judged it meanwhile, and its row is kept
                s.duplicates += 1
            elif row.status == "error":
                s.failed += 1
                stopped = s.stats.stopped
                if stopped and row.error and row.error.endswith(stopped):
                    s.breaker_stopped += 1
                elif len(s.errors) < _score.KEPT_ERRORS:
                    s.errors.append(row)
            elif row.value is not None and math.isnan(row.value):
                s.unscored += 1
                if len(s.errors) < _score.KEPT_ERRORS:
                    s.errors.append(row)
            else:
                s.scored += 1
            details = row.details or {}
            if row.key in stored and details.get("truncated"):
                s.truncated += 1
            if row.key in stored and details.get("video_warnings"):
                s.warned += 1
                seen = s.video_warnings.setdefault(row.item_id, [])
                seen.extend(w for w in details["video_warnings"] if w not in seen)
            if "agreement" in details:
                s.consistency.setdefault(row.metric.rpartition(":")[2], TurnAgreement()).add(details)
            if self.progress is not None:
                self.progress(row, s)

    async def run(
        self, interval: float = 0.25, on_failure: Callable[[StoreError], None] | None = None
    ) -> None:
        """Store what comes, until the store refuses a batch (a full disk): then note its error in
        :attr:`failed`, call ``on_failure`` with it (the runner stops sending) and end."""
        while True:
            await self.wake.wait()
            self.wake.clear()
            await asyncio.sleep(interval)  # let a burst of finished items share one transaction
            try:
                self.flush()
            except StoreError as exc:
                self.failed = exc
                if on_failure is not None:
                    on_failure(exc)
                return


def inputs_now(item: Item, rows: list[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    """``(to store, changed)``: an item's judged rows checked against its inputs as they are now
    (:func:`~robojudge.run._fingerprint.settle`): judgments of a video rewritten while it was judged are
    not stored, so the item stays to judge."""
    if not any(row.fingerprint for row in rows):
        return rows, []
    now = judge_inputs(item)
    settled = [(row, settle(row, now)) for row in rows]
    return [s for _, s in settled if s is not None], [row for row, s in settled if s is None]


def out_of_files_error(item: Item, exc: BaseException, code: int) -> OpenFilesError:
    """The error that stops a judge run when this machine runs out of file descriptors while judging
    ``item`` (``code``: EMFILE or ENFILE, from :func:`~robojudge.judges.out_of_files`). No row is stored
    for it, and it counts toward no endpoint's circuit breaker: the server is not at fault."""
    if code == errno.EMFILE:
        limit = open_files_limit()
        whose = "this process's limit on open files" + (f" ({limit}, `ulimit -n`)" if limit else "")
        fix = "raise `ulimit -n` or lower --concurrency"
    else:
        whose, fix = "the system's limit on open files", "close other programs or lower --concurrency"
    return OpenFilesError(
        f"{whose} was reached while judging item {item.item_id!r} ({exc}): the run stopped, nothing more was "
        f"sent, and the judgments that finished are stored; {fix}, then rerun the same command: it resumes"
    )


async def judge_one(
    item: Item,
    plans: tuple[JudgePlan, ...],
    prints: tuple[str, ...],
    engine: JudgeEngine,
    spec: FrameSpec,
    cache: ResponseCache,
    decoder: DecoderPool | None,
    *,
    in_process: Callable[[], AbstractContextManager[object]] | None = None,
    apart: DecoderPool | None = None,
) -> list[ResultRow]:
    """Judge one item with every plan; ``in_process`` and ``apart`` go to its
    :class:`~robojudge.judges.FrameLoader` (the crash guard of :func:`robojudge.run.judge_items`). A grid
    item is sent its main view's cell unless ``spec.grid_view`` is ``whole`` (:func:`judged_input`)."""
    quality = getattr(engine.backend, "frame_jpeg_quality", None)
    sent = judged_input(item, spec)
    frames = FrameLoader(
        item.video,
        spec,
        cache,
        decoder=decoder,
        jpeg_quality=quality if isinstance(quality, int) else None,
        before_decode=engine.start_backend,
        in_process=in_process,
        apart=apart,
        cell=sent.cell,
    )
    stopped = engine.not_sent_error()
    if stopped is not None and not frames.known():  # the breaker is open: decoding would be wasted
        return [error_row(item, p, stopped, fp) for p, fp in zip(plans, prints, strict=True)]
    try:
        await frames.prepare()
    except asyncio.CancelledError:
        frames.release()
        raise
    except Exception as exc:  # a decoder bug costs this item, not the run
        frames.release()
        if (code := out_of_files(exc)) is not None:  # this machine's limit: the run stops
            raise out_of_files_error(item, exc, code) from exc
        reason, where = ((f"video error: {exc}", None) if isinstance(exc, VideoError)
                         else _raised(engine, item, exc))
        return [error_row(item, p, reason, fp, where) for p, fp in zip(plans, prints, strict=True)]
    try:
        outcomes: list[RubricResult | BaseException]
        if frames.from_cache:  # replies most likely cached too: no tasks to schedule
            outcomes = [await _judged(engine, p.rubric, item.instruction, frames) for p in plans]
        else:  # the rubrics' requests go out together
            outcomes = list(await asyncio.gather(
                *(_judged(engine, p.rubric, item.instruction, frames) for p in plans)
            ))
    finally:
        frames.release()
    # what had to be assumed about the video, as `robojudge score` notes it ("<path>: <message>"), and
    # that it looks like several views tiled in one frame when the item declares no grid
    warnings = [f"{frames.path}: {w}" for w in frames.warnings]
    if item.grid is None and frames.tiling is not None:
        warnings.append(f"{frames.path}: {frames.tiling}")
    halt: tuple[OpenFilesError, BaseException] | None = None
    for out in outcomes:
        if isinstance(out, BaseException) and (code := out_of_files(out)) is not None:
            halt = out_of_files_error(item, out, code), out
            break
    rows = []
    for p, out, fp in zip(plans, outcomes, prints, strict=True):
        if isinstance(out, RubricResult):  # one rubric's failure leaves the item's others be
            rows.append(_row(item, p.for_result(out), out, fp, warnings, sent.details()))
        elif halt is not None:  # the run stops: the next one judges it again
            continue
        elif isinstance(out, VideoError):
            rows.append(error_row(item, p, f"video error: {out}", fp))
        else:
            reason, where = _raised(engine, item, out)
            rows.append(error_row(item, p, reason, fp, where))
    if halt is not None:  # the item's rubrics that finished are stored all the same (review rev9)
        halt[0].rows = rows
        raise halt[0] from halt[1]
    return rows


async def _judged(
    engine: JudgeEngine, rubric: Rubric, instruction: str | None, frames: FrameLoader
) -> RubricResult | Exception:
    """:meth:`JudgeEngine.judge`, with what it raises returned (a backend bug, a video that fails to
    load): it costs that rubric's row only."""
    try:
        return await engine.judge(rubric, instruction, frames)
    except Exception as exc:
        return exc
