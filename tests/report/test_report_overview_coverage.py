"""The overview says what each generator's means rest on (audit aggedge F2, F6): per-generator n and
failed in tables/summary.*, a note when a generator's mean is over some of its items only, and the values
outside a metric's native range that the means keep."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from _report_data import higher_is_better

from robojudge.report._sections import ReportInput, overview_section
from robojudge.store import ResultRow
from robojudge.suite import Item


def _ok(item: str, metric: str, value: float) -> ResultRow:
    return ResultRow(item, metric, "h", "1", "ok", value)


def _failed(item: str, metric: str) -> ResultRow:
    return ResultRow(item, metric, "h", "1", "error", None, error="boom")


def test_overview_counts_each_generator_and_says_means_rest_on_different_items() -> None:
    # A is B + 0.05 on every clip; B failed on its 10 lowest clips (audit scenario p).
    items = [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", source="s", generator=g)
             for g in "AB" for c in range(20)]
    base = [0.30 + 0.02 * c for c in range(20)]
    rows = [_ok(f"A{c}", "iq1_ssim", base[c] + 0.05) for c in range(20)]
    rows += [_failed(f"B{c}", "iq1_ssim") if c < 10 else _ok(f"B{c}", "iq1_ssim", base[c]) for c in range(20)]
    sec = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=0,
                                       native_range=lambda m: (0.0, 1.0)))
    table = sec.tables[0]
    (row,) = list(csv.DictReader(io.StringIO(table.to_csv())))
    # By hand: A over its 20 clips, B over its 10 highest; on the clips both have, A is the higher.
    assert float(row["A"]) == pytest.approx(np.mean(base) + 0.05)  # 0.54
    assert float(row["B"]) == pytest.approx(np.mean(base[10:]))  # 0.59
    assert (row["n A"], row["failed A"], row["n B"], row["failed B"]) == ("20", "0", "10", "10")
    assert "iq1_ssim: B 10 of 20 (10 failed)" in table.note and "different items" in table.note
    md = table.to_markdown()
    assert "| n A | failed A | n B | failed B |" in md


def test_overview_alike_generators_get_no_coverage_note() -> None:
    items = [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", generator=g)
             for g in "AB" for c in range(4)]
    rows = [_ok(it.item_id, "iq1_ssim", 0.5) for it in items]
    table = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=0)).tables[0]
    assert "some items only" not in table.note and "outside" not in table.note


def test_overview_names_values_outside_the_range() -> None:
    items = [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", generator=g)
             for g in "AB" for c in range(3)]
    rows = [_ok(it.item_id, "ts_action_planner", 1.0) for it in items]
    rows[0] = _ok("A0", "ts_action_planner", 1.5)  # raw value outside ts_action_planner's [0, 1]
    inp = ReportInput(rows, items, higher_is_better, bootstrap=0, native_range=lambda m: (0.0, 1.0))
    table = overview_section(inp).tables[0]
    assert "ts_action_planner (1, e.g. 1.5, range [0, 1])" in table.note
    # The mean keeps it, as the note says: (1.5 + 1 + 1) / 3.
    (row,) = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert float(row["A"]) == pytest.approx(3.5 / 3)
