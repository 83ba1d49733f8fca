"""A report that cannot be written in full (a full disk, a file-size limit) leaves the previous one whole.

Every report file is written beside its name and renamed into place once all are written, the page
last; before, each was written in place, so a failed write left it cut under its final name (an
``index.html`` ending mid-SVG, new tables beside the old page, an empty ``.tex``: audit s69_hostile 3).
The failure here is real: a write past the file-size limit fails half-done, as one on a full disk does.
"""

from __future__ import annotations

import errno
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _report_data import build_items, build_rows, higher_is_better, write_run

from _limits import file_size_limit, limited, snapshot
from robojudge.report import Cell, Table, write_html_report, write_report
from robojudge.store import ResultRow, ResultStore


def test_a_table_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    Table("names", "Names", ["name"], [[Cell(text="old")]]).write(tmp_path)
    before = snapshot(tmp_path)
    # 2 kB in CSV and Markdown, 32 kB in LaTeX (each backslash becomes \textbackslash{})
    table = Table("names", "Names", ["name"], [[Cell(text="\\" * 2000)]])
    with file_size_limit(16_000), pytest.raises(OSError) as info:
        table.write(tmp_path)
    assert info.value.errno == errno.EFBIG
    assert info.value.filename == str(tmp_path / "names.tex")  # named, though write() names no file
    # Before, names.csv and names.md were the new ones and names.tex was cut at 16,000 bytes.
    assert snapshot(tmp_path) == before


def _store(path: Path, metrics: list[str]) -> str:
    """Three items whose generators' names are 3,000 '&' each: five bytes each in Markdown (``&amp;``), so
    the summary's Markdown is its largest file."""
    with ResultStore(path) as store:
        store.add([ResultRow(f"i{k}", m, "h", "1", "ok", float(k)) for k in range(3) for m in metrics])
        return store.url


def test_a_summary_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    groups = {f"i{k}": "&" * 3000 + str(k) for k in range(3)}
    url = _store(tmp_path / "results.sqlite", ["m1"])
    out = tmp_path / "report"
    with ResultStore(url, read_only=True) as store:
        write_report(store, out, groups)
    before = snapshot(out)
    _store(tmp_path / "results.sqlite", ["m2"])
    with ResultStore(url, read_only=True) as store, file_size_limit(40_000), pytest.raises(OSError) as info:
        write_report(store, out, groups)  # summary.md: 6 rows of 15 kB
    assert info.value.filename == str(out / "summary.md")
    # Before, results.csv and summary.csv already held m2 and summary.md was cut at 40,000 bytes.
    assert snapshot(out) == before


def test_a_report_rerun_past_the_limit_keeps_the_old_page_and_tables(tmp_path: Path) -> None:
    url, manifest = write_run(tmp_path / "run", judge=False)
    out = tmp_path / "report"
    write_html_report(url, out, manifest=manifest, higher_is_better=higher_is_better, bootstrap=0)
    before = snapshot(out)
    with ResultStore(url) as store:  # a judge scored since: the new report has its tables too
        store.add([r for r in build_rows(build_items()) if r.metric.startswith("judge:")])
    cmd = [sys.executable, "-m", "robojudge", "report", str(tmp_path / "run"), "--out", str(out),
           "--bootstrap", "0"]
    # index.html is about 250 kB, each table a few kB (and the store's -shm file 32 kB).
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         preexec_fn=limited("fsize", 64_000))
    # Before: a traceback (exit status 1), index.html cut at 64,000 bytes beside the new tables.
    assert res.returncode == 2, res.stderr
    # (on a busy machine a step may take past 5 s, and the command then says what it is doing:
    # "writing the report's section ... ...", "reading stored results: 1,000 so far (35 s)"; and the
    # manifest a run folder's report uses is said on stderr too)
    said = [ln for ln in res.stderr.splitlines()
            if not re.search(r"( \.\.\.| \(\d+ s\))$", ln) and not ln.startswith("suite manifest: ")]
    assert said == [f"error: cannot write {out / 'index.html'}: File too large; "
                                       f"index.html and tables/ in {out} are as they were"]
    assert snapshot(out) == before  # every file as it was, and no temporary file left


def test_a_rerun_stopped_part_way_through_its_renames_names_the_files_replaced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # On Windows a table open in a spreadsheet cannot be replaced; here the list of tables, renamed after
    # them, is a folder, which no file can replace either. The tables before it are the new ones by then.
    from robojudge.cli import main

    url, manifest = write_run(tmp_path / "run", judge=False)
    out = tmp_path / "report"
    write_html_report(url, out, manifest=manifest, higher_is_better=higher_is_better, bootstrap=0)
    with ResultStore(url) as store:  # a judge scored since: the new report's tables differ
        store.add([r for r in build_rows(build_items()) if r.metric.startswith("judge:")])
    listed = out / "tables" / "written_by_robojudge.txt"
    listed.unlink()
    listed.mkdir()
    before = snapshot(out)
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path / "run"), "--out", str(out), "--bootstrap", "0"])
    assert done.value.code == 2
    after = snapshot(out)
    changed = sorted(Path(k).as_posix() for k in after if before.get(k) != after[k])
    assert "tables/summary.csv" in changed and "index.html" not in changed
    said = " ".join(ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:"))
    # Before: "index.html and tables/ in ... are as they were", though the summary tables were new.
    assert said.startswith(f"error: cannot write {listed}: Is a directory; ")
    assert f"file(s) in {out} are already the new report's (replaced or removed: " in said
    named = said.split("(replaced or removed: ")[1].split(")")[0].split(", ")
    assert set(changed) <= set(named), (changed, named)
    assert "; the other files are as they were: run the report again" in said


def test_a_manifest_report_stopped_between_its_two_groups_says_which_files_are_new(tmp_path: Path) -> None:
    # The summary's files are replaced first, then the page and its tables. Before, a page that could not
    # be written was "index.html and tables/ ... are as they were", though the summary beside it (and
    # provenance.json, which the page says holds the same) was already the new report's.
    url, manifest = write_run(tmp_path / "run", judge=False)
    out = tmp_path / "report"
    cmd = [sys.executable, "-m", "robojudge", "report", str(manifest), "--db", url, "--out", str(out),
           "--bootstrap", "0"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    before = snapshot(out)
    with ResultStore(url) as store:  # a judge scored since: the new report differs
        store.add([r for r in build_rows(build_items()) if r.metric.startswith("judge:")])
    # index.html is about 250 kB; the summary's files, each under 64 kB, are written whole.
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         preexec_fn=limited("fsize", 64_000))
    assert res.returncode == 2, res.stderr
    after = snapshot(out)
    changed = {k for k in after if before.get(k) != after[k]}
    assert "summary.csv" in changed and "provenance.json" in changed and "index.html" not in changed
    said = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert said == [f"error: cannot write {out / 'index.html'}: File too large; summary.csv, summary.md, "
                    f"errors.csv, results.csv and provenance.json in {out} are new, but index.html and "
                    "tables/ are still those of the previous report (or absent), so the two may disagree; "
                    "free space and rerun the same command to write them all"]
