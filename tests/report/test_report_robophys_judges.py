"""Judge rubric scores that feed a RoboPhys-3D metric enter the RoboPhys-3D scores under that metric.

docs/judges.md stores a rubric's score as ``judge:NAME:<rubric>`` on the metric's native scale "so
aggregate normalizes it with the taxonomy's rule", but the report read only non-judge series by id: a
scored ``pla_physical_commonsense`` (one of RoboPhyscore's eight default metrics) left the intro saying
none of the eight is stored and the PLA column out.
"""

from __future__ import annotations

import math

from _report_data import higher_is_better

from robojudge.report._robophys import robophys_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item

ITEMS = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
         for g in ("a", "b", "c") for k in range(3)]
PLA = {"a": [5, 4, 5], "b": [2, 3, 1], "c": [3, 3, 4]}


def _rows(pla_metric: str, *, chash: str = "h", details: dict[str, str] | None = None) -> list[ResultRow]:
    rows = [ResultRow(it.item_id, "iq1_psnr", "h", "1", "ok", 20.0 + i) for i, it in enumerate(ITEMS)]
    rows += [ResultRow(f"{g}{k}", pla_metric, chash, "1", "ok", float(v), details=details)
             for g, vs in PLA.items() for k, v in enumerate(vs)]
    return rows


def _table(rows: list[ResultRow]) -> tuple[str, dict[str, dict[str, float]]]:
    sec = robophys_section(ReportInput(rows, ITEMS, higher_is_better))
    assert sec.skipped is None
    (table, *_) = sec.tables
    def value(v: float) -> float | None:  # NaN (a column with no value) compares equal to itself here
        return None if math.isnan(v) else v

    return sec.intro, {r[0].text: {c: value(r[k].value) for k, c in enumerate(table.columns) if k}
                       for r in table.rows}


def test_a_judge_rubric_score_is_read_as_the_metric_it_feeds() -> None:
    intro, judged = _table(_rows("judge:mk:pla_physical_commonsense"))
    # the same values stored under the taxonomy id itself give the same table
    _, direct = _table(_rows("pla_physical_commonsense"))
    assert judged == direct
    assert "PLA" in judged["a"] and judged["a"]["PLA"] > judged["c"]["PLA"] > judged["b"]["PLA"]
    assert "2 of 50 taxonomy metrics are stored (iq1_psnr, pla_physical_commonsense)" in intro
    assert "the 1 of the paper's 8 default metrics that are stored (pla_physical_commonsense)" in intro
    assert "From judge rubrics" in intro and "judge:mk:pla_physical_commonsense" in intro
    assert all(v["RoboPhyscore (1/8)"] is not None for v in judged.values())


def test_a_user_rubric_declaring_its_taxonomy_metric_feeds_it() -> None:
    # a rubric file named otherwise, with `taxonomy = "pla_physical_commonsense"` (details.taxonomy_id)
    _, judged = _table(_rows("judge:mk:my_physics", details={"taxonomy_id": "pla_physical_commonsense"}))
    _, direct = _table(_rows("pla_physical_commonsense"))
    assert judged == direct
    _, unmapped = _table(_rows("judge:mk:my_physics"))
    assert "PLA" not in unmapped["a"]


def test_two_sources_of_one_metric_are_left_out_and_named() -> None:
    rows = _rows("judge:mk:pla_physical_commonsense")
    rows += [ResultRow(r.item_id, "judge:other:pla_physical_commonsense", "h2", "1", "ok", 1.0)
             for r in rows if r.metric.startswith("judge:")]
    intro, table = _table(rows)
    assert "PLA" not in table["a"]
    assert "several configurations or versions" in intro
    both = "judge:mk:pla_physical_commonsense, judge:other:pla_physical_commonsense"
    assert f"pla_physical_commonsense ({both})" in intro


def test_judge_pa_and_ia_feed_no_taxonomy_metric() -> None:
    rows = _rows("pla_physical_commonsense")
    rows += [ResultRow(it.item_id, f"judge:mk:{axis}", "h", "1", "ok", 3.0)
             for it in ITEMS for axis in ("pa", "ia")]
    intro, table = _table(rows)
    assert "From judge rubrics" not in intro
    assert table == _table(_rows("pla_physical_commonsense"))[1]


def test_judge_sources_are_named_where_the_section_is_skipped_and_in_the_sweep() -> None:
    from robojudge.report._robophys import sensitivity_section

    judged = [r for r in _rows("judge:mk:pla_physical_commonsense") if r.metric.startswith("judge:")]
    judged += [ResultRow(r.item_id, "judge:other:pla_physical_commonsense", "h2", "1", "ok", 1.0)
               for r in judged]
    sec = robophys_section(ReportInput(judged, ITEMS, higher_is_better))
    assert sec.skipped is not None
    assert "judge:mk:pla_physical_commonsense, judge:other:pla_physical_commonsense" in sec.skipped
    # the sweep's only task-success measure is a judge's answer: its intro says so
    rows = _rows("judge:mk:pla_physical_commonsense")
    rows += [ResultRow(it.item_id, "judge:mk:ts_vlm2", "h", "1", "ok", float(i % 2))
             for i, it in enumerate(ITEMS)]
    sweep = sensitivity_section(ReportInput(rows, ITEMS, higher_is_better))
    assert sweep.skipped is None, sweep.skipped
    assert "From judge rubrics" in sweep.intro and "ts_vlm2 (judge:mk:ts_vlm2)" in sweep.intro
