"""What a long command is doing now, so that a watcher can say so when it takes a while.

Reading a million stored results, checking their inputs or writing a report's sections can each take
minutes at scale, and a command that prints nothing for minutes looks hung. Library code marks such
work with :func:`step` (and counts it with :meth:`Step.advance`); it costs a lock and a list append,
and says nothing by itself. A command line installs :func:`watch`, whose thread says the newest step
once it has gone on for ``after_s`` seconds, then again every ``every_s`` seconds with its count::

    with step("reading stored results") as s:
        for row in rows:
            s.advance()

    # in the CLI, around the command:
    with watch(print):          # "reading stored results ..." after 5 s, "... 120,000 so far (35 s)" after
        run_the_command()

Steps may nest and may be left in any order (a generator abandoned half-way leaves its step when it is
closed); the watcher names the newest one still open. Steps of other threads count too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

AFTER_S = 5.0
"""A step is said once it has gone on this long (quick commands stay silent)."""
EVERY_S = 30.0
"""Then said again this often, with its count."""

_lock = threading.Lock()
_open: list[Step] = []


class Step:
    """One unit of work that is going on: what it is, how much is done, of how much (if known)."""

    def __init__(self, what: str, total: int | None = None, unit: str = "") -> None:
        self.what = what
        self.total = total
        self.unit = unit
        self.done = 0
        self.started = time.monotonic()

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more done (a plain add: no lock, the watcher only reads it)."""
        self.done += n

    def line(self, now: float | None = None, *, first: bool = False) -> str:
        """How the watcher says it: ``reading stored results ...`` the first time, then its count and
        time (``reading stored results: 120,000 of 960,000 rows (35 s)``)."""
        if first:
            return f"{self.what} ..."
        took = (now if now is not None else time.monotonic()) - self.started
        unit = f" {self.unit}" if self.unit else ""
        if self.total is not None:
            count = f"{self.done:,} of {self.total:,}{unit}"
        else:
            count = f"{self.done:,}{unit} so far"
        if not self.done and not self.total:
            return f"{self.what} ({took:.0f} s)"
        return f"{self.what}: {count} ({took:.0f} s)"


@contextmanager
def step(what: str, total: int | None = None, unit: str = "") -> Iterator[Step]:
    """Mark the work of the ``with`` block as ``what`` (``total`` units of ``unit``, when known)."""
    s = Step(what, total, unit)
    with _lock:
        _open.append(s)
    try:
        yield s
    finally:
        with _lock:
            for i in range(len(_open) - 1, -1, -1):
                if _open[i] is s:
                    del _open[i]
                    break


def current() -> Step | None:
    """The newest step still open, or None."""
    with _lock:
        return _open[-1] if _open else None


@contextmanager
def watch(say: Callable[[str], None], after_s: float | None = None,
          every_s: float | None = None) -> Iterator[None]:
    """Say what is going on (:func:`current`) from a daemon thread while the block runs: a step once it
    has lasted ``after_s`` seconds (default :data:`AFTER_S`), then every ``every_s`` (:data:`EVERY_S`).
    ``say`` gets one line without a newline; an exception it raises stops the watching, not the work."""
    after = AFTER_S if after_s is None else after_s
    every = EVERY_S if every_s is None else every_s
    stop = threading.Event()

    def run() -> None:
        said: dict[Step, float] = {}  # when each step was last said (held: no id is reused meanwhile)
        tick = max(0.01, min(0.5, after / 2 if after > 0 else 0.01, every / 2 if every > 0 else 0.01))
        while not stop.wait(tick):
            s = current()
            if s is None:
                continue
            now = time.monotonic()
            last = said.get(s)
            if last is None and now - s.started < after:
                continue
            if last is not None and now - last < every:
                continue
            try:
                say(s.line(now, first=last is None))
            except Exception:  # a closed stream: the work goes on, unwatched
                return
            if len(said) > 1000:
                said.clear()
            said[s] = now

    thread = threading.Thread(target=run, name="robojudge-activity", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1.0)
