"""The circuit breaker: stop sending to an endpoint that keeps failing.

Against a server that is down, hung or refusing every request, retrying each item in turn costs
every item its full retry budget. After ``threshold`` failed attempts in a row the breaker opens
for the rest of the run: requests not yet sent fail at once, with one message that names the
endpoint and the last failure, and the runner stores them as error rows (``--retry-errors`` asks
them again later). A successful reply resets the count while the breaker is still closed.

Only failures of the endpoint count (:func:`endpoint_failure`): no reply at all, a 5xx, a
status that says the key or the URL is wrong, or a redirect (robojudge follows none). A 200 reply
whose body is not JSON at all (a proxy's page, an empty body) does not count attempt by attempt: it
is retried a few times, and the engine counts one failure for an item whose attempts all ended so
(:class:`~robojudge.judges._backend.NotJSONError`). A failure of one request -- a 400/413/422 for a
context too long or filtered content, an oversized 200 reply or a JSON one without its choices --
neither counts nor resets the count: the next item may well succeed. Nor does a 429: the server is up and its
``Retry-After`` is honoured instead.

A breaker given ``probe_after_s`` (one per endpoint of a judge fleet) does not stay open for the
run: once that long has passed, :meth:`CircuitBreaker.probe_due` lets one request through. A reply
closes it again; another failure of the endpoint opens it for twice as long (at most ten times
``probe_after_s``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from robojudge.judges._backend import BackendError

_ENDPOINT_STATUS = frozenset({401, 403, 404, 405, 407, 408})
"""4xx answers that every request would get: wrong key or URL, proxy login, server timeout."""


def endpoint_failure(error: BaseException) -> bool:
    """Whether a failed attempt says the endpoint is unusable (and so counts toward the breaker)."""
    status = error.status if isinstance(error, BackendError) else None
    if status is None:  # no reply: refused or dropped connection, timeout, deadline, model not loaded
        return True
    return status >= 500 or status in _ENDPOINT_STATUS or 300 <= status < 400  # 3xx: a moved endpoint


class CircuitOpenError(BackendError):
    """A request that was not sent because its endpoint's circuit breaker is open."""


class CircuitBreaker:
    """Counts consecutive failed attempts to one endpoint.

    Args:
        threshold: Failed attempts in a row that open it; 0 never opens.
        target: The endpoint, as named in messages.
        mask: Applied to the whole message (the engine masks secrets there: the target is the
            configured URL, which may carry a password or a key parameter).
        probe_after_s: Seconds after which an open breaker lets one probe through; ``None``: it
            stays open for the run.
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        threshold: int,
        target: str,
        mask: Callable[[str], str] = str,
        *,
        probe_after_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.target = target
        self._mask = mask
        self.probe_after_s = probe_after_s
        self._clock = clock
        self.failures = 0
        self.message: str | None = None
        """Why it opened; ``None`` while closed."""
        self.opened_at = 0.0
        self.wait_s = probe_after_s or 0.0
        """How long it stays open this time before a probe."""
        self.probing = False
        """A probe request is out."""
        self.probes = 0
        """Probes sent so far."""

    def open(self, message: str) -> None:
        """Open now with ``message``, whatever the count (the runner stops sending: see
        :meth:`~robojudge.judges.JudgeEngine.stop`); a breaker without ``probe_after_s`` stays open."""
        self.message = self._mask(message)
        self.probing = False
        self.opened_at = self._clock()

    def check(self) -> None:
        """Raise :class:`CircuitOpenError` when open."""
        if self.message is not None:
            raise CircuitOpenError(self.message)

    def probe_at(self) -> float | None:
        """When the next probe may go (clock seconds), or ``None`` while closed or for good open."""
        if self.message is None or self.probe_after_s is None:
            return None
        return self.opened_at + self.wait_s

    def probe_due(self) -> bool:
        """Whether the breaker is open, no probe is out and it is time for one."""
        at = self.probe_at()
        return at is not None and not self.probing and self._clock() >= at

    def start_probe(self) -> None:
        """Mark the request about to be sent as the probe."""
        self.probing = True
        self.probes += 1

    def success(self) -> None:
        if self.probing:
            self._close()
        elif self.message is None:
            self.failures = 0

    def _close(self) -> None:
        self.probing = False
        self.message = None
        self.failures = 0
        self.wait_s = self.probe_after_s or 0.0

    def failure(self, error: BaseException) -> bool:
        """Count a failed attempt; ``True`` when this one opened the breaker."""
        if self.probing:
            if not endpoint_failure(error):  # the endpoint answered: it is back
                self._close()
                return False
            self.probing = False
            assert self.probe_after_s is not None
            self.wait_s = min(2 * self.wait_s, 10 * self.probe_after_s)
            self.opened_at = self._clock()
            return False
        if self.message is not None or self.threshold <= 0:
            return False
        if not endpoint_failure(error):
            return False
        self.failures += 1
        if self.failures < self.threshold:
            return False
        self.opened_at = self._clock()
        if self.probe_after_s is None:
            then = "nothing more is sent to it in this run, rerun with --retry-errors to ask again"
        else:
            then = f"taken out, probed again after {self.wait_s:g} s"
        attempts = "1 attempt" if self.failures == 1 else f"{self.failures} attempts"
        self.message = self._mask(
            f"circuit breaker open: {self.target} failed {attempts} in a row "
            f"(last: {error}); {then}"
        )
        return True
