"""The response cache: batched writes, in-memory key index, persistence across opens and processes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from robojudge.judges import Completion, ResponseCache
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
