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
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: The most seconds past the limit after which a worker whose code has not come back to Python is ended.
HARD_GRACE_S = 30.0

#: The longest limit taken: 30 days (the interval timer's range ends near 9.2e9 s; ``inf`` is no limit,
#: which is leaving the option out).
MAX_LIMIT_S = 30 * 24 * 3600.0

_hard = False  # set in worker processes (:func:`allow_hard_limit`)
_hard_deadline: float | None = None  # when the armed watchdog ends this worker (time.monotonic)


class Limit:
    """One time limit, as :func:`time_limit` yields it: the exception it raises names it, so that code
    stopped by an enclosing limit tells that apart from its own."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class TimeLimitExceeded(BaseException):
    """The time limit passed while a metric was computing (see the module doc); ``limit`` is the one
    that passed."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(f"stopped after the time limit of {limit.seconds:g} s")
        self.limit = limit
        self.seconds = limit.seconds


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



def check_limit(seconds: float | None, what: str = "--timeout") -> None:
    """Refuse a limit that is not a number of seconds above 0 and at most :data:`MAX_LIMIT_S`.

    Raises:
        ValueError: Naming ``what`` and the bounds (``inf`` and ``nan`` included: no timer takes them).
    """
    if seconds is not None and not 0 < seconds <= MAX_LIMIT_S:
        raise ValueError(f"{what} must be more than 0 seconds and at most {MAX_LIMIT_S:g} (30 days), "
                         f"got {seconds:g}; leave it out for no limit")


class _Alarm:
    """The ``SIGALRM`` handler of one limit, in front of the one it replaced (the caller's, or an enclosing
    limit's). The interval timer is set for whichever is due first; when the caller's alarm is due, its
    handler runs as it would have (an enclosing limit's raises if its own deadline has come) and its
    next alarm is taken from the timer it set again or from its interval."""

    def __init__(self, limit: Limit, due: float, before: Any, caller_next: float | None,
                 interval: float) -> None:
        self.limit, self.due, self.before = limit, due, before
        self.caller_next, self.interval = caller_next, interval

    def arm(self, now: float) -> None:
        nxt = self.due if self.caller_next is None else min(self.due, self.caller_next)
        signal.setitimer(signal.ITIMER_REAL, max(1e-6, nxt - now))

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if self.caller_next is not None and now >= self.caller_next - 1e-4:
            self.caller_next = None
            self._call_before(signum, frame)  # may raise (an enclosing limit whose time has come)
            left = signal.getitimer(signal.ITIMER_REAL)[0]
            if left > 0:  # the caller's handler set its timer again
                self.caller_next = now + left
            elif self.interval > 0:  # a periodic timer: the kernel would have set it again
                self.caller_next = now + self.interval
        if now >= self.due - 1e-4:
            raise TimeLimitExceeded(self.limit)
        self.arm(now)

    def _call_before(self, signum: int, frame: FrameType | None) -> None:
        if callable(self.before):
            self.before(signum, frame)
        elif self.before == signal.SIG_DFL:  # SIGALRM's default action: the process ends, as it would have
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGALRM)


@contextmanager
def time_limit(seconds: float | None) -> Iterator[Limit | None]:
    """Run the body under a limit of ``seconds`` (``None``: no limit); see the module doc. Yields the
    :class:`Limit` that :class:`TimeLimitExceeded` names when it passes (``None`` without a limit).

    Limits nest, and a caller's own ``SIGALRM`` timer is kept: an alarm due before this limit's deadline
    still goes off on time and runs its handler (an enclosing limit's raises with its own
    :class:`Limit`), and the timer is put back afterwards, less the time the body took (at once if it is
    due); the hard guard's watchdog likewise keeps an enclosing limit's earlier deadline.

    Raises:
        TimeLimitExceeded: The body was still running after ``seconds``.
        ValueError: ``seconds`` is not above 0 and at most :data:`MAX_LIMIT_S` (:func:`check_limit`).
    """
    global _hard_deadline
    if seconds is None:
        yield None
        return
    check_limit(seconds, "a time limit")
    limit = Limit(seconds)
    started = time.monotonic()
    soft = soft_limit_available()
    deadline = started + seconds + hard_grace(seconds)
    outer = _hard_deadline
    hard = _hard and sys.stderr is not None and (outer is None or deadline < outer)
    alarm: _Alarm | None = None
    if soft:
        left, interval = signal.getitimer(signal.ITIMER_REAL)
        alarm = _Alarm(limit, started + seconds, signal.getsignal(signal.SIGALRM),
                       started + left if left > 0 else None, interval)
        signal.signal(signal.SIGALRM, alarm)
        alarm.arm(started)
    if hard:
        faulthandler.dump_traceback_later(deadline - started, exit=True)
        _hard_deadline = deadline
    try:
        yield limit
    finally:
        # The alarm may go off between the body's end and the timer's stop: the exception then
        # comes from here, and the inner block still disarms both guards.
        try:
            if alarm is not None:
                signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            if hard:
                _hard_deadline = outer
                if outer is None:
                    faulthandler.cancel_dump_traceback_later()
                else:  # the enclosing limit's watchdog, for the time it has left
                    faulthandler.dump_traceback_later(max(1e-3, outer - time.monotonic()), exit=True)
            if alarm is not None:
                before = alarm.before
                signal.signal(signal.SIGALRM, before if before is not None else signal.SIG_DFL)
                if alarm.caller_next is not None:  # the caller's timer, for the time it has left
                    left = max(1e-3, alarm.caller_next - time.monotonic())
                    signal.setitimer(signal.ITIMER_REAL, left, alarm.interval)


class Stop:
    """What :func:`stop_after` yields: ``passed_after`` is the limit in seconds once its own limit
    stopped the body, else None."""

    __slots__ = ("passed_after",)

    def __init__(self) -> None:
        self.passed_after: float | None = None


@contextmanager
def stop_after(seconds: float | None) -> Iterator[Stop]:
    """:func:`time_limit` whose own passing ends the body quietly: afterwards ``stop.passed_after`` says
    whether it did (the caller then stores an error row). The exception of an enclosing limit (a
    caller's) is not this one's and goes on up.
    """
    stop = Stop()
    if seconds is None:
        yield stop
        return
    with time_limit(seconds) as limit:
        try:
            yield stop
        except TimeLimitExceeded as exc:
            if exc.limit is not limit:
                raise
            stop.passed_after = exc.seconds
