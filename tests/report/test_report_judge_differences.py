"""Paired differences between judges in `leaderboard judges` and the report's judges section (App. E.1).

Both computed no difference between judges (``agreement_table(..., pairs=[])``; ``--json`` gave
``"differences": []``) and still marked a best judge per column. Now every pair (past 6 judges, each
judge against the one with the largest Overall r) gets its difference on the items both scored, on the
draws of the table's intervals, and the table says that its mark is not a test.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from _report_data import build_items, build_rows, higher_is_better, stored_suite
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.meta import agreement_table
from robojudge.report import judges_report, write_judges
from robojudge.report._judge_differences import ALL_PAIRS_UP_TO, DIFFERENCE_COLUMNS, difference_pairs
from robojudge.report._label_sections import judges_section
from robojudge.report._leaderboard import clusters_of, label_scores, strata_of
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item


def _rough(items: list[Item]) -> list[ResultRow]:
    """A judge ``rough``: PA one point off on clips c0-c5 (right on c6-c9), IA exact, and nothing on
    clips c10 and c11. Against ``vlm`` (PA exact, IA one high but capped at 5, so right on the good
    generator's IA 5) on the 30 items of clips c0-c9 both scored: PA Acc 1 - 4/10 = 0.6 (six of the ten
    clips wrong), IA Acc 1/3 - 1 = -2/3."""
    rows = []
    for it in items:
        assert it.labels is not None and it.clip_id is not None
        clip = int(it.clip_id[1:])
        if clip >= 10:
            continue
        pa = it.labels.pa
        wrong = pa + 1 if pa < 5 else pa - 1
        rows.append(ResultRow(item_id=it.item_id, metric="judge:rough:pa", config_hash="h", version="1",
                              status="ok", value=float(wrong if clip < 6 else pa)))
        rows.append(ResultRow(item_id=it.item_id, metric="judge:rough:ia", config_hash="h", version="1",
                              status="ok", value=float(it.labels.ia)))
    return rows


@pytest.fixture
def stored() -> tuple[list[Item], list[ResultRow]]:
    items = build_items()
    return items, [*build_rows(items), *_rough(items)]


def test_judges_report_takes_the_paired_differences_on_the_shared_items(stored) -> None:
    items, rows = stored
    report, _, _, scores = judges_report(rows, items, higher_is_better, calibrated=False, bootstrap=200,
                                         seed=3)
    assert list(report.differences) == [("rough", "vlm")] or list(report.differences) == [("vlm", "rough")]
    (a, b), per = next(iter(report.differences.items()))
    sign = 1.0 if a == "vlm" else -1.0
    assert report.shared[a, b] == {"pa": 30, "ia": 30, "overall": 60}
    acc_pa, acc_ia = per["pa"]["exact"], per["ia"]["exact"]
    assert sign * acc_pa.value == pytest.approx(0.6) and sign * acc_ia.value == pytest.approx(-2 / 3)
    assert acc_pa.low * sign > 0 or acc_pa.high * sign < 0  # six clips of ten wrong: an interval off 0
    # the same numbers as `meta agreement` gives from the same scores, draws and seed
    labelled = [it for it in items if it.labels is not None]
    meta = agreement_table(scores, label_scores(labelled), clusters_of(labelled), strata_of(labelled),
                           bootstrap=200, seed=3, rank_stats=False)
    want = meta.differences[a, b]["pa"]["exact"]
    assert (acc_pa.value, acc_pa.low, acc_pa.high) == pytest.approx((want.value, want.low, want.high))


def test_written_judges_say_the_mark_is_not_a_test_and_list_the_differences(stored, tmp_path: Path) -> None:
    items, rows = stored
    report, table, _, _ = judges_report(rows, items, higher_is_better, calibrated=False, bootstrap=200)
    paths = write_judges(table, report, tmp_path)
    assert tmp_path / "judge_differences.csv" in paths
    md = (tmp_path / "judges.md").read_text(encoding="utf-8")
    assert "the mark is not a test" in md and "## Paired differences between judges" in md
    with (tmp_path / "judge_differences.csv").open(newline="") as f:
        got = {r["target"]: r for r in csv.DictReader(f)}
    assert set(got) == {"pa", "ia", "overall"}
    pa = got["pa"]
    assert (pa["n"], pa["n_a"], pa["n_b"]) in (("30", "36", "30"), ("30", "30", "36"))
    assert abs(float(pa["acc"])) == pytest.approx(0.6) and pa["acc_excludes_0"] == "True"


def test_leaderboard_judges_prints_and_returns_the_differences(stored, tmp_path: Path) -> None:
    items, rows = stored
    manifest, db = stored_suite(tmp_path, items, rows)
    runner = CliRunner()
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "100", "--no-calibrated"],
                        env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "paired differences between judges" in res.output and "the mark is not a test" in res.output
    assert "30 (36/30)" in res.output or "30 (30/36)" in res.output
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "100", "--no-calibrated",
                              "--json"])
    assert res.exit_code == 0, res.output
    (diff,) = json.loads(res.output)["differences"]
    assert {diff["a"], diff["b"]} == {"vlm", "rough"} and diff["n"]["overall"] == 60
    assert abs(diff["axes"]["ia"]["exact"]["value"]) == pytest.approx(2 / 3)


def test_the_report_s_judges_section_has_a_table_of_differences(stored) -> None:
    items, rows = stored
    sec, report = judges_section(ReportInput(rows, items, higher_is_better, bootstrap=50))
    assert report is not None
    (table2,) = [t for t in sec.tables if t.name == "judges"]
    assert "the mark is not a test" in table2.note
    (diff,) = [t for t in sec.tables if t.name == "judge_differences"]
    assert [c.text for c in diff.rows[0][:3]] in (["vlm", "rough", "PA"], ["rough", "vlm", "PA"])
    assert abs(diff.rows[0][5].value) == pytest.approx(0.6)  # the PA Acc difference


def test_past_six_judges_each_is_compared_with_the_one_of_the_largest_overall_r() -> None:
    rng = np.random.default_rng(0)
    human = {"pa": rng.integers(1, 6, 40).astype(float), "ia": rng.integers(1, 6, 40).astype(float)}
    # judge k adds noise of spread k: j0 is the closest to the labels
    pred = {f"j{k}": {a: np.clip(h + rng.integers(-k, k + 1, 40), 1, 5) for a, h in human.items()}
            for k in (3, 1, 0, 2, 4, 5, 6)}
    assert len(pred) > ALL_PAIRS_UP_TO
    assert difference_pairs(pred, human) == [("j0", j) for j in pred if j != "j0"]
    few = dict(list(pred.items())[:3])
    assert difference_pairs(few, human) == [("j3", "j1"), ("j3", "j0"), ("j1", "j0")]


def test_a_pair_with_no_interval_is_not_called_no_difference() -> None:
    # Two judges sharing no item (or one clip, or resamples all alike) have no interval in any column: the
    # table said "none" and the CSV False, read as "no difference" (review rev13 F3); it is n/a / empty
    from types import SimpleNamespace

    from robojudge.meta import Estimate
    from robojudge.report._judge_differences import differs_on, excludes_zero

    untested = {stat: Estimate(float("nan")) for _, stat in DIFFERENCE_COLUMNS}
    report = SimpleNamespace(n_replicates=1000)
    assert differs_on(report, untested) == "n/a"  # type: ignore[arg-type]
    assert excludes_zero(untested["exact"]) is None
    held = {**untested, "exact": Estimate(0.1, -0.05, 0.2)}
    assert differs_on(report, held) == "none"  # type: ignore[arg-type]
    assert differs_on(report, {**held, "mse": Estimate(-0.5, -0.9, -0.1)}) == "mse"  # type: ignore[arg-type]
