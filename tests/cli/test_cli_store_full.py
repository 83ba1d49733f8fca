"""``robojudge score`` whose store stops taking rows mid-run (a full disk): the summary so far, what is
stored and how to resume, exit status 2; the same command then resumes."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from _store_full import fill_after
from robojudge.cli import build_app
from robojudge.store import ResultStore
from robojudge.video import write_video


def _suite(tmp_path: Path, n: int) -> Path:
    rows = []
    for i in range(n):
        frames = np.zeros((6, 24, 24, 3), np.uint8)
        for t in range(6):
            frames[t, 4:12, 2 * t + i % 3:2 * t + i % 3 + 6] = 200
        write_video(tmp_path / f"v{i}.mp4", frames, fps=4)
        rows.append({"item_id": f"v{i}", "video": f"v{i}.mp4", "instruction": "x"})
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_store_that_fills_says_what_is_kept_and_resumes(tmp_path: Path, workers: str) -> None:
    # Before, the run ended with one bare error line: no summary, nothing on what was kept or on resuming.
    manifest = _suite(tmp_path, 6)
    db = tmp_path / "r.sqlite"
    fill_after(db, 3)
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", str(db), "--workers", workers,
            "--no-progress"]
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 2, res.output
    assert "6 tasks: 3 scored" in " ".join(res.output.split())
    assert (f"error: cannot store results in sqlite:///{db}: database or disk is full; 3 results are stored; "
            f"free space in {tmp_path} and rerun the same command: it resumes" in res.output)
    with sqlite3.connect(db) as con:
        con.execute("DROP TRIGGER disk_full")
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    assert "6 tasks: 3 scored, 0 failed, 3 already stored" in " ".join(res.output.split())
    assert "child process" not in res.output  # the item whose rows were refused did not crash the run


def test_a_store_that_takes_no_writes_names_the_item_the_next_run_computes_alone(tmp_path: Path) -> None:
    # Before, the next run called that item "a crash or a kill", and this run did not say it would.
    manifest = _suite(tmp_path, 3)
    db = tmp_path / "r.sqlite"
    fill_after(db, 1)
    with sqlite3.connect(db) as con:  # v1's row is refused, and so is the removal of its in-flight note
        con.execute("CREATE TRIGGER keep_note BEFORE DELETE ON robojudge_meta WHEN OLD.value LIKE "
                    "'%\"item_id\": \"v1\"%' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", str(db), "--no-progress"]
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 2, res.output
    assert (f"1 results are stored; free space in {tmp_path} and rerun the same command: it resumes, and "
            "computes v1 again alone in a child process, as after a crash (its in-flight note could not be "
            "cleared)" in " ".join(res.output.split()))


def _invoke_with_wal_kept(db: Path, args: list[str]) -> Any:
    """``robojudge ARGS`` while a second connection holds ``db`` open: the run's close cannot fold the -wal
    file into the main file, as on a full disk (the fold writes the main file)."""
    held = sqlite3.connect(db)
    held.execute("SELECT COUNT(*) FROM robojudge_results").fetchall()
    try:
        res = CliRunner().invoke(build_app(args[0]), args)
        assert (db.with_name(db.name + "-wal")).stat().st_size > 0
    finally:
        held.close()
    return res


def test_a_stop_that_leaves_results_in_the_wal_file_says_to_keep_it(tmp_path: Path) -> None:
    # Before, only "free space and rerun": a store moved without its -wal file read as "malformed", and a
    # -wal file deleted to make room took the newest results with it.
    manifest = _suite(tmp_path, 4)
    db = tmp_path / "r.sqlite"
    fill_after(db, 2)
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", str(db), "--no-progress"]
    res = _invoke_with_wal_kept(db, args)
    assert res.exit_code == 2, res.output
    assert (f"2 results are stored; free space in {tmp_path} and rerun the same command: it resumes. The "
            "store is two files now: r.sqlite and r.sqlite-wal beside it, which holds results not yet in "
            "r.sqlite; keep them together (move or copy both, or the whole folder) and do not delete "
            "r.sqlite-wal: the next run that writes the store with space folds it into r.sqlite"
            in " ".join(res.output.split()))
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("DROP TRIGGER disk_full")
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    assert "two files" not in res.output
    wal = db.with_name("r.sqlite-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # folded in by the run that wrote with space


def test_a_stop_for_another_reason_says_nothing_of_the_wal_file(tmp_path: Path) -> None:
    # A -wal file with rows is usual while another process has the store open: only a stop on a full disk
    # (which cannot fold it back) calls the store two files (review rev29 F3). The word "full" in the store's
    # path, named in the message, is no full disk either.
    manifest = _suite(tmp_path, 4)
    (tmp_path / "full-runs").mkdir()
    db = tmp_path / "full-runs" / "r.sqlite"
    ResultStore(db).close()
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("CREATE TRIGGER refuse BEFORE INSERT ON robojudge_results WHEN (SELECT COUNT(*) FROM "
                    "robojudge_results) >= 2 BEGIN SELECT RAISE(ABORT, 'database is locked'); END")
        con.commit()
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", str(db), "--no-progress"]
    res = _invoke_with_wal_kept(db, args)
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "database is locked" in said and "2 results are stored" in said
    assert "two files" not in said and "free space" not in said
