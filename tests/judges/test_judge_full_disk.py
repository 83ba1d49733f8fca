"""A judge reply cache on a full or read-only disk: one that cannot be opened is named with the ways
round it; one whose writes fail later is reported at the end, never a traceback."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import typer
from _judge_server import FakeServer, Reply
from typer.testing import CliRunner

from robojudge.cli._judge_app import app as judge_app
from robojudge.judges import ResponseCache
from robojudge.judges._cache import CACHE_FILE
from robojudge.store import ResultStore

app = typer.Typer()
app.add_typer(judge_app, name="judge")


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


def _manifest(tmp_path: Path, make_items: Any, n: int) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n"
                            for it in make_items([f"item{i}" for i in range(n)])))
    return path


def test_a_cache_that_cannot_be_opened_is_named_with_the_ways_round(tmp_path: Path, make_items: Any) -> None:
    # Before: a bare "[Errno 20] Not a directory" naming no cache, or a traceback (not a database).
    manifest = _manifest(tmp_path, make_items, 1)
    base = ["judge", str(manifest), "--backend", "mock", "--model", "m", "--rubric", "pa", "--no-progress",
            "--db", str(tmp_path / "r.sqlite")]
    (tmp_path / "a-file").write_text("x")
    under_a_file = tmp_path / "a-file" / "cache"
    res = CliRunner().invoke(app, [*base, "--cache-dir", str(under_a_file)])
    assert res.exit_code == 2, res.output
    assert (f"error: cannot open the judge response cache in {under_a_file} (Not a directory): give "
            "--cache-dir a writable folder with free space, or pass --no-cache to run without it (a rerun "
            "then sends every request again)" in res.output)
    default = tmp_path / "default-cache"  # $ROBOJUDGE_CACHE_DIR (conftest)
    default.mkdir()
    (default / CACHE_FILE).write_bytes(b"not a database" * 100)
    res = CliRunner().invoke(app, base)
    assert res.exit_code == 2, res.output
    assert (f"error: cannot open the judge response cache in {default} (file is not a database): set "
            "ROBOJUDGE_CACHE_DIR or pass --cache-dir DIR to put it in a writable folder with free space, or "
            "pass --no-cache" in res.output)
    assert not (tmp_path / "r.sqlite").exists()  # refused before any work


def test_a_cache_that_stops_taking_writes_is_reported(tmp_path: Path, make_items: Any) -> None:
    # Before, the cache's last write raised out of the run: a traceback, the unsaved replies unsaid.
    manifest = _manifest(tmp_path, make_items, 6)
    ResponseCache(tmp_path / "c").close()
    with sqlite3.connect(tmp_path / "c" / CACHE_FILE) as con:  # its writes fail, as on a full disk
        con.execute("CREATE TRIGGER disk_full BEFORE INSERT ON replies "
                    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    reply = Reply('{"reasoning": "stable", "physical_adherence": 4}')
    with FakeServer(lambda body, n: reply) as srv:
        res = CliRunner().invoke(app, [
            "judge", str(manifest), "--backend", "openai", "--model", "m", "--rubric", "pa", "--no-progress",
            "--db", str(tmp_path / "r.sqlite"), "--cache-dir", str(tmp_path / "c"), "--base-url", srv.url])
    assert res.exit_code == 0, res.output
    assert (f"warning: cannot write the judge response cache in {tmp_path / 'c'}: database or disk is full; "
            "6 replies of this run are not in it, and a rerun sends those requests again" in res.output)
    with ResultStore(tmp_path / "r.sqlite", read_only=True) as st:
        assert len(st.rows()) == 6
