"""A judge scoring on another scale than the labels gets no Acc in Table 2, and a note saying why.

A rubric file may keep the id ``pa`` and score 1-10: its rows are stored as ``judge:<name>:pa``. Table 2
and ``leaderboard judges`` rounded and clipped such scores into 1-5 without a word, so a perfect 1-10
judge (every score twice its label) got Acc 7/30 = 0.233 from 10 clipped to 5 against a label of 5,
while no score equals its label; ``meta agreement`` refuses the same scores. Now its Acc and
within-one are left out (NaN, the reason in ``why``) on the axes it scores off the scale and on the
Overall, with a note in the console table, ``judges.md`` and the report; its r and MSE stay.

The labels: 30 items, clip ``c<k>`` each, PA = IA = the k-th of a seeded draw from 1-5. Judge ``ten``
scores 2 x label: r 1; MSE = mean(label^2) (the error is the label). Judge ``five`` scores the label:
Acc 1, within-one 1, MSE 0, and stays as it was.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _report_data import stored_suite
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.report import judges_report
from robojudge.report._html import render_page
from robojudge.report._judges import judges_table_note, off_scale_ranges
from robojudge.report._label_sections import judges_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item

NOTE = ("Judge ten answers up to 10 on PA and IA on the 1-5 label scale: its Acc and within-one are left "
        "out (PA, IA, Overall)")


def _data() -> tuple[list[Item], list[ResultRow], np.ndarray]:
    labels = np.random.default_rng(0).integers(1, 6, 30)
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", labels={"pa": int(h), "ia": int(h)})
             for k, h in enumerate(labels)]
    rows = []
    for k, h in enumerate(labels):
        for axis in ("pa", "ia"):
            rows.append(ResultRow(f"i{k}", f"judge:ten:{axis}", "h", "1", "ok", 2.0 * h))
            rows.append(ResultRow(f"i{k}", f"judge:five:{axis}", "h", "1", "ok", float(h)))
    return items, rows, labels.astype(float)


def test_a_judge_off_the_label_scale_has_no_accuracy_and_keeps_r_and_mse() -> None:
    items, rows, labels = _data()
    assert np.mean(np.clip(labels * 2, 1, 5) == labels) > 0  # what the clip used to count as matches
    report, table, _, _ = judges_report(rows, items, lambda m: True, calibrated=False, bootstrap=50, seed=1)
    by = {r.judge: r for r in table}
    ten, five = by["ten"], by["five"]
    for t in ("pa", "ia", "overall"):
        assert math.isnan(ten.cells[t, "acc"].value)
        for stat in ("exact", "within_one"):
            e = report.cells["ten"][t].stats[stat]
            assert math.isnan(e.value) and math.isnan(e.low)
            assert e.why is not None and "up to 10 on PA and IA on the 1-5 label scale" in e.why
        assert ten.cells[t, "r"].value == pytest.approx(1.0)
        assert ten.cells[t, "mse"].value == pytest.approx(np.mean(labels**2))  # the error is the label
        assert not math.isnan(ten.cells[t, "mse"].low)  # its interval stays too
        assert five.cells[t, "acc"].value == 1.0 and report.cells["five"][t].stats["within_one"].value == 1.0
        assert (t, "acc") in five.best
    assert ten.off_scale == {"pa": (2.0, 10.0), "ia": (2.0, 10.0)} and five.off_scale == {}
    (pair,) = report.differences
    for t in ("pa", "ia", "overall"):
        assert math.isnan(report.differences[pair][t]["exact"].value)
        assert not math.isnan(report.differences[pair][t]["mse"].value)
    assert judges_table_note(table, report).startswith(NOTE)


def test_a_score_that_rounds_into_the_scale_is_not_off_it() -> None:
    human = {"pa": np.array([1.0, 5.0, 3.0, np.nan])}
    assert off_scale_ranges({"j": {"pa": np.array([0.5, 5.4, 3.0, 9.0])}}, human) == {}
    # (9.0 is on an item without a label: no accuracy reads it)
    low = off_scale_ranges({"j": {"pa": np.array([0.4, 5.4, 3.0, 9.0])}}, human)
    assert low == {"j": {"pa": (0.4, 5.4)}}
    high = off_scale_ranges({"j": {"pa": np.array([1.0, 5.5, np.nan, 9.0])}}, human)
    assert high == {"j": {"pa": (1.0, 5.5)}}


def test_the_note_reaches_the_console_judges_md_and_the_report(tmp_path: Path) -> None:
    items, rows, _ = _data()
    manifest, db = stored_suite(tmp_path, items, rows)
    runner = CliRunner()
    out = tmp_path / "lb"
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0", "--no-calibrated",
                              "--no-random", "--out", str(out)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert NOTE in " ".join(res.output.split())
    assert NOTE in (out / "judges.md").read_text(encoding="utf-8")
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0", "--no-calibrated",
                              "--json"])
    assert res.exit_code == 0, res.output
    cell = json.loads(res.output)["cells"]["ten"]["pa"]["stats"]["exact"]
    assert cell["value"] is None and "label scale" in cell["why"]
    sec, _ = judges_section(ReportInput(rows, items, lambda m: True, bootstrap=0))
    (table2,) = [t for t in sec.tables if t.name == "judges"]
    assert NOTE in table2.note
    assert NOTE in render_page([sec], title="t", source="s")
