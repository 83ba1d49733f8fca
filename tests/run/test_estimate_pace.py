"""The time-left estimate counts the wall time a run spends outside its metrics (RunPace).

A resource audit ran a metric that crashed its worker on every tenth item: each crash cost about 12 s
of pool rebuilds and child processes, none of it in any row's duration_s, and the progress lines said
"about 0 s left" from 1% to 97% of a 6.3-minute run. The clock here is plain numbers: the seconds
since the run started that a caller would read from time.perf_counter().
"""

from __future__ import annotations

import time

import pytest
from _toy_metrics import toy_items  # (registers the test metrics; tests/run is on sys.path)

from robojudge.run import LocalProcessExecutor, RunSummary, build_requests, score_items
from robojudge.run._cost import CostModel, Outstanding, RunPace
from robojudge.store import ResultRow, ResultStore


def _run(total: int) -> tuple[CostModel, Outstanding]:
    costs, left = CostModel(), Outstanding()
    for _ in range(total):
        left.add("test_crashy", 1.0)
    return costs, left


def _finish(costs: CostModel, left: Outstanding, pace: RunPace, n: int, seconds_each: float) -> None:
    for _ in range(n):
        costs.add("test_crashy", 1.0, seconds_each)
        left.remove("test_crashy", 1.0)
        pace.add(1, seconds_each)


def test_time_spent_outside_metrics_counts_toward_the_estimate() -> None:
    # The audit's run: 600 results on 2 workers, each metric call 1 ms, 220 done after 126 s of wall time.
    costs, left = _run(600)
    pace = RunPace(started=1000.0)
    _finish(costs, left, pace, 220, 0.001)
    metrics_only = costs.remaining(left, 2)
    assert metrics_only == pytest.approx(380 * 0.001 / 2)  # 0.19 s: what "about 0 s left" came from
    overhead = pace.overhead(now=1126.0, workers=2)
    # (126 s - 0.22 s / 2 workers) / 220 results = 0.5722 s a result beyond the metrics
    assert overhead == pytest.approx((126 - 0.11) / 220)
    estimate = costs.remaining(left, 2, overhead)
    # 380 results left x 0.5722 s + 0.19 s = 217.6 s; the run had 381 - 126 = 255 s left
    assert estimate == pytest.approx(380 * (126 - 0.11) / 220 + 0.19)
    assert 200 < estimate < 260


def test_a_run_its_metrics_explain_keeps_the_cost_models_estimate() -> None:
    # 2 workers kept busy by 1-second metrics: 100 results in 50 s of wall time, nothing beyond them.
    costs, left = _run(300)
    pace = RunPace(started=0.0)
    _finish(costs, left, pace, 100, 1.0)
    assert pace.overhead(now=50.0, workers=2) == 0.0
    assert costs.remaining(left, 2, pace.overhead(now=50.0, workers=2)) == pytest.approx(100.0)
    # Slower than the metrics say (a busy machine, pool starts): 60 s for what they measured at 50 s.
    assert pace.overhead(now=60.0, workers=2) == pytest.approx(0.1)
    assert costs.remaining(left, 2, pace.overhead(now=60.0, workers=2)) == pytest.approx(100.0 + 200 * 0.1)


def test_no_overhead_before_a_result() -> None:
    pace = RunPace(started=5.0)
    assert pace.overhead(now=100.0, workers=4) == 0.0
    pace.add(4, 400.0)  # more metric seconds than wall seconds across the workers: never negative
    assert pace.overhead(now=100.0, workers=4) == 0.0


def test_a_run_losing_its_time_to_crashes_does_not_say_nothing_is_left(store: ResultStore) -> None:
    # Every fourth item kills its worker: the pool is rebuilt and the item computed again alone, seconds of
    # wall time each that no row's duration_s holds. The metric itself takes about no time.
    items = toy_items([f"crash{i}" if i % 4 == 1 else f"ok{i}" for i in range(12)])
    seen: list[tuple[int, float | None, float]] = []

    def progress(row: ResultRow, summary: RunSummary) -> None:
        seen.append((summary.computed, summary.estimate_s, time.perf_counter()))

    s = score_items(items, build_requests(["test_crash"]), store, executor=LocalProcessExecutor(2),
                    progress=progress)
    assert (s.ok, s.failed) == (9, 3)
    end = time.perf_counter()
    # Two thirds through (RunPace counts from the first result on, once 3 a worker are in), the estimate
    # names a good part of the time the run still took (the old one, metric seconds only, said a few
    # milliseconds: "about 0 s left").
    done, estimate, at = next(entry for entry in seen if entry[0] >= 8)
    assert done < 12 and estimate is not None
    assert estimate >= 0.2 * (end - at), (estimate, end - at, seen)


def test_worker_start_up_is_not_counted_per_result() -> None:
    # review rev9: 10 s of worker start-up before the first result, counted per result over the first few,
    # made a 4,000-result run of 50 ms metrics on 2 workers look hours long with minutes left
    costs, left = _run(4000)
    pace = RunPace()
    assert pace.first(10.0) and not pace.first(10.5)  # the clock starts at the first finished task
    _finish(costs, left, pace, 100, 0.05)
    assert pace.overhead(now=10.0 + 100 * 0.05 / 2, workers=2) == pytest.approx(0.0)
    assert costs.remaining(left, 2, pace.overhead(now=12.5, workers=2)) == pytest.approx(3900 * 0.05 / 2)
    # the old clock, from the run's start: (12.5 - 2.5) s / 100 results = 0.1 s a result, 390 s more
    old = RunPace(started=0.0)
    _finish(CostModel(), Outstanding(), old, 100, 0.05)
    assert old.overhead(now=12.5, workers=2) == pytest.approx(0.1)
    # too few results to tell: nothing beyond the metrics yet
    few = RunPace(started=0.0)
    few.add(5, 0.0)
    assert few.overhead(now=100.0, workers=2) == 0.0
