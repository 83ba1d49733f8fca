"""A PostgreSQL store rides out its server going away for a few seconds (a restart, a failover)."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from _postgres import LocalPostgres, _admin_connect, _free_port, _local_server
from robojudge.store import ResultRow, ResultStore, StoreError, _store
from robojudge.store._store import outage_reason


def _error(url: str, sql: str = "SELECT 1") -> SQLAlchemyError:
    """The error SQLAlchemy raises for ``sql`` on ``url`` (a real one, driver error and all)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text(sql))
    except SQLAlchemyError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError(f"{sql} on {url} did not fail")


def test_a_locked_sqlite_store_or_a_refused_first_connection_is_no_outage(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    path = tmp_path / "locked.sqlite"
    holder = sqlite3.connect(path)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.1})
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT * FROM t"))
        except SQLAlchemyError as exc:
            locked = exc
        engine.dispose()
    finally:
        holder.close()
    assert "locked" in str(locked) and outage_reason(locked) is None  # SQLite's own wait handles it
    refused = _error(f"postgresql+psycopg://postgres@127.0.0.1:{_free_port()}/db?connect_timeout=5")
    assert "refused" in str(refused).lower()
    assert outage_reason(refused, reached=False) is None  # a wrong port, said at once
    assert outage_reason(refused, reached=True) is not None  # the server it reached before is away


def test_a_port_that_closes_every_connection_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tunnel or proxy with nothing behind it (or a wrong port) accepts and closes: on a first connection
    that is a wrong address, said at once; before (review rev22 F1) the store retried it for 31 s."""
    pytest.importorskip("psycopg")
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def close_each() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=close_each, daemon=True).start()
    slept: list[float] = []
    monkeypatch.setattr(_store.time, "sleep", slept.append)
    try:
        closed = _error(f"postgresql+psycopg://postgres@127.0.0.1:{port}/db?connect_timeout=5")
        assert outage_reason(closed, reached=False) is None
        assert outage_reason(closed, reached=True) is not None  # mid-run: the server it reached went away
        with pytest.raises(StoreError):
            ResultStore(f"postgresql://postgres@127.0.0.1:{port}/db?connect_timeout=5")
        assert slept == []
    finally:
        listener.close()


@pytest.mark.postgres
def test_outages_are_told_from_other_errors_by_their_sqlstate(postgres_db_url: str) -> None:
    engine = create_engine(postgres_db_url)
    try:
        victim = engine.connect()
        pid = victim.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with _admin_connect(postgres_db_url) as admin:  # what a fast shutdown does to every session
            admin.execute(f"SELECT pg_terminate_backend({pid})")
        time.sleep(0.2)
        with pytest.raises(SQLAlchemyError) as ended:
            victim.execute(text("SELECT 1"))
        victim.close()
    finally:
        engine.dispose()
    assert getattr(ended.value.orig, "sqlstate", None) == "57P01"  # admin_shutdown
    assert outage_reason(ended.value, reached=False) == "terminating connection due to administrator command"
    for sql in ("SELEC 1", "SELECT * FROM no_such_table", "SELECT 1/0"):
        assert outage_reason(_error(postgres_db_url, sql)) is None, sql
    missing = postgres_db_url.split("?")[0].rsplit("/", 1)[0] + "/no_such_database"
    gone = _error(missing)
    assert "does not exist" in str(gone) and outage_reason(gone) is None  # an OperationalError, no outage


@pytest.fixture(scope="module")
def own_server() -> Iterator[LocalPostgres]:
    """A server of this module's own, restarted by its tests (not the session's, which other tests use)."""
    pytest.importorskip("psycopg")
    try:
        server = _local_server()
        server.start()
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        pytest.skip(f"could not start a PostgreSQL server: {exc}")
    try:
        yield server
    finally:
        server.stop()


def _pg_ctl(server: LocalPostgres, *args: str) -> None:
    prefix = ["runuser", "-u", server.run_as, "--"] if server.run_as else []
    subprocess.run([*prefix, str(server.bindir / "pg_ctl"), "-D", str(server.datadir), "-l",
                    str(server.datadir.parent / "server.log"), *args], check=True, timeout=120,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _with_password(url: str) -> str:
    # The server trusts every local login: the password is never checked, only kept out of messages.
    return url.replace("postgres@", "postgres:Outage-pw-99@")


@pytest.mark.postgres
def test_a_run_rides_out_a_server_restart(
    own_server: LocalPostgres, caplog: pytest.LogCaptureFixture
) -> None:
    url = _with_password(own_server.url)
    caplog.set_level(logging.INFO, logger="robojudge.store")
    stored: list[str] = []
    failure: list[BaseException] = []
    restarted = threading.Event()

    def run() -> None:  # what `score -w 1` does per item: note it, store its rows, clear the note, plan
        try:
            with ResultStore(url) as store:
                i, after = 0, None
                while after is None or i < after + 20:  # until 20 items after the restart
                    if after is None and restarted.is_set():
                        after = i
                    item = f"item{i:05d}"
                    store.note_in_flight(item, ["m"])
                    added = store.add_new([ResultRow(item, "m", "h", "1", "ok", float(i), fingerprint="f")])
                    store.clear_in_flight([item])
                    store.done_item_ids("m", "h", "1")
                    stored.extend(row.item_id for row in added)
                    i += 1
        except BaseException as exc:
            failure.append(exc)

    writer = threading.Thread(target=run)
    writer.start()
    time.sleep(1.0)
    _pg_ctl(own_server, "-m", "fast", "-w", "-t", "60", "restart")
    restarted.set()
    writer.join(timeout=120)
    assert not writer.is_alive()
    assert failure == []
    with ResultStore(url, read_only=True) as reader:
        rows = reader.rows(include_superseded=True)
        assert reader.in_flight() == {}
    ids = [row.item_id for row in rows]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(stored)  # every row once, each reported
    assert len(ids) >= 20
    told = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert told and all("postgres:***@" in m and "was away for" in m for m in told), told
    assert "Outage-pw-99" not in caplog.text


@pytest.mark.postgres
def test_a_server_that_stays_away_ends_the_run_after_the_wait(
    own_server: LocalPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_store, "POSTGRES_OUTAGE_WAIT_S", 3.0)
    url = _with_password(own_server.url)
    with ResultStore(url) as store:
        store.add([ResultRow("a", "m2", "h", "1", "ok", 1.0)])
        _pg_ctl(own_server, "-m", "fast", "-w", "stop")
        try:
            started = time.monotonic()
            with pytest.raises(StoreError, match=r"not back after 3 s of retries") as refused:
                store.add([ResultRow("b", "m2", "h", "1", "ok", 2.0)])
            assert 2.5 < time.monotonic() - started < 20
            # What the run does next (its clean-up: clearing its notes) fails at once, not after another
            # wait (review rev24 F2: a run ended by an outage stopped after twice the wait).
            slept: list[float] = []
            with monkeypatch.context() as m:
                m.setattr(_store.time, "sleep", slept.append)
                with pytest.raises(StoreError):
                    store.clear_in_flight(["b"])
            assert slept == []
        finally:
            _pg_ctl(own_server, "-w", "-t", "60", "start", "-o",
                    f"-c listen_addresses=127.0.0.1 -p {own_server.port} -k {own_server.root}")
        assert "Outage-pw-99" not in str(refused.value) and "***" in str(refused.value)
        store.add([ResultRow("b", "m2", "h", "1", "ok", 2.0)])
        assert store.done_item_ids("m2", "h", "1") == {"a", "b"}
