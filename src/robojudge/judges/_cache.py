"""The response cache: a SQLite file that remembers every judge reply and every video's frame hashes.

Replies are keyed by (backend, model, rubric, frame content hashes, prompt, sampling settings), so
a rerun or a resumed run never sends the same request twice. Frame hashes are remembered per file
and sampling (:func:`robojudge.judges._frames.remembered_key`: the frame cache's key, a
:class:`~robojudge.video.FileFingerprint` with the sampling settings), so a warm rerun need not
decode the videos.
The file lives in the user's cache folder, never inside the package:
``$ROBOJUDGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/robojudge``, else ``~/.cache/robojudge``.

Speed: the runner calls the cache on its event loop, once or twice per request, so the cache keeps
SQLite off that path where it can. The keys already stored are read into memory when the file is
opened (up to :data:`KEY_INDEX_LIMIT` per table), so a miss -- every request of a cold run -- costs a
set lookup, not a query. At a table's first hit its stored values are read in one query (when they
total at most :data:`VALUE_PRELOAD_BYTES` in at most :data:`VALUE_PRELOAD_ROWS` rows), so the hits
of a warm rerun need no query either. Writes are buffered and written in batches of
:data:`WRITE_BATCH` in one transaction, and at most :data:`FLUSH_AFTER_S` after the first of them
came (and on :meth:`ResponseCache.flush` / close): on the runner's event loop a timer writes them then
even when no other reply comes, so a run killed outright (``kill -9``, out of memory) loses at most the
replies of that last second, not those of its unfinished items, and its rerun does not pay for them
again. Another process writing the same file meanwhile is seen on the next open; until then its new
entries count as misses, which only costs re-sending those requests.

:func:`response_cache_state` says where the file is, its size and its entries; :func:`clear_response_cache`
removes it, or its entries older than an age (``robojudge cache info`` / ``robojudge cache clear``).
Nothing is ever evicted otherwise: the file grows with every new request. Removing it is safe; it
costs sending those requests again in a later run.

A cache that cannot be opened (a read-only or full disk, a file that is not a database) raises
:class:`ResponseCacheError`, naming the folder: running on without it would break the promise above
without a word. A write that fails later (the disk filled meanwhile) ends neither a request nor the
run: the entries stay usable in memory for the rest of the run, and :attr:`ResponseCache.write_error`
and :attr:`ResponseCache.unsaved` say why and how many, for the run's report (a rerun sends those
requests again).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from robojudge import settings
from robojudge._sqlite import (
    CacheCleared,
    CacheFileState,
    cache_file_state,
    clear_cache_file,
    enable_wal,
    transaction,
)
from robojudge.judges._backend import Completion

CACHE_FILE = "judge-cache.sqlite"
WRITE_BATCH = 128
"""Buffered writes that trigger one batched transaction."""
FLUSH_AFTER_S = 1.0
"""Most seconds a buffered write waits for its transaction: a received reply is in the file this soon
(``benchmarks/bench_cache_flush.py``: the timer's transactions cost little next to the replies')."""
KEY_INDEX_LIMIT = 2_000_000
"""Most keys per table read into memory at open; a bigger table is looked up by query."""
VALUE_PRELOAD_BYTES = 64 * 2**20
"""On a table's first cache hit, its stored values are read in one query if they total this or less..."""
VALUE_PRELOAD_ROWS = 100_000
"""... and it has at most this many rows (so a big cache is never scanned to find out)."""
_TABLES = ("replies", "frames")
CACHE_NAME = "judge response cache"
_WRITTEN = {table: "created" for table in _TABLES}  # (seconds since the epoch)
_log = logging.getLogger(__name__)


class ResponseCacheError(RuntimeError):
    """The response cache cannot be opened: its folder cannot be made, or its file cannot be opened,
    created or read (a read-only or full disk, a file that is not an SQLite database).

    Attributes:
        folder: The cache folder.
        reason: What the file system or SQLite said.
        default: The folder is the default one (:func:`default_cache_dir`), not one given.
    """

    def __init__(self, folder: Path, reason: str, *, default: bool) -> None:
        source = settings.get().cache_dir_from if default else None
        given = f", the folder ${source} gives" if source is not None else ""
        move = "set ROBOJUDGE_CACHE_DIR to" if default else "give"
        super().__init__(f"cannot open the judge response cache in {folder}{given} ({reason}): {move} a "
                         "writable folder with free space")
        self.folder = folder
        self.reason = reason
        self.default = default


def default_cache_dir() -> Path:
    """Where the response cache lives unless told otherwise (see the module docstring)."""
    return settings.get().cache_dir


def response_cache_state(folder: str | os.PathLike[str] | None = None) -> CacheFileState:
    """The response cache file in ``folder`` (default :func:`default_cache_dir`) as it is now: its path,
    size on disk, replies and frame entries (``entries["replies"]``, ``entries["frames"]``) and when the
    oldest and newest were written. Nothing is created or changed."""
    root = Path(folder).expanduser() if folder is not None else default_cache_dir()
    return cache_file_state(CACHE_NAME, root / CACHE_FILE, _WRITTEN)


def clear_response_cache(
    folder: str | os.PathLike[str] | None = None, *, older_than_s: float | None = None
) -> CacheCleared:
    """Remove the response cache file in ``folder`` (default :func:`default_cache_dir`), or with
    ``older_than_s`` only the replies and frame entries written more than that many seconds ago.

    A later run sends the removed requests again and decodes those videos again; nothing stored in a
    result store changes. See :func:`robojudge._sqlite.clear_cache_file` for a run that has the file
    open meanwhile.

    Raises:
        robojudge._sqlite.CacheFileError: The file or its entries could not be removed.
    """
    root = Path(folder).expanduser() if folder is not None else default_cache_dir()
    return clear_cache_file(CACHE_NAME, root / CACHE_FILE, _WRITTEN, older_than_s)


class ResponseCache:
    """Judge replies and frame hashes in one SQLite file.

    Args:
        folder: The cache folder (created when missing); the default is :func:`default_cache_dir`.
        enabled: With ``False`` nothing is read or written (``--no-cache``).
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.path: Path | None = None
        self._db: sqlite3.Connection | None = None
        self.hits = 0
        self.misses = 0
        self._pending: dict[tuple[str, str], tuple[str, float]] = {}
        self._first_pending = 0.0  # time.monotonic() when the oldest buffered write came
        self._timer: asyncio.TimerHandle | None = None  # set on an event loop by _flush_later
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self.flushes = 0
        """Transactions that wrote buffered entries (for tests and benchmarks)."""
        self._keys: dict[str, set[str] | None] = {t: None for t in _TABLES}
        self._values: dict[str, dict[str, str] | None] = {t: None for t in _TABLES}
        self._preload_tried: set[str] = set()
        self._counts: dict[str, int] = {}
        self._unsaved: dict[tuple[str, str], str] = {}  # entries a failed write left in memory only
        self.write_error: str | None = None
        """Why the last failed write failed (``None`` while every write succeeded)."""
        if not enabled:
            return
        root = Path(folder).expanduser() if folder is not None else default_cache_dir()
        self.path = root / CACHE_FILE
        db: sqlite3.Connection | None = None
        try:
            root.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
            self._open(db)
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            raise ResponseCacheError(root, _reason(exc, root), default=folder is None) from None
        self._db = db

    def _open(self, db: sqlite3.Connection) -> None:
        """Make the tables, and read the stored keys (see the module docstring)."""
        enable_wal(db, 60.0)
        # A cache: a crash may lose its last writes, which only costs re-sending those requests.
        db.execute("PRAGMA synchronous = OFF")
        db.execute(
            "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS frames (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL)"
        )
        for table in _TABLES:
            (count,) = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
            self._counts[table] = count
            if count <= KEY_INDEX_LIMIT:
                self._keys[table] = {k for (k,) in db.execute(f"SELECT key FROM {table}")}

    def _get(self, table: str, key: str) -> Any | None:
        if self._db is None:
            return None
        pending = self._pending.get((table, key))
        if pending is not None:
            return json.loads(pending[0])
        unsaved = self._unsaved.get((table, key))
        if unsaved is not None:
            return json.loads(unsaved)
        known = self._keys[table]
        if known is not None and key not in known:
            return None
        values = self._preload(table)
        if values is not None:
            raw = values.get(key)
            return None if raw is None else json.loads(raw)
        row = self._db.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def _preload(self, table: str) -> dict[str, str] | None:
        """The table's stored values by key, read in one query at its first hit (a warm rerun hits them
        all, so this replaces one query per request); ``None`` when they exceed
        :data:`VALUE_PRELOAD_BYTES` or the table has over :data:`VALUE_PRELOAD_ROWS` rows, and the
        cache then queries per key."""
        if table not in self._preload_tried and self._db is not None:
            self._preload_tried.add(table)
            if self._counts.get(table, 0) > VALUE_PRELOAD_ROWS:
                return None
            (size,) = self._db.execute(f"SELECT COALESCE(SUM(LENGTH(value)), 0) FROM {table}").fetchone()
            if size <= VALUE_PRELOAD_BYTES:
                self._values[table] = dict(self._db.execute(f"SELECT key, value FROM {table}"))
        return self._values[table]

    def _put(self, table: str, key: str, value: Any) -> None:
        if self._db is None:
            return
        now = time.monotonic()
        if not self._pending:
            self._first_pending = now
            self._flush_later()
        self._pending[(table, key)] = (json.dumps(value, separators=(",", ":")), time.time())
        # past the time with no timer to write it: set outside a loop, or on one that is gone since
        timed = self._timer is not None and self._timer_loop is not None and not self._timer_loop.is_closed()
        if len(self._pending) >= WRITE_BATCH or (not timed and now - self._first_pending >= FLUSH_AFTER_S):
            self.flush()

    def _flush_later(self) -> None:
        """On an event loop (the judge runner's), write the buffer :data:`FLUSH_AFTER_S` from now, even if
        no other entry comes by then. Outside one, the next entry past that time writes it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer, self._timer_loop = loop.call_later(FLUSH_AFTER_S, self._flush_due), loop

    def _flush_due(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Write the buffered entries in one transaction.

        A write that fails (a full disk) raises nothing: a cache that cannot be written costs
        re-sending those requests in a later run, never this one. The entries stay readable here, and
        :attr:`unsaved` and :attr:`write_error` say how many and why.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._db is None or not self._pending:
            return
        pending, self._pending = self._pending, {}
        self.flushes += 1
        db = self._db
        try:
            with transaction(db):
                for table in _TABLES:
                    rows = [(k, v, t) for (tab, k), (v, t) in pending.items() if tab == table]
                    if rows:
                        db.executemany(
                            f"INSERT OR REPLACE INTO {table} (key, value, created) VALUES (?, ?, ?)", rows
                        )
        except sqlite3.Error as exc:
            self._unsaved.update({entry: value for entry, (value, _) in pending.items()})
            self.write_error = str(exc)
            return
        for (table, key), (value, _) in pending.items():
            self._unsaved.pop((table, key), None)
            known = self._keys[table]
            if known is not None:
                known.add(key)
            preloaded = self._values[table]
            if preloaded is not None:
                preloaded[key] = value

    @property
    def unsaved(self) -> int:
        """Replies a failed write left out of the file (a full disk): a later run sends them again."""
        return sum(table == "replies" for table, _ in self._unsaved)

    def get_reply(self, key: str) -> Completion | None:
        """The stored reply for a request key, counting hits and misses."""
        data = self._get("replies", key)
        if data is None:
            self.misses += 1
            return None
        self.hits += 1
        return Completion.from_json(data)

    def put_reply(self, key: str, completion: Completion) -> None:
        self._put("replies", key, completion.to_json())

    def forget_reply(self, key: str) -> None:
        """Drop the stored reply for a request key (one that led to an error), so it is asked again."""
        if self._db is None:
            return
        self._pending.pop(("replies", key), None)
        self._unsaved.pop(("replies", key), None)
        known = self._keys["replies"]
        if known is not None:
            known.discard(key)
        preloaded = self._values["replies"]
        if preloaded is not None:
            preloaded.pop(key, None)
        try:
            self._db.execute("DELETE FROM replies WHERE key = ?", (key,))
        except sqlite3.Error as exc:  # a full disk: the reply stays in the file, and the run goes on
            self.write_error = str(exc)

    def get_frames(self, key: str) -> dict[str, Any] | None:
        """Remembered frame hashes, timestamps and video length for a file-and-settings key."""
        data = self._get("frames", key)
        return data if isinstance(data, dict) else None

    def put_frames(self, key: str, value: dict[str, Any]) -> None:
        self._put("frames", key, value)

    def close(self) -> None:
        """Write what is buffered and close the file."""
        if self._db is not None:
            _log.debug("response cache %s: %d replies reused (hits), %d asked for (misses)", self.path,
                       self.hits, self.misses)
            try:
                self.flush()
            finally:
                self._db.close()
                self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _reason(exc: BaseException, folder: Path) -> str:
    """What went wrong, naming the path only when it is not the cache folder (a parent that could not
    be made)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename
        return exc.strerror if where is None or Path(where) == folder else f"{exc.strerror}: {where}"
    return str(exc)
