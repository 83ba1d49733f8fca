"""A metric configuration that failed on every item is hidden from the report's tables, with a note.

``--metrics all`` on a suite without state files used to fill the overview with rows of nothing but
failures; they now sit in one table naming each such metric, its item count and its first error.
Judges are never hidden: a judge whose server was down is a finding of its own.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from robojudge.report import report_suite, write_html_report
from robojudge.report._html import build_sections
from robojudge.report._sections import ReportInput
from robojudge.report._series import failed_everywhere
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

ITEMS = [Item(item_id=f"i{k}", video="v.mp4", generator="g1" if k < 2 else "g2", clip_id=f"c{k}")
         for k in range(4)]


def _rows() -> list[ResultRow]:
    rows = []
    for k, it in enumerate(ITEMS):
        rows.append(ResultRow(it.item_id, "good", "h", "1", "ok", float(k)))
        rows.append(ResultRow(it.item_id, "needs_state", "h", "1", "error", None,
                              error=f"item has no state, which needs_state needs ({it.item_id})"))
        # One ok row among errors: not hidden.
        ok = k == 0
        rows.append(ResultRow(it.item_id, "flaky", "h", "1", "ok" if ok else "error", 1.0 if ok else None,
                              error=None if ok else "boom"))
        rows.append(ResultRow(it.item_id, "judge:vlm:pa", "j", "1", "error", None, error="server down"))
    return rows


def test_failed_everywhere_finds_only_series_without_an_ok_row() -> None:
    found = failed_everywhere(_rows())
    assert [(f.label, f.items) for f in found] == [("needs_state", 4)]
    assert found[0].first_error == "item has no state, which needs_state needs (i0)"


def test_overview_hides_them_and_lists_them_with_their_first_error() -> None:
    inp = ReportInput(_rows(), ITEMS, lambda m: True, bootstrap=0)
    sections = {s.key: s for s in build_sections(inp)}
    overview = sections["overview"]
    summary = next(t for t in overview.tables if t.name == "summary")
    shown = [r[0].text for r in summary.rows]
    assert "needs_state" not in shown and {"good", "flaky", "judge:vlm:pa"} <= set(shown)
    hidden = next(t for t in overview.tables if t.name == "failed_everywhere")
    assert [[c.text for c in r] for r in hidden.rows] == [
        ["needs_state", "4", "item has no state, which needs_state needs (i0)"]]
    assert "16 stored results" in overview.intro  # the counts still cover every row
    assert all("needs_state" not in t.to_csv() for s in sections.values() for t in s.tables
               if t.name != "failed_everywhere")


def test_the_html_page_and_the_suite_summary_hide_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(url) as store:
        store.add(_rows())
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in ITEMS))
    report = write_html_report(url, tmp_path / "html", manifest=manifest, higher_is_better=lambda m: True,
                               bootstrap=0)
    with (report.index.parent / "tables" / "summary.csv").open() as f:
        assert "needs_state" not in f.read()
    assert "failed on every item" in report.index.read_text()
    summaries = report_suite(manifest, url, tmp_path / "sum")
    assert "needs_state" not in {s.metric for s in summaries} and "flaky" in {s.metric for s in summaries}
    md = (tmp_path / "sum" / "summary.md").read_text()
    assert "needs_state" in md and "item has no state" in md and "failed on every item" in md
    with (tmp_path / "sum" / "errors.csv").open() as f:
        assert sum(r["metric"] == "needs_state" for r in csv.DictReader(f)) == 4  # errors.csv keeps them
