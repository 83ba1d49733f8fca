"""A store on a disk with no room left: a cleanly closed store still opens read-only, and SQLite's vague
"disk I/O error" or "database or disk is full" says that the disk is full and which folder it holds.

A process whose file-size limit is 0 (``RLIMIT_FSIZE``) cannot grow any file, as on a full disk: SQLite
then cannot make the 32 KiB ``-shm`` file every reader of a WAL database needs, and fails as it does on
a full disk (SQLITE_IOERR_SHMOPEN, "disk I/O error"). No mount and no root needed.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from robojudge.store import ResultRow, ResultStore, StoreError

resource = pytest.importorskip("resource")

_READ = """
import sys
from robojudge.store import ResultStore, StoreError
try:
    with ResultStore(sys.argv[1], read_only=True) as store:
        print(sorted((r.item_id, r.metric, r.value) for r in store.rows()))
except StoreError as exc:
    print("StoreError:", exc)
"""


def _no_room() -> None:
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


def _read_with_no_room(db: Path) -> str:
    done = subprocess.run([sys.executable, "-B", "-c", _READ, str(db)], preexec_fn=_no_room,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _rows() -> list[ResultRow]:
    return [ResultRow("a", "ssim", "c1", "1", "ok", 0.5), ResultRow("b", "ssim", "c1", "1", "ok", 0.25)]


def test_a_closed_store_opens_read_only_where_its_shm_file_finds_no_room(tmp_path: Path) -> None:
    # Before, "cannot open ...: disk I/O error": no read-only command could read a store on a full disk.
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add(_rows())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite"]  # closed cleanly: no -wal, no -shm
    assert _read_with_no_room(db) == "[('a', 'ssim', 0.5), ('b', 'ssim', 0.25)]"


def _moved_with_results_in_its_wal(tmp_path: Path) -> Path:
    """A store holding 0.5 in its main file and 0.75 only in its -wal file, copied with the -wal file (no
    -shm) to ``tmp_path/copy``: a store moved with its -wal file. The copy's path."""
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add(_rows()[:1])
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("UPDATE robojudge_results SET value = 0.75")  # only in the -wal file while con is open
    con.commit()
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("r.sqlite", "r.sqlite-wal"):
        shutil.copy(tmp_path / name, copy / name)
    con.close()
    return copy / "r.sqlite"


def test_results_in_a_wal_file_are_not_skipped_when_there_is_no_room_to_read_them(tmp_path: Path) -> None:
    # Read without locks, SQLite would ignore the -wal file and show the older rows as all there is.
    out = _read_with_no_room(_moved_with_results_in_its_wal(tmp_path))
    assert out.startswith("StoreError: cannot open") and "disk I/O error" in out, out


def test_a_linked_store_whose_wal_file_holds_results_is_not_read_stale(tmp_path: Path) -> None:
    # SQLite keeps the -wal file beside the link's target: looked for beside the link, it went unseen and
    # the store read without locks showed the older value (0.5, not 0.75) as all there is (review rev29 F1).
    link = tmp_path / "link.sqlite"
    link.symlink_to(_moved_with_results_in_its_wal(tmp_path))
    out = _read_with_no_room(link)
    assert out.startswith("StoreError: cannot open") and "disk I/O error" in out, out


def test_a_full_disk_is_named_with_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before, only SQLite's "database or disk is full" or "disk I/O error", naming no folder.
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add(_rows()[:1])
    with sqlite3.connect(db) as con:  # the next insert fails with SQLite's own full-disk words
        con.execute("CREATE TRIGGER disk_full BEFORE INSERT ON robojudge_results "
                    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    free = {"bytes": 4096}

    def usage(path: Any) -> Any:
        return shutil._ntuple_diskusage(10 << 30, (10 << 30) - free["bytes"], free["bytes"])  # type: ignore[attr-defined]

    monkeypatch.setattr(shutil, "disk_usage", usage)
    with ResultStore(db) as store, pytest.raises(StoreError) as raised:
        store.add(_rows()[1:])
    assert str(raised.value) == (f"cannot store results in sqlite:///{db}: database or disk is full: "
                                 f"the disk holding {tmp_path} is full (4,096 bytes free)")
    free["bytes"] = 5 << 30  # room on the disk: the limit is something else, and no disk is called full
    with ResultStore(db) as store, pytest.raises(StoreError) as raised:
        store.add(_rows()[1:])
    assert str(raised.value) == f"cannot store results in sqlite:///{db}: database or disk is full"
