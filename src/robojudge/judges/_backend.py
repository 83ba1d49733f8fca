"""The judge backend interface: one chat request in, one completion out.

A backend turns a :class:`ChatRequest` (system prompt, text and frames, decoding settings) into a
:class:`Completion` (text, optional token log-probabilities, token counts). Backends raise
:class:`TransientError` for what is worth retrying (429, 5xx, timeouts, dropped connections) and
:class:`BackendError` for what is not (bad request, authentication). Retrying, caching and parsing
happen above them, in the engine.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

from robojudge.judges._config import BACKEND_REGISTRY, JudgeConfig
from robojudge.registry import Registry
from robojudge.video import SampledFrames


class BackendError(Exception):
    """A request that failed for good (retrying would not help).

    Attributes:
        status: The HTTP status of the failed reply, when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientError(BackendError):
    """A request that may succeed if retried.

    Attributes:
        retry_after: Seconds the server asked us to wait (``Retry-After``), if it said.
    """

    def __init__(self, message: str, retry_after: float | None = None, *, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after



NOT_JSON_RETRIES = 2
"""Retries of a 200 reply that is not JSON (fewer than the judge's ``max_retries`` when that is lower)."""
NOT_JSON_MAX_BACKOFF_S = 1.0
"""Longest wait before such a retry (the judge's ``backoff_s`` doubling, capped here)."""


class NotJSONError(TransientError):
    """A 200 reply whose body is no JSON object at all: a proxy's or gateway's page, an empty body, an
    event stream nobody asked for. One such reply may be a gateway warming up, so it is retried, but
    at most :data:`NOT_JSON_RETRIES` times and after at most :data:`NOT_JSON_MAX_BACKOFF_S` seconds: an
    endpoint that always answers so fails each item within seconds. Its attempts do not count toward
    the circuit breaker one by one; an item whose attempts all end on such a reply counts once."""

_OUT_OF_FILES = (errno.EMFILE, errno.ENFILE)
_OUT_OF_FILES_TEXT = tuple(f"[Errno {code}]" for code in _OUT_OF_FILES)


def out_of_files(error: BaseException) -> int | None:
    """``EMFILE`` (this process's ``ulimit -n`` is reached) or ``ENFILE`` (the system's) when ``error``,
    or an exception it was raised from, says this machine ran out of file descriptors; else ``None``.

    Such a failure is this machine's, not the judge's: it must neither count toward an endpoint's circuit
    breaker nor become an item's error row (the runner stops instead). An error that crossed a process
    boundary (a decoder process) keeps only its text, so ``[Errno 24]`` in the text counts too.
    """
    seen: set[int] = set()
    exc: BaseException | None = error
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_FILES:
            return exc.errno
        text = str(exc)
        for code, mark in zip(_OUT_OF_FILES, _OUT_OF_FILES_TEXT, strict=True):
            if mark in text:
                return code
        exc = exc.__cause__ or exc.__context__
    return None


def parse_retry_after(value: str | None, date: str | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds (fractions accepted) or an HTTP date.

    A date is measured from the response's own ``Date`` header, ``date``, when it has a readable one
    (RFC 9110: the server's clock against itself, so a server clock minutes off from this one does not
    turn a 2 s wait into minutes, or none); else from the local clock. Waits longer than a judge's
    ``max_retry_after_s`` fail the request, whichever form they came in.
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    when = _http_date(value)
    if when is None:
        return None
    sent = _http_date(date) if date else None
    return max(0.0, when - (sent if sent is not None else time.time()))


def _http_date(value: str) -> float | None:
    """An HTTP date as a POSIX time; None when unreadable. A date without a zone is GMT, as HTTP's are."""
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp()


@dataclass(frozen=True)
class ChatRequest:
    """One request to a judge.

    Attributes:
        system: System prompt.
        user: User prompt text (shown before the frames).
        frames: The video frames (RGB), or ``None`` for a text-only request. Their pixels may
            have been dropped after JPEG encoding (see :class:`Backend`).
        first_frame_label: Text placed right before the first frame (IA's conditioning frame).
        history: Earlier turns after the first user message, as ``(role, text)`` pairs; the
            repair retry adds the invalid reply and the correction request here.
        temperature: Sampling temperature (0 = greedy).
        top_p: Nucleus sampling, or ``None`` for the backend default.
        seed: Sampling seed where the backend supports one.
        max_tokens: Most tokens to generate.
        logprobs: Ask for token log-probabilities.
        top_logprobs: Alternatives per token when ``logprobs``.
        draw: Which of several sampled turns this is, when no ``seed`` tells them apart (``None``
            otherwise): two turns at the same settings would have one cache key, so the cache (and
            an identical request in flight) would hand every turn the first turn's reply.
    """

    system: str
    user: str
    frames: SampledFrames | None
    first_frame_label: str | None = None
    history: tuple[tuple[str, str], ...] = ()
    temperature: float = 0.0
    top_p: float | None = None
    seed: int | None = 0
    max_tokens: int = 1024
    logprobs: bool = False
    top_logprobs: int = 0
    draw: int | None = None

    def sampling_key(self) -> dict[str, Any]:
        """The decoding settings, for cache keys (``draw`` only where set: the keys of every other
        request are what they always were)."""
        key: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "logprobs": self.logprobs,
            "top_logprobs": self.top_logprobs if self.logprobs else 0,
        }
        if self.draw is not None:
            key["draw"] = self.draw
        return key

    def sampling_key_tuple(self) -> tuple[Any, ...]:
        """:meth:`sampling_key`'s values, in its order (a hashable stand-in for it)."""
        return (
            self.temperature,
            self.top_p,
            self.seed,
            self.max_tokens,
            self.logprobs,
            self.top_logprobs if self.logprobs else 0,
            self.draw,
        )


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability and the most likely alternatives at its position."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """What a backend returned.

    Attributes:
        text: The reply text.
        logprobs: Per-token log-probabilities, when asked for and supported.
        prompt_tokens: Input tokens, when reported.
        completion_tokens: Output tokens, when reported.
        latency_s: Wall time of the (last, successful) request.
        meta: Small JSON-able facts about the response (id, model, finish reason, images sent).
    """

    text: str
    logprobs: tuple[TokenLogprob, ...] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "logprobs": None
            if self.logprobs is None
            else [[t.token, t.logprob, [list(a) for a in t.top]] for t in self.logprobs],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Completion:
        lp = data.get("logprobs")
        return cls(
            text=str(data.get("text", "")),
            logprobs=None
            if lp is None
            else tuple(
                TokenLogprob(str(t), float(p), tuple((str(a), float(b)) for a, b in top)) for t, p, top in lp
            ),
            prompt_tokens=data.get("prompt_tokens"),
            completion_tokens=data.get("completion_tokens"),
            latency_s=float(data.get("latency_s") or 0.0),
            meta=dict(data.get("meta") or {}),
        )


class Backend(Protocol):
    """What the engine needs from a backend.

    A backend that sends frames as JPEGs may also have an attribute ``frame_jpeg_quality: int``:
    the runner then encodes frames at that quality while decoding them (in decoder processes) and
    may drop the pixels, so the backend must read them through ``SampledFrames.jpeg(quality)`` or
    ``SampledFrames.data_urls(quality)``, not ``SampledFrames.frames``.

    A backend whose requests may be cancelled at any ``await`` (an HTTP client; not a model
    generating in a thread) sets ``interruptible = True``: the engine then cuts an attempt at the
    request's remaining ``deadline_s``. Others are only stopped between attempts.
    """

    name: str
    supports_logprobs: bool

    async def complete(self, request: ChatRequest) -> Completion:
        """Send one request; raise :class:`TransientError` or :class:`BackendError` on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections, models and the like."""
        ...


BackendFactory = Callable[[JudgeConfig], Backend]


# The built-in backends register themselves from the modules robojudge.registry.BUILTIN_MODULES lists.
# The registry itself lives with the configs, which check a backend's name when they are read.
BACKENDS: Registry[BackendFactory] = BACKEND_REGISTRY
"""Backend factories by name: ``openai``, ``hf``, ``mock``; plugins call ``BACKENDS.add``."""
