"""Opening a store: URLs, automatic schema creation, schema versions and readable errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from robojudge.store import SCHEMA_VERSION, ResultRow, ResultStore, StoreError, _schema, default_db_url


def _set_meta(url: str, key: str, value: str | None) -> None:
    engine = create_engine(make_url(url))
    with engine.begin() as conn:
        if value is None:
            conn.execute(text("DELETE FROM robojudge_meta WHERE key = :k"), {"k": key})
        else:
            conn.execute(text("UPDATE robojudge_meta SET value = :v WHERE key = :k"), {"k": key, "v": value})
    engine.dispose()


def test_schema_is_created_automatically(store_url: str) -> None:
    ResultStore(store_url).close()
    engine = create_engine(make_url(store_url))
    try:
        names = set(inspect(engine).get_table_names())
        assert {"robojudge_meta", "robojudge_results"} <= names
        with engine.connect() as conn:
            version = conn.execute(
                text("SELECT value FROM robojudge_meta WHERE key = 'schema_version'")
            ).scalar()
        assert version == str(SCHEMA_VERSION) == "2"
        columns = {c["name"] for c in inspect(engine).get_columns("robojudge_results")}
        assert {"fingerprint", "superseded_at"} <= columns
        indexes = {i["name"]: i for i in inspect(engine).get_indexes("robojudge_results")}
        current = indexes["uq_robojudge_results_current"]
        assert current["unique"]
        assert current["column_names"] == ["item_id", "metric", "config_hash", "version"]
    finally:
        engine.dispose()


def test_a_newer_schema_is_refused(store_url: str) -> None:
    ResultStore(store_url).close()
    _set_meta(store_url, "schema_version", "999")
    with pytest.raises(StoreError, match="upgrade robojudge") as info:
        ResultStore(store_url)
    assert "999" in str(info.value) and f"version {SCHEMA_VERSION}" in str(info.value)


def _row_format(url: str) -> str | None:
    engine = create_engine(make_url(url))
    with engine.connect() as conn:
        found = conn.execute(text("SELECT value FROM robojudge_meta WHERE key = 'row_format'")).scalar()
    engine.dispose()
    return None if found is None else str(found)


def test_a_newer_row_format_is_read_with_a_warning_and_kept(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # An upgrade audit: the way rows are written changed several times within schema version 2 (library
    # records, counted manifest notes), and older code read newer rows wrongly without a word. A store
    # now keeps the highest row format that wrote to it, and a robojudge that finds a newer one warns.
    ResultStore(store_url).close()
    assert _row_format(store_url) == str(_schema.ROW_FORMAT)
    _set_meta(store_url, "row_format", None)  # a store from before the format was recorded
    with ResultStore(store_url, read_only=True) as store:
        assert store.row_format == 0
    assert _row_format(store_url) is None  # (read-only: nothing written)
    ResultStore(store_url).close()
    assert _row_format(store_url) == str(_schema.ROW_FORMAT)
    caplog.clear()
    _set_meta(store_url, "row_format", str(_schema.ROW_FORMAT + 1))  # as a newer robojudge leaves it
    for read_only in (True, False):
        with caplog.at_level("WARNING"), ResultStore(store_url, read_only=read_only) as store:
            if not read_only:
                store.add([ResultRow("i", "m", "h", "1", "ok", 1.0)])
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and all(f"row format {_schema.ROW_FORMAT + 1}" in m for m in said)
    assert "may be read wrongly here; upgrade robojudge" in said[0]
    assert _row_format(store_url) == str(_schema.ROW_FORMAT + 1)  # an older writer leaves it


def test_an_older_schema_without_upgrade_path_is_refused(store_url: str) -> None:
    ResultStore(store_url).close()
    _set_meta(store_url, "schema_version", "0")
    with pytest.raises(StoreError, match="schema version 0.*cannot upgrade"):
        ResultStore(store_url)


def test_an_older_schema_is_migrated_step_by_step(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ResultStore(store_url).close()
    _set_meta(store_url, "schema_version", "0")
    ran: list[int] = []
    steps = {0: lambda conn: ran.append(0), 1: lambda conn: ran.append(1)}
    monkeypatch.setattr(_schema, "_MIGRATIONS", steps)
    with ResultStore(store_url) as store:
        assert store.add([ResultRow("a", "m", "c", "1", "ok", 1.0)]) == 1
    assert ran == [0, 1]
    ResultStore(store_url).close()  # now at the current version: no migration needed
    assert ran == [0, 1]


def test_a_missing_or_bad_schema_version_is_refused(store_url: str) -> None:
    ResultStore(store_url).close()
    _set_meta(store_url, "schema_version", "one")
    with pytest.raises(StoreError, match="not a number"):
        ResultStore(store_url)
    _set_meta(store_url, "schema_version", None)
    with pytest.raises(StoreError, match="without a schema_version"):
        ResultStore(store_url)


def test_plain_path_means_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "store.sqlite"
    with ResultStore(str(path)) as store:
        store.add([ResultRow("a", "m", "c", "1", "ok", 1.0)])
        assert store.url == f"sqlite:///{path}"
    assert path.is_file()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM robojudge_results").fetchone() == (1,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with ResultStore(path) as again:  # a Path object works too
        assert again.count() == 1


def test_relative_plain_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with ResultStore("results.sqlite") as store:
        assert store.url == f"sqlite:///{tmp_path / 'results.sqlite'}"


def test_default_db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_db_url(tmp_path / "run") == f"sqlite:///{tmp_path / 'run' / 'results.sqlite'}"
    monkeypatch.chdir(tmp_path)
    url = default_db_url(Path("run2"))
    assert url == f"sqlite:///{tmp_path / 'run2' / 'results.sqlite'}"
    with ResultStore(url) as store:
        assert store.count() == 0
    assert (tmp_path / "run2" / "results.sqlite").is_file()


def test_not_a_database_file(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="junk.sqlite"):
        ResultStore(junk)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql+pymysql://u@localhost/db", "SQLite or PostgreSQL"),
        ("nonsense://x", "SQLite or PostgreSQL"),
        ("postgresql+nodriver://u@localhost/db", "cannot use database"),
        ("://", "not a database URL"),
        ("", "no database given"),
    ],
)
def test_bad_urls(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        ResultStore(url)


def test_unreachable_server_error_names_url_without_password() -> None:
    url = "postgresql+psycopg://robo:s3cretpw@127.0.0.1:1/results?connect_timeout=5"
    with pytest.raises(StoreError) as info:
        ResultStore(url)
    message = str(info.value)
    assert "s3cretpw" not in message
    assert "robo:***@127.0.0.1:1/results" in message
    assert "cannot open" in message


def test_bad_url_text_hides_password() -> None:
    with pytest.raises(StoreError) as info:
        ResultStore("postgresql+psycopg://robo:s3cretpw@127.0.0.1:notaport/results")
    assert "s3cretpw" not in str(info.value)


@pytest.mark.postgres
def test_postgres_url_variants_and_masked_display(postgres_db_url: str) -> None:
    url = make_url(postgres_db_url)
    plain = url.set(drivername="postgresql", password="s3cretpw")  # trust auth ignores the password
    with ResultStore(plain.render_as_string(hide_password=False)) as store:
        assert store.url.startswith("postgresql+psycopg://postgres:***@")
        assert "s3cretpw" not in store.url and "s3cretpw" not in repr(store)
        assert store.add([ResultRow("a", "m", "c", "1", "ok", 1.0)]) == 1


@pytest.mark.postgres
def test_missing_postgres_database_is_a_store_error(postgres_url: str) -> None:
    url = make_url(postgres_url).set(database="rj_does_not_exist", password="s3cretpw")
    with pytest.raises(StoreError, match="rj_does_not_exist") as info:
        ResultStore(url.render_as_string(hide_password=False))
    assert "s3cretpw" not in str(info.value)
