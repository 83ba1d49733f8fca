"""``ResultStore``: the only object in robojudge that talks SQL."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import socket
import sqlite3
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from sqlalchemy import (
    ColumnElement,
    Engine,
    Text,
    case,
    cast,
    create_engine,
    delete,
    event,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry, NullPool
from sqlalchemy.sql import Select, text

import robojudge
from robojudge._activity import step
from robojudge._files import process_exists
from robojudge._sqlite import disk_full_note, enable_wal
from robojudge.store._errors import StoreError
from robojudge.store._row import STATUSES, ResultRow, key_problem
from robojudge.store._schema import (
    CURRENT,
    KEY_COLUMNS,
    ROW_FORMAT,
    SCHEMA_VERSION,
    check_schema,
    ensure_schema,
    meta_table,
    results_table,
    stored_row_format,
    upgrade_consequence,
)
from robojudge.store._url import display_url, mask_text, parse_url

_log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_S = 60.0
"""How long a SQLite writer waits for another process's transaction before giving up."""

POSTGRES_OUTAGE_WAIT_S = 30.0
"""How long a PostgreSQL store keeps retrying a transaction that the server's going away ended (a restart,
a failover, a managed database's maintenance) before giving up (:func:`outage_reason`)."""
_OUTAGE_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)  # between tries; then the last, until the wait is over

# SQLSTATEs of a server going away or not yet back: admin_shutdown (a fast or immediate shutdown ended
# the session), crash_shutdown, cannot_connect_now (starting up, shutting down, in recovery) and the
# connection exceptions (class 08). Not 08004 (the server rejected the connection: a setting, no outage).
_OUTAGE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "08000", "08001", "08003", "08006"})
# libpq's words for the same where it gives no SQLSTATE (psycopg's errors of a connection attempt have none).
_OUTAGE_TEXTS = ("the database system is shutting down", "the database system is starting up",
                 "the database system is in recovery mode", "the database system is not yet accepting",
                 "terminating connection due to administrator")
# A refused, reset, closed or timed-out connection is an outage only on a server this store has reached
# before: on a first connection it is a wrong host or port (or a tunnel with nothing behind it), better
# said at once than after half a minute of retries.
_LOST_TEXTS = ("connection refused", "connection reset", "could not receive data", "could not send data",
               "no connection to the server", "the connection is lost", "the connection is closed",
               "server closed the connection unexpectedly", "timeout expired")

_T = TypeVar("_T")

_WRITE_OPTION = "robojudge_write"
_IN_CHUNK = 500  # ids per "IN (...)" list, well under every backend's parameter limit

RowKey = tuple[str, str, str, str]

# Keys of the manifests noted in ``robojudge_meta``: this prefix and a hash of the manifest's path (the
# key column holds 64 characters; paths are longer).
MANIFEST_KEY = "manifest:"
# Keys of the items a run scoring in its own process has started and not finished: this prefix, a hash
# of the item id and one of the process that noted it (see ``ResultStore.note_in_flight``).
IN_FLIGHT_KEY = "inflight:"


def _json_key(key: Any) -> str:
    """A dict key as :func:`json.dumps` writes it (``True`` -> ``"true"``, ``None`` -> ``"null"``)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    return str(key)


def _json_ready(value: Any) -> Any:
    """Make ``value`` strict JSON: NaN and infinities become null, unknown objects become strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_json_key(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_json_ready(v) for v in value]
    if value is None or isinstance(value, str | int | bool):
        return value
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars
        return _json_ready(value.tolist())
    if hasattr(value, "item") and callable(value.item):  # other array-library scalars
        return _json_ready(value.item())
    return str(value)


def _json_default(value: Any) -> Any:
    """The C encoder's hook for what it cannot write itself (numpy scalars and arrays, sets...)."""
    if isinstance(value, set | frozenset):
        return list(value)
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars
        return value.tolist()
    if hasattr(value, "item") and callable(value.item):  # other array-library scalars
        return value.item()
    return str(value)


def dumps_json(value: Any) -> str:
    """Serialise ``value`` as strict JSON (what both SQLite and PostgreSQL accept).

    Most values are written by the C encoder in one pass; only a value holding NaN or an infinity
    (which strict JSON cannot hold) or a key that is not a string or number takes the slower walk
    through :func:`_json_ready`, which writes those as null and as strings. Both give the same text
    for what both can write.

    A NUL character in a string or key is written as the text ``\\x00``, as the ``error`` column
    writes it: PostgreSQL's ``json`` takes ``\\u0000`` in but then refuses to read any field of the
    document. A lone surrogate (an undecodable byte of a file name) is written as the text
    ``\\udcff``: it has no UTF-8 encoding, and the driver would refuse the whole batch of rows.
    """
    try:
        text = json.dumps(
            value, allow_nan=False, ensure_ascii=False, separators=(",", ":"), default=_json_default
        )
    except (ValueError, TypeError):
        text = json.dumps(_json_ready(value), allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    if "\\u0000" in text:
        text = _JSON_NUL.sub(_nul_written_out, text)
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\\\u{ord(m[0]):04x}", text)
    return text


# A run of backslashes before "u0000" in JSON text: an odd run ends in the escape of a NUL, an even one
# is escaped backslashes followed by the letters.
_JSON_NUL = re.compile(r"(\\+)u0000")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _nul_written_out(m: re.Match[str]) -> str:
    run = m[1]
    return m[0] if len(run) % 2 == 0 else run[:-1] + "\\\\x00"


def _storable_text(text: str) -> str:
    """``text`` with what a text column cannot hold written out: NUL (PostgreSQL refuses it) as
    ``\\x00`` and a lone surrogate (no UTF-8 encoding) as ``\\udcff``."""
    if text.isascii():
        return text.replace("\x00", "\\x00")
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def _unencodable(exc: UnicodeError) -> str:
    """What a write could not encode, for a message: the text around the character (an item id, say)."""
    if not isinstance(exc, UnicodeEncodeError):
        return str(exc)
    text, at = exc.object, exc.start
    return (f"{text[max(0, at - 60):at + 60]!r} holds {text[at]!r} at position {at}, a character without a "
            "UTF-8 encoding (an undecodable byte of a file name?)")



def outage_reason(exc: BaseException, *, reached: bool = True) -> str | None:
    """Why ``exc`` is a PostgreSQL server going away or not back yet, in libpq's words; None for any other
    error (a wrong password, a missing table, a full disk, a syntax error: retrying changes nothing).

    Only an :class:`sqlalchemy.exc.OperationalError` can be one. Its driver error's SQLSTATE decides
    where it has one (57P01-57P03, class 08); a failed connection attempt has none, and libpq's text
    decides: "the database system is shutting down", "... starting up", "server closed the connection
    unexpectedly". A refused or reset connection counts only with ``reached``: the server was reached
    before, so the address is right and the server is away.
    """
    if not isinstance(exc, OperationalError):
        return None
    orig = exc.orig if exc.orig is not None else exc
    words = " ".join(str(orig).split())
    code = getattr(orig, "sqlstate", None)
    if code is not None:
        return words if code in _OUTAGE_SQLSTATES else None
    lowered = words.lower()
    if any(t in lowered for t in _OUTAGE_TEXTS):
        return words
    if reached and (exc.connection_invalidated or any(t in lowered for t in _LOST_TEXTS)):
        return words
    return None


class _Outage:
    """The tries of one transaction of a PostgreSQL store: whether, and after how long a pause, to try
    again after an error (:meth:`retry`), and one warning once the server is back (:meth:`over`)."""

    def __init__(self, store: ResultStore, action: str) -> None:
        self.store = store
        self.action = action
        self.since: float | None = None
        self.tries = 0
        self.committing = False  # the transaction's body was done: its COMMIT was under way
        self.reason = ""

    def retry(self, exc: SQLAlchemyError, *, idempotent: bool) -> bool:
        """Whether to try again after ``exc`` (having waited before returning True); False: raise it.

        Never after an error in COMMIT of a transaction that is not ``idempotent``: the commit may have
        gone through, and doing it again would do its work twice or report it wrongly.
        """
        store = self.store
        if store._dialect != "postgresql" or (self.committing and not idempotent) or store._given_up:
            return False
        reason = outage_reason(exc, reached=store._reached)
        if reason is None:
            return False
        now = time.monotonic()
        if self.since is None:
            self.since = now
            _log.info("%s: the PostgreSQL server is away (%s); trying again for up to %.0f s", store.url,
                      store._reason(exc), POSTGRES_OUTAGE_WAIT_S)
        self.reason = store._reason(exc)
        waited = now - self.since
        if waited >= POSTGRES_OUTAGE_WAIT_S:
            # What runs after this error (a run's clean-up) fails at once, not after another wait.
            store._given_up = True
            raise StoreError(f"cannot {self.action} {store.url}: {self.reason}; the server was not back "
                             f"after {waited:.0f} s of retries") from exc
        delay = _OUTAGE_DELAYS_S[min(self.tries, len(_OUTAGE_DELAYS_S) - 1)]
        time.sleep(min(delay, POSTGRES_OUTAGE_WAIT_S - waited))
        self.tries += 1
        self.committing = False
        return True

    def over(self) -> None:
        """A try went through: warn, once, if the server had been away."""
        self.store._reached = True
        self.store._given_up = False
        if self.since is not None:
            _log.warning("%s: the PostgreSQL server was away for %.1f s (%s); reached again after %d %s",
                         self.store.url, time.monotonic() - self.since, self.reason, self.tries,
                         "retry" if self.tries == 1 else "retries")
            self.since = None


class ResultStore:
    """Results of metric runs in SQLite (default) or PostgreSQL.

    A row is identified by ``(item_id, metric, config_hash, version)`` and carries the
    ``fingerprint`` of the inputs it was computed from. The database keeps one *current* row per
    key (a partial unique index): adding a row whose key has a current row with the same
    fingerprint does nothing, whoever adds it and however many processes write at once. A row with
    a different (non-empty) fingerprint means the inputs changed: the stored row is kept but marked
    superseded, and the new row becomes current. Values are never overwritten; the readers
    (:meth:`rows`, :meth:`iter_rows`, :meth:`count`, :meth:`done_item_ids`) see current rows unless
    asked for all. Failed rows can be deleted with :meth:`clear_errors` so a rerun retries them.

    Args:
        url: A SQLAlchemy URL (``sqlite:///FILE``, ``postgresql+psycopg://USER@HOST/DB``) or a plain
            file path, which means SQLite at that path. The SQLite file and its folder are created
            when missing; the tables are created on first use.
        read_only: Open for reading only, for commands that only read (export, status, reports).
            Nothing is created, upgraded or written, so a store on a read-only file, folder or share
            can be read: SQLite is opened with ``mode=ro``, and a file that cannot be written from
            here (read-only folder or file, no writer) as ``immutable``, so that not even the WAL
            index is created. Such a read checks afterwards that the file did not change meanwhile (a
            writer elsewhere) and raises :class:`StoreError` if it did: what it read may be torn.
            PostgreSQL sessions run with ``default_transaction_read_only``. Every write method
            raises :class:`StoreError`. A missing store, a database without robojudge tables and a
            schema that needs an upgrade are errors.
        upgrade: Upgrade an older schema even when the store holds results (``robojudge results
            upgrade``). Without it, opening for writing upgrades an older store only while it holds no
            results (saying so in a warning), and refuses one that does: the upgrade is one way, and
            an older robojudge (a teammate's, on a shared database) can no longer open the store.

    Raises:
        StoreError: Bad URL, unreachable or unreadable database, incompatible schema version, or an
            older schema in a store holding results without ``upgrade``.
            The message names the URL with its password hidden.

    Attributes:
        url: The database URL, password hidden, for display.
        read_only: Whether the store was opened read-only.
        opened_at_version: The schema version the database had when this store opened it for writing
            (older than :data:`SCHEMA_VERSION`: it was upgraded then; None: it was created then).
    """

    def __init__(
        self, url: str | os.PathLike[str], *, read_only: bool = False, upgrade: bool = False
    ) -> None:
        parsed = parse_url(url)
        self._url: URL = parsed
        self.url: str = display_url(parsed)
        self.read_only = read_only
        self.opened_at_version: int | None = SCHEMA_VERSION
        # The highest row format that wrote to the store (robojudge.store._schema.ROW_FORMAT).
        self.row_format = ROW_FORMAT
        self._dialect = parsed.get_backend_name()
        self._reached = False  # a transaction went through: a refused connection now means an outage
        self._given_up = False  # an outage outlasted the wait: no more waits until a transaction goes through
        self._engine = self._create_engine(parsed)

        def check(conn: Connection) -> None:
            try:
                check_schema(conn)
            except StoreError as exc:  # which database: several may be in play
                raise type(exc)(f"{self.url}: {exc}") from None
            self.row_format = stored_row_format(conn)

        def create(conn: Connection) -> None:  # (run again after an unsure commit, it finds the schema made)
            self.opened_at_version = ensure_schema(conn, upgrade=upgrade, where=self.url)
            self.row_format = stored_row_format(conn)

        try:
            if read_only:
                self._transaction("open", check)
            else:
                self._transaction("open", create, write=True)
        except StoreError as exc:
            self._engine.dispose()
            hint = self._folder_hint()
            if hint is None:
                raise
            raise StoreError(f"{exc}; {hint}") from exc.__cause__
        except BaseException:
            self._engine.dispose()
            raise
        _log.debug("opened the result store %s (%s)", self.url, "read-only" if read_only else "for writing")
        had = self.opened_at_version
        if had is not None and had < SCHEMA_VERSION and not upgrade:  # (asked for: the caller says so)
            _log.warning("%s: upgraded from schema version %d to %d (it held no results); %s", self.url, had,
                         SCHEMA_VERSION, upgrade_consequence(had))
        if self.row_format > ROW_FORMAT:
            _log.warning("%s was written by a newer robojudge (row format %d; this robojudge %s writes and "
                         "reads format %d): some of its rows may be read wrongly here; upgrade robojudge",
                         self.url, self.row_format, robojudge.__version__, ROW_FORMAT)

    def _folder_hint(self) -> str | None:
        """What to do when an SQLite store that exists cannot be opened for writing because its folder
        is read-only (SQLite only says "unable to open database file"); None otherwise."""
        database = self._url.database or ""
        if self._dialect != "sqlite" or self.read_only or database in ("", ":memory:"):
            return None
        path = Path(database).expanduser().absolute()
        if database.startswith("file:") or not path.is_file() or os.access(path.parent, os.W_OK):
            return None
        name = path.name
        return (f"the folder {path.parent} is read-only, and SQLite writes {name}-wal and {name}-shm beside "
                "the store while it writes: copy the store into a writable folder and use the copy (--db), "
                "or make the folder writable; commands that only read the store (report, results export, "
                "results status) work on it where it is")

    # -- setup -------------------------------------------------------------------------------------

    def _create_engine(self, url: URL) -> Engine:
        kwargs: dict[str, Any] = {"json_serializer": dumps_json, "json_deserializer": json.loads}
        if self._dialect == "sqlite" and self.read_only:
            return self._create_sqlite_reader(url, kwargs)
        if self._dialect == "sqlite":
            database = url.database or ""
            if database and database != ":memory:" and not database.startswith("file:"):
                _refuse_export_name(Path(database).expanduser(), self.url)
                try:
                    Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(f"cannot create the folder for {self.url}: {exc}") from None
            kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_S}
        else:
            connect_args: dict[str, Any] = {}
            if "connect_timeout" not in url.query:
                connect_args["connect_timeout"] = 15
            if self.read_only:
                given = url.query.get("options")
                given = " ".join(given) if isinstance(given, tuple) else given
                read_only = "-c default_transaction_read_only=on"
                connect_args["options"] = f"{given} {read_only}" if given else read_only
            if connect_args:
                kwargs["connect_args"] = connect_args
            kwargs["pool_pre_ping"] = True
        try:
            engine = create_engine(url, **kwargs)
        except ImportError as exc:
            if self._dialect == "postgresql":  # the driver is an extra: say which, not "No module named ..."
                driver = url.get_driver_name()
                hint = "pip install '.[postgres]' in a robojudge checkout"
                how = (f"install it with: {hint}" if driver == "psycopg" else
                       "install that driver, or use the one robojudge installs: postgresql+psycopg://... "
                       f"({hint})")
                raise StoreError(f"cannot use database {self.url}: PostgreSQL needs the {driver} driver, "
                                 f"which cannot be imported ({self._reason(exc)}); {how}") from None
            raise StoreError(f"cannot use database {self.url}: {self._reason(exc)}") from None
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot use database {self.url}: {self._reason(exc)}") from None
        if self._dialect == "sqlite":
            _configure_sqlite(engine)
        return engine

    def _create_sqlite_reader(self, url: URL, kwargs: dict[str, Any]) -> Engine:
        database = url.database or ""
        if not database or database == ":memory:" or database.startswith("file:") or url.query:
            raise StoreError(f"cannot open {self.url} read-only: give the SQLite file as a path or sqlite:///FILE")
        path = Path(database).expanduser().absolute()
        if not path.is_file():
            raise StoreError(f"no result store at {path}")
        # SQLite keeps the -wal, -shm and -journal files beside the file a link points to, not the link:
        # looked for beside a link, a -wal full of results went unseen and its rows were read stale.
        path = path.resolve()

        def connect() -> sqlite3.Connection:
            # Decided per connection: a writer that opens the file later makes the next one a WAL reader.
            before = _FileState.of(path)  # taken first: a change after it, however early, is seen
            uri = _read_only_uri(path)
            conn = _open_reader(uri)
            if not uri.endswith(_IMMUTABLE):
                try:
                    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # makes the -shm file
                except sqlite3.OperationalError as exc:
                    # A full disk: no room for the -shm file every reader of a WAL database makes. With
                    # nothing in a -wal file the main file holds everything, so it is read without locks,
                    # checked after each read as on a read-only folder.
                    if not _no_room_to_read(exc) or before.companions or _FileState.of(path).companions:
                        conn.close()
                        raise
                    conn.close()
                    uri += _IMMUTABLE
                    conn = _open_reader(uri)
            conn.unlocked_since = before if uri.endswith(_IMMUTABLE) else None
            return conn

        try:
            engine = create_engine("sqlite://", creator=connect, poolclass=NullPool, **kwargs)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot use database {self.url}: {self._reason(exc)}") from None
        _configure_sqlite(engine, read_only=True)
        return engine

    # -- public API --------------------------------------------------------------------------------

    def add(self, rows: Iterable[ResultRow]) -> int:
        """Insert rows in one transaction, skipping those whose key and inputs are already stored.

        A stored value is never changed. When the current row of a key has a different fingerprint
        than the new row (its inputs changed), the stored row is marked superseded and the new row
        becomes current; a new row without a fingerprint (``""``) never supersedes a row of other
        inputs. A value (status ``ok``) takes the place of a stored error with the same fingerprint
        (both without one included): of two overlapping runs, one failing an item and one computing
        it, the value is the result. Within ``rows``, the first row for a key wins.

        Args:
            rows: The rows to store. ``created_at`` is set to now (UTC) where it is ``None``.

        Returns:
            How many rows were actually inserted.

        Raises:
            ValueError: A row has ``superseded_at`` set (only the store supersedes rows), or a part of
                its key is longer than a store takes (:data:`robojudge.store._row.MAX_KEY_BYTES`, the
                same on every backend); nothing is written.
        """
        return len(self.add_new(rows))

    def add_new(self, rows: Iterable[ResultRow]) -> list[ResultRow]:
        """:meth:`add`, returning the rows that were inserted, in the order given: not those whose key and
        inputs were stored already (by another run that computed them meanwhile, say), nor a second row
        for one key. A value does replace a stored error of its key and inputs (the error is marked
        superseded): of two overlapping runs, one failing an item (a memory limit, a worker that died)
        and one computing it, the error stored first kept the value out, and later runs skipped the item
        as stored."""
        kept: list[ResultRow] = []
        seen: set[RowKey] = set()
        for row in rows:
            if not isinstance(row, ResultRow):
                raise TypeError(f"ResultStore.add takes ResultRow objects, got {type(row).__name__}")
            if row.superseded_at is not None:
                raise ValueError(f"cannot add a superseded row ({row.key}): rows are stored current")
            problem = key_problem(row)
            if problem is not None:
                raise ValueError(f"cannot add the row: {problem}")
            if row.key in seen:
                continue
            seen.add(row.key)
            kept.append(row)
        if not kept:
            return []
        insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
        stmt = (
            insert(results_table)
            .on_conflict_do_nothing(index_elements=list(KEY_COLUMNS), index_where=CURRENT)
            .returning(*(results_table.c[k] for k in KEY_COLUMNS))
        )
        given = list(kept)
        # Concurrent PostgreSQL writers lock stored rows and insert new ones in one global order
        # (metric, config, version, item), so that they wait for each other instead of deadlocking.
        kept.sort(key=_lock_order)
        fingerprinted = {row.key: row.fingerprint for row in kept if row.fingerprint}
        values = {row.key: row.fingerprint or "" for row in kept if row.status == "ok"}
        stamps: list[datetime] = []  # of each try (PostgreSQL tries again after an outage: _transaction)


        def body(conn: Connection) -> set[RowKey]:
            # Stamped once the write lock is held, so that on SQLite the times follow the commits.
            now = datetime.now(UTC)
            stamps.append(now)
            c = results_table.c
            if fingerprinted or values:
                lock = self._dialect == "postgresql"
                stored = current_records(conn, set(fingerprinted) | set(values),
                                         (c.id, c.fingerprint, c.status), lock=lock)
                changed = [k for k, rec in stored.items()
                           if k in fingerprinted and rec["fingerprint"] != fingerprinted[k]]
                healed = [k for k, rec in stored.items()  # the same inputs (or both without a fingerprint)
                          if k in values and k not in changed and rec["status"] != "ok"
                          and (rec["fingerprint"] or "") == values[k]]
                supersede_ids(conn, [int(stored[k]["id"]) for k in changed + healed], now)
            inserted: set[RowKey] = {
                tuple(key) for key in conn.execute(stmt, [_row_params(row, now) for row in kept])}
            if len(stamps) > 1:
                # An earlier try's commit may have gone through before the server went away: the rows it
                # stored (its time, or the row's own, and the row's inputs and status) count as inserted.
                earlier = set(stamps[:-1])
                missing = {row.key: row for row in kept if row.key not in inserted}
                found = current_records(conn, missing, (c.created_at, c.fingerprint, c.status))
                inserted |= {k for k, rec in found.items()
                             if (rec["created_at"] == missing[k].created_at if missing[k].created_at
                                 else rec["created_at"] in earlier)
                             and rec["fingerprint"] == missing[k].fingerprint
                             and rec["status"] == missing[k].status}
            return inserted

        # Tried again after an outage even while committing: what a try stored, the next finds stored.
        inserted = self._transaction("store results in", body, write=True)
        return [row for row in given if row.key in inserted]

    def done_item_ids(
        self, metric: str, config_hash: str, version: str, *, include_errors: bool = True
    ) -> set[str]:
        """Items that already have a row for this metric, config and version.

        Args:
            metric: Metric id.
            config_hash: Hash of the metric config.
            version: Metric version.
            include_errors: Count failed rows as done (the default). With ``False`` only ok rows
                count, so failed items would be run again (after :meth:`clear_errors`).

        Returns:
            The item ids (of current rows).
        """
        return set(self.current_fingerprints(metric, config_hash, version, include_errors=include_errors))

    def current_fingerprints(
        self, metric: str, config_hash: str, version: str, *, include_errors: bool = True,
        item_ids: Sequence[str] | None = None,
    ) -> dict[str, str]:
        """``{item_id: fingerprint}`` of the current rows of this metric, config and version.

        What resume planning compares with the fingerprints of the inputs as they are now.
        ``include_errors`` as in :meth:`done_item_ids`. ``item_ids``: of these items only (a block of
        a manifest planned in a store holding many other rows), else of every item.
        """
        c = results_table.c
        stmt = select(c.item_id, c.fingerprint).where(
            c.metric == metric, c.config_hash == config_hash, c.version == version, CURRENT
        )
        if not include_errors:
            stmt = stmt.where(c.status == "ok")

        def body(conn: Connection) -> dict[str, str]:
            if item_ids is None:
                return {item_id: fp for item_id, fp in conn.execute(stmt)}
            ids = sorted(set(item_ids))
            return {item_id: fp for i in range(0, len(ids), _IN_CHUNK)
                    for item_id, fp in conn.execute(stmt.where(c.item_id.in_(ids[i : i + _IN_CHUNK])))}

        return self._transaction("read", body)

    def configurations(self, metric: str, version: str) -> dict[str, dict[str, Any] | None]:
        """``{config_hash: config}`` of the configurations ``metric`` (at ``version``) has current rows
        under, each with the ``config`` of one of its rows."""
        c = results_table.c
        first = (select(c.config_hash, func.min(c.id))
                 .where(c.metric == metric, c.version == version, CURRENT).group_by(c.config_hash))

        def body(conn: Connection) -> dict[str, dict[str, Any] | None]:
            ids = {int(row_id): chash for chash, row_id in conn.execute(first)}
            if not ids:
                return {}
            found = conn.execute(select(c.id, c.config).where(c.id.in_(sorted(ids))))
            return {ids[int(row_id)]: config for row_id, config in found}

        return self._transaction("read", body)

    def move_rows(self, metric: str, version: str, from_hash: str, to_hash: str, to_config: dict[str, Any],
                  item_ids: Iterable[str], note: dict[str, Any] | None = None) -> list[str]:
        """Store the current rows of ``item_ids`` under configuration ``from_hash`` again under
        ``to_hash`` (with ``to_config``), in one transaction, and mark the originals superseded: the same
        results of a configuration that only names its files another way (a project moved to another
        folder). Value, details, fingerprint and times are kept; ``note`` is added to ``details``. An
        item that already has a current row under ``to_hash`` keeps it, and its original is left as it
        is. Returns the ids of the items moved.
        """
        ids = sorted(set(item_ids))
        if not ids or from_hash == to_hash:
            return []
        c = results_table.c
        insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
        stmt = (
            insert(results_table)
            .on_conflict_do_nothing(index_elements=list(KEY_COLUMNS), index_where=CURRENT)
            .returning(c.item_id)
        )


        def body(conn: Connection) -> list[str]:
            moved: list[str] = []
            now = datetime.now(UTC)
            for i in range(0, len(ids), _IN_CHUNK):
                query: Any = select(results_table).where(
                    c.metric == metric, c.config_hash == from_hash, c.version == version, CURRENT,
                    c.item_id.in_(ids[i : i + _IN_CHUNK]),
                ).order_by(c.item_id)
                if self._dialect == "postgresql":
                    query = query.with_for_update()
                records = list(conn.execute(query).mappings())
                if not records:
                    continue
                row_id = {rec["item_id"]: int(rec["id"]) for rec in records}
                copies = [replace(r, config_hash=to_hash, config=to_config,
                                  details={**(r.details or {}), **note} if note else r.details)
                          for r in map(_row_from_record, records)]
                done = [item for (item,) in conn.execute(stmt, [_row_params(r, now) for r in copies])]
                supersede_ids(conn, [row_id[item] for item in done], now)
                moved.extend(done)
            return sorted(moved)

        # Not tried again once committing: a commit that went through leaves nothing to move, and the
        # next try would say that nothing was moved.

        return self._transaction("store results in", body, write=True, idempotent=False)

    def supersede_other_libraries(
        self, metric: str, config_hash: str, version: str, libraries: SameLibraries, item_ids: Iterable[str]
    ) -> int:
        """Mark superseded the current scored rows of ``item_ids`` (this metric, config and version) that
        were computed with other library versions than ``libraries`` (their ``details["libraries"]``:
        a record, the records that name the installed versions, or a test of a record), so that the
        next planning finds them missing and computes them again. Rows without a record are left as
        they are. The rows are kept, as superseded rows are; returns how many.
        """
        ids = sorted(set(item_ids))
        same = _same_test(libraries)


        def body(conn: Connection) -> int:
            old: list[int] = []
            for i in range(0, len(ids), _IN_CHUNK):
                where = _with_libraries(metric, config_hash, version, ids[i : i + _IN_CHUNK])
                other = [text for text, _ in _library_records(conn, where) if not same(text)]
                if other:
                    old += [int(row_id) for (row_id,) in conn.execute(
                        select(results_table.c.id).where(*where, _recorded_libraries().in_(other)))]
            supersede_ids(conn, old, datetime.now(UTC))
            return len(old)

        return self._transaction("mark superseded in", body, write=True, idempotent=False)

    def count_other_libraries(
        self, metric: str, config_hash: str, version: str, libraries: SameLibraries, item_ids: Iterable[str]
    ) -> int:
        """How many rows :meth:`supersede_other_libraries` would mark; nothing is written (every rerun of
        ``score`` asks)."""
        ids = sorted(set(item_ids))
        same = _same_test(libraries)

        def body(conn: Connection) -> int:
            return sum(n for i in range(0, len(ids), _IN_CHUNK)
                       for text, n in _library_records(
                           conn, _with_libraries(metric, config_hash, version, ids[i : i + _IN_CHUNK]))
                       if not same(text))

        return self._transaction("read", body)

    def count_other_versions(self, metric: str, version: str, item_ids: Iterable[str]) -> dict[str, int]:
        """How many current rows of ``item_ids`` hold ``metric`` under another version than ``version``
        (any configuration), per version: an upgraded robojudge computes the metric again beside them."""
        ids = sorted(set(item_ids))
        c = results_table.c
        if not ids:
            return {}


        def body(conn: Connection) -> dict[str, int]:
            found: dict[str, int] = {}
            for i in range(0, len(ids), _IN_CHUNK):
                query = (select(c.version, func.count()).where(
                    c.metric == metric, c.version != version, CURRENT, c.item_id.in_(ids[i : i + _IN_CHUNK]))
                    .group_by(c.version))
                for other, n in conn.execute(query):
                    found[str(other)] = found.get(str(other), 0) + int(n)
            return found


        return self._transaction("read", body)

    def clear_errors(
        self,
        metric: str,
        config_hash: str,
        version: str,
        item_ids: Iterable[str] | None = None,
        *,
        unscored: bool = False,
    ) -> int:
        """Delete failed rows so that a rerun computes them again.

        Args:
            metric: Metric id.
            config_hash: Hash of the metric config.
            version: Metric version.
            item_ids: Only these items; all failed items of the metric when ``None``.
            unscored: Also delete ok rows without a value (a judge reply that could not be parsed).

        Returns:
            How many rows were deleted.
        """
        c = results_table.c
        failed = or_(c.status == "error", c.value.is_(None)) if unscored else c.status == "error"
        base = delete(results_table).where(
            c.metric == metric, c.config_hash == config_hash, c.version == version, failed
        ).where(CURRENT)

        def body(conn: Connection) -> int:
            if item_ids is None:
                return conn.execute(base).rowcount
            ids = sorted(set(item_ids))
            return sum(
                conn.execute(base.where(c.item_id.in_(ids[i : i + _IN_CHUNK]))).rowcount
                for i in range(0, len(ids), _IN_CHUNK)
            )

        return self._transaction("delete failed results from", body, write=True, idempotent=False)

    def rows(
        self, *, metric: str | None = None, status: str | None = None, include_superseded: bool = False,
        metrics: Collection[str] | None = None,
    ) -> list[ResultRow]:
        """Stored rows, ordered by item, metric and the order they were written (their ids; not
        ``created_at``, which is the writing host's clock). Item ids and metrics are in code point order,
        as Python sorts them, on every backend (not in a PostgreSQL database's collation).

        Args:
            metric: Only this metric.
            status: Only ``"ok"`` or only ``"error"`` rows.
            include_superseded: Also rows whose inputs have changed since (see :class:`ResultStore`);
                by default only current rows, one per key.
            metrics: Only the rows of these metrics (none when empty): a reader that needs a few
                series (a leaderboard by one judge) reads those, not the whole store.

        Returns:
            The rows.
        """
        try:
            return list(self.iter_rows(metric=metric, status=status, include_superseded=include_superseded,
                                       metrics=metrics))
        except _StoreChanged as exc:  # once more: a writer at work now makes it a reader with locks
            _log.info("%s; reading it again", exc)
            return list(self.iter_rows(metric=metric, status=status, include_superseded=include_superseded,
                                       metrics=metrics))

    def iter_rows(
        self,
        *,
        metric: str | None = None,
        status: str | None = None,
        include_superseded: bool = False,
        batch_size: int = 5000,
        metrics: Collection[str] | None = None,
    ) -> Iterator[ResultRow]:
        """Like :meth:`rows`, but fetched in batches; for exports of large stores.

        Rows stored with the same config text share one decoded ``config`` dict (a metric's config is
        the same on each of its rows): a store's every row decoded its own copy, a quarter of the
        memory and time of reading 200,000 rows. Treat ``config`` as read-only. The strings of the
        rows' ``details`` (keys, the library versions, reasons) are shared the same way: each row
        decoded its own copy of every one, most of the memory left (:func:`_shared`).
        """
        c = results_table.c
        # The config as stored text, decoded once per distinct text below.
        columns = [cast(col, Text).label("config") if col.name == "config" else col for col in c]
        # Ids in code point order, as SQLite and Python sort them: PostgreSQL sorts text by the database's
        # collation, and one made with an ICU or en_US locale put "_z, a_item, A-item" first.
        by_text: list[ColumnElement[Any]] = [c.item_id, c.metric]
        if self._dialect == "postgresql":
            by_text = [col.collate("C") for col in by_text]
        if metrics is not None and not metrics:
            return
        stmt = self._filtered(select(*columns), metric, status, include_superseded).order_by(*by_text, c.id)
        if metrics is not None:
            stmt = stmt.where(c.metric.in_(sorted(metrics)))
        configs: dict[str, Any] = {}
        strings: dict[str, str] = {}
        outage = _Outage(self, "read")
        yielded = False
        with step("reading stored results", unit="rows") as read, self._guard("read"):
            while True:
                try:
                    with self._read() as conn:
                        result = conn.execution_options(yield_per=batch_size).execute(stmt)
                        for rec in result.mappings():
                            if not yielded:
                                outage.over()
                                yielded = True
                            read.advance()
                            yield _row_from_record(rec, configs, strings)
                except SQLAlchemyError as exc:
                    # Tried again only before the first row: the rows yielded already would come twice.
                    if yielded or not outage.retry(exc, idempotent=True):
                        raise
                    continue
                outage.over()
                return

    def metric_ids(self) -> list[str]:
        """The metric ids of the current rows, in code point order (a judge's ``judge:NAME:RUBRIC`` too),
        without reading the rows."""
        c = results_table.c
        with self._guard("read"), self._read() as conn:
            return sorted(conn.execute(select(c.metric).where(CURRENT).distinct()).scalars())

    def item_ids(self) -> set[str]:
        """The item ids (and set-level group ids) of the current rows, without reading the rows."""
        c = results_table.c
        with self._guard("read"), self._read() as conn:
            return set(conn.execute(select(c.item_id).where(CURRENT).distinct()).scalars())

    def count(
        self, *, metric: str | None = None, status: str | None = None, include_superseded: bool = False
    ) -> int:
        """Number of stored rows (current ones unless ``include_superseded``), optionally filtered."""
        base = select(func.count()).select_from(results_table)
        stmt = self._filtered(base, metric, status, include_superseded)

        def body(conn: Connection) -> int:
            return int(conn.execute(stmt).scalar_one())

        return self._transaction("read", body)

    def note_manifest(self, manifest: str | os.PathLike[str]) -> Path:
        """Remember that the suite manifest ``manifest`` was scored or judged into this store.

        Commands given only a run folder or a store (``robojudge report RUN``) find the manifest through
        :meth:`manifests`, for its labels and generators, when it is not in the run folder. Noting the
        same file again updates its time; nothing else of the store changes. A run that checks the manifest
        against the others first notes it with :meth:`claim_manifest`.

        Returns:
            The manifest's absolute path, as noted.
        """
        path, _, _, _ = self._note_manifest(manifest)
        return path

    @contextmanager
    def claim_manifest(self, manifest: str | os.PathLike[str]) -> Iterator[list[Path]]:
        """Note ``manifest`` as :meth:`note_manifest` does, for a run that checks it against the manifests
        already in the store before it writes results of it (``robojudge.run`` refuses one that gives an
        item id of another manifest another video).

        Yields the other manifests noted *before* this one, latest first: those read in the transaction
        that notes it, under the store's write lock (PostgreSQL: a lock on the notes' table), so of two
        runs started at once the one noted later sees the other, whichever of them checks first
        (checking, then noting, as two steps let both pass the check and both write). A manifest noted
        by another run that is still checking it counts as noted: a clash with it is refused too (rerun
        once that run is done). If the body raises (the check refuses the manifest, Ctrl-C), the note is
        taken back: the manifest's earlier note, if it had one, is put back, else it is removed.
        """
        _, key, value, before = self._note_manifest(manifest)
        try:
            yield [path for path, _ in before.others]
        except BaseException:
            with contextlib.suppress(StoreError):  # the refusal matters more than a note left behind
                self._take_back_manifest(key, value, before.previous)
            raise

    def _note_manifest(self, manifest: str | os.PathLike[str]) -> tuple[Path, str, str, _Noted]:
        path = Path(manifest).expanduser().resolve()
        key = MANIFEST_KEY + hashlib.sha256(str(path).encode()).hexdigest()[:16]
        insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert

        def body(conn: Connection) -> tuple[str, _Noted]:
            self._lock_meta(conn)
            c = meta_table.c
            stmt = select(c.key, c.value).where(c.key.startswith(MANIFEST_KEY))
            raw = dict(conn.execute(stmt).all())
            notes = {k: noted for k, v in raw.items() if (noted := _manifest_note(v)) is not None}
            previous = raw.get(key)
            others = _latest_first(noted for k, noted in notes.items() if k != key)
            # The count orders the notes (taken under the lock: no two notes get one); "at" is for people.
            count = max((noted[2] for noted in notes.values()), default=0) + 1
            value = json.dumps({"path": str(path), "at": datetime.now(UTC).isoformat(), "n": count})
            upsert = insert(meta_table).values(key=key, value=value)
            conn.execute(upsert.on_conflict_do_update(index_elements=[c.key], set_={"value": value}))
            return value, _Noted(previous, others)

        # Not tried again once committing: a note that went through would be read as the earlier note.
        value, noted = self._transaction("note the manifest in", body, write=True, idempotent=False)
        return path, key, value, noted

    def _take_back_manifest(self, key: str, value: str, previous: str | None) -> None:
        """Undo :meth:`_note_manifest`: put ``previous`` back (or remove the note), unless another run
        noted the manifest again since (its note is not ``value`` any more)."""
        c = meta_table.c

        def body(conn: Connection) -> None:
            mine = (c.key == key) & (c.value == value)
            if previous is None:
                conn.execute(delete(meta_table).where(mine))
            else:
                conn.execute(update(meta_table).where(mine).values(value=previous))

        self._transaction("take back the manifest's note in", body, write=True)

    def _lock_meta(self, conn: Connection) -> None:
        """Keep other writers of ``robojudge_meta`` out until this transaction ends. SQLite's write
        transaction holds the database's write lock already; PostgreSQL locks the table (readers go on)."""
        if self._dialect == "postgresql":
            conn.execute(text(f"LOCK TABLE {meta_table.name} IN SHARE ROW EXCLUSIVE MODE"))

    def manifests(self) -> list[tuple[Path, datetime]]:
        """The manifests noted by :meth:`note_manifest`, with the time each was last noted, latest first.

        "Latest" is the order the notes were written in (a count kept in them), not their times: each
        time is the noting host's clock, which may be off or stepped back. The files may have moved or
        gone since; callers check.
        """
        stmt = select(meta_table.c.value).where(meta_table.c.key.startswith(MANIFEST_KEY))

        def body(conn: Connection) -> list[str]:
            return list(conn.execute(stmt).scalars().all())

        raw = self._transaction("read", body)
        return _latest_first(note for value in raw if (note := _manifest_note(value)) is not None)

    def note_in_flight(self, item_id: str, metrics: Iterable[str], *, queued: bool = False) -> None:
        """Note that this process is about to compute ``metrics`` of ``item_id``.

        A run that computes in its own process notes each item before computing it and clears the
        note (:meth:`clear_in_flight`) once its results are stored. A note still there when a later run
        starts, of a process that has ended, means the process ended while computing that item: a crash
        in a native library, an out-of-memory kill, or a kill; the later run computes that item in a
        child process, so that a second crash costs that item only (:func:`robojudge.run.score_items`).

        The note records the process: its host, pid and (on Linux) boot and start time, so that a run
        can tell the note of another run still going on from one left by a crash
        (:meth:`in_flight` with ``ended``). Each process keeps its own note of an item: two runs
        computing one item at once do not replace each other's.

        ``queued``: the item is given to worker processes, not computed here (a pool's driver notes
        the tasks it hands out). Such a note tells an overlapping run to leave the item alone
        (:meth:`in_flight_elsewhere`), but its process's end is no crash of the item (the workers'
        crashes are the pool's to handle): :meth:`in_flight` with ``queued=False`` leaves it out.
        """
        me = _this_process()
        value = json.dumps({"item_id": item_id, "metrics": list(metrics), **me,
                            "at": datetime.now(UTC).isoformat(), **({"queued": True} if queued else {})})
        insert = postgresql.insert if self._dialect == "postgresql" else sqlite.insert
        stmt = insert(meta_table).values(key=_in_flight_key(item_id, me), value=value)
        stmt = stmt.on_conflict_do_update(index_elements=[meta_table.c.key], set_={"value": value})

        def body(conn: Connection) -> None:
            conn.execute(stmt)

        self._transaction("note the item in flight in", body, write=True)

    def clear_in_flight(self, item_ids: Iterable[str]) -> None:
        """Remove the notes of :meth:`note_in_flight` for ``item_ids`` (those without one are ignored):
        this process's own, and those of processes that have ended (see :meth:`in_flight`). The note of
        another process still running is kept: that run clears it itself, and if it crashes the next
        run finds it."""
        ids = set(item_ids)
        if not ids:
            return
        stmt = select(meta_table.c.key, meta_table.c.value).where(meta_table.c.key.startswith(IN_FLIGHT_KEY))

        def body(conn: Connection) -> None:
            notes = conn.execute(stmt).all()
            me = _this_process()
            keys = sorted(key for key, value in notes if (note := _in_flight_note(value)) is not None
                          and note["item_id"] in ids and (_same_process(note, me) or _ended(note, me)))
            for start in range(0, len(keys), _IN_CHUNK):
                conn.execute(delete(meta_table).where(meta_table.c.key.in_(keys[start:start + _IN_CHUNK])))

        self._transaction("clear the items in flight in", body, write=True)

    def in_flight(
        self, *, ended: bool = False, queued: bool = True, lapsed: bool = True
    ) -> dict[str, list[str]]:
        """The items noted by :meth:`note_in_flight` and not cleared since, each with the metrics
        that were to be computed (those of every note of the item, when several processes noted it).

        Args:
            ended: Only the notes of processes that have ended -- what a run takes for a crash or a
                kill on that item. A note of a process still running on this host (the same pid, and on
                Linux the same boot and start time, so a reused pid is not taken for it) is left out.
                A note written on another host cannot be checked from here: it counts as ended, as every
                note did before notes named their process (and so does such an older note). Two runs
                on two hosts sharing a store may so take each other's items in flight for crashed
                ones: each is then computed once more, alone in a child process.
            queued: Also the notes of items given to worker processes (``note_in_flight`` with
                ``queued``). False leaves them out: with ``ended``, what is left are the items a run's
                own process was computing when it ended, those the next run computes alone.
            lapsed: Also the notes of items given to worker processes by a run that has ended. False
                leaves them out (no crash suspects, and the next run clears them), keeping every other
                note of the item (a run computing it now).
        """
        stmt = select(meta_table.c.value).where(meta_table.c.key.startswith(IN_FLIGHT_KEY))

        def body(conn: Connection) -> list[str]:
            return list(conn.execute(stmt).scalars().all())

        raw = self._transaction("read", body)
        me = _this_process()
        out: dict[str, list[str]] = {}
        for value in sorted(raw):
            note = _in_flight_note(value)
            if note is None or (ended and not _ended(note, me)) or (not queued and note.get("queued")):
                continue
            if not lapsed and note.get("queued") and _ended(note, me):
                continue
            metrics = out.setdefault(note["item_id"], [])
            metrics.extend(m for m in note["metrics"] if m not in metrics)
        return out

    def in_flight_elsewhere(self, metrics: Collection[str]) -> dict[str, list[dict[str, Any]]]:
        """The items other processes still running on this host have noted in flight
        (:meth:`note_in_flight`) for one of ``metrics``, each with those notes (``host``, ``pid``,
        ``at``: when noted, UTC ISO text, ``metrics``...): what an overlapping run (the same command
        launched twice) is computing now. This process's notes, those of processes that have ended,
        those of other hosts (which cannot be checked from here: :meth:`in_flight`) and those of other
        metrics only (a judge run beside a score run on one store is no overlap) are left out."""
        wanted = set(metrics)
        stmt = select(meta_table.c.value).where(meta_table.c.key.startswith(IN_FLIGHT_KEY))

        def body(conn: Connection) -> list[str]:
            return list(conn.execute(stmt).scalars().all())

        raw = self._transaction("read", body)
        me = _this_process()
        out: dict[str, list[dict[str, Any]]] = {}
        for value in sorted(raw):
            note = _in_flight_note(value)
            if (note is not None and not _same_process(note, me) and not _ended(note, me)
                    and wanted & set(note.get("metrics") or ())):
                out.setdefault(note["item_id"], []).append(note)
        return out

    def close(self) -> None:
        """Release all database connections. The store cannot be used afterwards."""
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultStore({self.url!r})"

    # -- internals ---------------------------------------------------------------------------------

    @staticmethod
    def _filtered(
        stmt: Select[Any], metric: str | None, status: str | None, include_superseded: bool = False
    ) -> Select[Any]:
        c = results_table.c
        if not include_superseded:
            stmt = stmt.where(CURRENT)
        if metric is not None:
            stmt = stmt.where(c.metric == metric)
        if status is not None:
            if status not in STATUSES:
                raise ValueError(f"status must be 'ok' or 'error', got {status!r}")
            stmt = stmt.where(c.status == status)
        return stmt

    def _transaction(self, action: str, body: Callable[[Connection], _T], *, write: bool = False,
                     idempotent: bool = True) -> _T:
        """``body`` in a read (or ``write``) transaction; database errors become :class:`StoreError`s
        saying that the store could not ``action``.

        On PostgreSQL, a transaction ended by the server going away (:func:`outage_reason`) is tried
        again, with pauses of 0.5, 1, 2, 4, then 8 s, for up to :data:`POSTGRES_OUTAGE_WAIT_S`; a
        warning says how long the server was away once it is back. One that was committing then is
        tried again only if it is ``idempotent``: its commit may have gone through. SQLite is never
        tried again here (a locked SQLite store waits :data:`SQLITE_BUSY_TIMEOUT_S` for its lock).
        """
        outage = _Outage(self, action)
        with self._guard(action):
            while True:
                try:
                    with self._write(outage) if write else self._read() as conn:
                        out = body(conn)
                except SQLAlchemyError as exc:
                    if outage.retry(exc, idempotent=idempotent):
                        continue
                    raise
                outage.over()
                return out

    @contextmanager
    def _write(self, outage: _Outage | None = None) -> Iterator[Connection]:
        """A transaction that writes; on SQLite it takes the write lock at BEGIN (IMMEDIATE). ``outage``
        is told when the body is done and the commit begins."""
        if self.read_only:
            raise StoreError(f"{self.url} was opened read-only: nothing can be written to it")
        with self._engine.connect() as conn:
            conn.execution_options(**{_WRITE_OPTION: True})
            with conn.begin():
                yield conn
                if outage is not None:
                    outage.committing = True

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A read transaction. On an SQLite store read without locks (``immutable``, see
        :func:`_read_only_uri`), the file is checked once the read is done: if it changed meanwhile (a
        writer started), what was read may be torn, and :class:`_StoreChanged` is raised instead."""
        with self._engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            since = raw.unlocked_since if isinstance(raw, _ReaderConnection) else None
            try:
                with conn.begin():
                    yield conn
            except (SQLAlchemyError, sqlite3.Error):  # SQLite may call a file changed under it corrupt
                if since is not None:
                    self._check_unchanged(since)
                raise
            if since is not None:
                self._check_unchanged(since)

    def _check_unchanged(self, since: _FileState) -> None:
        now = _FileState.of(since.path)
        if now != since:
            raise _StoreChanged(
                f"cannot read {self.url}: the store changed while it was read through a read-only path "
                f"({since.change(now)}), so what was read may be torn; rerun the command (it then reads "
                "with locks if a writer is still at work), or read a copy of the store. A file that cannot "
                "be written from here (a read-only folder, share or file) is read without locks, as "
                "nothing on a read-only medium can change it, but another host or user may still write it"
            )

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn database errors into ``StoreError`` naming the (masked) URL."""
        try:
            yield
        except UnicodeError as exc:  # a text no write escapes (an id) holds a lone surrogate
            raise StoreError(f"cannot {action} {self.url}: {_unencodable(exc)}") from exc
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot {action} {self.url}: {self._reason(exc)}") from exc

    def _reason(self, exc: BaseException) -> str:
        orig = getattr(exc, "orig", None)
        reason = str(orig if orig is not None else exc).strip() or type(exc).__name__
        reason = " ".join(line.strip() for line in reason.splitlines() if line.strip())
        # Only URLs and password= settings are masked: the drivers never quote the password alone, and
        # replacing its every occurrence turned a short one's word into *** all over a message, showing it.
        reason = mask_text(reason)
        path = self._sqlite_path()
        note = disk_full_note(reason, path.parent) if path is not None else None
        return f"{reason}: {note}" if note else reason

    def _sqlite_path(self) -> Path | None:
        """The file of an SQLite store given as a path (None for PostgreSQL or an in-memory store)."""
        database = self._url.database or ""
        if self._dialect != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
            return None
        return Path(database).expanduser().absolute()


#: Suffixes of files a store is exported to or read from, never an SQLite store's own name.
_NOT_STORE_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".parquet", ".txt", ".md",
                                 ".html", ".xlsx"})


def _refuse_export_name(path: Path, shown: str) -> None:
    """Refuse to make a new store at a path named like an export (``--db results.csv``): SQLite would
    write a database under that name, which a spreadsheet then cannot read. An existing store keeps
    working whatever its name."""
    if path.suffix.lower() not in _NOT_STORE_SUFFIXES:
        return
    try:
        new = not path.exists() or path.stat().st_size == 0
    except OSError:
        return
    if new:
        raise StoreError(f"{shown}: a {path.suffix} name for a new result store; --db names the store (an "
                         f"SQLite file such as results.sqlite, or a database URL): to write results as "
                         f"{path.suffix}, score into a store and run `robojudge results export --db STORE -o "
                         f"{path.name}`")


def _in_flight_key(item_id: str, process: Mapping[str, Any]) -> str:
    """``inflight:<item hash>:<process hash>``: one note per item and process (50 characters)."""
    who = json.dumps(process, sort_keys=True)
    return (f"{IN_FLIGHT_KEY}{hashlib.sha256(item_id.encode()).hexdigest()[:24]}:"
            f"{hashlib.sha256(who.encode()).hexdigest()[:16]}")


def _in_flight_note(text: str) -> dict[str, Any] | None:
    """A note of :meth:`ResultStore.note_in_flight` read back, or None for a value robojudge did not write."""
    try:
        data = json.loads(text)
        data["item_id"] = str(data["item_id"])
        data["metrics"] = [str(m) for m in data["metrics"]]
    except (ValueError, KeyError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def _manifest_note(text: str) -> tuple[Path, datetime, int] | None:
    """A note of :meth:`ResultStore.note_manifest`: the path, when it was noted and its count (0 in notes
    written before notes were counted); None for a value this robojudge did not write, or a time without
    a zone (note_manifest writes UTC: it could not be ordered)."""
    try:
        data = json.loads(text)
        path, at, count = Path(data["path"]), datetime.fromisoformat(data["at"]), int(data.get("n", 0))
    except (ValueError, KeyError, TypeError):
        return None
    return (path, at, count) if at.tzinfo is not None else None


def _latest_first(notes: Iterable[tuple[Path, datetime, int]]) -> list[tuple[Path, datetime]]:
    """Manifest notes as (path, time), the last noted first: by count, then (uncounted notes) by time."""
    return [(path, at) for path, at, _ in sorted(notes, key=lambda n: (n[2], n[1]), reverse=True)]


@dataclass(frozen=True)
class _Noted:
    """What noting a manifest found: its note before (None: not noted), and the other manifests' notes."""

    previous: str | None
    others: list[tuple[Path, datetime]]


_PROC_STAT = "/proc/{}/stat"
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_THIS: dict[int, dict[str, Any]] = {}


def _process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (field 22 of ``/proc/<pid>/stat``); None
    where that cannot be read (no such process, no ``/proc``) and for a zombie (ended, not reaped)."""
    try:
        with open(_PROC_STAT.format(pid), "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the command name before may hold spaces and ')'
    if len(fields) < 20 or fields[0] in (b"Z", b"X") or not fields[19].isdigit():
        return None
    return int(fields[19])


def _this_process() -> dict[str, Any]:
    """What a note of :meth:`ResultStore.note_in_flight` records of the process that writes it: host,
    pid, and on Linux the boot (``/proc/sys/kernel/random/boot_id``) and the start time. Read once per
    process (a forked child reads its own)."""
    pid = os.getpid()
    me = _THIS.get(pid)
    if me is None:
        me = {"host": socket.gethostname(), "pid": pid}
        started = _process_start(pid)
        if started is not None:
            with contextlib.suppress(OSError):
                me["boot"] = _BOOT_ID.read_text().strip()
            me["started"] = started
        _THIS[pid] = me
    return me


def _same_process(note: Mapping[str, Any], me: Mapping[str, Any]) -> bool:
    return all(note.get(k) == v for k, v in me.items())


def _ended(note: Mapping[str, Any], me: Mapping[str, Any]) -> bool:
    """Whether the process that wrote an in-flight note has ended (see :meth:`ResultStore.in_flight`).

    A note of another host, or one that names no host (an older robojudge), counts as ended: its
    process cannot be asked from here.
    """
    if note.get("host") != me["host"] or note.get("boot") != me.get("boot"):
        return True
    pid = note.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    if "started" in me:  # Linux: the start time tells a reused pid from the process that noted
        return _process_start(pid) != note.get("started")
    if os.name != "posix":
        return True  # no cheap way to ask: taken for ended, as every note was before notes named a host
    return not process_exists(pid)


class _StoreChanged(StoreError):
    """An SQLite store read without locks changed while it was read (see :meth:`ResultStore._read`)."""


@dataclass(frozen=True)
class _FileState:
    """What tells that an SQLite file was changed: its inode, size and modification time, and which of
    its ``-wal`` and ``-journal`` files hold anything (a writer at work; a reader of a WAL database may
    create an empty ``-wal``, which changes nothing)."""

    path: Path
    inode: int
    size: int
    mtime_ns: int
    companions: tuple[str, ...]

    @classmethod
    def of(cls, path: Path) -> _FileState:
        try:
            st = path.stat()
            inode, size, mtime = st.st_ino, st.st_size, st.st_mtime_ns
        except OSError:  # gone or replaced: unlike any state it had
            inode, size, mtime = -1, -1, -1
        here = tuple(s for s in ("-wal", "-journal") if _nonempty(path.with_name(path.name + s)))
        return cls(path, inode, size, mtime, here)

    def change(self, now: _FileState) -> str:
        """How ``now`` differs from this state, in words."""
        if now.inode != self.inode:
            return f"{self.path} was replaced or removed"
        if now.size != self.size or now.mtime_ns != self.mtime_ns:
            return f"{self.path} was written: {self.size:,} bytes then, {now.size:,} now"
        appeared = ", ".join(self.path.name + c for c in now.companions if c not in self.companions)
        return f"{appeared or 'its -wal file'} was written beside it: a writer started"


def _nonempty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


class _ReaderConnection(sqlite3.Connection):
    """A connection of a read-only store; ``unlocked_since``: the file's state before it was opened
    ``immutable`` (None: it takes part in locking)."""

    unlocked_since: _FileState | None = None


_IMMUTABLE = "&immutable=1"


def _open_reader(uri: str) -> _ReaderConnection:
    return sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_S, check_same_thread=False,
                           factory=_ReaderConnection)


def _no_room_to_read(exc: sqlite3.Error) -> bool:
    """Whether a ``mode=ro`` reader failed for want of room for its ``-shm`` file (a full disk, a quota):
    SQLite says "disk I/O error" (SQLITE_IOERR_SHMOPEN, _SHMSIZE), "database or disk is full" or
    "unable to open database file"."""
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN"))


def _read_only_uri(path: Path) -> str:
    """The SQLite URI that opens ``path`` for reading without writing to it.

    Normally a plain ``mode=ro`` connection: it takes part in locking and sees a writer that starts
    while it reads (it may create the ``-wal``/``-shm`` files beside the database, as any reader
    of a WAL database does; the database itself is never written). Where those files cannot be made
    -- the folder is not writable, or the file is marked read-only (no write permission bits, which
    root would otherwise ignore) -- and no writer has the file open (no ``-wal`` or ``-journal``),
    it opens ``immutable``: no lock, no ``-shm``. A folder on a full disk, where the ``-shm`` file finds
    no room, is found out only by trying: the reader then opens ``immutable`` too, where no ``-wal``
    holds anything (``ResultStore._create_sqlite_reader``). On read-only media nothing changes the file; but a
    read-only mount or another user's folder may still be written by someone else, and SQLite reading
    ``immutable`` would then return rows torn and twice, without an error. So each read through such a
    connection checks the file afterwards (:meth:`ResultStore._read`): a change is an error (and
    :meth:`ResultStore.rows` reads once more).
    """
    busy = any(path.with_name(path.name + suffix).exists() for suffix in ("-wal", "-journal"))
    try:
        marked_read_only = not path.stat().st_mode & 0o222
    except OSError:
        marked_read_only = False
    frozen = marked_read_only or not os.access(path.parent, os.W_OK)
    return f"file:{urllib.parse.quote(str(path))}?mode=ro" + (_IMMUTABLE if frozen and not busy else "")


def _configure_sqlite(engine: Engine, *, read_only: bool = False) -> None:
    """WAL journal, a busy timeout, and transactions whose kind we choose (deferred or immediate).

    A read-only engine sets only the busy timeout: the journal pragmas would write.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy's "begin" hook below emit BEGIN instead of the sqlite3 module.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            if read_only:
                return
            enable_wal(cursor, SQLITE_BUSY_TIMEOUT_S)
            # With WAL, NORMAL survives a killed process; only an OS crash may lose the last commits.
            cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(_WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _row_params(row: ResultRow, now: datetime) -> dict[str, Any]:
    value = row.value
    if value is not None and math.isnan(value):
        value = None  # unscored: NULL in the database, NaN again when read back (status stays ok)
    elif value is not None:
        value += 0.0  # -0.0 as 0.0: SQLite drops the sign, PostgreSQL kept it (exports differed)
    return {
        "item_id": row.item_id,
        "metric": row.metric,
        "config_hash": row.config_hash,
        "version": row.version,
        "status": row.status,
        "value": value,
        # An error may quote what a judge or a file said (a NUL, a file name's undecodable byte), and one
        # such character would refuse the whole batch of rows. It is stored written out, on every backend.
        "error": _storable_text(row.error) if row.error else row.error,
        "duration_s": row.duration_s,
        "details": row.details,
        "config": row.config,
        "created_at": row.created_at or now,
        "fingerprint": row.fingerprint,
        "superseded_at": None,
    }


def _lock_order(row: ResultRow) -> tuple[str, str, str, str]:
    return (row.metric, row.config_hash, row.version, row.item_id)


def _param_key(params: Mapping[str, Any] | Any) -> RowKey:
    return (params["item_id"], params["metric"], params["config_hash"], params["version"])


def current_records(
    conn: Connection, keys: Iterable[RowKey], columns: tuple[Any, ...], *, lock: bool = False
) -> dict[RowKey, Any]:
    """The current row of each stored key, as a mapping of the key columns plus ``columns``.

    Read in chunks per (metric, config, version); with ``lock`` the rows are locked ``FOR UPDATE``
    (PostgreSQL; SQLite's write transaction already excludes other writers), always in the order of
    (metric, config, version, item id), so that two writers never lock in opposite orders.
    """
    by_config: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for item_id, metric, config_hash, version in keys:
        by_config[(metric, config_hash, version)].append(item_id)
    c = results_table.c
    wanted = {*(c[k] for k in KEY_COLUMNS), *columns}
    out: dict[RowKey, Any] = {}
    for (metric, config_hash, version), item_ids in sorted(by_config.items()):
        ids = sorted(set(item_ids))
        for i in range(0, len(ids), _IN_CHUNK):
            stmt: Any = select(*wanted).where(
                c.metric == metric,
                c.config_hash == config_hash,
                c.version == version,
                c.item_id.in_(ids[i : i + _IN_CHUNK]),
                CURRENT,
            )
            if lock:
                stmt = stmt.order_by(c.item_id).with_for_update()
            for rec in conn.execute(stmt).mappings():
                out[_param_key(rec)] = rec
    return out


SameLibraries = str | Sequence[str] | Callable[[str], bool]
"""What the installed library versions are, to a store: one record, the records that name them, or a
test of a record (:func:`robojudge.run.same_libraries`)."""


def _same_test(libraries: SameLibraries) -> Callable[[str], bool]:
    if callable(libraries):
        return libraries
    same = {libraries} if isinstance(libraries, str) else set(libraries)
    return same.__contains__


def _recorded_libraries() -> ColumnElement[Any]:
    """A row's ``details.libraries``, read by the database. A row written before NUL was stored as text
    holds ``\\u0000``, on which PostgreSQL's JSON operators fail: such a row counts as one without a
    record, on every backend."""
    c = results_table.c
    return case((cast(c.details, Text).contains("\\u0000", autoescape=True), None),
                else_=c.details["libraries"].as_string())


def _with_libraries(
    metric: str, config_hash: str, version: str, item_ids: list[str]
) -> list[ColumnElement[bool]]:
    """Where current scored rows of ``item_ids`` (this metric, config and version) record their library
    versions."""
    c = results_table.c
    return [c.metric == metric, c.config_hash == config_hash, c.version == version, CURRENT,
            c.status == "ok", c.item_id.in_(item_ids), _recorded_libraries().is_not(None)]


def _library_records(conn: Connection, where: list[ColumnElement[bool]]) -> list[tuple[str, int]]:
    """The distinct library records of the rows ``where`` selects, each with its count (a few per
    metric: one per installation that computed it)."""
    recorded = _recorded_libraries().label("libraries")
    return [(str(text_), int(n)) for text_, n in conn.execute(
        select(recorded, func.count()).where(*where).group_by(recorded))]


def supersede_ids(conn: Connection, ids: list[int], now: datetime) -> None:
    """Mark the rows ``ids`` superseded at ``now`` (rows already superseded keep their time)."""
    c = results_table.c
    for i in range(0, len(ids), _IN_CHUNK):
        cond: ColumnElement[bool] = c.id.in_(ids[i : i + _IN_CHUNK])
        conn.execute(update(results_table).where(cond, CURRENT).values(superseded_at=now))


_NUMBERS = (float, int, bool)
#: Strings up to this long are shared; and at most this many distinct ones are held at once (a reader
#: that streams rows, an export, would otherwise keep every distinct one to the end of the read).
_SHARED_LENGTH = 200
_SHARED_MOST = 20_000


def _shared(value: Any, strings: dict[str, str]) -> Any:
    """``value`` (decoded JSON) with each of its strings, keys included, replaced by the one equal
    string in ``strings`` (added when new). JSON decoding makes a new string object for every key and
    string of every row: at 200,000 rows of the demo's metrics, 250 MB of copies of the same few
    hundred keys and library version texts. Numbers are kept as they are (a shared ``0.0`` would turn
    ``-0.0`` into ``0.0``)."""
    kind = type(value)
    if kind is dict:
        return {strings.setdefault(k, k): _shared(v, strings) for k, v in value.items()}
    if kind is list:  # a list of numbers (per-segment values) is kept as it is, without a walk
        return [_shared(v, strings) for v in value] if value and type(value[0]) not in _NUMBERS else value
    if kind is str:  # (a long text, a judge's reasoning, is its row's own: kept as it is)
        return strings.setdefault(value, value) if len(value) <= _SHARED_LENGTH else value
    return value


def _row_from_record(rec: Any, configs: dict[str, Any] | None = None,
                     strings: dict[str, str] | None = None) -> ResultRow:
    """The row of a record; with ``configs``, its config is stored text, decoded once per text there;
    with ``strings``, the strings of its details are shared with the other rows' (:func:`_shared`)."""
    config = rec["config"]
    if configs is not None and config is not None:
        if config not in configs:
            configs[config] = json.loads(config)
        config = configs[config]
    details = rec["details"]
    if strings is not None and details is not None:
        if len(strings) > _SHARED_MOST:
            strings.clear()
        details = _shared(details, strings)
    return ResultRow(
        item_id=rec["item_id"],
        metric=rec["metric"],
        config_hash=rec["config_hash"],
        version=rec["version"],
        status=rec["status"],
        value=rec["value"],
        error=rec["error"],
        duration_s=rec["duration_s"],
        details=details,
        config=config,
        created_at=rec["created_at"],
        fingerprint=rec["fingerprint"],
        superseded_at=rec["superseded_at"],
        row_id=rec["id"],
    )
