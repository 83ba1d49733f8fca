"""A report rerun into the same folder leaves no table of the earlier report behind.

The first report of the three-generator run has a leaderboard; the second, of one generator's items
only, has none (fewer than two generators). Its ``tables/`` must not keep the old leaderboard files
next to the new summary, and must keep every file the report did not write.
"""

from __future__ import annotations

from pathlib import Path

from _report_data import higher_is_better, write_run

from robojudge.report import write_html_report
from robojudge.report._html import WRITTEN


def _one_generator(manifest: Path, generator: str) -> Path:
    lines = manifest.read_text(encoding="utf-8").splitlines()
    only = manifest.with_name(f"only_{generator}.jsonl")
    only.write_text("\n".join(ln for ln in lines if f'"generator": "{generator}"' in ln) + "\n",
                    encoding="utf-8")
    return only


def test_a_rerun_removes_the_tables_it_no_longer_writes_and_nothing_else(tmp_path: Path) -> None:
    url, manifest = write_run(tmp_path)
    out = tmp_path / "report"
    first = write_html_report(url, out, manifest=manifest, higher_is_better=higher_is_better, bootstrap=0)
    tables = out / "tables"
    assert {p.name for p in tables.glob("leaderboard.*")} == {"leaderboard.csv", "leaderboard.md",
                                                              "leaderboard.tex"}
    listed = (tables / WRITTEN).read_text(encoding="utf-8").splitlines()
    assert sorted(ln for ln in listed if not ln.startswith("#")) == sorted(p.name for p in first.tables)
    # The user's files beside the tables, and names the list may not reach, are never removed.
    (tables / "my_notes.csv").write_text("mine\n", encoding="utf-8")
    (tmp_path / "outside.csv").write_text("mine\n", encoding="utf-8")
    with (tables / WRITTEN).open("a", encoding="utf-8") as f:
        f.write("../outside.csv\nmy_notes.txt\n")
    (tables / "my_notes.txt").write_text("mine\n", encoding="utf-8")

    second = write_html_report(url, out, manifest=_one_generator(manifest, "good"),
                               higher_is_better=higher_is_better, bootstrap=0)
    skipped = {s.key: s.skipped for s in second.sections}
    assert skipped["generators"] == "the suite has fewer than two generators"
    assert not list(tables.glob("leaderboard.*"))  # the old ranking of three generators is gone
    now = {p.name for p in tables.iterdir()}
    assert now == {p.name for p in second.tables} | {WRITTEN, "my_notes.csv", "my_notes.txt"}
    assert (tmp_path / "outside.csv").exists()
    listed = (tables / WRITTEN).read_text(encoding="utf-8").splitlines()
    assert sorted(ln for ln in listed if not ln.startswith("#")) == sorted(p.name for p in second.tables)
    assert "good" in (tables / "summary.csv").read_text(encoding="utf-8")
    assert "mid" not in (tables / "summary.csv").read_text(encoding="utf-8")
