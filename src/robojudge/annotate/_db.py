"""The engine behind the annotation service: SQLite (WAL, busy timeout, immediate write transactions)
or PostgreSQL, with the ``ann_*`` tables created on first use and short retries on transient conflicts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, Row, create_engine, event, inspect, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry

from robojudge._sqlite import disk_full_note, enable_wal
from robojudge.annotate import _schema as s
from robojudge.annotate._errors import AnnotateError, NotFound, StorageError
from robojudge.store import StoreError, display_url, mask_text, parse_url

BUSY_TIMEOUT_S = 60.0
_WRITE = "robojudge_ann_write"
_LOCK_ID = 0x616E6E6F74617465  # advisory lock while PostgreSQL creates the tables ("annotate")
_RETRIES = 5
T = TypeVar("T")


class Database:
    """An engine plus transaction helpers; thread-safe (one connection per transaction).

    Args:
        url: A SQLAlchemy URL (SQLite or PostgreSQL) or a file path (SQLite).
        create: Create a SQLite file (and its folder) that does not exist yet. Without it a missing file
            is an error, so a mistyped ``--db`` of a command that only reads or changes a project does
            not leave a new, empty database behind.
    """

    def __init__(self, url: str | os.PathLike[str], *, create: bool = True) -> None:
        try:
            parsed = parse_url(url)
        except StoreError as exc:
            raise AnnotateError(str(exc)) from None
        self.url = display_url(parsed)
        self.dialect = parsed.get_backend_name()
        self._folder: Path | None = None  # an SQLite file's folder, whose disk a failure may have filled
        kwargs: dict[str, Any] = {}
        if self.dialect == "sqlite":
            database = parsed.database or ""
            if database and database != ":memory:" and not database.startswith("file:"):
                if not create and not Path(database).is_file():
                    raise NotFound(
                        f"database file {database} does not exist (robojudge annotate init creates one)"
                    )
                Path(database).parent.mkdir(parents=True, exist_ok=True)
                self._folder = Path(database).expanduser().absolute().parent
            kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_S, "check_same_thread": False}
        else:
            kwargs["pool_pre_ping"] = True
            kwargs["pool_size"] = 10
            kwargs["max_overflow"] = 40
        try:
            self.engine: Engine = create_engine(parsed, **kwargs)
        except (SQLAlchemyError, ImportError) as exc:
            raise AnnotateError(f"cannot use database {self.url}: {mask_text(str(exc))}") from None
        if self.dialect == "sqlite":
            _configure_sqlite(self.engine)
        try:
            self._ensure_tables()
        except BaseException:
            self.engine.dispose()
            raise

    def close(self) -> None:
        self.engine.dispose()

    def _ensure_tables(self) -> None:
        with self.write() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
            if not inspect(conn).has_table(s.meta.name):
                s.metadata.create_all(conn)
                conn.execute(s.meta.insert(), [{"key": "schema_version", "value": str(s.ANN_SCHEMA_VERSION)}])
                return
            found = conn.execute(select(s.meta.c.value).where(s.meta.c.key == "schema_version")).scalar()
            if found != str(s.ANN_SCHEMA_VERSION):
                raise AnnotateError(
                    f"{self.url} holds annotation schema version {found}; this robojudge reads version "
                    f"{s.ANN_SCHEMA_VERSION}"
                )
            # A table added since the project was created (ann_examples came without a version bump) is
            # created now; a change to an existing table's columns bumps ANN_SCHEMA_VERSION instead.
            s.metadata.create_all(conn)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (SQLite: the write lock is taken at BEGIN, so writers queue, not fail)."""
        with self._guard(), self.engine.connect() as conn:
            conn.execution_options(**{_WRITE: True})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._guard(), self.engine.connect() as conn, conn.begin():
            yield conn

    def retry(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in a write transaction, again on a deadlock or serialisation failure."""
        for attempt in range(_RETRIES):
            try:
                with self.write() as conn:
                    return work(conn)
            except AnnotateError as exc:
                cause = exc.__cause__
                if attempt + 1 < _RETRIES and isinstance(cause, DBAPIError) and _transient(cause):
                    time.sleep(0.02 * (2**attempt))
                    continue
                raise
        raise AssertionError("unreachable")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except SQLAlchemyError as exc:
            reason = mask_text(str(exc.orig if isinstance(exc, DBAPIError) else exc))
            if not isinstance(exc, OperationalError | InterfaceError):  # a constraint, a bug: as it was
                raise AnnotateError(f"database {self.url}: {reason}") from exc
            # The database itself failed (a full disk, a server gone): not the request's fault.
            note = disk_full_note(reason, self._folder) if self._folder is not None else None
            raise StorageError(f"database {self.url}: {reason}" + (f": {note}" if note else ""),
                               disk_full=note is not None) from exc


def _transient(exc: DBAPIError) -> bool:
    code = getattr(exc.orig, "sqlstate", None)
    return code in ("40001", "40P01") or "database is locked" in str(exc.orig)


PRIVILEGED = ("admin",)
"""Roles that may read any task, label and audit event."""

#: The roles that may cross-review and adjudicate (checked when tasks are assigned and each time a task
#: is opened or saved, so a role lowered later stops its open tasks).
REVIEW_ROLES = ("reviewer", "adjudicator", "admin")
ADJUDICATE_ROLES = ("adjudicator", "admin")
#: The roles each kind of task needs (a label: any role).
KIND_ROLES: dict[str, tuple[str, ...]] = {"review": REVIEW_ROLES, "adjudicate": ADJUDICATE_ROLES}


def _sessions_key(annotator_id: int) -> str:
    return f"sessions:{annotator_id}"


def sessions_generation(conn: Connection, annotator_id: int) -> int:
    """How many times an annotator's sessions were ended (kept in ``ann_meta``; 0 when never)."""
    value = conn.execute(select(s.meta.c.value).where(s.meta.c.key == _sessions_key(annotator_id))).scalar()
    return int(value) if value is not None else 0


def end_sessions(conn: Connection, annotator_id: int) -> None:
    """End every web session of the annotator made so far (a session carries the generation it was made
    at)."""
    key, generation = _sessions_key(annotator_id), sessions_generation(conn, annotator_id) + 1
    conn.execute(s.meta.delete().where(s.meta.c.key == key))
    conn.execute(s.meta.insert(), [{"key": key, "value": str(generation)}])


def project_row(conn: Connection, name: str) -> Row[Any]:
    """The project's row.

    Raises:
        NotFound: No project has this name.
    """
    row = conn.execute(select(s.projects).where(s.projects.c.name == name)).first()
    if row is None:
        raise NotFound(f"no annotation project named {name!r}")
    return row


def now() -> datetime:
    return datetime.now(UTC)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, record: ConnectionPoolEntry) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves below
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            enable_wal(cur, BUSY_TIMEOUT_S)
            cur.execute("PRAGMA synchronous = NORMAL")
            cur.execute("PRAGMA foreign_keys = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "BEGIN")
