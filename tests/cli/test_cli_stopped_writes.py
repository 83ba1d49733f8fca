"""``report`` and ``results export`` stopped by ``kill`` (SIGTERM) say so, as ``score`` does, and leave the
files they were replacing as they were. Before, both ended with exit status 130 and printed nothing
(audit s69_hostile 12)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _procs import HAVE_PROC, stopped, stopped_apart
from robojudge.store import ResultRow, ResultStore

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE_PROC, reason="reads open files from /proc")]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder whose store holds 40,000 rows: seconds to report or export."""
    folder = tmp_path_factory.mktemp("run")
    with ResultStore(folder / "results.sqlite") as store:
        store.add([ResultRow(f"item{i:06d}", "m", "h", "1", "ok", float(i), details={"pad": "x" * 200})
                   for i in range(40_000)])
    return folder


def _has_open(pid: int, name: str) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").endswith(name) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # a descriptor closed meanwhile
        return False


def test_a_stopped_export_says_so_and_keeps_the_old_file(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "export.csv"
    out.write_text("old export\n")

    def writing(pid: int) -> bool:  # its temporary file beside export.csv is there
        return any(p.name.startswith(".export.csv.") for p in tmp_path.iterdir())

    status, said, noted = stopped_apart(["results", "export", "--db", str(run), "--out", str(out)], writing)
    assert status == 130, said + noted
    assert f"interrupted: {out} is as it was" in noted and said == ""  # a note: on stderr, not stdout
    assert out.read_text() == "old export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv"]  # no temporary file left


def test_a_stopped_report_says_so_and_keeps_the_old_page(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("old page\n")
    status, said = stopped(["report", str(run), "--out", str(out)],
                            lambda pid: _has_open(pid, "results.sqlite"))  # inside the command
    assert status == 130, said
    assert "interrupted: no file of the report was left half-written" in said
    assert [p.name for p in out.rglob("*") if p.is_file()] == ["index.html"]
    assert (out / "index.html").read_text() == "old page\n"


def test_a_report_stopped_between_its_summary_and_its_page_names_the_files_replaced(tmp_path: Path) -> None:
    # The summary group (summary.csv, summary.md, errors.csv, results.csv) and the page group (index.html,
    # tables/) are replaced one after the other; stopped between them, the folder mixes two reports. The
    # message said no file was changed (audit signals 3); it now names which are new.
    items = 3000
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(
        json.dumps({"item_id": f"it{i:05d}", "video": f"videos/it{i:05d}.mp4", "generator": f"g{i % 3}",
                    "clip_id": f"c{i // 3}"}) + "\n" for i in range(items)))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([ResultRow(f"it{i:05d}", m, "h", "1", "ok", float(i % 7)) for i in range(items)
                   for m in ("psnr", "ssim")])
    out = tmp_path / "report"
    out.mkdir()
    for name in ("summary.csv", "index.html"):
        (out / name).write_text("old\n")

    def summary_replaced(pid: int) -> bool:
        return (out / "summary.csv").read_text() != "old\n"

    args = ["report", str(manifest), "--db", str(db), "--out", str(out), "--bootstrap", "20000"]
    status, said = stopped(args, summary_replaced)
    assert status == 130, said
    assert (out / "index.html").read_text() == "old\n", "the page was written before the stop"
    said = " ".join(said.split())  # (folded to the terminal's width)
    assert "no file of the report was left half-written" not in said
    assert f"summary.csv, summary.md, errors.csv, results.csv and provenance.json in {out} are new" in said
    assert "index.html and tables/ are still those of the previous report" in said
