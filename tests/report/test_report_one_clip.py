"""A group whose values come from one clip has no interval in the report's summary: resampling one
cluster gives the mean back every time, and [m, m] would read as certainty."""

from __future__ import annotations

import math

from _report_data import higher_is_better

from robojudge.report._sections import ReportInput, overview_section
from robojudge.store import ResultRow
from robojudge.suite import Item


def test_one_clip_gets_no_interval_and_two_do() -> None:
    items = [Item(item_id="a1", video="v.mp4", clip_id="c1", generator="a"),
             Item(item_id="a2", video="v.mp4", clip_id="c2", generator="a"),
             Item(item_id="b1", video="v.mp4", clip_id="c1", generator="b"),
             Item(item_id="b2", video="v.mp4", clip_id="c1", generator="b")]  # two items, one clip
    values = {"a1": 1.0, "a2": 3.0, "b1": 2.0, "b2": 2.5}
    rows = [ResultRow(item_id=i, metric="iq1_psnr", config_hash="h", version="1", status="ok", value=v)
            for i, v in values.items()]
    table = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=200)).tables[0]
    header = table.columns
    row = table.rows[0]
    a, b = row[header.index("a")], row[header.index("b")]
    assert a.value == 2.0 and a.low < a.high  # two clips: an interval
    assert b.value == 2.25 and math.isnan(b.low) and math.isnan(b.high)  # one clip: none
    assert b.formatted().strip().startswith("2.25") and "[" not in b.formatted()
