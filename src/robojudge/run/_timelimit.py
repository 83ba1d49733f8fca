"""A time limit on one metric's work on one item (``robojudge score --timeout``).

A metric that never returns (a loop that does not end, a decoder waiting on a network mount that went
away) would otherwise hold its worker, and with one worker the whole run, for ever. Two guards:

- **Soft**: a ``SIGALRM`` timer raises :class:`TimeLimitExceeded` in the code that is running when the
  limit passes. It stops anything that comes back to Python now and then (every metric's loop over
  frames does), and the task goes on with the item's other metrics. It needs the process's main
  thread (signals are delivered there) and a POSIX system; elsewhere there is no soft guard.
- **Hard**: in a worker process (local workers, Ray), a watchdog thread
  (:func:`faulthandler.dump_traceback_later`) prints every thread's Python stack to the worker's stderr
  and ends the worker a grace after the limit (:func:`hard_grace`: the limit itself, at least 1 s and at
  most :data:`HARD_GRACE_S`), for code that never comes back to
  Python (a native call stuck in a system call). The executor then treats the task as one whose worker
  died: its metrics become error rows and the run goes on. The process that runs a one-worker run
  (the caller's own) is never ended this way.

:class:`TimeLimitExceeded` derives from :class:`BaseException`, so that a metric's own ``except
Exception`` does not swallow it.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

#: The most seconds past the limit after which a worker whose code has not come back to Python is ended.
HARD_GRACE_S = 30.0

#: The longest limit taken: 30 days (the interval timer's range ends near 9.2e9 s; ``inf`` is no limit,
#: which is leaving the option out).
MAX_LIMIT_S = 30 * 24 * 3600.0

_hard = False  # set in worker processes (:func:`allow_hard_limit`)
_hard_deadline: float | None = None  # when the armed watchdog ends this worker (time.monotonic)


class TimeLimitExceeded(BaseException):
    """The time limit passed while a metric was computing (see the module doc)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped after the time limit of {seconds:g} s")
        self.seconds = seconds


def allow_hard_limit() -> None:
    """Mark this process as a worker that may be ended by the hard guard (called where workers start)."""
    global _hard
    _hard = True


def hard_grace(seconds: float) -> float:
    """Seconds past a limit of ``seconds`` before the hard guard ends a worker: time for the code the
    soft guard stopped to unwind (close its files), and short for a short limit.

    >>> hard_grace(0.2), hard_grace(5), hard_grace(600)
    (1.0, 5, 30.0)
    """
    return min(HARD_GRACE_S, max(1.0, seconds))


def soft_limit_available() -> bool:
    """Whether this thread can raise :class:`TimeLimitExceeded` in its own code: the main thread of a
    process on a system with ``SIGALRM``."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _raiser(seconds: float) -> Callable[[int, FrameType | None], None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise TimeLimitExceeded(seconds)

    return handler


def check_limit(seconds: float | None, what: str = "--timeout") -> None:
    """Refuse a limit that is not a number of seconds above 0 and at most :data:`MAX_LIMIT_S`.

    Raises:
        ValueError: Naming ``what`` and the bounds (``inf`` and ``nan`` included: no timer takes them).
    """
    if seconds is not None and not 0 < seconds <= MAX_LIMIT_S:
        raise ValueError(f"{what} must be more than 0 seconds and at most {MAX_LIMIT_S:g} (30 days), "
                         f"got {seconds:g}; leave it out for no limit")


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Run the body under a limit of ``seconds`` (``None``: no limit); see the module doc.

    Limits nest: an earlier deadline already set (an enclosing limit's, or a caller's own ``SIGALRM``
    timer) is kept rather than pushed back, and it is put back afterwards, less the time the body took
    (at once, if it passed meanwhile); the hard guard's watchdog likewise.

    Raises:
        TimeLimitExceeded: The body was still running after ``seconds``.
        ValueError: ``seconds`` is not above 0 and at most :data:`MAX_LIMIT_S` (:func:`check_limit`).
    """
    global _hard_deadline
    if seconds is None:
        yield
        return
    check_limit(seconds, "a time limit")
    started = time.monotonic()
    # Soft: only when no earlier alarm is due (an enclosing limit's or the caller's goes off first).
    soft = soft_limit_available() and not 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= seconds
    deadline = started + seconds + hard_grace(seconds)
    outer = _hard_deadline
    hard = _hard and sys.stderr is not None and (outer is None or deadline < outer)
    before_handler: object = None
    before_timer = (0.0, 0.0)
    if soft:
        before_handler = signal.signal(signal.SIGALRM, _raiser(seconds))
        before_timer = signal.setitimer(signal.ITIMER_REAL, seconds)
    if hard:
        faulthandler.dump_traceback_later(deadline - started, exit=True)
        _hard_deadline = deadline
    try:
        yield
    finally:
        # The alarm may go off between the body's end and the timer's stop: the exception then
        # comes from here, and the inner block still disarms both guards.
        try:
            if soft:
                signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            if hard:
                _hard_deadline = outer
                if outer is None:
                    faulthandler.cancel_dump_traceback_later()
                else:  # the enclosing limit's watchdog, for the time it has left
                    faulthandler.dump_traceback_later(max(1e-3, outer - time.monotonic()), exit=True)
            if soft:
                signal.signal(signal.SIGALRM, before_handler if before_handler is not None
                              else signal.SIG_DFL)  # type: ignore[arg-type]
                if before_timer[0] > 0:  # the caller's timer, less the time spent here (at least 1 ms)
                    left = max(1e-3, before_timer[0] - (time.monotonic() - started))
                    signal.setitimer(signal.ITIMER_REAL, left, before_timer[1])
