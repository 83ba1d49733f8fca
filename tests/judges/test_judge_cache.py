"""The response cache: batched writes, in-memory key index, persistence across opens and processes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from robojudge.judges import Completion, ResponseCache, ResponseCacheError
from robojudge.judges._cache import CACHE_FILE, WRITE_BATCH


def _rows(folder: Path) -> int:
    with sqlite3.connect(folder / CACHE_FILE) as db:
        return int(db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])


def test_buffered_until_batch_or_close(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put_reply("k0", Completion(text="zero", prompt_tokens=3))
    assert cache.get_reply("k0") == Completion(text="zero", prompt_tokens=3)  # readable while buffered
    assert _rows(tmp_path) == 0  # not written yet
    for i in range(1, WRITE_BATCH):  # the WRITE_BATCH-th entry triggers one batched write
        cache.put_reply(f"k{i}", Completion(text=str(i)))
    assert _rows(tmp_path) == WRITE_BATCH
    cache.put_frames("f", {"hashes": ["a"], "video_seconds": 2.0})
    cache.close()  # flushes the rest
    with ResponseCache(tmp_path) as again:
        assert again.get_reply("k5") == Completion(text="5")
        assert again.get_frames("f") == {"hashes": ["a"], "video_seconds": 2.0}
        assert again.get_reply("missing") is None
        assert (again.hits, again.misses) == (1, 1)


def test_entries_from_another_writer_seen_on_next_open(tmp_path: Path) -> None:
    reader = ResponseCache(tmp_path)
    with ResponseCache(tmp_path) as writer:
        writer.put_reply("late", Completion(text="x"))
    assert reader.get_reply("late") is None  # not in the key index read at open: a miss
    reader.close()
    with ResponseCache(tmp_path) as reopened:
        assert reopened.get_reply("late") == Completion(text="x")


def test_disabled_cache_keeps_nothing(tmp_path: Path) -> None:
    with ResponseCache(tmp_path, enabled=False) as cache:
        cache.put_reply("k", Completion(text="x"))
        cache.flush()
        assert cache.get_reply("k") is None
    assert not (tmp_path / CACHE_FILE).exists()


class _CountingDb:
    """Wraps the cache's SQLite connection and counts the statements it runs."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db, self.statements = db, 0

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        self.statements += 1
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.db, name)


def test_values_are_read_in_one_query_at_the_first_hit(tmp_path: Path) -> None:
    with ResponseCache(tmp_path) as cache:
        for i in range(5):
            cache.put_reply(f"k{i}", Completion(text=f"reply {i}"))
    with ResponseCache(tmp_path) as cache:
        counting = _CountingDb(cache._db)  # type: ignore[arg-type]
        cache._db = counting  # type: ignore[assignment]
        assert cache.get_reply("missing") is None and counting.statements == 0  # a set lookup
        assert cache.get_reply("k0") == Completion(text="reply 0")
        first = counting.statements  # the size check and the one read of all values
        assert first == 2
        assert [cache.get_reply(f"k{i}").text for i in range(1, 5)] == [f"reply {i}" for i in range(1, 5)]
        assert counting.statements == first  # no query per hit
        cache.put_reply("new", Completion(text="fresh"))
        cache.flush()
        assert cache.get_reply("new") == Completion(text="fresh")  # written entries join the preload
        cache._db = counting.db  # type: ignore[assignment]


def test_large_tables_are_queried_per_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import robojudge.judges._cache as cache_module

    with ResponseCache(tmp_path) as cache:
        for i in range(3):
            cache.put_reply(f"k{i}", Completion(text=f"reply {i}"))
    monkeypatch.setattr(cache_module, "VALUE_PRELOAD_BYTES", 10)  # the three replies are larger
    with ResponseCache(tmp_path) as cache:
        counting = _CountingDb(cache._db)  # type: ignore[arg-type]
        cache._db = counting  # type: ignore[assignment]
        assert [cache.get_reply(f"k{i}").text for i in range(3)] == ["reply 0", "reply 1", "reply 2"]
        assert counting.statements == 1 + 3  # the size check, then one query per hit
        assert cache._values["replies"] is None
        cache._db = counting.db  # type: ignore[assignment]
    monkeypatch.setattr(cache_module, "VALUE_PRELOAD_BYTES", 2**20)
    monkeypatch.setattr(cache_module, "VALUE_PRELOAD_ROWS", 2)  # three rows: not even the size is asked
    with ResponseCache(tmp_path) as cache:
        counting = _CountingDb(cache._db)  # type: ignore[arg-type]
        cache._db = counting  # type: ignore[assignment]
        assert cache.get_reply("k1") == Completion(text="reply 1")
        assert counting.statements == 1 and cache._values["replies"] is None
        cache._db = counting.db  # type: ignore[assignment]


def test_a_write_that_fails_keeps_the_entries_for_the_run_and_says_why(tmp_path: Path) -> None:
    # Before, a failed batch write raised into a request (an error row), and one at close out of the run.
    cache = ResponseCache(tmp_path)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:  # writes fail from now on, as on a full disk
        db.execute("CREATE TRIGGER full BEFORE INSERT ON replies BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    for i in range(WRITE_BATCH + 1):
        cache.put_reply(f"k{i}", Completion(text=str(i)))
    cache.put_frames("f", {"hashes": ["a"]})
    cache.close()
    assert cache.write_error == "disk full" and cache.unsaved == WRITE_BATCH + 1  # replies only
    assert _rows(tmp_path) == 0


def test_unsaved_entries_are_read_for_the_rest_of_the_run(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("CREATE TRIGGER full BEFORE INSERT ON replies BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    cache.put_reply("k", Completion(text="kept"))
    cache.flush()
    assert cache.unsaved == 1 and cache.get_reply("k") == Completion(text="kept")
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:  # space again: the next write takes it
        db.execute("DROP TRIGGER full")
    cache.put_reply("k", Completion(text="new"))
    cache.flush()
    assert cache.unsaved == 0 and cache.get_reply("k") == Completion(text="new")
    cache.close()
    assert _rows(tmp_path) == 1


def test_a_cache_that_cannot_be_opened_names_its_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ResponseCacheError, match=r"cannot open the judge response cache in .*file/c "
                       r"\(Not a directory\): give a writable folder") as info:
        ResponseCache(tmp_path / "file" / "c")
    assert info.value.folder == tmp_path / "file" / "c" and not info.value.default
