"""A metric that breaks its own contract (no Score) costs its own rows, as error rows naming it and what
it returned, with 1 worker and with 2; the item's other metrics are stored."""

from __future__ import annotations

from types import ModuleType

import pytest

from robojudge.run import LocalProcessExecutor, SerialExecutor, build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item

EXECUTORS = pytest.mark.parametrize("executor", [SerialExecutor, lambda: LocalProcessExecutor(2)],
                                    ids=["serial", "pool"])


def _items(*names: str) -> list[Item]:
    return [Item(item_id=n, video=f"/nonexistent/{n}.mp4", instruction="do it") for n in names]


@EXECUTORS
def test_a_metric_that_returns_no_score_costs_its_own_rows(contract_toy: ModuleType, store: ResultStore,
                                                           executor) -> None:  # type: ignore[no-untyped-def]
    reqs = build_requests(["test_fine", "test_returns_float", "test_returns_none"])
    run = score_items(_items("a", "b"), reqs, store, executor=executor())
    assert (run.ok, run.failed) == (2, 4)
    assert {(r.item_id, r.value) for r in store.rows(metric="test_fine", status="ok")} == {("a", 0.25),
                                                                                          ("b", 0.25)}
    errors = {(r.item_id, r.metric): r.error for r in store.rows(status="error")}
    assert set(errors) == {(i, m) for i in "ab" for m in ("test_returns_float", "test_returns_none")}
    for item in "ab":
        assert errors[(item, "test_returns_float")].startswith(
            "metric 'test_returns_float' returned float 0.5, not a robojudge.metrics.Score: ")
        assert errors[(item, "test_returns_none")].startswith(
            "metric 'test_returns_none' returned None, not a robojudge.metrics.Score: ")
        assert "Score.unscored(reason)" in errors[(item, "test_returns_none")]
