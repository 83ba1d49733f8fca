"""Set-level metrics keep the value contract per-item metrics keep: an infinite value or one outside the
declared range is an error row, not an ok row (review rev8: only per-item scoring checked it); a value
past a range end by rounding only (a cosine of 1.0000000000000002) is inside, for both."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from robojudge.metrics import METRICS, SET_METRICS, Score, get_metric
from robojudge.metrics import _sets as sets
from robojudge.run import score_sets_into
from robojudge.store import ResultStore
from robojudge.suite import Item

VALUES = {"a": math.inf, "b": 1.5, "c": 1.0000000000000002, "d": 0.5}


def test_set_values_outside_the_contract_are_error_rows(tmp_path: Path) -> None:
    with METRICS.scratch(), SET_METRICS.scratch():
        @sets.set_metric("toy_set_contract", output="group", family="features", inputs={"video"},
                         higher_is_better=True, native_range=(0.0, 1.0), citation="toy", provider="computed",
                         description="a fixed value per generator")
        def fixed(group: sets.ItemGroup, config: object) -> sets.SetScores:
            return sets.SetScores(group=Score(value=VALUES[group.key]))

        items = [Item(item_id=f"i{g}", video=f"v{g}.mp4", generator=g) for g in VALUES]
        with ResultStore(tmp_path / "results.sqlite") as store:
            score_sets_into(store, items, ["toy_set_contract"], by="generator")
            rows = {r.item_id.split("=")[1]: r for r in store.rows()}
    assert rows["a"].status == "error" and "not a finite number" in (rows["a"].error or "")
    assert rows["b"].status == "error" and "1.5 is outside the native range [0, 1]" in (rows["b"].error or "")
    assert rows["c"].status == "ok" and rows["c"].value == pytest.approx(1.0)
    assert rows["d"].status == "ok" and rows["d"].value == 0.5


def test_rounding_past_a_range_end_is_inside() -> None:
    spec = get_metric("iq1_ssim")  # declared on [0, 1]
    assert spec.value_problem(1.0000000000000002) is None
    assert spec.value_problem(-1e-12) is None
    assert spec.value_problem(1.001) is not None and spec.value_problem(-0.001) is not None
