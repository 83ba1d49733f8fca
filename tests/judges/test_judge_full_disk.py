"""A judge run on a full or read-only disk: a store that stops taking rows stops the requests, keeps what
is cached and says what was kept and how to resume; a reply cache that cannot be opened is named with the
ways round it, and one whose writes fail later is reported at the end, never a traceback."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _judge_cli import app
from _judge_server import FakeServer, Reply
from typer.testing import CliRunner

from _store_full import fill_after
from robojudge.judges import ResponseCache
from robojudge.judges._cache import CACHE_FILE
from robojudge.store import ResultStore, StoreError


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


def free_space(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("DROP TRIGGER disk_full")


def _manifest(tmp_path: Path, make_items: Any, n: int) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n"
                            for it in make_items([f"item{i}" for i in range(n)])))
    return path


def _pa(body: dict[str, Any], n: int) -> Reply:
    return Reply('{"reasoning": "stable", "physical_adherence": 4}', delay=0.1)


def test_a_store_that_fills_stops_the_requests(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before, the row writer died silently on the refused batch, and the run sent every remaining request.
    manifest = _manifest(tmp_path, make_items, 24)
    db = tmp_path / "r.sqlite"
    fill_after(db, 6)
    failed_at: list[int] = []  # requests the server had received when the store first refused rows
    add_new = ResultStore.add_new

    def watched(self: ResultStore, rows: Any) -> Any:
        try:
            return add_new(self, rows)
        except StoreError:
            failed_at.append(srv.count)
            raise

    monkeypatch.setattr(ResultStore, "add_new", watched)
    args = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--rubric", "pa", "--db", str(db),
            "--cache-dir", str(tmp_path / "c"), "--concurrency", "2", "--no-progress"]
    with FakeServer(_pa) as srv:
        res = CliRunner().invoke(app, [*args, "--base-url", srv.url])
        assert res.exit_code == 2, res.output
        assert failed_at and srv.count - failed_at[0] <= 2  # at most the requests in flight then
        first = srv.count
        with ResultStore(db, read_only=True) as st:
            kept = len(st.rows())
        assert kept <= 6 and first < 24
        assert f"24 judgments: {kept} scored" in res.output  # the summary so far
        assert (f"error: cannot store results in sqlite:///{db}: database or disk is full; {kept} judgments "
                f"are stored; free space in {tmp_path} and rerun the same command: it resumes" in res.output)
        free_space(db)
        res = CliRunner().invoke(app, [*args, "--base-url", srv.url])
        assert res.exit_code == 0, res.output
        # Every reply of the first run was cached, those in flight when the store failed too.
        assert srv.count - first == 24 - first
    with ResultStore(db) as st:
        assert len(st.rows()) == 24


def test_a_cache_on_the_full_disk_too_is_said_not_a_traceback(tmp_path: Path, make_items: Any) -> None:
    # Before, the cache's last write on the full disk too raised out of the run: a traceback.
    manifest = _manifest(tmp_path, make_items, 12)
    db = tmp_path / "r.sqlite"
    fill_after(db, 6)
    ResponseCache(tmp_path / "c").close()
    with sqlite3.connect(tmp_path / "c" / CACHE_FILE) as con:
        con.execute("CREATE TRIGGER disk_full BEFORE INSERT ON replies "
                    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    with FakeServer(_pa) as srv:
        res = CliRunner().invoke(app, [
            "judge", str(manifest), "--backend", "openai", "--model", "m", "--rubric", "pa", "--db", str(db),
            "--cache-dir", str(tmp_path / "c"), "--concurrency", "2", "--no-progress", "--base-url", srv.url])
    assert res.exit_code == 2, res.output
    assert (f"warning: cannot write the judge response cache in {tmp_path / 'c'}: database or disk is full; "
            f"{srv.count} replies of this run are not in it, and a rerun sends those requests again"
            in res.output)
    assert "judgments are stored; free space in" in res.output


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
    assert (f"error: cannot open the judge response cache in {default}, the folder $ROBOJUDGE_CACHE_DIR "
            "gives (file is not a database): set ROBOJUDGE_CACHE_DIR or pass --cache-dir DIR to put it in a "
            "writable folder with free space, or pass --no-cache" in res.output)
    # how big it is and how to remove it (audit diskfull F5: not said), where there is a file
    assert ("(a rerun then sends every request again); or remove it (1 KB): `robojudge cache clear --judge` "
            "(no stored result changes; a rerun sends its requests again)" in res.output)
    assert "cache clear" not in CliRunner().invoke(app, [*base, "--cache-dir", str(under_a_file)]).output
    given = tmp_path / "given cache"
    given.mkdir()
    (given / CACHE_FILE).write_bytes(b"not a database" * 100)
    res = CliRunner().invoke(app, [*base, "--cache-dir", str(given)])
    assert f"`robojudge cache clear --judge --cache-dir '{given}'`" in res.output
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


def test_a_store_that_takes_no_writes_names_the_item_the_next_run_decodes_apart(
    tmp_path: Path, make_items: Any
) -> None:
    # Before, the stop said nothing of the decode note it left behind (score does), and the rerun called
    # that item "a crash or a kill". (The rerun here runs in this same process, whose notes are not an
    # ended run's: tests/judges/test_judge_decode_crash.py checks the rerun's words.)
    manifest = _manifest(tmp_path, make_items, 3)
    db = tmp_path / "r.sqlite"
    fill_after(db, 1)
    with sqlite3.connect(db) as con:  # item1's rows are refused, and so is the removal of its decode note
        con.execute("CREATE TRIGGER keep_note BEFORE DELETE ON robojudge_meta WHEN OLD.value LIKE "
                    "'%\"item_id\": \"item1\"%' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    args = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--rubric", "pa", "--db", str(db),
            "--cache-dir", str(tmp_path / "c"), "--concurrency", "1", "--decode-workers", "0",
            "--no-progress"]
    with FakeServer(_pa) as srv:
        res = CliRunner().invoke(app, [*args, "--base-url", srv.url])
        assert res.exit_code == 2, res.output
        assert (f"free space in {tmp_path} and rerun the same command: it resumes, and decodes the video of "
                "item1 in a decoder process, as after a crash (its in-flight note could not be cleared)"
                ) in " ".join(res.output.split())
        with ResultStore(db, read_only=True) as st:
            assert set(st.in_flight()) == {"item1"}
        with sqlite3.connect(db) as con:
            con.execute("DROP TRIGGER keep_note")
        free_space(db)
        res = CliRunner().invoke(app, [*args, "--base-url", srv.url])
    assert res.exit_code == 0, res.output
    with ResultStore(db, read_only=True) as st:
        assert len(st.rows()) == 3
