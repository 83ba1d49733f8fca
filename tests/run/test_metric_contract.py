"""A metric that breaks its own contract (no Score, an infinite value, one outside its declared native
range) costs its own rows, as error rows naming it and what it returned, with 1 worker and with 2; the
item's other metrics are stored, and NaN stays the documented "unscored" value."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from robojudge.run import (
    LocalProcessExecutor,
    ResultImportError,
    SerialExecutor,
    build_requests,
    import_results,
    score_items,
)
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


@EXECUTORS
def test_infinite_and_out_of_range_values_are_error_rows(contract_toy: ModuleType, store: ResultStore,
                                                         executor) -> None:  # type: ignore[no-untyped-def]
    items = _items("mid", "high", "low", "edge0", "edge1", "inf", "neginf", "nan", "bare_nan")
    run = score_items(items, build_requests(["test_out_of_range", "test_infinite", "test_fine"]), store,
                      executor=executor())
    errors = {(r.item_id, r.metric): r.error for r in store.rows(status="error")}
    assert set(errors) == {("high", "test_out_of_range"), ("low", "test_out_of_range"),
                           ("inf", "test_infinite"), ("neginf", "test_infinite")}
    assert errors[("high", "test_out_of_range")].startswith(
        "7.5 is outside the native range [0, 1] of metric 'test_out_of_range': not stored as a value")
    assert errors[("low", "test_out_of_range")].startswith("-3.0 is outside the native range [0, 1]")
    assert errors[("inf", "test_infinite")].startswith(
        "value inf is not a finite number (metric 'test_infinite'): not stored as a value")
    assert errors[("neginf", "test_infinite")].startswith("value -inf is not a finite number")
    ok = {(r.item_id, r.metric): r for r in store.rows(status="ok")}
    assert ok[("edge0", "test_out_of_range")].value == 0.0 and ok[("edge1", "test_out_of_range")].value == 1.0
    assert ok[("mid", "test_infinite")].value == 1e300  # finite, however large, in [0, inf]
    # NaN is "unscored", an ok row, with or without a reason
    assert not ok[("nan", "test_infinite")].scored
    assert ok[("nan", "test_infinite")].details["unscored_reason"] == "nothing to measure here"
    assert not ok[("bare_nan", "test_infinite")].scored
    assert (run.ok, run.failed, run.unscored) == (27 - 4, 4, 2)


def test_scoring_refuses_a_value_with_the_words_of_results_import(contract_toy: ModuleType, tmp_path: Path,
                                                                  store: ResultStore) -> None:
    score_items(_items("high", "inf"), build_requests(["test_out_of_range", "test_infinite"]), store)
    scored = {(r.item_id, r.metric): r.error for r in store.rows(status="error")}
    csv = tmp_path / "values.csv"
    csv.write_text("item_id,metric,value\nhigh,test_out_of_range,7.5\ninf,test_infinite,inf\n")
    with ResultStore(tmp_path / "imported.sqlite") as other, pytest.raises(ResultImportError) as refused:
        import_results(other, csv, allow_computed=True)
    problems = refused.value.problems
    assert [p.item_id for p in problems] == ["high", "inf"]
    assert problems[0].message == "7.5 is outside the native range [0, 1] of metric 'test_out_of_range'"
    assert problems[1].message == "value 'inf' is not a finite number (metric 'test_infinite')"
    assert scored[("high", "test_out_of_range")].startswith(problems[0].message + ": ")
    # the file's cell is quoted as written ('inf'), the computed value as Python prints it
    assert scored[("inf", "test_infinite")].startswith(problems[1].message.replace("'inf'", "inf") + ": ")


def test_a_networks_value_past_its_nominal_range_is_kept_with_a_note() -> None:
    # CI: MUSIQ with random full-size weights gave a value outside [0, 1] and became an error row. A
    # network's head is bounded by no construction (provider "model"): its finite value stays, the problem
    # noted in its details; a computed metric's is refused, and an infinite value always is.
    import math

    from robojudge.metrics import METRICS, Score, metric
    from robojudge.run import MetricRequest, compute_metric

    with METRICS.scratch():
        for name, provider in (("test_net", "model"), ("test_formula", "computed")):
            @metric(name, family="baseline", inputs={"instruction"}, higher_is_better=True, version="1",
                    citation="test", description="test-only metric", native_range=(0.0, 1.0),
                    provider=provider)
            def value(item: Item, config: object) -> Score:
                return Score(value=math.inf if item.item_id == "inf" else 1.7)

        (item,), (inf,) = _items("a"), _items("inf")
        net = compute_metric(item, MetricRequest.build("test_net"))
        assert net.status == "ok" and net.value == 1.7
        assert "1.7 is outside the native range [0, 1] of metric 'test_net'" in net.details["outside_range"]
        assert compute_metric(item, MetricRequest.build("test_formula")).status == "error"
        assert compute_metric(inf, MetricRequest.build("test_net")).status == "error"
