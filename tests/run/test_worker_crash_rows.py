"""A worker that died: the row says whether the time limit's hard guard ended it or it crashed, and a
warning naming the item follows the stack the worker printed (audit logging F6)."""

import logging

import _toy_metrics  # registers the test metrics (tests/run is on sys.path); toy_items
import pytest

from robojudge.run import LocalProcessExecutor, build_requests, score_items

_items = _toy_metrics.toy_items


def test_a_hard_timeout_is_named_as_one(store, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="robojudge.run"):
        s = score_items(_items(["n1", "hang1"]), build_requests(["test_hang_native"]), store,
                        executor=LocalProcessExecutor(2), timeout_s=0.3)
    (err,) = s.errors
    # Before: "... (exit status 1); or its code ran past the time limit ..., in which case ...": crash or not?
    assert ("(exit status 1): most likely a hard timeout, its code ran past the time limit (0.3 s, --timeout)"
            in err.error)
    assert "; or its code" not in err.error
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("hang1 / test_hang_native: the worker process died") for m in said), said


def test_a_crash_under_a_time_limit_is_not_called_a_timeout(store) -> None:
    s = score_items(_items(["n1", "crash1"]), build_requests(["test_segfault"]), store,
                    executor=LocalProcessExecutor(2), timeout_s=60)
    (err,) = s.errors
    assert "killed by SIGSEGV" in err.error
    assert "time limit" not in err.error  # before: "; or its code ran past the time limit (60 s ...)"


def test_a_result_that_never_came_back_is_not_hedged_as_a_timeout() -> None:
    # The worker lived on and sent no result (an object that cannot be pickled): no word of the time limit
    # (review rev14 F5), while a worker that died keeps it
    from robojudge.run._executor import NO_RESULT
    from robojudge.run._score import crash_reason

    lost = crash_reason(f"{NO_RESULT} (TypeError: cannot pickle 'Unpicklable' object)", 600)
    assert "time limit" not in lost and lost.endswith("--retry-errors tries it again")
    died = crash_reason("the worker process died while scoring this item (exit status 1)", 600)
    assert "most likely a hard timeout" in died and "exit(1)" in died
