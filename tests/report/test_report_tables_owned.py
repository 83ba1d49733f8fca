"""A report rerun into the same folder leaves no table of the earlier report behind.

The first report of the three-generator run has a leaderboard; the second, of one generator's items
only, has none (fewer than two generators). Its ``tables/`` must not keep the old leaderboard files
next to the new summary, and must keep every file the report did not write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from _report_data import higher_is_better, write_run
from typer.testing import CliRunner

from robojudge._files import replacing
from robojudge.cli import app
from robojudge.report import write_html_report
from robojudge.report._html import WRITTEN, stage_tables
from robojudge.report._tables import Table, text


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


def test_a_report_folder_from_before_the_list_loses_the_tables_named_as_the_reports(tmp_path: Path) -> None:
    # Before, a folder without written_by_robojudge.txt kept every table of its report, and as no later
    # list named them, they stayed beside the new ones for good (an old leaderboard of three generators).
    url, manifest = write_run(tmp_path)
    out = tmp_path / "report"
    first = write_html_report(url, out, manifest=manifest, higher_is_better=higher_is_better, bootstrap=0)
    tables = out / "tables"
    (tables / WRITTEN).unlink()  # as a robojudge before 2026-12-05 left it
    (tables / "retention_oldgen.csv").write_text("old\n", encoding="utf-8")  # an audit's, per generator
    mine = {"my_notes.csv": "mine\n", "summary_by_hand.md": "mine\n", "leaderboard.txt": "mine\n"}
    for name, content in mine.items():
        (tables / name).write_text(content, encoding="utf-8")

    only = _one_generator(manifest, "good")
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--suite", str(only), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    now = {p.name for p in tables.iterdir()}
    lines = (tables / WRITTEN).read_text(encoding="utf-8").splitlines()
    written = {ln for ln in lines if not ln.startswith("#")}
    assert now == written | {WRITTEN, *mine}
    assert all((tables / name).read_text(encoding="utf-8") == text for name, text in mine.items())
    gone = sorted({p.name for p in first.tables} - written | {"retention_oldgen.csv"})
    assert {"leaderboard.csv", "leaderboard.md", "leaderboard.tex"} < set(gone)
    assert (f"removed {len(gone)} table files of the earlier report in tables/, written before robojudge "
            f"listed its tables and not written again: {', '.join(gone)}") in " ".join(result.output.split())


def test_every_table_the_report_writes_is_known_by_name() -> None:
    # A folder without the list loses the files named after the report's tables: a table added under a
    # name REPORT_TABLES lacks would be left there.
    import re

    from robojudge.report._html import report_table_name

    src = Path(__file__).resolve().parents[2] / "src" / "robojudge" / "report"
    named = re.compile(r"\bTable\(\s*(f?)\"([A-Za-z0-9_]+)(\{?)")
    found = [(m.group(1), m.group(2), m.group(3)) for p in src.glob("*.py")
             for m in named.finditer(p.read_text(encoding="utf-8"))]
    assert len(found) > 20
    for fmt, stem, brace in found:
        assert report_table_name(stem + ("gen-0" if fmt and brace else "")), stem


@pytest.fixture
def case_ignored(monkeypatch: pytest.MonkeyPatch):
    """Renames and removals that reach a file whatever the case of its name, as on APFS and NTFS (no
    such file system can be mounted here): a name finds the entry whose name equals it but for case."""
    real_replace, real_unlink = os.replace, Path.unlink

    def entry(path: Path) -> Path:
        return next((p for p in path.parent.iterdir() if p.name.casefold() == path.name.casefold()), path)

    def replace(src: Any, dst: Any) -> None:
        old = entry(Path(dst))
        if old != Path(dst):
            real_unlink(old)  # the one entry takes the new spelling
        real_replace(src, dst)

    def unlink(self: Path, missing_ok: bool = False) -> None:
        real_unlink(entry(self), missing_ok=missing_ok)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(Path, "unlink", unlink)


def _table(name: str, value: str) -> Table:
    table = Table(name, "t", ["a"])
    table.add([text(value)])
    return table


@pytest.mark.usefixtures("case_ignored")
def test_a_table_renamed_by_case_only_is_kept_where_case_is_ignored(tmp_path: Path) -> None:
    # The generator Wan renamed wan between two reports: the second wrote acceleration_wan.* and then
    # removed acceleration_Wan.*, which on macOS and Windows is the same file, so no table was left.
    folder = tmp_path / "tables"
    with replacing() as files:
        stage_tables(files, [_table("acceleration_Wan", "first"), _table("summary", "1")], folder)
    with replacing() as files:
        written, _ = stage_tables(files, [_table("acceleration_wan", "second"), _table("summary", "2")],
                                  folder)
    assert sorted(p.name for p in folder.iterdir() if p.name != WRITTEN) == sorted(p.name for p in written)
    assert "second" in (folder / "acceleration_wan.csv").read_text(encoding="utf-8")
    assert "2" in (folder / "summary.md").read_text(encoding="utf-8")


def test_a_table_renamed_by_case_only_leaves_no_old_file_where_case_counts(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    with replacing() as files:
        stage_tables(files, [_table("acceleration_Wan", "first")], folder)
    with replacing() as files:
        stage_tables(files, [_table("acceleration_wan", "second")], folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["acceleration_wan.csv", "acceleration_wan.md", "acceleration_wan.tex", WRITTEN])
