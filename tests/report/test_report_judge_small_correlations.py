"""The judges table gives no correlation over fewer than 3 items, as the labels table does.

Through two points every line fits, so a judge's Pearson r over two items is +-1 whatever the judge is
worth; it was printed as 1.000 (and could be marked best). Labels PA 1, 2, 4 on items i0, i1, i2:

* judge ``two`` scores i0, i1 as 1, 2: r over 2 items, withheld (n/a); Acc 1 and MSE 0 stay;
* judge ``three`` scores i0, i1, i2 as 1, 2, 3: r = 3 / sqrt(2 * 14/3) = 0.98198 (x deviations -1, 0, 1;
  y deviations -4/3, -1/3, 5/3), Spearman 1; Acc 2/3; MSE 1/3;
* judge ``one`` scores i0 only, PA 1 and IA 3 (its labels: 1 and 3): the Overall pools 2 (item, axis)
  pairs, (1, 1) and (3, 3), whose r was 1; withheld, Acc 1 and MSE 0 stay.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import agreement_table
from robojudge.report import judge_table, judges_report, write_judges
from robojudge.store import ResultRow
from robojudge.suite import Item

R3 = 3 / math.sqrt(28 / 3)


def _data() -> tuple[list[Item], list[ResultRow]]:
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", generator="g", labels={"pa": y, "ia": 3})
             for k, y in enumerate((1, 2, 4))]
    rows = [ResultRow(f"i{k}", "judge:two:pa", "h", "1", "ok", float(v)) for k, v in enumerate((1, 2))]
    rows += [ResultRow(f"i{k}", "judge:three:pa", "h", "1", "ok", float(v)) for k, v in enumerate((1, 2, 3))]
    rows += [ResultRow("i0", "judge:one:pa", "h", "1", "ok", 1.0),
             ResultRow("i0", "judge:one:ia", "h", "1", "ok", 3.0)]
    return items, rows


def test_two_items_give_no_r_and_three_do(tmp_path: Path) -> None:
    items, rows = _data()
    report, table, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0, calibrated=False)
    by = {r.judge: r for r in table}
    one, two, three = by["one"], by["two"], by["three"]
    assert two.n == {"pa": 2, "ia": 0} and three.n == {"pa": 3, "ia": 0} and one.n == {"pa": 1, "ia": 1}
    assert math.isnan(two.cells["pa", "r"].value)
    assert two.cells["pa", "acc"].value == 1.0 and two.cells["pa", "mse"].value == 0.0
    assert three.cells["pa", "r"].value == pytest.approx(R3)
    assert three.cells["pa", "acc"].value == pytest.approx(2 / 3)
    assert three.cells["pa", "mse"].value == pytest.approx(1 / 3)
    assert report.cells["one"]["overall"].n == 2 and math.isnan(one.cells["overall", "r"].value)
    assert one.cells["overall", "acc"].value == 1.0 and one.cells["overall", "mse"].value == 0.0
    # the report the detail table and the landscape read withholds them too
    for judge, target in (("two", "pa"), ("one", "overall")):
        assert math.isnan(report.cells[judge][target].stats["pearson"].value)
        assert math.isnan(report.cells[judge][target].stats["spearman"].value)
        assert math.isnan(report.cells[judge][target].stats["kendall"].value)
    assert report.cells["three"]["pa"].stats["spearman"].value == pytest.approx(1.0)
    assert not any(col == "r" for _, col in two.best | one.best)
    write_judges(table, report, tmp_path)
    (line,) = [ln for ln in (tmp_path / "judges.md").read_text(encoding="utf-8").splitlines()
               if ln.startswith("| two |")]
    assert line.split("|")[4].strip() == "n/a \u2020"  # the PA r cell (small n: the dagger)


def test_judge_table_withholds_r_of_any_report() -> None:
    h = {"pa": np.array([1.0, 2.0])}
    report = agreement_table({"a": {"pa": np.array([1.0, 3.0])}}, h, bootstrap=0, pairs=[])
    # robojudge.meta gave r = 1 here, which the report had to withhold on its own; now meta does.
    r = report.cells["a"]["pa"].stats["pearson"]
    assert math.isnan(r.value) and r.why == "fewer than 3 pairs"
    (row,) = judge_table(report)
    assert math.isnan(row.cells["pa", "r"].value) and ("pa", "r") not in row.best
    assert row.cells["pa", "mse"].value == pytest.approx(0.5)  # (0 + 1) / 2


PA, VARY_PA, VARY_IA = (1, 2, 3, 1, 2, 3), (1, 3, 2, 2, 1, 3), (3, 5, 4, 4, 3, 5)
NO_AXIS_R = ("no axis has a defined correlation; pa: judge scores are constant; ia: judge scores and human "
             "scores are constant")


def _offset_judge() -> tuple[list[Item], list[ResultRow]]:
    """Labels PA 1, 2, 3 (twice) and IA 4; judge ``const`` answers PA 2 and IA 5 to every item, judge
    ``vary`` has PA r 0.5."""
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", generator="g", labels={"pa": y, "ia": 4})
             for k, y in enumerate(PA)]
    rows = [ResultRow(f"i{k}", f"judge:{j}:{a}", "h", "1", "ok", float(v)) for j, scores in
            (("const", {"pa": [2] * 6, "ia": [5] * 6}), ("vary", {"pa": VARY_PA, "ia": VARY_IA}))
            for a, vals in scores.items() for k, v in enumerate(vals)]
    return items, rows


def test_a_judge_with_no_axis_r_has_no_overall_r_and_is_not_best(tmp_path: Path) -> None:
    # Judge "const"'s pooled Overall r, sqrt(3) / 2 = 0.866 from the axes' offset alone, was bold as the
    # best; judge "vary" has the Overall r 0.7826 of scipy on the pooled pairs.
    pa, vp, vi = PA, VARY_PA, VARY_IA
    items, rows = _offset_judge()
    report, table, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0, calibrated=False)
    by = {r.judge: r for r in table}
    assert math.isnan(by["const"].cells["overall", "r"].value)
    assert report.cells["const"]["overall"].stats["pearson"].why == NO_AXIS_R
    want = stats.pearsonr([*vp, *vi], [*pa, 4, 4, 4, 4, 4, 4]).statistic
    assert by["vary"].cells["overall", "r"].value == pytest.approx(want)
    assert ("overall", "r") in by["vary"].best and ("overall", "r") not in by["const"].best
    write_judges(table, report, tmp_path)
    with (tmp_path / "judges.csv").open(newline="") as f:
        csv_rows = {r["judge"]: r for r in csv.DictReader(f)}
    assert (csv_rows["const"]["overall_r"], csv_rows["const"]["overall_r_best"]) == ("", "False")
    assert float(csv_rows["vary"]["overall_r"]) == pytest.approx(want)
    assert csv_rows["vary"]["overall_r_best"] == "True"


def test_the_landscape_note_says_why_a_judge_has_no_overall_r() -> None:
    # The judge with no axis r was drawn at Overall r 0.866; the note gave no reason for such a judge.
    from robojudge.report._label_sections import judges_section
    from robojudge.report._sections import ReportInput

    items, rows = _offset_judge()
    sec, _ = judges_section(ReportInput(rows, items, lambda m: True, bootstrap=0))
    (svg,) = [p for p in sec.plots if 'data-plot="landscape-overall"' in p]
    assert f"Not drawn, no Overall r or MSE: const ({NO_AXIS_R})." in svg
