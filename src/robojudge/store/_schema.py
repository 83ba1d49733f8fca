"""Tables, the schema version, and creating or upgrading a database to the current schema.

The schema is versioned by one row in ``robojudge_meta`` (``key = 'schema_version'``). Opening a
store creates the tables when they are missing, refuses a database written by a newer robojudge,
and upgrades an older one through the steps in ``_MIGRATIONS``: one holding results only when asked
(``robojudge results upgrade``), since an older robojudge cannot open it afterwards. Only this package
writes SQL.

Version 2 added the inputs ``fingerprint`` of every row and ``superseded_at``: a row whose inputs
changed is kept, marked superseded, beside the row recomputed from the new inputs. The database
keeps one *current* (not superseded) row per key with a partial unique index, where version 1 had
a unique constraint over all rows. Version 1 rows are kept with an empty fingerprint (unknown).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Dialect,
    Double,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.types import TypeDecorator

import robojudge
from robojudge.store._errors import NotAStoreError, StoreError

SCHEMA_VERSION = 2
"""The schema this code reads and writes. Bump it, and add a step to ``_MIGRATIONS``, on any change."""

ROW_FORMAT = 1
"""How this code writes rows and notes within :data:`SCHEMA_VERSION`. Bump it when older code would
misread what this code writes, though the tables stay the same (a library record written otherwise, a
field of a manifest note): a store keeps the highest format that wrote to it (``row_format`` in
``robojudge_meta``; none before 2026-12-06), and a robojudge that finds a higher one than its own warns
that it may read some rows wrongly (:func:`stored_row_format`). Unlike a schema version, a higher format
refuses nothing: old and new code can share a store."""

KEY_COLUMNS = ("item_id", "metric", "config_hash", "version")

# Arbitrary constant: the PostgreSQL advisory lock held while a store checks or creates its tables,
# so that two processes opening a fresh database at once do not both run CREATE TABLE.
_SCHEMA_LOCK_ID = 0x526F626F4A756467 & 0x7FFFFFFFFFFFFFFF


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back as an aware UTC ``datetime``.

    SQLite has no time zone support, so the value is written there as naive UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # defensive: a row written by hand into SQLite
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

meta_table = Table(
    "robojudge_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

results_table = Table(
    "robojudge_results",
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("item_id", Text, nullable=False),
    Column("metric", Text, nullable=False),
    Column("config_hash", Text, nullable=False),
    Column("version", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("value", Double(), nullable=True),
    Column("error", Text, nullable=True),
    Column("duration_s", Double(), nullable=False, default=0.0),
    Column("details", JSON(none_as_null=True), nullable=True),
    Column("config", JSON(none_as_null=True), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    # Hash of the inputs the result read (robojudge.run._fingerprint); "" when unknown.
    Column("fingerprint", Text, nullable=False, default="", server_default=""),
    # Set when a result computed from changed inputs took this row's place; NULL on current rows.
    Column("superseded_at", UTCDateTime(), nullable=True),
    CheckConstraint("status IN ('ok', 'error')", name="ck_robojudge_results_status"),
    CheckConstraint("status = 'ok' OR value IS NULL", name="ck_robojudge_results_error_value"),
    Index("ix_robojudge_results_metric_config", "metric", "config_hash", "version"),
)

CURRENT = results_table.c.superseded_at.is_(None)
"""The rows that are not superseded: what readers see and what resume and the unique key count."""

# The database itself guarantees one current row per key, whichever process or thread writes.
current_key_index = Index(
    "uq_robojudge_results_current",
    *(results_table.c[k] for k in KEY_COLUMNS),
    unique=True,
    sqlite_where=CURRENT,
    postgresql_where=CURRENT,
)

_V1_COLUMNS = (
    "id, item_id, metric, config_hash, version, status, value, error, duration_s, details, config, created_at"
)


def _upgrade_1_to_2(conn: Connection) -> None:
    """Add ``fingerprint`` and ``superseded_at``; one current row per key instead of one row per key."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("ALTER TABLE robojudge_results ADD COLUMN fingerprint TEXT NOT NULL DEFAULT ''"))
        conn.execute(text("ALTER TABLE robojudge_results ADD COLUMN superseded_at TIMESTAMP WITH TIME ZONE"))
        conn.execute(text("ALTER TABLE robojudge_results DROP CONSTRAINT uq_robojudge_results_key"))
        current_key_index.create(conn)
        return
    # SQLite cannot drop a table constraint: rebuild the table, keeping every row and its id.
    conn.execute(text("DROP INDEX IF EXISTS ix_robojudge_results_metric_config"))
    conn.execute(text("ALTER TABLE robojudge_results RENAME TO robojudge_results_v1"))
    results_table.create(conn)
    conn.execute(text(
        f"INSERT INTO robojudge_results ({_V1_COLUMNS}, fingerprint, superseded_at) "
        f"SELECT {_V1_COLUMNS}, '', NULL FROM robojudge_results_v1"
    ))
    conn.execute(text("DROP TABLE robojudge_results_v1"))


# _MIGRATIONS[n] upgrades a database from schema version n to n + 1, inside the opening transaction.
_MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _upgrade_1_to_2}


def upgrade_consequence(had: int) -> str:
    """What upgrading a store from schema version ``had`` changes, for the messages that mention it."""
    return (f"a robojudge that knows only schema version {had} can no longer open it afterwards (a "
            "teammate's on a shared database, even in the middle of a run)")


def ensure_schema(
    conn: Connection, *, upgrade: bool = False, where: str = "the result database"
) -> int | None:
    """Create the tables if missing, check the schema version, and upgrade an older schema.

    An older schema is upgraded only when ``upgrade`` is set or the database holds no result rows:
    the upgrade is one way (an older robojudge can no longer open the store), so a store holding
    results changes only when the user asks for it (``robojudge results upgrade``). Every upgrade
    records ``upgraded_at``, ``upgraded_by`` and ``upgraded_from`` in ``robojudge_meta``.

    Must run inside a transaction; on SQLite that transaction should hold the write lock
    (``BEGIN IMMEDIATE``) so concurrent openers take turns.

    Args:
        conn: A connection with an open transaction.
        upgrade: Upgrade an older schema even when the database holds results.
        where: The database, for messages (its URL, password hidden).

    Returns:
        The schema version the database had (:data:`SCHEMA_VERSION` when it needed no upgrade), or
        None when the tables were created now.

    Raises:
        StoreError: The database was written by a newer robojudge, carries no usable schema
            version, is older and holds results while ``upgrade`` is not set, or is older and no
            upgrade path exists.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _SCHEMA_LOCK_ID})
    if not inspect(conn).has_table(meta_table.name):
        metadata.create_all(conn)
        conn.execute(
            meta_table.insert(),
            [
                {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                {"key": "created_by", "value": f"robojudge {robojudge.__version__}"},
                {"key": "created_at", "value": datetime.now(UTC).isoformat()},
                {"key": "row_format", "value": str(ROW_FORMAT)},
            ],
        )
        return None
    found = had = _read_version(conn)
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"the result database has schema version {found}, but this robojudge "
            f"({robojudge.__version__}) only knows version {SCHEMA_VERSION}: upgrade robojudge to read it"
        )
    if found < SCHEMA_VERSION and not upgrade and _holds_results(conn):
        raise StoreError(
            f"{where} has result schema version {found} and this robojudge ({robojudge.__version__}) writes "
            f"version {SCHEMA_VERSION}; it does not upgrade a store holding results on its own, since "
            f"{upgrade_consequence(found)}: copy the store first if an older robojudge still needs it, then "
            f"run `robojudge results upgrade --db {_pasteable(where)}` and this command again"
        )
    while found < SCHEMA_VERSION:
        step = _MIGRATIONS.get(found)
        if step is None:
            raise StoreError(
                f"the result database has schema version {found} and this robojudge cannot upgrade it "
                f"to version {SCHEMA_VERSION}; export it with an older robojudge or start a new database"
            )
        step(conn)
        found += 1
        conn.execute(meta_table.update().where(meta_table.c.key == "schema_version").values(value=str(found)))
    if had < SCHEMA_VERSION:
        _set_meta(conn, {"upgraded_at": datetime.now(UTC).isoformat(),
                         "upgraded_by": f"robojudge {robojudge.__version__}", "upgraded_from": str(had)})
    metadata.create_all(conn)  # no-op when complete; restores e.g. a dropped index
    if stored_row_format(conn) < ROW_FORMAT:  # (a higher one stays: rows of that format are stored)
        conn.execute(meta_table.delete().where(meta_table.c.key == "row_format"))
        conn.execute(meta_table.insert(), [{"key": "row_format", "value": str(ROW_FORMAT)}])
    return had


def _holds_results(conn: Connection) -> bool:
    """Whether the results table exists and holds a row (superseded or not)."""
    if not inspect(conn).has_table(results_table.name):
        return False
    return conn.execute(text("SELECT 1 FROM robojudge_results LIMIT 1")).first() is not None


def _set_meta(conn: Connection, values: dict[str, str]) -> None:
    """Write ``values`` into ``robojudge_meta``, replacing what those keys held."""
    conn.execute(meta_table.delete().where(meta_table.c.key.in_(list(values))))
    conn.execute(meta_table.insert(), [{"key": k, "value": v} for k, v in values.items()])


def stored_row_format(conn: Connection) -> int:
    """The highest :data:`ROW_FORMAT` that wrote to the store (0: written before it was recorded, or
    a value that is not a number)."""
    raw = conn.execute(select(meta_table.c.value).where(meta_table.c.key == "row_format")).scalar()
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0


def check_schema(conn: Connection) -> None:
    """Check, without writing anything, that the database holds the current schema.

    What a read-only store does instead of :func:`ensure_schema`: it can neither create tables nor
    upgrade an older schema, so both are errors that say what to do.

    Raises:
        StoreError: No robojudge tables, a newer schema, or an older one that needs an upgrade.
    """
    if not inspect(conn).has_table(meta_table.name):
        raise NotAStoreError("the database is not a robojudge result store (it has no robojudge_meta table)")
    found = _read_version(conn)
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"the result database has schema version {found}, but this robojudge "
            f"({robojudge.__version__}) only knows version {SCHEMA_VERSION}: upgrade robojudge to read it"
        )
    if found < SCHEMA_VERSION:
        raise StoreError(
            f"the result database has schema version {found} and this robojudge reads version "
            f"{SCHEMA_VERSION}; it cannot be upgraded while opened read-only: upgrade it with `robojudge "
            "results upgrade --db URL` (on a writable copy of a read-only file), after copying it if an "
            f"older robojudge still needs it, since {upgrade_consequence(found)}"
        )


def _read_version(conn: Connection) -> int:
    raw = conn.execute(select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
    if raw is None:
        raise StoreError(
            "the database has a robojudge_meta table without a schema_version: "
            "it is damaged or not a robojudge result store"
        )
    try:
        return int(raw)
    except ValueError:
        raise StoreError(f"the database's schema_version {raw!r} is not a number: it is damaged") from None


def _pasteable(url: str) -> str:
    """``url`` as a shell command can take it (quoted where needed): a URL shown with its password masked
    reads "URL" (the store's URL as given to this command), since the masked text would not open it."""
    return "URL" if "***" in url else shlex.quote(url)
