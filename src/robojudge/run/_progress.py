"""Plain progress lines for logs: a scoring or judging run's state every N seconds, one line each.

A progress bar redraws itself in place, which a CI log or ``nohup.out`` records as one line per
redraw or not at all; these lines are for output that is not a terminal. They are written from a
timer thread, so a long item still shows the run is alive while no result arrives.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from robojudge.run._cost import describe
from robojudge.run._judge_rows import JudgeRunSummary
from robojudge.run._score import RunSummary
from robojudge.store import ResultRow

MIN_ESTIMATE_S = 60.0
"""Estimates below this are not announced: such a run is over before anyone reads them."""


def progress_line(summary: RunSummary | None, elapsed: float, since_estimate: float = 0.0) -> str:
    """One line: results done of those to compute, failures, time so far, estimated time left
    (the run's estimate less the ``since_estimate`` seconds that passed since it was made; shown
    once it is settled)."""
    if summary is None:
        return f"scoring: no result yet, {describe(elapsed)} elapsed"
    todo = summary.total - summary.skipped
    pct = 100.0 * summary.computed / todo if todo else 100.0
    planned = "" if summary.all_planned else " planned so far"
    line = (f"scoring: {summary.computed}/{todo} results{planned} ({pct:.0f}%), {summary.failed} failed, "
            f"{describe(elapsed)} elapsed")
    if summary.estimate_s is not None and summary.estimate_settled and summary.computed < todo:
        line += f", about {describe(max(0.0, summary.estimate_s - since_estimate))} left"
        if planned:
            line += " for those"
    return line


def judging_line(summary: JudgeRunSummary | None, elapsed: float, since_estimate: float = 0.0) -> str:
    """One line of a judge run: judgments done of those to make, requests in flight, retries,
    unparsable replies, failures, time so far (``since_estimate`` is unused: a judge run makes no
    estimate)."""
    if summary is None:
        return f"judging: no judgment yet, {describe(elapsed)} elapsed"
    todo = summary.total - summary.skipped
    pct = 100.0 * summary.computed / todo if todo else 100.0
    st = summary.stats
    return (f"judging: {summary.computed}/{todo} judgments ({pct:.0f}%), {st.in_flight} in flight, "
            f"{st.retries} retries, {summary.unscored} unparsed, {summary.failed} failed, "
            f"{describe(elapsed)} elapsed")


def estimate_line(summary: RunSummary) -> str | None:
    """The one-time announcement of how long the rest of a run will take, once each metric left has
    been measured on a few results (``RunSummary.estimate_settled``); None before that, or when the
    rest is short."""
    if summary.estimate_s is None or not summary.estimate_settled or summary.estimate_s < MIN_ESTIMATE_S:
        return None
    left = summary.total - summary.skipped - summary.computed
    # A manifest read block by block: the results of the blocks planned so far only; the rest add to it.
    which = "" if summary.all_planned else (
        " of the manifest's first blocks (its later items are planned as the run goes, and add to this)")
    line = (f"estimated time for the remaining {left} results{which}: about {describe(summary.estimate_s)} "
            f"(from the {summary.computed} measured so far, per metric and frame-pixel")
    if summary.estimate_unmeasured:
        line += f"; not measured yet, counted at the others' mean: {', '.join(summary.estimate_unmeasured)}"
    return line + ")"


class EstimateOnce:
    """Wraps a progress callback and writes :func:`estimate_line` once, when there first is one."""

    def __init__(self, write: Callable[[str], None],
                 inner: Callable[[ResultRow, RunSummary], None] | None = None) -> None:
        self._write, self._inner, self._done = write, inner, False

    def __call__(self, row: ResultRow, summary: RunSummary) -> None:
        if self._inner is not None:
            self._inner(row, summary)
        if not self._done:
            line = estimate_line(summary)
            if line is not None:
                self._done = True
                self._write(line)


class ProgressLines:
    """A progress callback that writes ``line`` (:func:`progress_line`, or :func:`judging_line` for a
    judge run) every ``every`` seconds while open.

    Use as a context manager around the run; the callback only records the latest summary.
    """

    def __init__(self, write: Callable[[str], None], every: float = 30.0,
                 line: Callable[[Any, float, float], str] = progress_line) -> None:
        if every <= 0:
            raise ValueError(f"progress interval must be positive, got {every}")
        self._write, self._every, self._line = write, every, line
        self._summary: Any = None
        self._estimate: tuple[float | None, float] = (None, 0.0)  # the last estimate and when it came
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def __call__(self, row: ResultRow | None, summary: RunSummary | JudgeRunSummary) -> None:
        self._summary = summary
        estimate = getattr(summary, "estimate_s", None)
        if estimate != self._estimate[0]:
            self._estimate = (estimate, time.monotonic())

    def _loop(self) -> None:
        # Between results the estimate counts down, so a long task does not read as a stalled run.
        while not self._stop.wait(self._every):
            now = time.monotonic()
            self._write(self._line(self._summary, now - self._started, now - self._estimate[1]))

    def __enter__(self) -> ProgressLines:
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="robojudge-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
