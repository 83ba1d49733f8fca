"""Generators are ranked only on what was scored: labels for some generators leave the rest unranked."""

import csv

from _report_data import build_items, build_rows, higher_is_better
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.report._label_sections import generators_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultStore
from robojudge.suite import Item


def _partly_labelled() -> list[Item]:
    """The report data's three generators, plus two generators 'x' and 'y' without any label."""
    items = build_items()
    extra = [Item(item_id=f"c{c}-{g}", video="v.mp4", clip_id=f"c{c}", source="s", generator=g)
             for c in range(12) for g in ("x", "y")]
    return items + extra


def test_report_leaderboard_leaves_unlabelled_generators_unranked():
    items = _partly_labelled()
    sec = generators_section(ReportInput(build_rows(build_items()), items, higher_is_better, bootstrap=100))
    assert sec.skipped is None
    table, pairs = sec.tables  # (the second: every ranked pair's P(a > b))
    assert {(r[1].text, r[2].text) for r in pairs.rows} == {("good", "mid"), ("good", "bad"), ("mid", "bad")}
    by = {r[1].text: r for r in table.rows}
    assert [r[1].text for r in table.rows] == ["good", "mid", "bad", "x", "y"]
    assert by["good"][0].text == "1" and by["good"][-2].value == 1.0
    for g in ("x", "y"):
        assert by[g][0].text == "not ranked" and by[g][-2].formatted() == "n/a"
    assert "x, y" in sec.intro and "not ranked" in sec.intro


def test_cli_generators_with_partial_labels(tmp_path):
    items = _partly_labelled()
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(db) as store:
        store.add(build_rows(build_items()))
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "100",
                                   "--out", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    with (tmp_path / "lb" / "leaderboard.csv").open() as f:
        rows = {r["generator"]: r for r in csv.DictReader(f)}
    assert rows["good"]["overall_rank"] == "1" and float(rows["good"]["overall_rank_prob"]) == 1.0
    assert rows["x"]["overall_rank"] == "" and rows["x"]["overall_rank_prob"] == ""
    md = (tmp_path / "lb" / "leaderboard.md").read_text()
    assert "| not ranked | x |" in md and "| bad | x |" not in md


def test_leaderboard_files_flag_small_n(tmp_path):
    from robojudge.report import generator_board, label_scores, write_leaderboard

    items = [Item(item_id=f"i{k}-{g}", video="v.mp4", clip_id=f"c{k % n_clips}", generator=g,
                  labels={"pa": 3, "ia": 4}) for g, n, n_clips in (("few", 6, 6), ("many", 20, 10))
             for k in range(n)]
    board = generator_board(items, label_scores(items), bootstrap=0)
    write_leaderboard(board, tmp_path)
    with (tmp_path / "leaderboard.csv").open() as f:
        rows = {r["generator"]: r for r in csv.DictReader(f)}
    assert rows["few"]["overall_small_n"] == "True" and rows["many"]["pa_small_n"] == "False"
    md = (tmp_path / "leaderboard.md").read_text()
    assert "| few | 3.000 \u2020 | 4.000 \u2020 |" in md and "| many | 3.000 | 4.000 |" in md
    assert "small n" in md
