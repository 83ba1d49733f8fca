"""Judge self-consistency across turns (RoboWorM Table D3) from the stored rows.

Only the judge command's summary gave it, counting the items judged in that invocation: a run split in
two printed 100% and then 50%, and a rerun nothing, while the stored rows give 66.7%. The report's
overview now gives it per judge configuration and rubric over every stored row of the suite's items.
"""

from __future__ import annotations

import pytest
from _report_data import higher_is_better

from robojudge.report import judge_self_consistency
from robojudge.report._sections import ReportInput, overview_section
from robojudge.store import ResultRow
from robojudge.suite import Item


def _voted(item: str, axis: str, votes: list[float], config: str = "h") -> ResultRow:
    mean = sum(votes) / len(votes)
    std = (sum((v - mean) ** 2 for v in votes) / len(votes)) ** 0.5
    agree = len(set(votes)) == 1
    return ResultRow(item, f"judge:vlm:{axis}", config, "1", "ok", max(set(votes), key=votes.count),
                     details={"votes": votes, "mean": mean, "std": std, "agreement": agree,
                              "valid_turns": len(votes), "turns": len(votes)})


def test_agreement_and_std_over_every_stored_row_of_the_suite() -> None:
    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(3)]
    rows = [_voted("i0", "pa", [3, 3, 3]), _voted("i1", "pa", [3, 4, 3]), _voted("i2", "pa", [2, 2, 2]),
            _voted("i0", "ia", [5, 5, 5]),
            _voted("other", "pa", [1, 5, 3]),  # not an item of the suite
            ResultRow("i1", "judge:vlm:ia", "h", "1", "ok", 4.0)]  # judged with one turn: no votes
    (pa, ia) = sorted(judge_self_consistency(rows, items), key=lambda c: c.axis, reverse=True)
    assert (pa.judge, pa.axis, pa.items, pa.agree, pa.turns) == ("vlm", "pa", 3, 2, (3,))
    assert pa.agreement_rate == pytest.approx(2 / 3)
    assert pa.mean_std == pytest.approx((0 + (2 / 9) ** 0.5 + 0) / 3)
    assert (ia.items, ia.agree, ia.mean_std) == (1, 1, 0.0)
    sec = overview_section(ReportInput(rows, items, higher_is_better))
    (table,) = [t for t in sec.tables if t.name == "judge_self_consistency"]
    assert [[c.text for c in r[:4]] for r in table.rows] == [["vlm", "IA", "1", "3"], ["vlm", "PA", "3", "3"]]
    assert table.rows[1][4].value == pytest.approx(200 / 3)


def test_no_table_without_voted_rows() -> None:
    items = [Item(item_id="i0", video="v.mp4")]
    rows = [ResultRow("i0", "judge:vlm:pa", "h", "1", "ok", 4.0)]
    assert judge_self_consistency(rows, items) == []
    sec = overview_section(ReportInput(rows, items, higher_is_better))
    assert not [t for t in sec.tables if t.name == "judge_self_consistency"]
