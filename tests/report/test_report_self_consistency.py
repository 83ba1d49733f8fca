"""Judge self-consistency across turns (RoboWorM Table D3) from the stored rows.

Only the judge command's summary gave it, counting the items judged in that invocation: a run split in
two printed 100% and then 50%, and a rerun nothing, while the stored rows give 66.7%. The report's
overview now gives it per judge configuration and rubric over every stored row of the suite's items.
"""

from __future__ import annotations

from typing import Any

import pytest
from _report_data import higher_is_better

from robojudge.judges import get_rubric
from robojudge.report import judge_self_consistency
from robojudge.report._sections import ReportInput, overview_section
from robojudge.store import ResultRow
from robojudge.suite import Item


def _voted(item: str, axis: str, votes: list[float], config: str = "h", *, latency: float | None = None,
           settings: dict[str, Any] | None = None) -> ResultRow:
    mean = sum(votes) / len(votes)
    std = (sum((v - mean) ** 2 for v in votes) / len(votes)) ** 0.5
    agree = len(set(votes)) == 1
    details: dict[str, Any] = {"votes": votes, "mean": mean, "std": std, "agreement": agree,
                               "valid_turns": len(votes), "turns": len(votes)}
    if latency is not None:
        details["latency_per_video_s"] = latency
    return ResultRow(item, f"judge:vlm:{axis}", config, "1", "ok", max(set(votes), key=votes.count),
                     details=details, config=settings)


def test_agreement_and_std_over_every_stored_row_of_the_suite() -> None:
    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(3)]
    rows = [_voted("i0", "pa", [3, 3, 3]), _voted("i1", "pa", [3, 4, 3]), _voted("i2", "pa", [2, 2, 2]),
            _voted("i0", "ia", [5, 5, 5]),
            _voted("other", "pa", [1, 5, 3]),  # not an item of the suite
            ResultRow("i1", "judge:vlm:ia", "h", "1", "ok", 4.0)]  # judged with one turn: no votes
    (pa, ia) = sorted(judge_self_consistency(rows, items), key=lambda c: c.rubric, reverse=True)
    assert (pa.judge, pa.rubric, pa.items, pa.agree, pa.turns) == ("vlm", "pa", 3, 2, (3,))
    assert pa.agreement_rate == pytest.approx(2 / 3)
    assert pa.mean_std == pytest.approx((0 + (2 / 9) ** 0.5 + 0) / 3)
    assert (ia.items, ia.agree, ia.mean_std) == (1, 1, 0.0)
    sec = overview_section(ReportInput(rows, items, higher_is_better))
    (table,) = [t for t in sec.tables if t.name == "judge_self_consistency"]
    assert [[c.text for c in r[:5]] for r in table.rows] == [["vlm", "ia", "", "1", "3"],
                                                             ["vlm", "pa", "", "3", "3"]]
    assert table.rows[1][5].value == pytest.approx(200 / 3)


def test_no_table_without_voted_rows() -> None:
    items = [Item(item_id="i0", video="v.mp4")]
    rows = [ResultRow("i0", "judge:vlm:pa", "h", "1", "ok", 4.0)]
    assert judge_self_consistency(rows, items) == []
    sec = overview_section(ReportInput(rows, items, higher_is_better))
    assert not [t for t in sec.tables if t.name == "judge_self_consistency"]


def _settings(rubric: str, model: str = "m1") -> dict[str, Any]:
    built_in = get_rubric(rubric)
    return {"model": model, "samples": 3,
            "rubric": {"id": rubric, "version": built_in.version, "digest": built_in.digest}}


def test_every_voted_rubric_has_its_own_row_with_scale_and_latency() -> None:
    """RoboWorM Table D3 measures the embodied-physics verdict: its rows were stored with votes and left
    out of the table, which looked at PA and IA only."""
    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(2)]
    phys = _settings("roboworm_physics")
    rows = [_voted("i0", "pa", [3, 3, 3], latency=0.5, settings=_settings("pa")),
            _voted("i1", "pa", [2, 4, 3], latency=1.5, settings=_settings("pa")),
            _voted("i0", "roboworm_physics", [3, 3, 2], "p", latency=0.25, settings=phys),
            _voted("i1", "roboworm_physics", [1, 1, 1], "p", settings=phys)]
    (pa, verdict) = judge_self_consistency(rows, items)
    # the physics rows share the PA rows' settings (config less the rubric): the same judge label
    assert (verdict.judge, verdict.rubric, verdict.items, verdict.agree) == ("vlm", "roboworm_physics", 2, 1)
    assert verdict.scale == (1.0, 3.0)
    # std of (3, 3, 2) = sqrt(2/9); (1, 1, 1) = 0; latency: the one row that says
    assert verdict.mean_std == pytest.approx((2 / 9) ** 0.5 / 2) and verdict.latency_per_video_s == 0.25
    assert pa.scale == (1.0, 5.0) and pa.latency_per_video_s == pytest.approx(1.0)
    sec = overview_section(ReportInput(rows, items, higher_is_better))
    (table,) = [t for t in sec.tables if t.name == "judge_self_consistency"]
    assert [[c.text for c in r[:5]] for r in table.rows] == [["vlm", "pa", "1-5", "2", "3"],
                                                             ["vlm", "roboworm_physics", "1-3", "2", "3"]]
    assert [r[5].value for r in table.rows] == [50.0, 50.0]
    assert table.rows[1][7].value == 0.25
    assert "agree %" in table.to_markdown() and "latency per video s" in table.to_csv()
    assert "roboworm\\_physics" in table.to_latex()


def test_a_rubric_judged_with_other_settings_keeps_its_own_label() -> None:
    """Two PA/IA configurations of one judge name; the physics rows match neither (another model): they
    are labelled by their own settings, never merged into a PA/IA judge's row."""
    items = [Item(item_id="i0", video="v.mp4")]
    rows = [_voted("i0", "pa", [3, 3, 3], "a", settings=_settings("pa", "m1")),
            _voted("i0", "pa", [4, 4, 4], "b", settings=_settings("pa", "m2")),
            _voted("i0", "roboworm_physics", [2, 2, 2], "c", settings=_settings("roboworm_physics", "m3")),
            _voted("i0", "roboworm_physics", [3, 3, 3], "d", settings=_settings("roboworm_physics", "m1"))]
    got = {(c.judge, c.rubric) for c in judge_self_consistency(rows, items)}
    assert got == {("vlm [model=m1]", "pa"), ("vlm [model=m2]", "pa"), ("vlm [model=m1]", "roboworm_physics"),
                   ("vlm [model=m3]", "roboworm_physics")}


def test_turn_counts_read_from_old_and_new_rows() -> None:
    """Rows stored before ``n_turns`` held the count in ``turns``; newer rows keep the turns' records there
    (``--samples`` used to overwrite them with the count)."""
    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(3)]
    old = _voted("i0", "pa", [3, 3, 3])
    new = _voted("i1", "pa", [4, 4, 4, 4, 4])
    assert new.details is not None
    new.details.update(turns=[{"score": 4.0, "response": {"model": "m"}}] * 5, n_turns=5)
    records_only = _voted("i2", "pa", [2, 2])
    assert records_only.details is not None
    records_only.details["turns"] = [{"score": 2.0}, {"score": 2.0}]
    (pa,) = judge_self_consistency([old, new, records_only], items)
    assert pa.turns == (2, 3, 5) and pa.items == 3
    from robojudge.report._judges import turn_count

    assert turn_count({"turns": 3}) == 3 and turn_count({"n_turns": 5, "turns": [{}] * 5}) == 5
    assert turn_count({"votes": [1, 2]}) == 2 and turn_count({}) == 0


def test_a_turn_whose_request_failed_is_no_disagreement() -> None:
    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(3)]
    # as stored before the fix: agreement False because one turn's request failed
    failed = _voted("i0", "pa", [4, 4, 4, 4])
    assert failed.details is not None
    failed.details.update(votes=[4, 4, 4, 4, None], agreement=False, failed_turns=[5], n_turns=5)
    unparsable = _voted("i1", "pa", [4, 4, 4, 4])  # an unparsable turn is a disagreement still
    assert unparsable.details is not None
    unparsable.details.update(votes=[4, None, 4, 4, 4], agreement=False, n_turns=5)
    rows = [failed, unparsable, _voted("i2", "pa", [3, 3, 3, 3, 3])]
    (pa,) = judge_self_consistency(rows, items)
    assert (pa.items, pa.agree, pa.partial) == (3, 2, 1)
    sec = overview_section(ReportInput(rows, items, higher_is_better))
    (table,) = [t for t in sec.tables if t.name == "judge_self_consistency"]
    assert table.rows[0][5].value == pytest.approx(200 / 3)
    assert "over the turns that answered" in table.note and "vlm pa: 1 of 3" in table.note
