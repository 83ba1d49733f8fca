"""Content hashes of input files, remembered across runs so that planning a rerun reads no video.

:func:`file_digest` is the BLAKE2b (16 bytes, hex) of a file's bytes. A frame folder (a ``video``
that is a directory) hashes to the digest of its image files' names and digests plus its
``fps.txt`` / ``fps`` file, the files :mod:`robojudge.video` reads from it. A missing path (also one
deleted while it is read) hashes to ``"missing"`` and an unreadable one to ``"unreadable"``, so a
failure is part of the fingerprint too and a file that appears later changes it; a file that is
still changing after :data:`HASH_ATTEMPTS` reads (being written) counts as unreadable for now.
Resume planning treats both as *inputs unavailable* (:data:`UNAVAILABLE`).

Digests are cached in a small SQLite file in the user's cache folder (``file-hashes.sqlite`` in
``$ROBOJUDGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/robojudge``, else ``~/.cache/robojudge``; never in
the package or the data folder), keyed by absolute path (its text; its bytes where the name is not
UTF-8, read with Python's surrogate escapes) and the file's device, inode, size,
modification and change times: any rewrite, copy over or ``touch`` rehashes the file. As in git's
"racy" check, a cached digest taken less than :data:`RACY_NS` after the file's last change (its change
time, or its modification time where that is not later than the hash) is not trusted by a later
run (a second write within the file system's timestamp granularity could keep size and times);
within one process the memo trusts the stat. If the cache cannot be opened or written
(read-only home), hashing goes on without it. :func:`file_hash_cache_state` and
:func:`clear_file_hash_cache` look at and empty it (``robojudge cache info`` / ``clear``); an emptied
cache costs reading each input once more.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from robojudge._sqlite import CacheCleared, CacheFileState, cache_file_state, clear_cache_file, enable_wal

CACHE_FILE = "file-hashes.sqlite"
CACHE_NAME = "file-hash cache"
_WRITTEN = {"digests": "hashed_ns / 1e9"}  # (the time of the hash, nanoseconds since the epoch)
RACY_NS = 2_000_000_000
"""A digest counts as settled when taken this long (2 s) after the file's last change."""
HASH_ATTEMPTS = 3
"""Reads of a file that changes while it is read before it counts as unreadable."""
MISSING = "missing"
UNREADABLE = "unreadable"
UNAVAILABLE = frozenset({MISSING, UNREADABLE})
"""The digests that say a file could not be read now, rather than what it holds."""
_CHUNK = 1 << 20
_FOLDER_EXTRA = ("fps.txt", "fps")

StatKey = tuple[int, int, int, int, int]


def _stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _hash_bytes(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


class FileHasher:
    """Digests of files and frame folders, with an in-process memo and a persistent cache.

    Args:
        folder: Where ``file-hashes.sqlite`` lives; ``None`` = no persistent cache.
    """

    def __init__(self, folder: str | os.PathLike[str] | None) -> None:
        self.folder = None if folder is None else Path(folder)
        self.hashed = 0
        """Files actually read (cache misses), for tests and benchmarks."""
        self._memo: dict[str, tuple[StatKey, str]] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if self.folder is not None:
            self._db = self._open(self.folder)

    @staticmethod
    def _open(folder: Path) -> sqlite3.Connection | None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                folder / CACHE_FILE, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            enable_wal(db, 30.0)
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: a lost last write only costs a rehash
            db.execute(
                "CREATE TABLE IF NOT EXISTS digests (path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, "
                "size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, hashed_ns INTEGER, digest TEXT)"
            )
            return db
        except (OSError, sqlite3.Error):
            return None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def digest(self, path: str | os.PathLike[str]) -> str:
        """The content digest of a file or frame folder (see the module doc)."""
        p = Path(path).absolute()
        try:
            st = p.stat()
        except FileNotFoundError:
            return MISSING
        except (OSError, ValueError):  # ValueError: a NUL in the name
            return UNREADABLE
        if stat.S_ISDIR(st.st_mode):
            return self._folder_digest(p)
        for _ in range(HASH_ATTEMPTS):
            try:
                digest, changed = self._file_digest(p, st)
            except FileNotFoundError:  # deleted (or its drive gone) between the stat and the read
                return MISSING
            except OSError:
                return UNREADABLE
            if changed is None:
                return digest
            st = changed  # written while being read: read what is there now
        return UNREADABLE

    def _folder_digest(self, folder: Path) -> str:
        from robojudge.video._folder import IMAGE_SUFFIXES

        try:
            names = sorted(
                e.name
                for e in os.scandir(folder)
                if e.is_file() and not e.name.startswith(".")
                and (Path(e.name).suffix.lower() in IMAGE_SUFFIXES or e.name in _FOLDER_EXTRA)
            )
        except OSError:
            return UNREADABLE
        h = hashlib.blake2b(digest_size=16)
        h.update(b"frame folder\0")
        for name in names:  # the name's bytes: one that is not UTF-8 holds surrogate escapes
            h.update(os.fsencode(name) + f"\0{self.digest(folder / name)}\0".encode())
        return h.hexdigest()

    def _file_digest(self, path: Path, st: os.stat_result) -> tuple[str, os.stat_result | None]:
        """The digest of a file whose stat is ``st``; or, if it changed while read, its new stat."""
        key, text = _stat_key(st), str(path)
        with self._lock:
            memo = self._memo.get(text)
            if memo is not None and memo[0] == key:
                return memo[1], None
            stored = self._lookup(text, key)
            if stored is not None:
                self._memo[text] = (key, stored)
                return stored, None
        hashed_ns = time.time_ns()
        digest = _hash_bytes(path)
        after = path.stat()
        if _stat_key(after) != key:
            return "", after
        with self._lock:
            self.hashed += 1
            self._memo[text] = (key, digest)
            self._store(text, key, hashed_ns, digest)
        return digest, None

    def _lookup(self, path: str, key: StatKey) -> str | None:
        if self._db is None:
            return None
        try:
            rec = self._db.execute(
                "SELECT dev, ino, size, mtime_ns, ctime_ns, hashed_ns, digest FROM digests WHERE path = ?",
                (_cache_key(path),),
            ).fetchone()
        except sqlite3.Error:
            return None
        if rec is None or tuple(rec[:5]) != key:
            return None
        # The last change is the change time, and the modification time where it is not later than the
        # hash: one set ahead (``touch -d``, a tar from a host whose clock is ahead) is no recent write,
        # and counting it made every run read the file again until that date.
        mtime_ns, ctime_ns, hashed_ns = key[3], key[4], rec[5]
        changed_ns = max(ctime_ns, mtime_ns if mtime_ns <= hashed_ns else ctime_ns)
        if hashed_ns <= changed_ns + RACY_NS:
            return None
        return str(rec[6])

    def _store(self, path: str, key: StatKey, hashed_ns: int, digest: str) -> None:
        if self._db is None:
            return
        with contextlib.suppress(sqlite3.Error):  # a busy or read-only cache only costs a rehash next time
            self._db.execute(
                "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (_cache_key(path), *key, hashed_ns, digest),
            )


def _cache_key(path: str) -> str | bytes:
    """The cache's key of a path: its text, or its bytes (a BLOB) where the name is not UTF-8 (a Latin-1
    file name holds surrogate escapes, which SQLite cannot take as text). Text keys stay as they were,
    so a cache written before keeps its digests."""
    try:
        path.encode()
    except UnicodeEncodeError:
        return os.fsencode(path)
    return path


def _folder(folder: str | os.PathLike[str] | None) -> Path:
    from robojudge.judges import default_cache_dir

    return Path(folder).expanduser() if folder is not None else default_cache_dir()


def file_hash_cache_state(folder: str | os.PathLike[str] | None = None) -> CacheFileState:
    """The file-hash cache in ``folder`` (default: the user cache folder) as it is now: its path, size
    on disk and digests (``entries["digests"]``). Nothing is created or changed."""
    return cache_file_state(CACHE_NAME, _folder(folder) / CACHE_FILE, _WRITTEN)


def clear_file_hash_cache(
    folder: str | os.PathLike[str] | None = None, *, older_than_s: float | None = None
) -> CacheCleared:
    """Remove the file-hash cache in ``folder`` (default: the user cache folder), or with
    ``older_than_s`` only the digests taken more than that many seconds ago. The next plan reads those
    files again to hash them; no result changes.

    Raises:
        robojudge._sqlite.CacheFileError: The file or its entries could not be removed.
    """
    return clear_cache_file(CACHE_NAME, _folder(folder) / CACHE_FILE, _WRITTEN, older_than_s)


_default: FileHasher | None = None
_default_lock = threading.Lock()


def default_hasher() -> FileHasher:
    """The process's hasher on the user cache folder (a new one when ``$ROBOJUDGE_CACHE_DIR`` changes)."""
    from robojudge.judges import default_cache_dir

    global _default
    folder = default_cache_dir()
    with _default_lock:
        if _default is None or _default.folder != folder:
            if _default is not None:
                _default.close()
            _default = FileHasher(folder)
        return _default


_SCOPE: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("digest_scope", default=None)


@contextlib.contextmanager
def one_look() -> Iterator[None]:
    """Within this block each path is looked at once: a second :func:`file_digest` of it returns the
    first's digest without a ``stat`` (a frame folder of 500 images is 500 of them). For checks of
    several fingerprints over the same files taken at one moment."""
    token = _SCOPE.set({})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def file_digest(path: str | os.PathLike[str]) -> str:
    """:meth:`FileHasher.digest` with the process's default hasher (once per path inside :func:`one_look`)."""
    seen = _SCOPE.get()
    if seen is None:
        return default_hasher().digest(path)
    key = os.fspath(path)
    found = seen.get(key)
    if found is None:
        found = seen[key] = default_hasher().digest(path)
    return found


def tree_digest(folder: str | os.PathLike[str]) -> str:
    """The digest of a folder of files (a model's weights and configs): its regular files' relative
    names and :func:`file_digest` s, recursively, leaving out hidden names (a download tool's
    ``.cache``) and the documents beside a model (README, LICENSE, NOTICE, ``*.md``: a tool that adds
    a model card changes no weights). Each file's digest is cached as any input's, so a folder is read
    once until it changes. A folder that cannot be listed hashes to :data:`UNREADABLE`."""
    root = Path(folder)
    h = hashlib.blake2b(digest_size=16)
    try:
        files = sorted(p for p in root.rglob("*") if p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(root).parts)
                       and not _document(p.name))
    except OSError:
        return UNREADABLE
    for f in files:
        h.update(os.fsencode(f.relative_to(root).as_posix()) + f"\0{file_digest(f)}\n".encode())
    return h.hexdigest()


def _document(name: str) -> bool:
    """A file beside a model that no loader reads: its card, license or notice."""
    upper = name.upper()
    return upper.endswith(".MD") or upper.startswith(("README", "LICENSE", "NOTICE"))
