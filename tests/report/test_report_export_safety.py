"""Every CSV the report writes neutralises formula-like text; Markdown tables escape HTML."""

import csv
import io
import math

import numpy as np

from robojudge.report import Cell, Table, generator_board, summary_markdown, write_leaderboard, write_report
from robojudge.report._labels import LabelAgreement, write_label_agreement
from robojudge.report._summary import GroupSummary
from robojudge.report._tables import md_prose, text
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

EVIL = "=HYPERLINK(\"http://x\",\"y\")"
TAG = "<script>alert(1)</script>"


def test_table_csv_neutralises_text_and_headers_but_not_numbers():
    t = Table("t", "t", ["name", f"@{TAG}", "v"])
    t.add([text(EVIL), text("-x"), Cell(-0.5, -0.75, -0.25)])
    t.add([text("+1"), text("-3"), Cell(math.nan)])
    rows = list(csv.reader(io.StringIO(t.to_csv())))
    assert rows[0][:2] == ["name", f"'@{TAG}"]
    assert rows[1][:5] == ["'" + EVIL, "'-x", "-0.5", "-0.75", "-0.25"]
    assert rows[2][:2] == ["+1", "-3"]  # plain numbers written as text stay numbers


def test_table_markdown_escapes_html_and_pipes():
    t = Table("t", f"title {TAG}", ["name", "v"], note="a <b>note</b>")
    t.add([text(f"{TAG}|x\ny"), Cell(1.0)])
    md = t.to_markdown()
    assert "<script" not in md and "<b>" not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|x y" in md


def test_table_markdown_escapes_dollars_that_a_renderer_reads_as_math():
    """GitHub renders ``$...$`` as TeX: a generator named ``*g* $h$`` must stay that text."""
    t = Table("t", "title", ["name", "v"])
    t.add([text("cost $5 $h$"), Cell(1.0)])
    md = t.to_markdown()
    assert "cost \\$5 \\$h\\$" in md and "cost $5" not in md
    # and in the notes that name generators (the leaderboard's warnings, review rev25 F3)
    assert md_prose("cost $5 model moved past $x$") == "cost \\$5 model moved past \\$x\\$"


def test_leaderboard_and_label_agreement_and_summary_files(tmp_path):
    items = [Item(item_id=f"i{k}-{g}", video="v.mp4", clip_id=f"c{k}", generator=g, labels={"pa": p, "ia": p})
             for k in range(4) for g, p in ((EVIL, 5), (TAG, 2))]
    scores = {a: np.array([float(it.labels.pa) for it in items]) for a in ("pa", "ia")}
    board = generator_board(items, scores, bootstrap=20, seed=0)
    write_leaderboard(board, tmp_path)
    with (tmp_path / "leaderboard.csv").open() as f:
        gens = [r["generator"] for r in csv.DictReader(f)]
    assert gens == ["'" + EVIL, TAG]
    md = (tmp_path / "leaderboard.md").read_text()
    assert "<script" not in md and "&lt;script&gt;" in md
    write_label_agreement([LabelAgreement(EVIL, "pa", 3, -0.5, -0.9, 0.1, -0.4, -0.8, 0.2)], tmp_path)
    with (tmp_path / "label_agreement.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    assert row["metric"] == "'" + EVIL and float(row["pearson"]) == -0.5
    summary = summary_markdown([GroupSummary(TAG, "h", "g", 1, 0, 1.0, math.nan, math.nan, math.nan)])
    assert "<script" not in summary


def test_write_report_csvs_are_safe(tmp_path):
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        store.add([ResultRow(item_id=EVIL, metric="m", config_hash="h", version="1", status="error",
                             value=None, error="-boom"),
                   ResultRow(item_id="ok", metric="m", config_hash="h", version="1", status="ok",
                             value=-0.5)])
        write_report(store, tmp_path / "rep", {EVIL: "@group", "ok": "@group"})
    rep = tmp_path / "rep"
    errors = (rep / "errors.csv").read_text()
    assert "'" + EVIL.replace('"', '""') in errors and "'-boom" in errors
    with (rep / "summary.csv").open() as f:
        (s,) = list(csv.DictReader(f))
    assert s["group"] == "'@group" and float(s["mean"]) == -0.5
    assert "'=HYPERLINK" in (rep / "results.csv").read_text()
