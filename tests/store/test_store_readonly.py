"""``ResultStore(url, read_only=True)``: reading a store never writes, not even WAL or lock files."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore, StoreError, export_results, put_rows


def _rows() -> list[ResultRow]:
    return [
        ResultRow("a", "ssim", "c1", "1", "ok", 0.5, details={"frames": 3}),
        ResultRow("b", "ssim", "c1", "1", "error", None, error="boom"),
        ResultRow("a", "psnr", "c1", "1", "ok", 31.0),
    ]


def _snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file of the folder with its modification time, size and bytes."""
    files = sorted(folder.iterdir())
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_size, p.read_bytes()) for p in files}


def _bind_read_only(src: Path, dst: Path) -> bool:
    """Mount ``src`` read-only at ``dst`` (root on Linux); False where that is not allowed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    dst.mkdir()
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(src), str(dst)], capture_output=True)
    return done.returncode == 0 and not os.access(dst, os.W_OK)


@pytest.fixture
def frozen(tmp_path: Path) -> Iterator[Path]:
    """A closed SQLite store of three rows that cannot be written to.

    The folder and file are made read-only (chmod 555 / 444), which stops any user but root. Root
    ignores modes, so where the tests run as root the folder is also bind-mounted read-only (as on
    a read-only share) and the store is read through that mount.
    """
    folder = tmp_path / "archive"
    db = folder / "results.sqlite"
    with ResultStore(db) as store:
        store.add(_rows())
    assert sorted(p.name for p in folder.iterdir()) == ["results.sqlite"]  # clean close: no -wal/-shm
    db.chmod(0o444)
    folder.chmod(0o555)
    mount = tmp_path / "mnt"
    mounted = _bind_read_only(folder, mount)
    try:
        yield mount / db.name if mounted else db
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=True)
        folder.chmod(0o755)
        db.chmod(0o644)


def test_reading_a_read_only_file_writes_nothing(frozen: Path, tmp_path: Path) -> None:
    before = _snapshot(frozen.parent)
    with ResultStore(frozen, read_only=True) as store:
        assert store.read_only
        assert store.count() == 3
        assert {(r.item_id, r.metric) for r in store.rows()} == {("a", "ssim"), ("b", "ssim"), ("a", "psnr")}
        assert [r.item_id for r in store.iter_rows(status="ok", metric="ssim")] == ["a"]
        assert store.done_item_ids("ssim", "c1", "1") == {"a", "b"}
        assert export_results(store, tmp_path / "out" / "r.csv") == 3
    assert _snapshot(frozen.parent) == before  # same files, same bytes, same times: no -wal, no -shm


def test_writes_through_a_read_only_store_are_refused(frozen: Path) -> None:
    before = _snapshot(frozen.parent)
    extra = ResultRow("c", "ssim", "c1", "1", "ok", 1.0)
    with ResultStore(frozen, read_only=True) as store:
        with pytest.raises(StoreError, match="read-only") as info:
            store.add([extra])
        assert str(frozen) in str(info.value)
        with pytest.raises(StoreError, match="read-only"):
            store.clear_errors("ssim", "c1", "1")
        with pytest.raises(StoreError, match="read-only"):
            put_rows(store, [extra])
        assert store.count() == 3
    assert _snapshot(frozen.parent) == before


def test_the_database_itself_refuses_writes(frozen: Path) -> None:
    """Even SQL that goes around the store's own checks cannot write through a read-only store."""
    with ResultStore(frozen, read_only=True) as store:
        with pytest.raises(StoreError, match="readonly"), store._guard("write"), store._read() as conn:
            conn.execute(text("DELETE FROM robojudge_results"))
        assert store.count() == 3


def test_read_only_store_sees_a_live_writer(tmp_path: Path) -> None:
    """While a run writes (its WAL file exists), a read-only reader takes part in locking, sees commits."""
    db = tmp_path / "results.sqlite"
    with ResultStore(db) as writer:
        writer.add(_rows()[:1])
        assert (tmp_path / "results.sqlite-wal").exists()
        with ResultStore(db, read_only=True) as reader:
            assert reader.count() == 1
            writer.add(_rows()[1:])
            assert reader.count() == 3
            with pytest.raises(StoreError, match="read-only"):
                reader.add([ResultRow("z", "m", "c", "1", "ok", 1.0)])


def test_read_only_store_sees_a_writer_that_starts_after_it(tmp_path: Path) -> None:
    """`robojudge report` opened on a closed store, then `robojudge score` starts writing: the reader
    must see the new rows, not a frozen copy (only a file that cannot be written is read as frozen)."""
    db = tmp_path / "results.sqlite"
    with ResultStore(db) as first:
        first.add(_rows()[:1])
    assert not (tmp_path / "results.sqlite-wal").exists()  # closed cleanly: nobody writes now
    with ResultStore(db, read_only=True) as reader:
        assert reader.count() == 1
        with ResultStore(db) as writer:
            writer.add(_rows()[1:])
            assert reader.count() == 3
    assert ResultStore(db).count() == 3


def test_missing_file_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "results.sqlite"
    with pytest.raises(StoreError, match="no result store") as info:
        ResultStore(path, read_only=True)
    assert str(path) in str(info.value)
    assert not path.parent.exists()


def test_a_file_without_robojudge_tables_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    before = _snapshot(tmp_path)
    with pytest.raises(StoreError, match=r"other\.sqlite: the database is not a robojudge result store"):
        ResultStore(path, read_only=True)
    assert _snapshot(tmp_path) == before


def test_read_only_on_any_backend(store_url: str) -> None:
    with ResultStore(store_url) as store:
        store.add(_rows())
    with ResultStore(store_url, read_only=True) as store:
        assert store.count() == 3
        with pytest.raises(StoreError, match="read-only"):
            store.add([ResultRow("c", "ssim", "c1", "1", "ok", 1.0)])
        refused = pytest.raises(StoreError, match="readonly|read-only")
        with refused, store._guard("write"), store._read() as conn:
            conn.execute(text("DELETE FROM robojudge_results"))
        assert store.count() == 3


@pytest.mark.postgres
def test_read_only_postgres_database_without_tables_is_a_clear_error(postgres_db_url: str) -> None:
    with pytest.raises(StoreError, match="not a robojudge result store"):
        ResultStore(postgres_db_url, read_only=True)
    engine = create_engine(postgres_db_url)
    try:
        assert inspect(engine).get_table_names() == []  # nothing was created
    finally:
        engine.dispose()


def test_cli_export_of_a_read_only_file(frozen: Path, tmp_path: Path) -> None:
    before = _snapshot(frozen.parent)
    out = tmp_path / "export.csv"
    args = ["results", "export", "--db", str(frozen), "--out", str(out)]
    res = CliRunner().invoke(build_app("results"), args)
    assert res.exit_code == 0, res.output
    assert "wrote 3 rows" in res.output
    assert _snapshot(frozen.parent) == before
    assert stat.S_IMODE(os.stat(frozen).st_mode) == 0o444


def test_writing_where_the_folder_is_read_only_says_why(frozen: Path) -> None:
    if os.access(frozen.parent, os.W_OK):
        pytest.skip("no read-only folder here: running as root where a read-only bind mount is not allowed")
    before = _snapshot(frozen.parent)
    # Before, only SQLite's "unable to open database file": neither the folder nor a way out.
    with pytest.raises(StoreError, match="read-only") as info:
        ResultStore(frozen)
    message = str(info.value)
    assert f"the folder {frozen.parent} is read-only" in message
    assert "results.sqlite-wal" in message and "copy the store into a writable folder" in message
    assert _snapshot(frozen.parent) == before
    with ResultStore(frozen, read_only=True) as store:  # reading it there still works, as the message says
        assert store.count() == 3


@pytest.mark.parametrize("name", ["export.csv", "export.parquet"])
def test_an_export_into_a_read_only_folder_names_the_file_asked_for(frozen: Path, name: str) -> None:
    out = frozen.parent / name
    with ResultStore(frozen, read_only=True) as store, pytest.raises(StoreError) as info:
        export_results(store, out)
    # Before: the message named the hidden temporary file beside it (.export.csv.<pid>.<hex>.tmp), and on
    # a read-only file system the failed removal of that file replaced the error itself.
    message = str(info.value)
    assert message.startswith(f"cannot write {out}: ") and f".{name}." not in message, message
    assert not out.exists()


def _many(prefix: str, n: int) -> list[ResultRow]:
    return [ResultRow(f"{prefix}{i:06d}", "m", "c", "1", "ok", float(i), details={"pad": "x" * 200})
            for i in range(n)]


@pytest.fixture
def marked(tmp_path: Path) -> Iterator[Path]:
    """A closed store of 500 rows whose file is marked read-only (chmod 444): read ``immutable``, without
    locks. Root, and the owner after a chmod, can still write it: as another user or host writes a folder
    that is read-only from here."""
    db = tmp_path / "results.sqlite"
    with ResultStore(db) as store:
        store.add(_many("b", 500))
    db.chmod(0o444)
    yield db
    db.chmod(0o644)


def _write_meanwhile(db: Path, rows: list[ResultRow]) -> None:
    """Another process's run: it writes and closes (its WAL is checkpointed into the file and removed)."""
    db.chmod(0o644)
    with ResultStore(db) as writer:
        writer.add(rows)
    db.chmod(0o444)
    assert not db.with_name(db.name + "-wal").exists()


def test_a_store_written_while_it_is_read_without_locks_is_an_error(marked: Path) -> None:
    """Before, the read went on over pages the writer had moved: 529 rows for 500, 30 of them twice, and no
    error. A read that may be torn is refused now, naming the file."""
    with ResultStore(marked, read_only=True) as reader:
        rows = reader.iter_rows(batch_size=50)
        got = [next(rows) for _ in range(60)]
        _write_meanwhile(marked, _many("a", 50))
        with pytest.raises(StoreError, match="changed while it was read through a read-only path") as info:
            got += list(rows)
        assert f"{marked} was written" in str(info.value) and "rerun" in str(info.value)
        # a read after the writer is done is whole again (the rows of both)
        whole = [r.item_id for r in _many("a", 50) + _many("b", 500)]
        assert [r.item_id for r in reader.iter_rows()] == whole


class _WrittenOnce(ResultStore):
    """A reader whose first read is interrupted by another run's write, after its first 60 rows."""

    writes: list[ResultRow] = []

    def iter_rows(self, **kwargs: Any) -> Iterator[ResultRow]:
        for k, row in enumerate(super().iter_rows(**{**kwargs, "batch_size": 50})):
            if k == 60 and self.writes:
                _write_meanwhile(Path(self.url.removeprefix("sqlite:///")), self.writes)
                self.writes = []
            yield row


def test_rows_reads_once_more_when_the_store_changed_during_the_read(marked: Path) -> None:
    with _WrittenOnce(marked, read_only=True) as reader:
        reader.writes = _many("a", 50)
        ids = [r.item_id for r in reader.rows()]
    assert ids == [r.item_id for r in _many("a", 50) + _many("b", 500)]  # the second read, whole


def test_another_reader_opening_the_store_meanwhile_is_no_change(marked: Path) -> None:
    """A plain reader (a database browser, `sqlite3 -readonly`) opens the store while it is read without
    locks: it makes the empty -wal and -shm files a WAL reader needs and writes nothing. That was taken
    for a writer, and the read refused (review rev16 F3)."""
    with ResultStore(marked, read_only=True) as reader:
        rows = reader.iter_rows(batch_size=50)
        got = [next(rows) for _ in range(60)]
        marked.parent.chmod(0o777)
        wal = marked.with_name(marked.name + "-wal")
        wal.touch()  # as such a reader leaves it, empty (its -shm aside)
        marked.with_name(marked.name + "-shm").write_bytes(b"\0" * 32768)
        got += list(rows)
    assert len(got) == 500 and wal.stat().st_size == 0
