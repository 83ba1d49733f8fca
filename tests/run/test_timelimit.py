"""The per-metric time limit (``robojudge score --timeout``, :mod:`robojudge.run._timelimit`)."""

from __future__ import annotations

import json
import signal
import threading
import time

import _toy_metrics  # registers the test metrics (tests/run is on sys.path); toy_items
import pytest

from robojudge.cli import build_app
from robojudge.run import LocalProcessExecutor, SerialExecutor, build_requests, score_items
from robojudge.run._timelimit import TimeLimitExceeded, soft_limit_available, time_limit
from robojudge.store import ResultStore
from robojudge.suite import Item

_items = _toy_metrics.toy_items


def test_stops_a_loop_that_never_ends_even_behind_a_broad_except():
    start = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as got, time_limit(0.3):
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001, S112
                continue
    took = time.monotonic() - start
    assert 0.29 <= took < 3.0
    assert got.value.seconds == 0.3 and "0.3 s" in str(got.value)


def test_a_body_within_the_limit_is_untouched_and_the_callers_timer_is_put_back():
    fired = []
    before = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        with time_limit(2.0):
            time.sleep(0.2)
            assert signal.getitimer(signal.ITIMER_REAL)[0] <= 2.0  # ours runs meanwhile
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 4.0 < left < 4.9  # the caller's 5 s, less the 0.2 s spent inside
        assert fired == []
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        time.sleep(0.3)
        assert fired == [1]  # the caller's handler is back
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    # no timer of ours is left behind either
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_no_limit_and_bad_limits():
    with time_limit(None):
        time.sleep(0.01)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="more than 0"), time_limit(bad):
            pass


def test_off_the_main_thread_there_is_no_soft_limit():
    seen = {}

    def body():
        seen["available"] = soft_limit_available()
        with time_limit(0.05):
            time.sleep(0.2)
        seen["finished"] = True

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert seen == {"available": False, "finished": True}
    assert soft_limit_available()


@pytest.mark.parametrize("executor", [SerialExecutor, lambda: LocalProcessExecutor(2)],
                         ids=["serial", "pool"])
def test_a_hung_metric_costs_its_row_only(store, executor):
    items = _items(["a1", "hang1", "a2", "a3"])
    reqs = build_requests(["test_hang", "test_slow"], {"test_slow": {"seconds": 0.0}})
    start = time.monotonic()
    s = score_items(items, reqs, store, executor=executor(), timeout_s=0.5)
    assert time.monotonic() - start < 60
    assert (s.ok, s.failed) == (7, 1)
    (err,) = s.errors
    assert (err.item_id, err.metric) == ("hang1", "test_hang")
    assert "time limit of 0.5 s (--timeout)" in err.error and "--retry-errors" in err.error
    assert 0.5 <= err.duration_s < 10
    # the hung item's other metric still ran, in the same task
    assert {r.item_id for r in store.rows(metric="test_slow", status="ok")} == {"a1", "hang1", "a2", "a3"}
    # a rerun keeps the error; --retry-errors with a limit tries it again (and it times out again)
    again = score_items(items, reqs, store, executor=executor(), timeout_s=0.5, retry_errors=True)
    assert (again.computed, again.failed) == (1, 1)


def test_native_hang_in_a_worker_ends_the_worker_and_the_run_goes_on(store):
    items = _items(["n1", "hang1", "n2", "n3", "n4"])
    start = time.monotonic()
    s = score_items(items, build_requests(["test_hang_native"]), store, executor=LocalProcessExecutor(2),
                    timeout_s=0.3)
    assert time.monotonic() - start < 90
    assert (s.ok, s.failed) == (4, 1)
    (err,) = s.errors
    assert err.item_id == "hang1"
    assert "worker process died" in err.error and "time limit (0.3 s, --timeout)" in err.error


def test_bad_limit_is_refused_before_anything_runs(store):
    with pytest.raises(ValueError, match="more than 0"):
        score_items(_items(["a"]), build_requests(["test_slow"]), store, timeout_s=0)
    assert store.count() == 0


def test_cli_timeout(tmp_path):
    from typer.testing import CliRunner

    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": str(tmp_path / f"{n}.mp4"),
                                            "instruction": "do it"}) + "\n" for n in ("ok1", "hang1")))
    for n in ("ok1", "hang1"):
        (tmp_path / f"{n}.mp4").write_bytes(b"not a video")
    db = tmp_path / "r.sqlite"
    runner = CliRunner()
    res = runner.invoke(build_app("score"), ["score", str(manifest), "-m", "test_hang", "--db", str(db),
                                             "--timeout", "0.4", "--no-progress"])
    assert "time limit of 0.4 s" in res.output, res.output
    with ResultStore(f"sqlite:///{db}") as s:
        rows = {r.item_id: r for r in s.rows(metric="test_hang")}
    assert rows["ok1"].status == "ok" and rows["hang1"].status == "error"
    res = runner.invoke(build_app("score"), ["score", str(manifest), "-m", "test_hang", "--db", str(db),
                                             "--timeout", "0", "--no-progress"])
    assert res.exit_code == 2 and "--timeout" in res.output


def test_a_hung_set_metric_costs_its_group(tmp_path):
    import importlib
    import sys

    from robojudge.metrics import METRICS, SET_METRICS
    from robojudge.run import score_sets_into

    items = [Item(item_id=n, video="/nonexistent.mp4", instruction="x", generator=g)
             for n, g in (("a1", "a"), ("h1", "hang"), ("b1", "b"))]
    # registered for this test only: the other tests of this process must not see test_set_hang
    try:
        with METRICS.scratch(), SET_METRICS.scratch(), ResultStore(tmp_path / "r.sqlite") as store:
            importlib.import_module("_toy_set_hang")
            s = score_sets_into(store, items, ["test_set_hang"], timeout_s=0.4)
            rows = {r.item_id: r for r in store.rows()}
    finally:
        sys.modules.pop("_toy_set_hang", None)
    assert s.computed == 3
    assert rows["group:generator=a"].value == 1.0 and rows["group:generator=b"].status == "ok"
    hung = rows["group:generator=hang"]
    assert hung.status == "error" and "time limit of 0.4 s (--timeout)" in hung.error
    assert "computing the group" in hung.error
    with pytest.raises(ValueError, match="more than 0"), ResultStore(tmp_path / "r2.sqlite") as store:
        score_sets_into(store, items, ["test_set_hang"], timeout_s=-1)


def test_metrics_sets_timeout_needs_the_store(tmp_path):
    from typer.testing import CliRunner

    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": "v.mp4", "instruction": "x"}) + "\n")
    res = CliRunner().invoke(build_app("metrics"), ["metrics", "sets", str(manifest), "-m", "iq1_fvd",
                                                    "--no-store", "--timeout", "5"])
    assert res.exit_code == 2 and "--timeout work on the store" in res.output


def test_limits_nest_an_earlier_deadline_is_kept():
    # An enclosing limit (or a caller's alarm) that is due first is not pushed back by inner limits:
    # before, each metric's limit replaced it, and a caller's 0.3 s alarm went off after all of them.
    start = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as got, time_limit(0.3):
        for _ in range(10):
            with time_limit(5.0):
                time.sleep(0.1)
    assert got.value.seconds == 0.3 and time.monotonic() - start < 0.6
    fired = []
    before = signal.signal(signal.SIGALRM, lambda *_: fired.append(time.monotonic() - start))
    try:
        start = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        for _ in range(8):
            with time_limit(2.0):
                time.sleep(0.1)
        assert len(fired) == 1 and fired[0] < 0.55
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


_HARD = """
import signal, sys, time
from robojudge.run._timelimit import allow_hard_limit, time_limit
allow_hard_limit()
signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGALRM}})  # only the watchdog can stop this process
{body}
print("alive", flush=True)
"""


@pytest.mark.parametrize(("body", "alive"), [
    # an inner limit ends: the outer watchdog is armed again (not cancelled, and not fired)
    ("with time_limit(100):\n    with time_limit(0.2):\n        pass\n    time.sleep(2.5)", True),
    # the outer watchdog (0.3 + 1 s) is due first: the inner 100 s limit does not replace it
    ("with time_limit(0.3):\n    with time_limit(100):\n        time.sleep(5)", False),
], ids=["inner-ends", "outer-first"])
def test_the_watchdog_nests(body, alive):
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", _HARD.format(body=body)], capture_output=True, text=True,
                         timeout=60)
    assert ("alive" in res.stdout) == alive, (res.stdout, res.stderr[-500:])
    if not alive:
        assert res.returncode != 0 and "Timeout" in res.stderr  # faulthandler's stack dump


@pytest.mark.parametrize("bad", ["inf", "nan", "1e10", "0"])
def test_limits_out_of_range_are_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="at most 2.592e\\+06"), ResultStore(tmp_path / "r.sqlite") as store:
        score_items(_items(["a"]), build_requests(["test_slow"]), store, timeout_s=float(bad))


def test_a_callers_heartbeat_neither_disables_the_limit_nor_is_lost():
    # A caller's periodic alarm whose handler returns (a heartbeat) switched the limit off: the limit
    # was armed only when no earlier alarm was pending, and the heartbeat's did not raise.
    beats = []
    before = signal.signal(signal.SIGALRM, lambda *_: beats.append(time.monotonic()))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
        start = time.monotonic()
        with pytest.raises(TimeLimitExceeded), time_limit(0.5):
            while True:
                time.sleep(0.01)
        assert 0.49 <= time.monotonic() - start < 1.5
        assert len(beats) >= 5  # the heartbeat went on beating meanwhile
        during = len(beats)
        time.sleep(0.3)
        assert len(beats) >= during + 3  # ... and after: its timer is back, periodic
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def test_an_enclosing_limit_is_not_taken_for_the_metrics_own(store):
    # A caller's limit passing inside a metric was stored as that metric's --timeout row and the run
    # went on; it is the caller's, and reaches the caller.
    items = _items(["a1", "hang1"])
    with pytest.raises(TimeLimitExceeded) as got, time_limit(0.5) as outer:
        score_items(items, build_requests(["test_hang"]), store, executor=SerialExecutor(), timeout_s=100)
    assert got.value.limit is outer
    assert not [r for r in store.rows() if r.status == "error"]
