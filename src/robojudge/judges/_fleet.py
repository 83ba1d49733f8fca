"""A judge fleet: one judge served by several endpoints (``endpoints`` in its config).

Requests go to the healthy endpoint with the fewest outstanding requests for its weight
(``(outstanding + 1) / weight``, ties to the one that has had fewer requests), never more at once
than that endpoint's concurrency. A request that fails on an endpoint -- no reply, a 5xx, a 429, a
status saying the key or URL is wrong there -- is sent at once to another endpoint it has not tried;
only when every usable endpoint failed it does the error reach the engine, which backs off and
retries as for one server. A request failure (400, a malformed reply) is returned as is: another
server would answer the same.

Each endpoint has its own :class:`~robojudge.judges._breaker.CircuitBreaker` (the judge's
``circuit_breaker`` threshold): one that fails that many attempts in a row is taken out, and after
``probe_after_s`` one request probes it; a reply puts it back, a failure keeps it out twice as long.
Which endpoint answered never enters the cache key: the judge's identity has no URL.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from robojudge.judges._backend import BACKENDS, Backend, BackendError, ChatRequest, Completion, TransientError
from robojudge.judges._breaker import CircuitBreaker, endpoint_failure
from robojudge.judges._config import Endpoint, JudgeConfig, JudgeConfigError
from robojudge.judges._secrets import Redactor

_log = logging.getLogger("robojudge.judges")


@dataclass
class Member:
    """One endpoint of the fleet and its counters.

    Attributes:
        index: Position in the judge's ``endpoints``.
        endpoint: Its declaration.
        backend: The backend that talks to it.
        breaker: Its health.
        outstanding: Requests in flight to it now.
        sent: Attempts sent to it.
        ok: Attempts it answered.
        failed: Attempts that failed there.
    """

    index: int
    endpoint: Endpoint
    backend: Backend
    breaker: CircuitBreaker
    outstanding: int = 0
    sent: int = 0
    ok: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def usable(self) -> bool:
        """Whether a request may be sent here now (healthy, or due for its probe)."""
        return self.breaker.message is None or self.breaker.probe_due()

    def has_room(self) -> bool:
        return self.outstanding < self.endpoint.concurrency

    def load(self) -> tuple[float, float, int]:
        """Sort key: least outstanding for its weight, then fewest sent for its weight."""
        w = self.endpoint.weight
        return ((self.outstanding + 1) / w, self.sent / w, self.index)


def retry_elsewhere(error: BaseException) -> bool:
    """Whether a failed attempt is worth sending to another endpoint."""
    status = error.status if isinstance(error, BackendError) else None
    return endpoint_failure(error) or status == 429


class FleetBackend:
    """Balances one judge's requests over its endpoints (see the module docstring).

    Args:
        config: A judge with ``endpoints``.
        factory: Builds the backend of one endpoint from the judge's config with that endpoint's
            ``base_url`` and ``concurrency`` (default: the backend the judge names).
        clock: Monotonic seconds, for the breakers (tests pass their own).
    """

    interruptible = True

    def __init__(
        self,
        config: JudgeConfig,
        factory: Callable[[JudgeConfig], Backend] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not config.endpoints:
            raise ValueError(f"judge {config.name!r}: a fleet needs endpoints")
        self.config = config
        self.name = config.backend
        make = factory or BACKENDS.get(config.backend)
        mask = Redactor.for_judge(config).text
        self.members: list[Member] = []
        for i, ep in enumerate(config.endpoints):
            one = config.model_copy(
                update={"base_url": ep.base_url, "concurrency": ep.concurrency, "endpoints": ()}
            )
            breaker = CircuitBreaker(
                config.circuit_breaker, ep.base_url, mask, probe_after_s=config.probe_after_s, clock=clock
            )
            self.members.append(Member(i, ep, make(one), breaker))
        first = self.members[0].backend
        self.supports_logprobs = bool(getattr(first, "supports_logprobs", False))
        self.interruptible = all(getattr(m.backend, "interruptible", False) for m in self.members)
        quality = getattr(first, "frame_jpeg_quality", None)
        if quality is not None:
            self.frame_jpeg_quality = int(quality)
        self._clock = clock
        self._changed: tuple[asyncio.AbstractEventLoop, asyncio.Condition] | None = None

    def start(self) -> None:
        for m in self.members:
            start = getattr(m.backend, "start", None)
            if callable(start):
                start()

    def _condition(self) -> asyncio.Condition:
        # one per event loop: a backend handed to several runs meets a new loop in each
        loop = asyncio.get_running_loop()
        if self._changed is None or self._changed[0] is not loop:
            self._changed = (loop, asyncio.Condition())
        return self._changed[1]

    def pick(self, tried: set[int]) -> Member | None | bool:
        """The member to send to now; ``True`` when one could take it but all such are full;
        ``None`` when no member it has not tried is usable."""
        usable = [m for m in self.members if m.index not in tried and m.usable()]
        if not usable:
            return None
        due = [m for m in usable if m.breaker.message is not None]
        if due:  # a probe first: it is how an endpoint that came back is noticed
            return due[0]
        free = [m for m in usable if m.has_room()]
        return min(free, key=Member.load) if free else True

    async def _acquire(self, tried: set[int]) -> Member | None:
        changed = self._condition()
        async with changed:
            while True:
                choice = self.pick(tried)
                if choice is None or isinstance(choice, Member):
                    break
                await changed.wait()
            if choice is not None:
                if choice.breaker.message is not None:
                    choice.breaker.start_probe()
                    _log.info("judge %s: probing %s", self.config.name, choice.breaker.target)
                choice.outstanding += 1
                choice.sent += 1
            return choice

    async def _release(self) -> None:
        changed = self._condition()
        async with changed:
            changed.notify_all()

    def _out_error(self) -> TransientError:
        """The error when every endpoint is out: retry once the first is due for its probe."""
        now = self._clock()
        due = [at for m in self.members if (at := m.breaker.probe_at()) is not None]
        # at most max_backoff_s: the engine honours a wait given here in full, as a server's Retry-After
        cfg = self.config
        wait = min(max(0.0, min(due) - now), cfg.max_backoff_s, cfg.max_retry_after_s) if due else None
        last = "; ".join(f"{m.breaker.target}: {m.errors[-1]}" for m in self.members if m.errors)
        return TransientError(
            f"all {len(self.members)} endpoints of judge {self.config.name!r} are out (last errors: {last})",
            wait,
        )

    async def complete(self, request: ChatRequest) -> Completion:
        tried: set[int] = set()
        last: BackendError | None = None
        while True:
            member = await self._acquire(tried)
            if member is None:
                raise last if last is not None else self._out_error()
            probe = member.breaker.probing and member.breaker.message is not None
            try:
                completion = await member.backend.complete(request)
            except BackendError as exc:
                member.failed += 1
                member.errors[:] = [str(exc)[:300]]
                # a late reply of a request sent before the endpoint was taken out says nothing
                # about it now: only the probe decides while it is out
                if (probe or member.breaker.message is None) and member.breaker.failure(exc):
                    _log.warning("judge %s: %s", self.config.name, member.breaker.message)
                if not retry_elsewhere(exc):
                    raise
                tried.add(member.index)
                last = exc
            else:
                member.ok += 1
                if probe or member.breaker.message is None:
                    member.breaker.success()
                if probe:
                    _log.warning(
                        "judge %s: %s answered its probe, back in", self.config.name, member.breaker.target
                    )
                return completion
            finally:
                member.outstanding -= 1
                if probe and member.breaker.probing:
                    member.breaker.probing = False  # the probe was cancelled: another goes later
                await self._release()

    def report(self) -> list[dict[str, Any]]:
        """Per endpoint: URL (masked), requests sent, answered and failed, and whether it is out."""
        mask = Redactor.for_judge(self.config).text
        return [
            {
                "endpoint": mask(m.endpoint.base_url),
                "sent": m.sent,
                "ok": m.ok,
                "failed": m.failed,
                "probes": m.breaker.probes,
                "out": m.breaker.message is not None,
            }
            for m in self.members
        ]

    async def aclose(self) -> None:
        await asyncio.gather(*(m.backend.aclose() for m in self.members), return_exceptions=True)


def make_backend(config: JudgeConfig) -> Backend:
    """Build the backend a judge config names: a fleet over its endpoints when it lists them.

    Raises:
        JudgeConfigError: Its ``api_key_env`` names a variable that is not set or is empty (without
            it no ``Authorization`` header would go out, and every request would come back a 401), or
            whose key holds a control character (no request could carry it).
    """
    problem = config.api_key_problem()
    if problem is not None:
        raise JudgeConfigError(f"judge {config.name!r}: {problem}")
    if config.endpoints:
        return FleetBackend(config)
    return BACKENDS.get(config.backend)(config)
