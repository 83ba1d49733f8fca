"""Switching an SQLite database to WAL when several processes may open it at the same moment.

``PRAGMA journal_mode = WAL`` can fail at once with "database is locked" while another connection is
switching the same new file or setting up its shared-memory index: SQLite does not always call the busy
handler there, so the connection's ``timeout`` does not help. Ray workers or parallel runs that open
one fresh cache or store together hit it (measured: 5 of 15 trials of six processes opening a new file
at once). :func:`enable_wal` retries the switch with a short backoff until ``timeout_s`` has passed.

The user cache files (the judge response cache, the file-hash cache) are looked at and emptied through
:func:`cache_file_state` and :func:`clear_cache_file`, which :mod:`robojudge.judges` and
:mod:`robojudge.run` call with their own file and tables.
:func:`disk_full_note` tells a full disk from SQLite's vaguer words. Stdlib only, so every layer can use it.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_RETRYABLE = ("locked", "busy")


def enable_wal(cursor: Any, timeout_s: float) -> None:
    """Run ``PRAGMA journal_mode = WAL`` on ``cursor`` (an sqlite3 connection or cursor), retrying
    while SQLite reports the database locked or busy, for up to ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    delay = 0.002
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            message = str(exc).lower()
            if not any(word in message for word in _RETRYABLE) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, begin: str = "BEGIN") -> Iterator[None]:
    """``begin`` on ``db`` (opened with ``isolation_level=None``), COMMIT when the block ends, ROLLBACK when
    it raises (anything, Ctrl-C included; a failed rollback is left to the error that caused it)."""
    db.execute(begin)
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


#: The files an SQLite database in WAL mode may have beside it.
SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True)
class CacheFileState:
    """One cache file as it is now (:func:`cache_file_state`).

    Attributes:
        name: What the cache is, in words ("judge response cache").
        path: The database file.
        exists: Whether the file is there.
        size: Bytes on disk of the file with its ``-wal``, ``-shm`` and ``-journal`` files.
        entries: Rows per table (empty when the file is missing or could not be read).
        oldest: When the oldest entry was written (seconds since the epoch), None without entries.
        newest: When the newest entry was written.
        problem: Why the entries could not be counted (a file that is not a database), else None.
    """

    name: str
    path: Path
    exists: bool
    size: int
    entries: dict[str, int] = field(default_factory=dict)
    oldest: float | None = None
    newest: float | None = None
    problem: str | None = None


@dataclass(frozen=True)
class CacheCleared:
    """What :func:`clear_cache_file` removed.

    Attributes:
        name: What the cache is, in words.
        path: The database file.
        removed: Rows removed per table (all of them when the whole file was removed).
        kept: Rows left per table (none when the whole file was removed).
        size_before: Bytes on disk before (the file and its side files).
        size_after: Bytes on disk after.
        whole_file: The file was removed (no age limit given), not entries in it.
        not_compacted: Why the file could not be rewritten smaller after entries were removed (a full
            disk, another process reading it): their space is reused by later entries. None when it was.
    """

    name: str
    path: Path
    removed: dict[str, int]
    kept: dict[str, int]
    size_before: int
    size_after: int
    whole_file: bool
    not_compacted: str | None = None


class CacheFileError(RuntimeError):
    """A cache file could not be emptied: the message says which, why and what to do."""


def files_of(path: Path) -> list[Path]:
    """``path`` and the side files SQLite keeps beside it (:data:`SIDE_FILES`), those that exist."""
    return [p for p in (path, *(Path(f"{path}{s}") for s in SIDE_FILES)) if p.exists()]


def size_on_disk(path: Path) -> int:
    """Bytes of ``path`` and its side files (0 when none exists)."""
    total = 0
    for p in files_of(path):
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total


def _read_only(path: Path, timeout_s: float, *, immutable: bool = False) -> sqlite3.Connection:
    mode = "immutable=1" if immutable else "mode=ro"
    return sqlite3.connect(f"{path.absolute().as_uri()}?{mode}", uri=True, timeout=timeout_s,
                           isolation_level=None)


def _counted(
    db: sqlite3.Connection, tables: dict[str, str]
) -> tuple[dict[str, int], float | None, float | None]:
    """Rows per table, and the oldest and newest time written."""
    counts: dict[str, int] = {}
    oldest: float | None = None
    newest: float | None = None
    for table, when in _tables_of(db, tables).items():
        n, low, high = db.execute(f"SELECT COUNT(*), MIN({when}), MAX({when}) FROM {table}").fetchone()
        counts[table] = int(n)
        if low is not None:
            oldest = float(low) if oldest is None else min(oldest, float(low))
        if high is not None:
            newest = float(high) if newest is None else max(newest, float(high))
    return counts, oldest, newest


def _tables_of(db: sqlite3.Connection, tables: dict[str, str]) -> dict[str, str]:
    """The tables of ``tables`` that the file has (a cache made by an older version may lack one)."""
    have = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {t: when for t, when in tables.items() if t in have}


def cache_file_state(
    name: str, path: Path, tables: dict[str, str], timeout_s: float = 10.0
) -> CacheFileState:
    """Look at a cache file without changing it: its size, entries per table and their ages.

    Args:
        name: What the cache is, in words.
        path: The SQLite file.
        tables: Each table counted, with the SQL expression of the time (seconds since the epoch) its
            row was written.
        timeout_s: How long to wait for a writer's lock.
    """
    if not path.exists():
        return CacheFileState(name, path, False, size_on_disk(path))
    real = path.resolve()  # SQLite's side files lie beside a link's target
    # With no -wal or -journal beside it (no writer has the file open), the file alone is the whole cache:
    # it is read as unchanging, which creates nothing (a plain read-only open of a WAL file makes its -shm
    # and -wal files, which a full disk refuses: "disk I/O error").
    writer = any(Path(f"{real}{suffix}").exists() for suffix in ("-wal", "-journal"))
    try:
        db = _read_only(real, timeout_s, immutable=not writer)
        try:
            counts, oldest, newest = _counted(db, tables)
        finally:
            db.close()
    except sqlite3.Error as exc:
        if size_on_disk(Path(f"{real}-wal")) > 0:
            return CacheFileState(name, path, True, size_on_disk(real), problem=str(exc))
        try:
            db = _read_only(real, timeout_s, immutable=True)
            try:
                counts, oldest, newest = _counted(db, tables)
            finally:
                db.close()
        except sqlite3.Error as again:
            return CacheFileState(name, path, True, size_on_disk(real), problem=str(again))
    return CacheFileState(name, path, True, size_on_disk(real), counts, oldest, newest)


def clear_cache_file(
    name: str, path: Path, tables: dict[str, str], older_than_s: float | None = None, timeout_s: float = 60.0
) -> CacheCleared:
    """Empty a cache file: remove it whole, or only its entries written more than ``older_than_s`` ago.

    Removing the whole file (``older_than_s`` None) needs no free space, so it works on a full disk. It
    is safe while another process has the file open: that process goes on writing to the file it
    opened, which the next process no longer sees (its entries are lost, nothing else), and the disk
    space comes back when it closes the file. Removing entries by age deletes their rows and then
    rewrites the file smaller (``VACUUM``); that needs free space, and where the rewrite fails the
    removal still holds (:attr:`CacheCleared.not_compacted` says why).

    Raises:
        CacheFileError: The file or its entries could not be removed (a read-only folder, a full disk
            for a removal by age, a file that is not a database).
    """
    before = size_on_disk(path)
    if not path.exists():
        return CacheCleared(name, path, {}, {}, before, before, older_than_s is None)
    if older_than_s is None:
        state = cache_file_state(name, path, tables)
        for p in files_of(path):
            try:
                p.unlink(missing_ok=True)
            except OSError as exc:
                raise CacheFileError(f"cannot remove the {name} {p}: {exc.strerror or exc}") from None
        return CacheCleared(name, path, dict(state.entries), {}, before, size_on_disk(path), True)
    cutoff = time.time() - older_than_s
    removed: dict[str, int] = {}
    kept: dict[str, int] = {}
    try:
        db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    except sqlite3.Error as exc:
        raise CacheFileError(f"cannot open the {name} {path}: {exc}") from None
    try:
        try:
            present = _tables_of(db, tables)
            with transaction(db, "BEGIN IMMEDIATE"):
                for table, when in present.items():
                    # a row with no time (written by hand) counts as old
                    removed[table] = db.execute(
                        f"DELETE FROM {table} WHERE COALESCE({when}, 0) < ?", (cutoff,)).rowcount
                    (kept[table],) = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        except sqlite3.Error as exc:
            raise CacheFileError(
                f"cannot remove entries from the {name} {path} ({exc}); removing the whole file "
                "(without an age limit) needs no free space") from None
        not_compacted: str | None = None
        if any(removed.values()):
            try:
                db.execute("VACUUM")
            except sqlite3.Error as exc:
                not_compacted = str(exc)
        with contextlib.suppress(sqlite3.Error):  # the -wal back to nothing where no reader holds it
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        db.close()
    return CacheCleared(name, path, removed, kept, before, size_on_disk(path), False, not_compacted)

#: Below this many free bytes a disk counts as full: SQLite grows its files a page or a -wal frame at a
#: time, so a write that failed for want of room leaves the disk with less than that free.
FULL_BELOW_BYTES = 1 << 20

_FULL_WORDS = ("database or disk is full", "no space left on device")


def disk_full_note(reason: str, folder: Path) -> str | None:
    """What to add to an SQLite failure ``reason`` (the driver's text) when the disk holding ``folder`` is
    full, or None.

    SQLite says "database or disk is full" (SQLITE_FULL) where a write found no room, which may also be
    a quota or a full temporary folder; and only "disk I/O error" (SQLITE_IOERR) where even a reader could
    not make its 32 KiB ``-shm`` file on a full disk. The folder's free space tells a full disk apart: the
    note says so and names the folder. Where the disk has room, the driver's words are all that is known.
    """
    text = reason.lower()
    if not any(word in text for word in _FULL_WORDS) and "disk i/o error" not in text:
        return None
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return None
    if free >= FULL_BELOW_BYTES:
        return None
    return f"the disk holding {folder} is full ({free:,} bytes free)"
