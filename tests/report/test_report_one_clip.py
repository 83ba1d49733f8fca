"""A group whose values come from fewer than MIN_CLUSTERS (3) clips has no interval in the report's
summary: resampling one clip gives the mean back every time, two can only be recombined, and [m, m]
would read as certainty (docs/meta.md, "Tiny samples get no interval")."""

from __future__ import annotations

import math

from _report_data import higher_is_better

from robojudge.meta import MIN_CLUSTERS
from robojudge.report._sections import ReportInput, overview_section
from robojudge.store import ResultRow
from robojudge.suite import Item


def test_one_or_two_clips_get_no_interval_and_three_do() -> None:
    assert MIN_CLUSTERS == 3
    items = [Item(item_id="a1", video="v.mp4", clip_id="c1", generator="a"),
             Item(item_id="a2", video="v.mp4", clip_id="c2", generator="a"),
             Item(item_id="a3", video="v.mp4", clip_id="c3", generator="a"),  # three clips
             Item(item_id="b1", video="v.mp4", clip_id="c1", generator="b"),
             Item(item_id="b2", video="v.mp4", clip_id="c1", generator="b"),  # two items, one clip
             Item(item_id="c1", video="v.mp4", clip_id="c1", generator="c"),
             Item(item_id="c2", video="v.mp4", clip_id="c2", generator="c")]  # two clips
    values = {"a1": 1.0, "a2": 3.0, "a3": 2.0, "b1": 2.0, "b2": 2.5, "c1": 4.0, "c2": 6.0}
    rows = [ResultRow(item_id=i, metric="iq1_psnr", config_hash="h", version="1", status="ok", value=v)
            for i, v in values.items()]
    section = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=200))
    table = section.tables[0]
    header = table.columns
    row = table.rows[0]
    a, b, c = (row[header.index(g)] for g in "abc")
    assert a.value == 2.0 and 1.0 <= a.low < a.high <= 3.0  # (1 + 3 + 2) / 3; three clips: an interval
    assert b.value == 2.25 and math.isnan(b.low) and math.isnan(b.high)  # one clip: none
    assert b.formatted().strip().startswith("2.25") and "[" not in b.formatted()
    # Two clips: the replicates draw c1 twice (4.0), c2 twice (6.0) or each once (5.0), so the interval
    # would be [4.0, 6.0] from two points; none is shown, as in the leaderboard (MIN_CLUSTERS).
    assert c.value == 5.0 and math.isnan(c.low) and math.isnan(c.high)
    assert c.formatted() == "5.00" and c.small
    assert "fewer than 3 clips has none" in section.intro


def test_clips_alone_in_their_source_are_named_under_the_overview() -> None:
    # Six clips share two sources; two more are each the only clip of their source: every replicate
    # draws those two once, so the overview's intervals are narrower than they should be, and it says so.
    items = [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", generator=g,
                  source="s0" if c < 3 else "s1" if c < 6 else f"only{c}") for c in range(8) for g in "ab"]
    rows = [ResultRow(item_id=it.item_id, metric="iq1_psnr", config_hash="h", version="1", status="ok",
                      value=float(k % 5)) for k, it in enumerate(items)]
    table = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=200)).tables[0]
    assert "2 of 8 clips are each the only clip of their source" in table.note
    plain = [it.model_copy(update={"source": None}) for it in items]
    table = overview_section(ReportInput(rows, plain, higher_is_better, bootstrap=200)).tables[0]
    assert "the only clip of" not in table.note
