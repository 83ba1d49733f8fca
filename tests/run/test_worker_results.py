"""What a worker process sends back: a row whose details a pool cannot pickle, and the traceback of a metric
that raised (audit logging F2, F3)."""

import _toy_metrics  # registers the test metrics (tests/run is on sys.path); toy_items
import pytest

from robojudge.run import LocalProcessExecutor, SerialExecutor, build_requests, score_items

_items = _toy_metrics.toy_items


def _no_crash(task: int, reason: str) -> str:
    return f"crash: {reason}"


EXECUTORS = pytest.mark.parametrize("executor", [SerialExecutor, lambda: LocalProcessExecutor(2)],
                                    ids=["serial", "pool"])


@EXECUTORS
def test_details_that_cannot_be_pickled_are_stored_as_text_whatever_the_workers(store, executor):
    # Before, a pool's run ended at the first such row (TypeError: cannot pickle '_thread.lock' object),
    # and every resume with it; one worker stored the lock's text.
    items = _items(["a", "lock1", "b", "lock2"])
    reqs = build_requests(["test_lock_details", "test_slow"], {"test_slow": {"seconds": 0.0}})
    s = score_items(items, reqs, store, executor=executor())
    assert (s.total, s.ok, s.failed) == (8, 8, 0)
    (row,) = [r for r in store.rows(metric="test_lock_details") if r.item_id == "lock1"]
    assert row.status == "ok" and "_thread.lock" in row.details["lock"]


def test_a_result_the_pool_cannot_send_back_costs_its_task_only():
    ex = LocalProcessExecutor(2)
    out = dict(ex.map_unordered(_toy_metrics.unpicklable_for_negative, [1, -2, 3, 4], _no_crash))
    assert out[1] == 1 and out[3] == 3 and out[4] == 4
    assert out[-2].startswith("crash: no result came back from the worker process for this item (")
    assert "cannot pickle 'Unpicklable'" in out[-2]


@EXECUTORS
def test_a_metric_that_raises_keeps_type_message_notes_and_where(store, executor):
    items, reqs = _items(["note1", "fine"]), build_requests(["test_noted_raise"])
    s = score_items(items, reqs, store, executor=executor())
    assert (s.ok, s.failed) == (1, 1)
    (row,) = store.rows(status="error")
    # Before: "metric raised while fitting view cam0 of note1" (the note alone) and no details.
    assert row.error == "metric raised KeyError: 'note1' (while fitting view cam0 of note1)"
    tb = row.details["traceback"]
    assert tb.startswith("Traceback") and "_toy_metrics.py" in tb and "in _fit_view" in tb
    assert tb.rstrip().endswith("while fitting view cam0 of note1")
