"""A received judge reply is in the cache file soon after it came (``FLUSH_AFTER_S``), not only once a
batch fills or the cache closes: a judge killed outright (``kill -9``, out of memory) keeps the replies of
its unfinished items, and the resumed run does not request them again."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from robojudge.judges import Completion, ResponseCache, _cache
from robojudge.judges._cache import CACHE_FILE


def _stored(folder: Path) -> set[str]:
    with sqlite3.connect(folder / CACHE_FILE) as db:
        return {k for (k,) in db.execute("SELECT key FROM replies")}


def test_on_an_event_loop_a_timer_writes_the_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache, "FLUSH_AFTER_S", 0.05)
    cache = ResponseCache(tmp_path)

    async def replies() -> None:
        for i in range(3):
            cache.put_reply(f"k{i}", Completion(text=str(i)))
        assert _stored(tmp_path) == set() and cache.flushes == 0  # buffered: one transaction for the three
        # The timer was set at the first reply, before this sleep began: it is due first, and no other
        # reply comes to trigger a write.
        await asyncio.sleep(0.3)
        assert _stored(tmp_path) == {"k0", "k1", "k2"} and cache.flushes == 1
        cache.put_reply("k3", Completion(text="3"))  # a later reply: a timer of its own
        await asyncio.sleep(0.3)
        assert "k3" in _stored(tmp_path) and cache.flushes == 2

    try:
        asyncio.run(replies())
    finally:
        cache.close()


def test_outside_an_event_loop_the_next_entry_past_the_time_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cache, "FLUSH_AFTER_S", 0.05)
    with ResponseCache(tmp_path) as cache:
        cache.put_reply("k0", Completion(text="0"))
        assert _stored(tmp_path) == set()
        time.sleep(0.1)
        cache.put_reply("k1", Completion(text="1"))
        assert _stored(tmp_path) == {"k0", "k1"}


KILLED = textwrap.dedent("""
    import asyncio, sys
    from robojudge.judges import Completion, ResponseCache, _cache

    _cache.FLUSH_AFTER_S = 0.2
    cache = ResponseCache(sys.argv[1])

    async def judge():
        cache.put_reply("first", Completion(text="received before the kill"))  # item 1, rubric 1 answered
        await asyncio.sleep(1.0)  # item 1, rubric 2 still in flight
        print("waiting", flush=True)
        await asyncio.sleep(600)

    asyncio.run(judge())
""")


def test_a_reply_received_before_a_kill_is_kept(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "waiting"
    finally:
        proc.kill()  # SIGKILL: no flush, no close
        proc.wait(60)
    with ResponseCache(tmp_path) as cache:
        assert cache.get_reply("first") == Completion(text="received before the kill")
