"""The user cache files looked at and emptied (audit diskfull F5): the judge response cache and the
file-hash cache grew with every run, and nothing showed their size or removed them."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robojudge.judges import Completion, ResponseCache
from robojudge.run import CacheFileError, cache_states, clear_caches
from robojudge.run._filehash import FileHasher

DAY = 86400.0


def _age(db: Path, table: str, column: str, keys: list[str], days: float, scale: float = 1.0) -> None:
    """Date entries back as if written ``days`` ago (the file's own timestamps, as a run wrote them)."""
    with sqlite3.connect(db) as con:
        key = "key" if table != "digests" else "path"
        con.executemany(f"UPDATE {table} SET {column} = {column} - ? WHERE {key} = ?",
                        [(days * DAY * scale, k) for k in keys])


def _fill(folder: Path, tmp_path: Path) -> list[Path]:
    with ResponseCache(folder) as cache:
        for i in range(40):
            cache.put_reply(f"k{i}", Completion(text=f"reply {i} " + "x" * 2000))
        cache.put_frames("v0", {"hashes": ["a"], "video_seconds": 1.0})
        cache.put_frames("v1", {"hashes": ["b"], "video_seconds": 1.0})
    files = []
    for n in range(3):
        f = tmp_path / f"in{n}.mp4"
        f.write_bytes(os.urandom(500 + n))
        files.append(f)
    hasher = FileHasher(folder)
    for f in files:
        hasher.digest(f)
    hasher.close()
    return files


def test_states_say_where_how_big_and_how_many(tmp_path: Path, _cache_dir: Path) -> None:
    missing = cache_states()
    assert [(s.name, s.path, s.exists, s.size) for s in missing] == [
        ("judge response cache", _cache_dir / "judge-cache.sqlite", False, 0),
        ("file-hash cache", _cache_dir / "file-hashes.sqlite", False, 0)]
    assert not _cache_dir.exists()  # looking creates nothing
    before = time.time()
    _fill(_cache_dir, tmp_path)
    judge, hashes = cache_states()
    assert judge.entries == {"replies": 40, "frames": 2} and hashes.entries == {"digests": 3}
    assert judge.size >= 40 * 2000 and judge.problem is None
    assert judge.oldest is not None and before - 1 <= judge.oldest <= (judge.newest or 0) <= time.time() + 1
    assert hashes.oldest is not None and before - 1 <= hashes.oldest <= time.time() + 1
    other = tmp_path / "elsewhere"
    assert [s.exists for s in cache_states(other)] == [False, False]  # a folder given is looked in


def test_looking_at_closed_caches_creates_no_file(tmp_path: Path, _cache_dir: Path) -> None:
    # A plain read-only open of a WAL file makes its -shm and -wal files: on a full disk the very write
    # this look is meant to avoid, and files beside the caches where the docs say nothing changes (review
    # rev29 F4). Through a link, the side files are looked for beside its target.
    _fill(_cache_dir, tmp_path)
    before = sorted(p.name for p in _cache_dir.iterdir())
    assert before == ["file-hashes.sqlite", "judge-cache.sqlite"]  # closed cleanly
    judge, hashes = cache_states()
    assert judge.entries == {"replies": 40, "frames": 2} and hashes.entries == {"digests": 3}
    assert sorted(p.name for p in _cache_dir.iterdir()) == before
    linked = tmp_path / "linked"
    linked.mkdir()
    for name in before:
        (linked / name).symlink_to(_cache_dir / name)
    assert [s.entries for s in cache_states(linked)] == [judge.entries, hashes.entries]
    assert sorted(p.name for p in _cache_dir.iterdir()) == before


def test_clearing_by_age_keeps_the_newer_entries_usable(tmp_path: Path, _cache_dir: Path) -> None:
    files = _fill(_cache_dir, tmp_path)
    _age(_cache_dir / "judge-cache.sqlite", "replies", "created", [f"k{i}" for i in range(30)], 40)
    _age(_cache_dir / "judge-cache.sqlite", "frames", "created", ["v0"], 40)
    _age(_cache_dir / "file-hashes.sqlite", "digests", "hashed_ns", [str(files[0])], 40, scale=1e9)
    size = cache_states()[0].size
    judge, hashes = clear_caches(older_than_days=30)
    assert (judge.removed, judge.kept, judge.whole_file) == ({"replies": 30, "frames": 1},
                                                             {"replies": 10, "frames": 1}, False)
    assert (hashes.removed, hashes.kept) == ({"digests": 1}, {"digests": 2})
    assert judge.size_before == size and judge.size_after < size / 2  # rewritten smaller
    assert judge.not_compacted is None
    with ResponseCache(_cache_dir) as cache:
        assert cache.get_reply("k3") is None
        assert cache.get_reply("k35") == Completion(text="reply 35 " + "x" * 2000)
        assert cache.get_frames("v0") is None and cache.get_frames("v1") is not None
    assert cache_states()[1].entries == {"digests": 2}
    # nothing older than 100 days: nothing removed
    assert [c.removed for c in clear_caches(older_than_days=100)] == [{"replies": 0, "frames": 0},
                                                                      {"digests": 0}]


def test_clearing_whole_files_one_or_both(tmp_path: Path, _cache_dir: Path) -> None:
    _fill(_cache_dir, tmp_path)
    open_cache = ResponseCache(_cache_dir)  # a judge run holding the file open meanwhile
    (only,) = clear_caches(judge=False)
    assert only.name == "file-hash cache" and only.whole_file and only.removed == {"digests": 3}
    assert (_cache_dir / "judge-cache.sqlite").exists() and not (_cache_dir / "file-hashes.sqlite").exists()
    (judge,) = clear_caches(hashes=False)
    assert judge.removed == {"replies": 40, "frames": 2} and judge.size_after == 0
    assert sorted(p.name for p in _cache_dir.iterdir()) == []  # -wal and -shm too
    open_cache.put_reply("late", Completion(text="y"))  # the open run goes on without an error
    open_cache.close()
    with ResponseCache(_cache_dir) as fresh:  # the next run starts an empty cache
        assert fresh.get_reply("k1") is None
    assert [c.removed for c in clear_caches()] == [{"replies": 0, "frames": 0}, {}]


def test_a_file_that_is_not_a_database_is_named_and_can_be_removed(_cache_dir: Path) -> None:
    _cache_dir.mkdir()
    (_cache_dir / "judge-cache.sqlite").write_bytes(b"not a database" * 100)
    judge = cache_states()[0]
    assert judge.exists and judge.size == 1400 and judge.problem == "file is not a database"
    with pytest.raises(CacheFileError, match=r"cannot remove entries from the judge response cache .*"
                       r"judge-cache.sqlite \(file is not a database\); removing the whole file"):
        clear_caches(older_than_days=1)
    assert clear_caches(hashes=False)[0].size_before == 1400
    assert not (_cache_dir / "judge-cache.sqlite").exists()
    with pytest.raises(ValueError, match="older_than_days must be a number of days >= 0"):
        clear_caches(older_than_days=float("nan"))



_FULL_DISK = """
import json, resource, signal, sys
from robojudge.run import CacheFileError, cache_states, clear_caches
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as ENOSPC would
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
out = {"entries": cache_states()[0].entries, "problem": cache_states()[0].problem}
try:
    clear_caches(hashes=False, older_than_days=1)
except CacheFileError as exc:
    out["by_age"] = str(exc)
out["whole"] = clear_caches(hashes=False)[0].removed
print(json.dumps(out))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file-size limit")
def test_a_full_disk_still_shows_and_removes_the_cache(tmp_path: Path, _cache_dir: Path) -> None:
    # No file may grow (a file-size limit, in a child process): a read-only open fails making its -shm
    # file ("disk I/O error", as on a full tmpfs), and a removal by age cannot write. Before, nothing
    # could say how big the cache was; now it is counted from the file alone, and removed whole.
    _fill(_cache_dir, tmp_path)
    for side in ("-wal", "-shm"):
        Path(f"{_cache_dir / 'judge-cache.sqlite'}{side}").unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", _FULL_DISK], capture_output=True, text=True, timeout=120,
                          env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["entries"], out["problem"]) == ({"replies": 40, "frames": 2}, None)
    assert "removing the whole file (without an age limit) needs no free space" in out["by_age"]
    assert out["whole"] == {"replies": 40, "frames": 2}
    assert not (_cache_dir / "judge-cache.sqlite").exists()
