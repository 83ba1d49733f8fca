"""File digests: content hashes, cached across processes by path and stat, never trusted too early."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from robojudge.run import _filehash
from robojudge.run._filehash import CACHE_FILE, FileHasher, default_hasher, file_digest, tree_digest


def _blake(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled 50 ms after their last change (instead of 2 s), so tests need not wait."""
    monkeypatch.setattr(_filehash, "RACY_NS", 50_000_000)


def test_digest_is_the_content_hash(tmp_path: Path) -> None:
    f = tmp_path / "a.bin"
    data = os.urandom(3 * (1 << 20) + 17)  # several read chunks
    f.write_bytes(data)
    hasher = FileHasher(None)
    assert hasher.digest(f) == _blake(data)
    assert hasher.digest(tmp_path / "nope.mp4") == "missing"


def test_a_second_process_reads_digests_from_the_cache(tmp_path: Path, settled: None) -> None:
    files = []
    for n in range(5):
        f = tmp_path / f"v{n}.mp4"
        f.write_bytes(os.urandom(1000 + n))
        files.append(f)
    time.sleep(0.1)
    cold = FileHasher(tmp_path / "cache")
    digests = [cold.digest(f) for f in files]
    assert cold.hashed == 5
    assert [cold.digest(f) for f in files] == digests and cold.hashed == 5  # memo
    cold.close()
    assert (tmp_path / "cache" / CACHE_FILE).is_file()

    warm = FileHasher(tmp_path / "cache")  # as a new process would
    assert [warm.digest(f) for f in files] == digests
    assert warm.hashed == 0


def test_a_rewritten_file_is_hashed_again(tmp_path: Path, settled: None) -> None:
    f = tmp_path / "v.mp4"
    f.write_bytes(b"a" * 100)
    time.sleep(0.1)
    first = FileHasher(tmp_path / "cache")
    old = first.digest(f)
    st = f.stat()
    f.write_bytes(b"b" * 100)  # same size; and put the old modification time back
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert first.digest(f) == _blake(b"b" * 100) != old  # the change time still differs
    again = FileHasher(tmp_path / "cache")
    assert again.digest(f) == _blake(b"b" * 100)


def test_a_digest_taken_right_after_a_write_is_not_trusted_later(tmp_path: Path) -> None:
    f = tmp_path / "v.mp4"
    f.write_bytes(b"fresh")
    FileHasher(tmp_path / "cache").digest(f)  # within 2 s of the write: racy
    later = FileHasher(tmp_path / "cache")
    assert later.digest(f) == _blake(b"fresh")
    assert later.hashed == 1


def test_a_file_dated_in_the_future_is_read_once(tmp_path: Path, settled: None) -> None:
    """A modification time ahead of the clock (a tar from a host ahead, ``touch -d``) made every run hash
    the file again until that date: the racy check counted it as the last change."""
    f = tmp_path / "v.mp4"
    f.write_bytes(b"from the future")
    ahead = time.time_ns() + 86_400 * 10**9
    os.utime(f, ns=(ahead, ahead))
    time.sleep(0.1)
    FileHasher(tmp_path / "cache").digest(f)
    later = FileHasher(tmp_path / "cache")
    assert later.digest(f) == _blake(b"from the future") and later.hashed == 0
    f.write_bytes(b"from the future, changed")  # a write still sets both times now
    os.utime(f, ns=(ahead, ahead))
    assert FileHasher(tmp_path / "cache").digest(f) == _blake(b"from the future, changed")


def test_frame_folder_digest(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    for n in range(3):
        (folder / f"f{n}.png").write_bytes(bytes([n]) * 10)
    hasher = FileHasher(None)
    base = hasher.digest(folder)
    (folder / ".hidden.png").write_bytes(b"x")
    (folder / "notes.txt").write_text("x")
    assert hasher.digest(folder) == base
    (folder / "fps.txt").write_text("10\n")
    with_rate = hasher.digest(folder)
    assert with_rate != base
    (folder / "f1.png").write_bytes(b"changed")
    assert hasher.digest(folder) != with_rate
    (folder / "f1.png").rename(folder / "f9.png")
    assert hasher.digest(folder) not in (base, with_rate)


def test_an_unusable_cache_folder_only_costs_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    f = tmp_path / "v.mp4"
    f.write_bytes(b"data")
    hasher = FileHasher(blocker / "cache")
    assert hasher.digest(f) == _blake(b"data")


def test_default_hasher_follows_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "one"))
    f = tmp_path / "v.mp4"
    f.write_bytes(b"data")
    assert file_digest(f) == _blake(b"data")
    assert default_hasher().folder == tmp_path / "one"
    assert (tmp_path / "one" / CACHE_FILE).is_file()
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "two"))
    assert default_hasher().folder == tmp_path / "two"


def test_a_file_that_keeps_changing_while_read_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file being written while it is hashed gets a few more reads, then counts as unreadable
    (it used to be re-hashed by recursion, without limit)."""
    f = tmp_path / "growing.mp4"
    f.write_bytes(b"start")
    read = _filehash._hash_bytes
    reads = []

    def read_while_appending(path: Path) -> str:
        reads.append(path)
        out = read(path)
        with path.open("ab") as fh:  # a writer appends while we read: size and times change
            fh.write(b"more")
        return out

    monkeypatch.setattr(_filehash, "_hash_bytes", read_while_appending)
    hasher = FileHasher(tmp_path / "cache")
    assert hasher.digest(f) == "unreadable"
    assert len(reads) == _filehash.HASH_ATTEMPTS and hasher.hashed == 0
    monkeypatch.setattr(_filehash, "_hash_bytes", read)  # the writer is done
    assert hasher.digest(f) == _blake(f.read_bytes())


def test_a_file_that_changes_once_while_read_gets_the_new_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "v.mp4"
    f.write_bytes(b"old")
    read = _filehash._hash_bytes
    calls = []

    def read_then_rewrite_once(path: Path) -> str:
        out = read(path)
        if not calls:
            path.write_bytes(b"new content")
        calls.append(path)
        return out

    monkeypatch.setattr(_filehash, "_hash_bytes", read_then_rewrite_once)
    assert FileHasher(None).digest(f) == _blake(b"new content")
    assert len(calls) == 2


def test_a_file_deleted_while_hashed_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "v.mp4"
    f.write_bytes(b"data")
    read = _filehash._hash_bytes

    def delete_first(path: Path) -> str:
        path.unlink()  # the drive went away between the stat and the read
        return read(path)

    monkeypatch.setattr(_filehash, "_hash_bytes", delete_first)
    assert FileHasher(None).digest(f) == "missing"


def test_names_no_file_system_accepts_are_unreadable_not_errors(tmp_path: Path) -> None:
    hasher = FileHasher(None)
    assert hasher.digest(tmp_path / ("x" * 300)) == "unreadable"  # over NAME_MAX: ENAMETOOLONG
    assert hasher.digest("a\0b") == "unreadable"  # Python refuses NUL with ValueError


def test_a_name_that_is_not_utf8_is_hashed_and_cached(tmp_path: Path, settled: None) -> None:
    # Before: the cache query could not encode the name's surrogate escape (UnicodeEncodeError), nor
    # could the folder digest, and planning failed for the whole manifest.
    folder = tmp_path / "frames"
    folder.mkdir()
    latin1 = folder / os.fsdecode(b"f1\xe9.png")
    (folder / "f0.png").write_bytes(b"a")
    latin1.write_bytes(b"b")
    time.sleep(0.1)
    cold = FileHasher(tmp_path / "cache")
    assert cold.digest(latin1) == _blake(b"b")
    base = cold.digest(folder)
    cold.close()
    warm = FileHasher(tmp_path / "cache")  # as a new process would
    assert (warm.digest(latin1), warm.digest(folder), warm.hashed) == (_blake(b"b"), base, 0)
    latin1.rename(folder / os.fsdecode(b"f1\xea.png"))  # another byte: another name
    assert warm.digest(folder) != base


def test_a_tree_with_a_name_that_is_not_utf8_has_a_digest(tmp_path: Path) -> None:
    # Before: tree_digest encoded the relative name as UTF-8 and raised on the surrogate escape.
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / os.fsdecode(b"w\xe9.bin")).write_bytes(b"w")
    first = tree_digest(tmp_path / "weights")
    (tmp_path / "weights" / os.fsdecode(b"w\xe9.bin")).rename(tmp_path / "weights" / "w.bin")
    assert first != tree_digest(tmp_path / "weights") and first != "unreadable"


def test_a_frame_folder_s_digest_does_not_depend_on_the_listing_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another file system (or a copy made by another tool) lists a folder's files in another order: the
    same frames are the same input, so a copied frame-folder suite keeps its results."""
    names = [f"frame_{i:03d}.png" for i in range(12)]
    folder = tmp_path / "frames"
    folder.mkdir()
    for n in names:
        (folder / n).write_bytes(n.encode())
    in_order = FileHasher(None).digest(folder)

    real_scandir = os.scandir

    class Reversed:
        def __init__(self, path: object) -> None:
            self._it = real_scandir(path)  # type: ignore[call-overload]
            self._entries = list(self._it)[::-1]

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self._entries

        def __exit__(self, *exc: object) -> None:
            self._it.close()

        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter(self._entries)

    monkeypatch.setattr(os, "scandir", Reversed)
    listed = [e.name for e in real_scandir(folder)]
    assert [e.name for e in os.scandir(folder)] == listed[::-1] != listed
    assert FileHasher(None).digest(folder) == in_order
