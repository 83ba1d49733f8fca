"""Sessions, CSRF tokens, the login rate limit and the response headers of the annotation web app.

Pure standard library plus ``itsdangerous``: no web framework here, so each piece is tested on its own.

* A session is a signed, time-stamped cookie value holding the annotator's id, the CSRF token and
  the session's random id. The signature (HMAC-SHA1 with a key derived from the server secret by
  itsdangerous) means a browser can read its own cookie but not forge or alter one; a value older
  than ``max_age`` is refused, and so is one signed more than :data:`CLOCK_STEP_S` in the future.
* The CSRF token is a random value kept in the session and repeated in every form (a hidden field)
  and every ``fetch`` POST (the ``X-CSRF-Token`` header). A cross-site page can make the browser
  send the cookie but cannot read the token, so it cannot post.
* The login rate limit counts failed logins per (username, client address) in a sliding window,
  in this process's memory: a restart forgets it, and several server processes each keep their
  own count (documented in docs/annotation.md).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CLOCK_STEP_S",
    "CSP",
    "LoginRateLimiter",
    "Session",
    "SessionCodec",
    "new_token",
    "security_headers",
    "tokens_match",
]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""No inline script or style anywhere: an injected ``<script>`` that escaped escaping still would not run."""


def security_headers(*, https: bool) -> dict[str, str]:
    """Headers every response carries; HSTS only when the app is served over https."""
    headers = {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    }
    if https:
        headers["Strict-Transport-Security"] = "max-age=31536000"
    return headers


def new_token() -> str:
    """A random URL-safe token (256 bits)."""
    return secrets.token_urlsafe(32)


def tokens_match(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison; a missing or empty token never matches."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


@dataclass(frozen=True)
class Session:
    """What the session cookie holds."""

    user_id: int
    username: str
    role: str
    csrf: str
    sid: str
    #: the annotator's session generation when it was made: switching them off or a new invite moves it
    generation: int = field(default=0, compare=False)


#: How far ahead of this server's clock a cookie's signing time may be and the cookie still be taken.
#: A server's clock stepped back (an NTP correction, a VM restored) or another server of one pool with
#: a clock ahead signs cookies "in the future"; refusing every one logged out each annotator who had
#: logged in within the step. Further ahead is refused, as forged or garbled values are.
CLOCK_STEP_S = 60


class SessionCodec:
    """Signs sessions into cookie values and reads them back (``None`` when forged, stale or garbled)."""

    def __init__(self, secret: str, *, max_age_s: int = 12 * 3600) -> None:
        from itsdangerous import URLSafeTimedSerializer

        if len(secret) < 16:
            raise ValueError("the session secret must be at least 16 characters long")
        self.max_age_s = max_age_s
        self._serializer = URLSafeTimedSerializer(secret, salt="robojudge.annotate.session")

    def dumps(self, session: Session) -> str:
        s = session
        data = {"u": s.user_id, "n": s.username, "r": s.role, "c": s.csrf, "s": s.sid, "g": s.generation}
        return str(self._serializer.dumps(data))

    def sign_token(self, token: str) -> str:
        """A signed copy of a bare token (the login form's CSRF cookie, set before any session)."""
        return str(self._serializer.dumps({"t": token}, salt="robojudge.annotate.login"))

    def unsign_token(self, value: str | None) -> str | None:
        from itsdangerous import BadData

        if not value:
            return None
        try:
            data = self._unsign(value, 3600, salt="robojudge.annotate.login")
            return str(data["t"])
        except (BadData, KeyError, TypeError):
            return None

    def loads(self, value: str | None) -> Session | None:
        from itsdangerous import BadData

        if not value:
            return None
        try:
            data = self._unsign(value, self.max_age_s)
            return Session(int(data["u"]), str(data["n"]), str(data["r"]), str(data["c"]), str(data["s"]),
                           int(data.get("g", 0)))
        except (BadData, KeyError, TypeError, ValueError):
            return None

    def _unsign(self, value: str, max_age_s: int, salt: str | None = None) -> Any:
        """The payload of a signed value; :class:`itsdangerous.BadData` when it is forged or garbled, older
        than ``max_age_s``, or signed more than :data:`CLOCK_STEP_S` ahead of this clock (itsdangerous'
        own age check refuses any time ahead at all)."""
        from itsdangerous import SignatureExpired

        data, signed = self._serializer.loads(value, salt=salt, return_timestamp=True)
        age = time.time() - signed.timestamp()
        if age > max_age_s or age < -CLOCK_STEP_S:
            raise SignatureExpired(f"signed {age:.0f} s ago: not within -{CLOCK_STEP_S}..{max_age_s} s")
        return data


class LoginRateLimiter:
    """At most ``max_failures`` failed logins per (username, address) within ``window_s`` seconds.

    A success clears the key's failures. Thread-safe; memory is bounded because keys whose failures
    have all expired are dropped whenever the table grows past ``max_keys``.
    """

    def __init__(
        self,
        *,
        max_failures: int = 5,
        window_s: float = 300.0,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.max_keys = max_keys
        self._clock = clock
        self._failures: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._failures.get(key, deque())
        while times and now - times[0] >= self.window_s:
            times.popleft()
        return times

    def retry_after(self, username: str, address: str) -> float:
        """Seconds until the key may try again; 0 when it may try now."""
        key = (username.casefold(), address)
        with self._lock:
            now = self._clock()
            times = self._recent(key, now)
            if len(times) < self.max_failures:
                return 0.0
            return max(0.0, self.window_s - (now - times[0]))

    def reserve(self, username: str, address: str) -> float:
        """Count an attempt as failed before its password is checked, and return 0; or, when the key is
        at its limit, count nothing and return the seconds until it may try again. A success then clears
        the key (:meth:`succeeded`). Counting first bounds parallel guesses: checked one after another
        (:meth:`retry_after`, then :meth:`failed` after the hash), every request of a burst passed the
        check before any was counted."""
        key = (username.casefold(), address)
        with self._lock:
            now = self._clock()
            times = self._recent(key, now)
            if len(times) >= self.max_failures:
                return max(0.0, self.window_s - (now - times[0]))
            self._add(key, times, now)
        return 0.0

    def failed(self, username: str, address: str) -> None:
        key = (username.casefold(), address)
        with self._lock:
            now = self._clock()
            self._add(key, self._recent(key, now), now)

    def _add(self, key: tuple[str, str], times: deque[float], now: float) -> None:
        """Record a failure (the lock held)."""
        times.append(now)
        self._failures[key] = times
        if len(self._failures) > self.max_keys:
            for k in [k for k, v in self._failures.items() if not self._recent(k, now)]:
                del self._failures[k]

    def succeeded(self, username: str, address: str) -> None:
        with self._lock:
            self._failures.pop((username.casefold(), address), None)
