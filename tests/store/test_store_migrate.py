"""Upgrading a schema version 1 store (written with the version 1 DDL) to version 2 keeps every row."""

from __future__ import annotations

import math
import shlex
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

import robojudge
from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore, StoreError, display_url

# The version 1 tables as robojudge 1 created them (SQLite spelling; PostgreSQL below).
V1_SQLITE = [
    "CREATE TABLE robojudge_meta (key VARCHAR(64) NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key))",
    """CREATE TABLE robojudge_results (
        id INTEGER NOT NULL, item_id TEXT NOT NULL, metric TEXT NOT NULL, config_hash TEXT NOT NULL,
        version TEXT NOT NULL, status VARCHAR(16) NOT NULL, value DOUBLE, error TEXT,
        duration_s DOUBLE NOT NULL, details JSON, config JSON, created_at DATETIME NOT NULL,
        PRIMARY KEY (id),
        CONSTRAINT uq_robojudge_results_key UNIQUE (item_id, metric, config_hash, version),
        CONSTRAINT ck_robojudge_results_status CHECK (status IN ('ok', 'error')),
        CONSTRAINT ck_robojudge_results_error_value CHECK (status = 'ok' OR value IS NULL))""",
    "CREATE INDEX ix_robojudge_results_metric_config ON robojudge_results (metric, config_hash, version)",
]
V1_POSTGRES = [
    "CREATE TABLE robojudge_meta (key VARCHAR(64) NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key))",
    """CREATE TABLE robojudge_results (
        id BIGSERIAL NOT NULL, item_id TEXT NOT NULL, metric TEXT NOT NULL, config_hash TEXT NOT NULL,
        version TEXT NOT NULL, status VARCHAR(16) NOT NULL, value DOUBLE PRECISION, error TEXT,
        duration_s DOUBLE PRECISION NOT NULL, details JSON, config JSON,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        PRIMARY KEY (id),
        CONSTRAINT uq_robojudge_results_key UNIQUE (item_id, metric, config_hash, version),
        CONSTRAINT ck_robojudge_results_status CHECK (status IN ('ok', 'error')),
        CONSTRAINT ck_robojudge_results_error_value CHECK (status = 'ok' OR value IS NULL))""",
    "CREATE INDEX ix_robojudge_results_metric_config ON robojudge_results (metric, config_hash, version)",
]
V1_ROWS = [
    # id, item, metric, config hash, version, status, value, error, duration, details, config, created
    (1, "a", "ssim", "c1", "1", "ok", 0.5, None, 1.5, '{"frames": 3}', '{"win": 7}', "2024-01-02 03:04:05"),
    (2, "b", "ssim", "c1", "1", "error", None, "boom", 0.25, None, None, "2024-01-02 03:04:06"),
    (3, "a", "psnr", "c9", "2", "ok", None, None, 0.0, None, None, "2024-01-02 03:04:07"),
]


def _make_v1(url: str) -> None:
    engine = create_engine(make_url(url))
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as conn:
        for ddl in V1_POSTGRES if postgres else V1_SQLITE:
            conn.execute(text(ddl))
        conn.execute(text("INSERT INTO robojudge_meta (key, value) VALUES ('schema_version', '1')"))
        for r in V1_ROWS:
            conn.execute(
                text(
                    "INSERT INTO robojudge_results (id, item_id, metric, config_hash, version, status, "
                    "value, error, duration_s, details, config, created_at) VALUES (:id, :item, :metric, "
                    ":cfg, :ver, :status, :value, :error, :dur, :details, :config, :created)"
                ),
                dict(zip(("id", "item", "metric", "cfg", "ver", "status", "value", "error", "dur", "details",
                          "config", "created"), r, strict=True)),
            )
        if postgres:  # as BIGSERIAL would be after three inserts
            conn.execute(text("SELECT setval('robojudge_results_id_seq', 3)"))
    engine.dispose()


def test_a_version_1_store_is_upgraded_and_keeps_its_rows(store_url: str) -> None:
    _make_v1(store_url)
    with ResultStore(store_url, upgrade=True) as store:  # asked for, as `results upgrade` does
        rows = {(r.item_id, r.metric): r for r in store.rows()}
        assert len(rows) == 3
        a = rows[("a", "ssim")]
        assert (a.value, a.duration_s, a.details, a.config) == (0.5, 1.5, {"frames": 3}, {"win": 7})
        assert a.created_at == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
        assert rows[("b", "ssim")].status == "error" and rows[("b", "ssim")].error == "boom"
        assert math.isnan(rows[("a", "psnr")].value)  # type: ignore[arg-type]
        # Migrated rows have no fingerprint (unknown) and are current.
        assert all(r.fingerprint == "" and r.current for r in rows.values())
        # The key still holds for current rows; a changed fingerprint supersedes the old row.
        assert store.add([ResultRow("a", "ssim", "c1", "1", "ok", 9.0)]) == 0
        assert store.add([ResultRow("a", "ssim", "c1", "1", "ok", 0.7, fingerprint="f2")]) == 1
        assert store.add([ResultRow("c", "ssim", "c1", "1", "ok", 0.1, fingerprint="f3")]) == 1
        assert store.count() == 4 and store.count(include_superseded=True) == 5
        assert {r.value for r in store.rows(metric="ssim", status="ok")} == {0.7, 0.1}
    engine = create_engine(make_url(store_url))
    try:
        with engine.connect() as conn:
            version = conn.execute(text("SELECT value FROM robojudge_meta WHERE key = 'schema_version'"))
            assert version.scalar() == "2"
            ids = sorted(conn.execute(text("SELECT id FROM robojudge_results")).scalars())
        assert ids[:3] == [1, 2, 3] and len(ids) == 5 and ids[3] > 3  # old ids kept, new ones after them
        names = set(inspect(engine).get_table_names())
        assert "robojudge_results_v1" not in names
        assert not inspect(engine).get_unique_constraints("robojudge_results")
        with engine.connect() as conn:
            meta = {k: v for k, v in conn.execute(text("SELECT key, value FROM robojudge_meta"))}
        assert meta["upgraded_from"] == "1" and meta["upgraded_by"] == f"robojudge {robojudge.__version__}"
        assert datetime.fromisoformat(meta["upgraded_at"]).tzinfo is not None
    finally:
        engine.dispose()


def _schema_version(url: str) -> str:
    engine = create_engine(make_url(url))
    try:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT value FROM robojudge_meta WHERE key = 'schema_version'"))
            return str(found.scalar())
    finally:
        engine.dispose()


def test_a_writer_refuses_to_upgrade_a_store_holding_results_unless_asked(store_url: str) -> None:
    # An upgrade audit: `score` and `judge` upgraded a version 1 store for good and said nothing, even
    # on a run that stored nothing; on a shared PostgreSQL store a teammate's older robojudge then
    # failed in the middle of its run. Opening for writing now leaves such a store as it was.
    _make_v1(store_url)
    with pytest.raises(StoreError) as info:
        ResultStore(store_url)
    said = str(info.value)
    assert "schema version 1" in said and "robojudge results upgrade --db" in said
    assert "can no longer open it" in said and "copy the store first" in said
    assert display_url(make_url(store_url)) in said  # the store, password hidden
    # the command to run: pasteable (review rev22 F7: a masked password in it failed to authenticate)
    shown = display_url(make_url(store_url))
    assert f"upgrade --db {shlex.quote(shown) if '***' not in shown else 'URL'}` and this command" in said
    assert _schema_version(store_url) == "1"


def test_a_writer_upgrades_a_store_without_results_and_says_so(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    _make_v1(store_url)
    engine = create_engine(make_url(store_url))
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM robojudge_results"))
    engine.dispose()
    with caplog.at_level("WARNING"), ResultStore(store_url) as store:
        assert store.opened_at_version == 1
    said = [r.getMessage() for r in caplog.records if "upgraded from schema version 1 to 2" in r.getMessage()]
    assert len(said) == 1 and "can no longer open it" in said[0]
    assert _schema_version(store_url) == "2"


def test_a_version_1_store_opened_read_only_says_how_to_upgrade(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "v1.sqlite"
    _make_v1(f"sqlite:///{path}")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="schema version 1.*robojudge results upgrade.*after copying it"):
        ResultStore(path, read_only=True)
    assert path.read_bytes() == before
    res = CliRunner().invoke(build_app("results"), ["results", "upgrade", "--db", str(path)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "upgraded from schema version 1 to 2, every row kept" in said
    with ResultStore(path, read_only=True) as store:
        assert store.count() == 3
    res = CliRunner().invoke(build_app("results"), ["results", "upgrade", "--db", str(path)])
    said = " ".join(res.output.split())
    assert res.exit_code == 0 and "already at schema version 2, nothing to upgrade" in said


def test_upgrade_makes_no_store_of_a_missing_or_empty_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = build_app("results")
    res = CliRunner().invoke(app, ["results", "upgrade", "--db", str(tmp_path / "typo.sqlite")])
    assert res.exit_code == 2 and "no result store at" in res.output
    assert not (tmp_path / "typo.sqlite").exists()
    empty = tmp_path / "results.csv"
    empty.write_bytes(b"")
    res = CliRunner().invoke(app, ["results", "upgrade", "--db", str(empty)])
    assert res.exit_code == 2 and "is an empty file, not a result store" in res.output
    assert empty.read_bytes() == b""  # before, it was made an SQLite store


def test_upgrade_adds_no_tables_to_another_program_s_database(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """It created robojudge's tables in a foreign SQLite file and said "schema version 2"."""
    import sqlite3

    other = tmp_path / "other #1.sqlite"  # a name a file: URI would misread
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE foo (x)")
    conn.close()
    before = other.read_bytes()
    res = CliRunner().invoke(build_app("results"), ["results", "upgrade", "--db", str(other)])
    assert res.exit_code == 2 and "is not a robojudge result store" in res.output
    assert other.read_bytes() == before


def test_upgrade_of_a_url_makes_no_new_store(tmp_path, request) -> None:  # type: ignore[no-untyped-def]
    # An sqlite:/// URL of a missing file (a typo) was made a new, empty store, reported "already at
    # schema version 2, nothing to upgrade"; so was a PostgreSQL database without robojudge's tables.
    app = build_app("results")
    missing = tmp_path / "typo.sqlite"
    res = CliRunner().invoke(app, ["results", "upgrade", "--db", f"sqlite:///{missing}"])
    assert res.exit_code == 2 and "no result store at" in res.output and not missing.exists()
    empty_pg = str(request.getfixturevalue("postgres_db_url"))
    res = CliRunner().invoke(app, ["results", "upgrade", "--db", empty_pg])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and "not a robojudge result store" in said and "nothing to upgrade" in said
    from robojudge.store import NotAStoreError

    with pytest.raises(NotAStoreError):
        ResultStore(empty_pg, read_only=True)  # still no tables: nothing was created


def test_the_suggested_upgrade_command_never_holds_a_masked_password() -> None:
    from robojudge.store._schema import _pasteable

    assert _pasteable("postgresql+psycopg://rj:***@127.0.0.1:5432/db") == "URL"
    assert _pasteable("sqlite:////runs/a/results.sqlite") == "sqlite:////runs/a/results.sqlite"
    assert _pasteable("sqlite:////my runs/r.sqlite") == "'sqlite:////my runs/r.sqlite'"  # (review rev24 F4)
