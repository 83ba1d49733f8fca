"""Judging one item under one rubric: cache, bounded concurrency, retries, parsing, repair, votes."""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from robojudge._raised import raised_reason, raised_traceback
from robojudge.judges._backend import (
    NOT_JSON_MAX_BACKOFF_S,
    NOT_JSON_RETRIES,
    Backend,
    BackendError,
    ChatRequest,
    Completion,
    NotJSONError,
    TransientError,
    out_of_files,
)
from robojudge.judges._breaker import CircuitBreaker
from robojudge.judges._cache import ResponseCache
from robojudge.judges._config import JudgeConfig
from robojudge.judges._frames import FrameLoader
from robojudge.judges._parse import ParseResult, answer_is_final, parse_reply
from robojudge.judges._rubric import Rubric
from robojudge.judges._scoring import (
    EXPECTED_FALLBACK,
    Scoring,
    answered_agreement,
    expected_score,
    majority_vote,
)
from robojudge.judges._secrets import Redactor
from robojudge.video import SampledFrames, VideoError

RAW_LIMIT = 20_000
"""Longest raw reply (and reasoning, and text answer) kept in a result row, in characters."""

_log = logging.getLogger("robojudge.judges")

_USED_KEYS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("_USED_KEYS", default=None)
"""The cache keys of the replies the judgment being made has used (see :meth:`JudgeEngine.judge`)."""


@dataclass
class JudgeStats:
    """Live counters of one judge's run (for the progress bar and the end-of-run report)."""

    in_flight: int = 0
    sent: int = 0
    """Attempts sent to the backend, retries included (one that failed to connect too)."""
    answered: int = 0
    """Requests that got a reply (cached afterwards)."""
    failed_attempts: int = 0
    """Attempts that got no usable reply (an error status, a timeout, a dropped connection...)."""
    cache_hits: int = 0
    """Replies read from the cache, or shared with an identical request in flight."""
    shared: int = 0
    """Of ``cache_hits``: replies of an identical request that was in flight, waited for."""
    retries: int = 0
    """Of ``sent``: attempts after the first of a request."""
    repairs: int = 0
    parse_failures: int = 0
    judged: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    request_seconds: float = 0.0
    video_seconds: float = 0.0
    stopped: str | None = None
    """Why the circuit breaker stopped sending (``None`` while it has not)."""

    @property
    def parse_failure_rate(self) -> float:
        """Unscored (item, rubric) pairs over all judged pairs."""
        return self.parse_failures / self.judged if self.judged else 0.0


@dataclass
class RubricResult:
    """The outcome of one (item, rubric) judgment, ready to become a stored row."""

    rubric: Rubric
    status: Literal["ok", "error"]
    value: float | None
    error: str | None
    duration_s: float
    details: dict[str, Any] = field(default_factory=dict)


def _clip(text: str) -> str:
    return (
        text
        if len(text) <= RAW_LIMIT
        else text[:RAW_LIMIT] + f"... [{len(text) - RAW_LIMIT} more characters]"
    )


class JudgeEngine:
    """Sends a judge's requests and turns replies into scores.

    Args:
        config: The judge.
        backend: Its backend.
        cache: The response cache (may be disabled).
        scoring: ``argmax`` or ``expected`` (for score rubrics; others are always ``argmax``).
        samples: Turns per (item, rubric); more than one means self-consistency voting.
        reask_unparsable: A cached reply that cannot be parsed is asked for again, past the cache
            (``--retry-errors``: otherwise re-asking an unscored judgment would replay its reply).
    """

    def __init__(
        self,
        config: JudgeConfig,
        backend: Backend,
        cache: ResponseCache,
        *,
        scoring: Scoring = Scoring.argmax,
        samples: int = 1,
        reask_unparsable: bool = False,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.config = config
        self.backend = backend
        self.cache = cache
        self.scoring = Scoring(scoring)
        self.samples = samples
        self.reask_unparsable = reask_unparsable
        self.stats = JudgeStats()
        self._sem = asyncio.Semaphore(config.concurrency)
        self._rng = random.Random()
        self._opened: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._started = False
        self._key_pieces: dict[tuple[str, ...], tuple[str, str, str, str]] = {}
        self._sampling_canon: dict[tuple[Any, ...], str] = {}
        self._in_flight: dict[str, asyncio.Future[Completion]] = {}
        self.redact = Redactor.for_judge(config)
        """Masks the judge's credentials in replies and messages before they are cached or stored."""
        if config.endpoints:  # each endpoint has its own breaker in the fleet; this one sees the whole
            target = f"every endpoint of judge {config.name!r}"
        else:
            target = config.base_url or f"the {config.backend} backend of judge {config.name!r}"
        self.breaker = CircuitBreaker(config.circuit_breaker, target, self.redact.text)

    def start_backend(self) -> None:
        """Call the backend's optional ``start()`` once (the runner does, on the first cache miss).

        Backends import their HTTP client or load their model there; doing it before videos are
        decoded in threads keeps those imports from competing with decoding for the GIL.
        """
        if not self._started:
            self._started = True
            start = getattr(self.backend, "start", None)
            if callable(start):
                start()

    # -- requests ----------------------------------------------------------------------------------

    def temperature(self) -> float:
        """The temperature used: the configured one, or ``sample_temperature`` when voting at 0."""
        s = self.config.sampling
        return s.sample_temperature if self.samples > 1 and s.temperature == 0 else s.temperature

    def _cache_key(self, request: ChatRequest, frames: FrameLoader | None, rubric: Rubric) -> str:
        """SHA-256 of the canonical JSON (sorted keys, no spaces) of everything that decides a reply:
        judge identity, rubric, frame hashes, prompts, first-frame label, history and sampling.

        The JSON is assembled from pieces, each written with the same settings as a whole-object
        ``json.dumps(..., sort_keys=True)`` would write it, so the text (and so every stored key)
        is exactly that; the long, repeated pieces (judge identity, prompts) are written once.
        """
        fixed = self._key_pieces.get((rubric.id, rubric.version, rubric.digest, request.system, request.user))
        if fixed is None:
            fixed = (
                _canon(self.config.identity()),
                _canon([rubric.id, rubric.version, rubric.digest]),
                _canon(request.system),
                _canon(request.user),
            )
            if len(self._key_pieces) > 4096:  # one entry per (rubric, instruction): keep it bounded
                self._key_pieces.clear()
            self._key_pieces[(rubric.id, rubric.version, rubric.digest, request.system, request.user)] = fixed
        judge, rub, system, user = fixed
        sampling = self._sampling_canon.get(request.sampling_key_tuple())
        if sampling is None:
            sampling = self._sampling_canon[request.sampling_key_tuple()] = _canon(request.sampling_key())
        history = _canon(request.history) if request.history else "[]"
        canon = (
            f'{{"frames":{frames.hashes_json() if frames is not None else "null"}'
            f',"history":{history},"judge":{judge},"label":{_canon(request.first_frame_label)}'
            f',"rubric":{rub},"sampling":{sampling},"system":{system},"user":{user}}}'
        )
        return hashlib.sha256(canon.encode()).hexdigest()

    def not_sent_error(self) -> str | None:
        """The error of a request that will not be sent because the breaker is open, else ``None``."""
        return None if self.breaker.message is None else f"request failed: {self.breaker.message}"

    def stop(self, reason: str) -> None:
        """Send nothing more: requests not sent yet fail at once with ``reason``, and those in flight
        still get their replies (and cache them). The runner calls it when its store takes no more rows."""
        self.breaker.open(reason)
        if self._opened is not None:
            self._opened[1].set()

    def _failed(self, error: BaseException) -> None:
        if self.breaker.failure(error):
            self.stats.stopped = self.breaker.message
            _log.warning("judge %s: %s", self.config.name, self.breaker.message)
            if self._opened is not None:
                self._opened[1].set()

    def _gave_up(self, message: str, not_json: bool) -> BackendError:
        """The error of a request that ran out of attempts. One whose last reply was a 200 page that is
        not JSON counts once toward the breaker here (its attempts did not, one by one): an endpoint
        that always answers so opens it after ``circuit_breaker`` items, a single page costs nothing."""
        error = BackendError(message)
        if not_json:
            self._failed(error)
        return error

    async def _wait_before_retry(self, delay: float) -> None:
        """Sleep ``delay`` seconds, or less when the breaker opens meanwhile: the retry would not be
        sent, and its item's error row need not wait (a fleet's wait for a probe may be minutes)."""
        loop = asyncio.get_running_loop()
        if self._opened is None or self._opened[0] is not loop:
            self._opened = (loop, asyncio.Event())
        if self.breaker.message is not None:
            return
        try:
            async with asyncio.timeout(delay):
                await self._opened[1].wait()
        except TimeoutError:
            pass

    async def _attempt(self, request: ChatRequest, budget: float) -> Completion:
        """One attempt, cut at ``budget`` seconds when that is shorter than the backend's own timeout
        and the backend may be interrupted (not ``hf``: its generation thread would run on)."""
        if budget >= self.config.timeout_s or not getattr(self.backend, "interruptible", False):
            return await self.backend.complete(request)
        try:
            async with asyncio.timeout(budget):
                return await self.backend.complete(request)
        except TimeoutError:
            raise TransientError(f"no reply within the {self.config.deadline_s:g} s deadline") from None

    async def _send_once_with_retries(self, request: ChatRequest) -> tuple[Completion, int]:
        """Send with retries until a reply, a permanent error, ``max_retries`` or ``deadline_s``.

        The deadline counts time spent in attempts and in the waits between them, not time queued
        for a free connection behind other requests. A ``Retry-After`` is waited for in full, up to
        ``max_retry_after_s``; a server asking for longer fails the request at once.
        """
        cfg = self.config
        deadline = cfg.deadline_s
        spent = 0.0
        attempt = 0
        while True:
            async with self._sem:
                self.breaker.check()
                self.stats.in_flight += 1
                self.stats.sent += 1  # counted when made: a retry the breaker stops is not sent
                if attempt:
                    self.stats.retries += 1
                started = time.perf_counter()
                try:
                    completion = await self._attempt(request, deadline - spent)
                except TransientError as exc:
                    error = exc
                except BackendError as exc:
                    self.stats.failed_attempts += 1
                    self._failed(exc)
                    raise
                else:
                    self.breaker.success()
                    return completion, attempt + 1
                finally:
                    self.stats.in_flight -= 1
                    spent += time.perf_counter() - started
            self.stats.failed_attempts += 1
            self._failed(error)
            not_json = isinstance(error, NotJSONError)
            if attempt >= (min(cfg.max_retries, NOT_JSON_RETRIES) if not_json else cfg.max_retries):
                raise self._gave_up(f"gave up after {attempt + 1} attempts: {error}", not_json)
            asked = error.retry_after
            if asked is not None and asked > cfg.max_retry_after_s:
                raise BackendError(
                    f"gave up after {attempt + 1} attempts: the server asked to wait {asked:g} s "
                    f"(Retry-After), more than max_retry_after_s = {cfg.max_retry_after_s:g} s: {error}"
                )
            if asked is not None:  # at least as long as asked, whatever max_backoff_s says
                delay = asked * self._rng.uniform(1.0, 1.1)
            else:
                longest = min(cfg.max_backoff_s, NOT_JSON_MAX_BACKOFF_S) if not_json else cfg.max_backoff_s
                delay = min(cfg.backoff_s * (2**attempt) * self._rng.uniform(0.5, 1.0), longest)
            if spent + delay >= deadline:
                wait = "" if asked is None else f", and the {asked:g} s Retry-After asks for would pass it"
                raise self._gave_up(
                    f"gave up after {attempt + 1} attempts, {spent:.1f} s of the {deadline:g} s "
                    f"deadline spent{wait}: {error}",
                    not_json,
                )
            attempt += 1
            await self._wait_before_retry(delay)
            spent += delay

    async def send(
        self,
        request: ChatRequest,
        frames: FrameLoader | None,
        rubric: Rubric,
        *,
        refresh: bool = False,
        usable: Callable[[Completion], bool] | None = None,
    ) -> tuple[Completion, dict[str, Any]]:
        """One request through the cache; returns the completion and facts for the row.

        With ``refresh`` the cache is not read, and the reply replaces the cached one; with
        ``usable``, a cached reply it rejects is asked for again the same way (and is not counted
        as a cache hit). An identical request already in flight (another item with the same video
        and prompt) is not sent twice: this one waits for its reply, which counts as a cache hit.
        """
        key = self._cache_key(request, frames, rubric)
        used = _USED_KEYS.get()
        if used is not None:
            used.append(key)
        if not refresh:
            cached = self.cache.get_reply(key)
            if cached is not None:
                # masked again: a cache written before masking existed may hold a quoted key
                cached = self.redact.completion(cached)
                if usable is None or usable(cached):
                    self.stats.cache_hits += 1
                    return cached, {"cached": True, "attempts": 0}
        while (pending := self._in_flight.get(key)) is not None:
            try:
                shared = await asyncio.shield(pending)
            except asyncio.CancelledError:
                if pending.cancelled():  # its sender was stopped, not this one: send it here
                    continue
                raise
            self.stats.cache_hits += 1
            self.stats.shared += 1
            return shared, {"cached": True, "attempts": 0, "shared": True}
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            self.breaker.check()  # before decoding frames that would never be sent
            if frames is not None and request.frames is None:
                request = _with_frames(request, await frames.load())
            completion, attempts = await self._send_once_with_retries(request)
            completion = self.redact.completion(completion)
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody may be waiting, and that is no reason to log it
            raise
        except BaseException:
            future.cancel()
            raise
        else:
            future.set_result(completion)
        finally:
            if self._in_flight.get(key) is future:
                del self._in_flight[key]
        self.stats.answered += 1
        self.stats.request_seconds += completion.latency_s
        self.stats.prompt_tokens += completion.prompt_tokens or 0
        self.stats.completion_tokens += completion.completion_tokens or 0
        if self.config.prices is not None:
            self.stats.cost_usd += self.config.prices.cost(
                completion.prompt_tokens, completion.completion_tokens
            )
        self.cache.put_reply(key, completion)
        return completion, {"cached": False, "attempts": attempts}

    # -- one turn ----------------------------------------------------------------------------------

    def uses_expected(self, rubric: Rubric) -> bool:
        """Whether this rubric is scored ``expected`` (only score rubrics can be)."""
        return self.scoring is Scoring.expected and rubric.kind == "score"

    async def _ask(
        self, request: ChatRequest, frames: FrameLoader | None, rubric: Rubric
    ) -> tuple[Completion, dict[str, Any], ParseResult]:
        if not self.reask_unparsable:
            completion, facts = await self.send(request, frames, rubric)
            return completion, facts, read_reply(completion, rubric)
        seen: list[tuple[Completion, ParseResult]] = []

        def parses(cached: Completion) -> bool:  # a cached reply that does not parse is asked again
            seen.append((cached, read_reply(cached, rubric)))
            return seen[-1][1].ok

        completion, facts = await self.send(request, frames, rubric, usable=parses)
        if seen and seen[-1][0] is completion:  # the cached reply, read already
            return completion, facts, seen[-1][1]
        return completion, facts, read_reply(completion, rubric)

    async def _turn(
        self, rubric: Rubric, system: str, user: str, frames: FrameLoader | None, turn: int
    ) -> dict[str, Any]:
        s = self.config.sampling
        base = ChatRequest(
            system=system,
            user=user,
            frames=None,
            first_frame_label=rubric.first_frame_label,
            temperature=self.temperature(),
            top_p=s.top_p,
            seed=None if s.seed is None else s.seed + turn,
            draw=turn if s.seed is None and self.samples > 1 else None,
            max_tokens=s.max_tokens,
            logprobs=self.uses_expected(rubric) and self.backend.supports_logprobs,
            top_logprobs=self.config.top_logprobs,
        )
        completion, facts, parsed = await self._ask(base, frames, rubric)
        replies = [completion]
        status = "ok"
        if not parsed.ok:
            self.stats.repairs += 1
            repair = _repair_request(base, completion.text, parsed, rubric)
            first_error = parsed.error
            completion, facts2, parsed = await self._ask(repair, frames, rubric)
            replies.append(completion)
            facts = {
                "cached": facts["cached"] and facts2["cached"],
                "attempts": facts["attempts"] + facts2["attempts"],
            }
            status = "repaired" if parsed.ok else "failed"
            if not parsed.ok:
                parsed = ParseResult(
                    None, parsed.reasoning, f"{first_error}; after repair: {parsed.error}", parsed.obj
                )
        out: dict[str, Any] = {
            "score": parsed.score,
            "parse_status": status,
            "error": None if parsed.error is None else _clip(parsed.error),
            "reasoning": None if parsed.reasoning is None else _clip(parsed.reasoning),
            "parts": parsed.parts,
            "raw": [_clip(c.text) for c in replies],
            "latency_s": sum(c.latency_s for c in replies),
            "prompt_tokens": sum(c.prompt_tokens or 0 for c in replies),
            "completion_tokens": sum(c.completion_tokens or 0 for c in replies),
            "response": {k: v for k, v in completion.meta.items() if v is not None},
            **facts,
        }
        if any(cut_off(c) for c in replies):
            out["truncated"] = True
        if self.uses_expected(rubric) and parsed.ok:
            exp = (
                expected_score(completion.text, completion.logprobs, rubric, parsed.score)
                if completion.logprobs
                else None
            )
            out["expected"] = None if exp is None else exp[0]
            out["probs"] = None if exp is None else exp[1]
        return out

    # -- one (item, rubric) ------------------------------------------------------------------------

    async def judge(
        self, rubric: Rubric, instruction: str | None, frames: FrameLoader | None
    ) -> RubricResult:
        """Judge one item under one rubric; transport failures become error results, never raise."""
        start = time.perf_counter()
        try:
            system, user = rubric.render(instruction)
        except ValueError as exc:
            return RubricResult(rubric, "error", None, str(exc), 0.0)
        used: list[str] = []
        token = _USED_KEYS.set(used)
        try:
            if self.samples == 1:  # no task to schedule for the common case
                turns = [await self._turn(rubric, system, user, frames, 0)]
            else:
                done = await asyncio.gather(
                    *(self._turn(rubric, system, user, frames, t) for t in range(self.samples)),
                    return_exceptions=True,
                )
                return self._combine_answered(rubric, done, frames, time.perf_counter() - start)
            return self._combine(rubric, list(turns), frames, time.perf_counter() - start)
        except BackendError as exc:
            message = f"request failed: {self.redact.message(exc)}"
            return RubricResult(rubric, "error", None, message, time.perf_counter() - start)
        except (VideoError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a reply that trips a bug: this judgment fails, not the item's others
            if out_of_files(exc) is not None:  # this machine's limit: the runner stops (no error row)
                raise
            # The replies that led here are dropped from the cache, so that --retry-errors asks
            # again instead of replaying them into the same error.
            for key in used:
                self.cache.forget_reply(key)
            message = f"judge raised {self.redact.text(raised_reason(exc))}"
            _log.warning("judge %s: rubric %s: %s", self.config.name, rubric.id, message)
            # Where it was raised, secrets masked as in the message: in the row's details, and under -v here
            where = raised_traceback(exc, mask=self.redact.text)
            _log.debug("judge %s: rubric %s: %s", self.config.name, rubric.id, where)
            return RubricResult(rubric, "error", None, _clip(message), time.perf_counter() - start,
                                {"traceback": where})
        finally:
            _USED_KEYS.reset(token)

    def _combine_answered(
        self,
        rubric: Rubric,
        done: list[dict[str, Any] | BaseException],
        frames: FrameLoader | None,
        seconds: float,
    ) -> RubricResult:
        """The voted result of turns some of whose requests may have failed.

        A turn whose request failed (:class:`BackendError`) counts like an unparsable one, a turn
        without a score, as long as most of the turns asked got a reply: the vote is over the turns
        that scored, ``details.failed_turns`` names the failed ones and their records say why. With
        half of the turns or fewer answered the judgment is an error row (``--retry-errors`` asks it
        again, the answered turns from the cache), which keeps the answered turns' records. Any other
        exception is raised, as without voting.
        """
        for outcome in done:
            if isinstance(outcome, BaseException) and not isinstance(outcome, BackendError):
                raise outcome
        turns: list[dict[str, Any]] = []
        failed: list[int] = []
        for turn, outcome in enumerate(done):
            if isinstance(outcome, BaseException):
                failed.append(turn)
                turns.append(_failed_turn(turn, f"request failed: {self.redact.message(outcome)}"))
            else:
                turns.append(outcome)
        if not failed:
            return self._combine(rubric, turns, frames, seconds)
        answered = len(turns) - len(failed)
        if 2 * answered <= len(turns):
            which = ", ".join(str(t + 1) for t in failed)
            first = turns[failed[0]]["error"]
            message = (f"request failed for turn {which} of {len(turns)} ({answered} answered, no majority "
                       f"of the turns to vote over): {first.removeprefix('request failed: ')}")
            details = {"samples": self.samples, "turns": turns, "n_turns": len(turns),
                       "failed_turns": [t + 1 for t in failed]}
            return RubricResult(rubric, "error", None, _clip(message), seconds, details)
        result = self._combine(rubric, turns, frames, seconds)
        result.details["failed_turns"] = [t + 1 for t in failed]
        if "agreement" in result.details:  # a transport error is no disagreement: over the turns answered
            result.details["agreement"] = answered_agreement(result.details)
            result.details["answered_turns"] = answered
        return result

    def _combine(
        self, rubric: Rubric, turns: list[dict[str, Any]], frames: FrameLoader | None, seconds: float
    ) -> RubricResult:
        scores: list[float | None] = [t["score"] for t in turns]
        vote = majority_vote(scores)
        # What the row shows beside the voted score comes from turns that gave it (the first such turn),
        # so the reasoning never argues for a score that lost the vote.
        told = turns if vote is None else [t for t in turns if t["score"] == vote.value]
        details: dict[str, Any] = {
            "judge": self.config.name,
            "backend": self.config.backend,
            "model": self.config.model,
            "rubric": rubric.id,
            "rubric_version": rubric.version,
            "scoring": self.scoring.value,
            "samples": self.samples,
            "reasoning": next((t["reasoning"] for t in told if t["reasoning"]), None),
            "turns": turns,
        }
        if rubric.taxonomy:
            details["taxonomy_id"] = rubric.taxonomy
        if rubric.kind != "score":
            details["kind"] = rubric.kind
            parts = next((t["parts"] for t in told if t.get("parts")), None)
            if rubric.kind == "text" and parts is not None:
                details["text"] = _clip(str(parts["text"]))
            elif parts is not None:
                details["parts"] = parts
        if any(t.get("truncated") for t in turns):
            details["truncated"] = True
        latency = sum(t["latency_s"] for t in turns)
        prompt = sum(t["prompt_tokens"] for t in turns)
        completion = sum(t["completion_tokens"] for t in turns)
        details.update(
            latency_s=latency,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached=all(t["cached"] for t in turns),
        )
        if self.config.prices is not None:
            details["cost_usd"] = self.config.prices.cost(prompt, completion)
        if frames is not None and frames.video_seconds > 0:
            details["video_seconds"] = frames.video_seconds
            details["latency_per_video_s"] = latency / frames.video_seconds
            self.stats.video_seconds += frames.video_seconds
        self.stats.judged += 1
        if vote is None:
            self.stats.parse_failures += 1
            details["parse_status"] = "failed"
            errors = _clip("; ".join(dict.fromkeys(str(t["error"]) for t in turns)))
            return RubricResult(rubric, "ok", math.nan, f"unscored: {errors}", seconds, details)
        details["parse_status"] = "repaired" if any(t["parse_status"] == "repaired" for t in turns) else "ok"
        value = vote.value
        if self.samples > 1:
            details.update(vote.details())
        mode = Scoring.argmax
        if self.uses_expected(rubric):
            # One mode per row: a value mixing expected and argmax turns would be neither.
            scored = [t for t in turns if t["score"] is not None]
            expected = [float(t["expected"]) for t in scored if t.get("expected") is not None]
            if len(expected) == len(scored):
                value = sum(expected) / len(expected)
                details["argmax"] = vote.value
                mode = Scoring.expected
            else:
                missing = len(scored) - len(expected)
                details["expected_unavailable"] = (
                    f"{EXPECTED_FALLBACK} ({missing} of {len(scored)} scored turns); argmax used"
                )
        details["scoring_mode"] = mode.value
        return RubricResult(rubric, "ok", float(value), None, seconds, details)


CUT_OFF = 'cut off at the token limit (finish_reason "length"; raise sampling.max_tokens)'
"""Said of a reply the server stopped at ``max_tokens``: thinking models need room for their thoughts."""


def cut_off(completion: Completion) -> bool:
    """Whether the server says it stopped the reply at the token limit."""
    return completion.meta.get("finish_reason") == "length"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def read_reply(completion: Completion, rubric: Rubric) -> ParseResult:
    """:func:`parse_reply` on the reply's text, and what only the whole completion tells.

    A reply cut off at the token limit is usable only when it still holds its final answer (see
    :func:`answer_is_final`): a score written inside a sentence before the cut (in untagged thinking,
    or a first draft) may be one the model was revising. An empty
    reply that holds a refusal or a tool call instead of text says so, with that text.
    """
    text = completion.text
    if not text.strip():
        refusal = completion.meta.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            return ParseResult(None, error=f"the model refused: {_short(refusal)}")
        calls = completion.meta.get("tool_calls")
        if isinstance(calls, str) and calls.strip():
            return ParseResult(None, error=f"the reply is a tool call, not text: {_short(calls)}")
    parsed = parse_reply(text, rubric)
    if not cut_off(completion):
        return parsed
    if parsed.ok and not answer_is_final(text, rubric):
        return ParseResult(None, error=f"the reply was {CUT_OFF} before its final JSON answer")
    if not parsed.ok:
        return ParseResult(None, parsed.reasoning, f"{parsed.error} (the reply was {CUT_OFF})", parsed.obj)
    return parsed


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _failed_turn(turn: int, error: str) -> dict[str, Any]:
    """The record of a voting turn whose request failed: no reply, no score, the error."""
    return {
        "score": None,
        "parse_status": "request failed",
        "error": _clip(error),
        "reasoning": None,
        "parts": None,
        "raw": [],
        "latency_s": 0.0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "response": {},
        "cached": False,
        "attempts": 0,
        "turn": turn + 1,
    }


def _with_frames(request: ChatRequest, frames: SampledFrames) -> ChatRequest:
    from dataclasses import replace

    return replace(request, frames=frames)


def _repair_request(base: ChatRequest, reply: str, parsed: ParseResult, rubric: Rubric) -> ChatRequest:
    from dataclasses import replace

    note = (
        f"Your reply could not be used: {parsed.error}. Answer again with one JSON object and nothing "
        f"else, exactly of the form {rubric.example_json()}, where {rubric.answer_rule()}."
    )
    return replace(base, history=(("assistant", _clip(reply)), ("user", note)))
