"""RoboJudge Table 2's Random Baseline row in robojudge's Table 2 layout: `leaderboard judges` and the
report's judges table list the chance level worked out from the labels, first, without an interval and
never bold. Before, a suite with ``uniform_random`` stored had no random row at all (the metric is one
draw, and metrics are not judges).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from _report_data import build_items, build_rows, higher_is_better, stored_suite
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.report._label_sections import judges_section
from robojudge.report._sections import ReportInput

RANDOM_EXPECTED = "random (expected)"  # (robojudge.report.RANDOM_EXPECTED)
# The planted labels per clip: PA 5, 3, 1 and IA 5, 4, 2 (12 clips of each).
# PA: 2 + ((3-5)^2 + 0 + (3-1)^2) / 3 = 2 + 8/3; IA: 2 + (4 + 1 + 1) / 3 = 4; Overall (same n): 13/3
EXPECTED = {"pa": (0.0, 0.2, 2 + 8 / 3), "ia": (0.0, 0.2, 4.0), "overall": (0.0, 0.2, 13 / 3)}


def test_leaderboard_judges_lists_the_random_row_first(tmp_path: Path) -> None:
    items = build_items()
    manifest, db = stored_suite(tmp_path, items, build_rows(items))
    runner = CliRunner()
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "50", "--no-calibrated",
                              "--out", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    assert RANDOM_EXPECTED in res.output and "4.67" in res.output  # (the console prints 2 decimals)
    assert "no interval (there is no draw to resample) and never marked best" in " ".join(res.output.split())
    with (tmp_path / "lb" / "judges.csv").open(newline="") as f:
        got = list(csv.DictReader(f))
    assert [r["judge"] for r in got] == [RANDOM_EXPECTED, "vlm"]
    chance = got[0]
    for t, values in EXPECTED.items():
        for col, want in zip(("r", "acc", "mse"), values, strict=True):
            assert float(chance[f"{t}_{col}"]) == pytest.approx(want)
            assert chance[f"{t}_{col}_low"] == "" and chance[f"{t}_{col}_best"] == "False"
    assert (chance["n_pa"], chance["unscored_pa"]) == ("36", "0")
    md = (tmp_path / "lb" / "judges.md").read_text(encoding="utf-8")
    (line,) = [ln for ln in md.splitlines() if ln.startswith(f"| {RANDOM_EXPECTED} |")]
    assert "**" not in line and "| 0.000 | 0.200 | 4.667 |" in line
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0", "--no-calibrated",
                              "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["random_expected"]["ia"] == {"r": 0.0, "acc": pytest.approx(0.2), "mse": pytest.approx(4.0)}
    assert RANDOM_EXPECTED not in data["best"]
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0", "--no-calibrated",
                              "--no-random"])
    assert res.exit_code == 0 and RANDOM_EXPECTED not in res.output


def test_the_report_s_judges_table_has_it_unmarked() -> None:
    items = build_items()
    sec, report = judges_section(ReportInput(build_rows(items), items, higher_is_better, bootstrap=50))
    assert report is not None and RANDOM_EXPECTED not in report.judges  # (a row, not a judge compared)
    (table,) = [t for t in sec.tables if t.name == "judges"]
    first = table.rows[0]
    assert [c.text for c in first[:3]] == [RANDOM_EXPECTED, "72", "0"]
    values = [(c.value, math.isnan(c.low), c.best) for c in first[3:]]
    want = [v for t in ("pa", "ia", "overall") for v in EXPECTED[t]]
    assert [v for v, _, _ in values] == pytest.approx(want)
    assert all(no_interval and not best for _, no_interval, best in values)
    assert "RoboJudge Table 2's Random Baseline" in table.note


def test_no_row_without_labels() -> None:
    from robojudge.report import RANDOM_EXPECTED as label
    from robojudge.report import chance_row

    assert label == RANDOM_EXPECTED
    items = [it.model_copy(update={"labels": None}) for it in build_items()]
    assert chance_row(items) is None
