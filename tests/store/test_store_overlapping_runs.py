"""What the store gives runs that overlap, on SQLite and PostgreSQL: a manifest noted and checked as one
step (``claim_manifest``), notes in flight that tell a live process from an ended one, and the rows an
``add`` actually inserted (``add_new``)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from _in_flight import end, note_from_ended_process, noting_process
from robojudge.store import ResultRow, ResultStore, StoreError
from robojudge.store import _store as store_module

HAVE_PROC = Path("/proc/self/stat").exists()


# -- manifests: noted, then checked against those noted before ---------------------------------------


def test_a_claim_sees_the_manifests_noted_before_it_and_not_after(store_url: str, tmp_path: Path) -> None:
    a, b, c = (tmp_path.resolve() / f"{n}.jsonl" for n in "abc")
    with ResultStore(store_url) as one, ResultStore(store_url) as two:
        one.note_manifest(a)
        with one.claim_manifest(b) as before_b:
            # another run's claim while b is being checked: b is noted already, so c sees it
            with two.claim_manifest(c) as before_c:
                assert sorted(before_c) == [a, b]
            assert before_b == [a]  # c came after b: b's check never sees it
        assert {p for p, _ in one.manifests()} == {a, b, c}


def test_a_refused_claim_is_taken_back_and_an_earlier_note_put_back(store_url: str, tmp_path: Path) -> None:
    a, b = (tmp_path.resolve() / f"{n}.jsonl" for n in "ab")
    with ResultStore(store_url) as store:
        with pytest.raises(ValueError, match="clash"), store.claim_manifest(a):
            raise ValueError("clash")
        assert store.manifests() == []  # never noted before: no note left
        store.note_manifest(b)
        noted = store.manifests()
        with pytest.raises(KeyboardInterrupt), store.claim_manifest(b):
            assert store.manifests()[0][1] > noted[0][1]  # noted anew while it is checked
            raise KeyboardInterrupt
        assert store.manifests() == noted  # the earlier note, time and all


def test_taking_back_leaves_a_note_another_run_wrote_since(store_url: str, tmp_path: Path) -> None:
    a = tmp_path.resolve() / "a.jsonl"
    with ResultStore(store_url) as one, ResultStore(store_url) as two:
        with pytest.raises(ValueError), one.claim_manifest(a):
            with two.claim_manifest(a):  # the same manifest run again meanwhile, accepted
                pass
            raise ValueError("refused")
        assert [p for p, _ in one.manifests()] == [a]


def test_claims_at_once_are_ordered_by_the_store(store_url: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two claims in two threads: A is stopped after it read the notes and before it commits; B's claim
    must wait for A's (SQLite: the write lock; PostgreSQL: the lock on the notes' table), so B sees A.
    Without that wait both would read only the older note, and neither would see the other."""
    x, a, b = (tmp_path.resolve() / f"{n}.jsonl" for n in ("x", "a", "b"))
    with ResultStore(store_url) as store:
        store.note_manifest(x)  # an older note, so that reading the notes parses one
    read, go = threading.Event(), threading.Event()
    parse = store_module._manifest_note

    def paused(value: str) -> Any:
        if threading.current_thread().name == "A" and not read.is_set():
            read.set()
            assert go.wait(60)
        return parse(value)

    monkeypatch.setattr(store_module, "_manifest_note", paused)
    seen: dict[str, list[Path]] = {}
    errors: list[BaseException] = []

    def claim(name: str, manifest: Path) -> None:
        try:
            with ResultStore(store_url) as s, s.claim_manifest(manifest) as before:
                seen[name] = sorted(before)
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)

    first = threading.Thread(target=claim, args=("A", a), name="A")
    first.start()
    assert read.wait(60)
    second = threading.Thread(target=claim, args=("B", b), name="B")
    second.start()
    if store_url.startswith("postgresql"):
        _wait_for_a_lock_wait(store_url)
    go.set()
    first.join(60)
    second.join(60)
    assert not errors and seen == {"A": [x], "B": [a, x]}


def _wait_for_a_lock_wait(url: str) -> None:
    """Until a PostgreSQL session waits for a lock on LOCK TABLE (B's claim, while A holds it)."""
    engine = create_engine(url)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                waiting = conn.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE 'LOCK TABLE robojudge_meta%'")).scalar_one()
            if waiting:
                return
            time.sleep(0.05)
        raise AssertionError("the second claim never waited for the first one's lock")
    finally:
        engine.dispose()


# -- notes in flight: whose process is still running -------------------------------------------------


def test_a_note_of_a_running_process_is_not_taken_for_a_crash(store_url: str) -> None:
    with ResultStore(store_url) as store, noting_process(store_url, {"b": ["m1"]}) as other:
        store.note_in_flight("a", ["m1"])  # this process: running too
        store.note_in_flight("b", ["m2"])  # both runs compute b: two notes, neither replaces the other
        assert store.in_flight() == {"a": ["m1"], "b": ["m1", "m2"]}  # `results status` lists them all
        assert store.in_flight(ended=True) == {}
        store.clear_in_flight(["a", "b"])  # this process's notes only
        assert store.in_flight() == {"b": ["m1"]}
        end(other)  # killed while computing b
        assert store.in_flight(ended=True) == {"b": ["m1"]}
        store.clear_in_flight(["b"])  # an ended process's note on b is out of date once b is stored
        assert store.in_flight() == {}


def test_notes_of_ended_older_or_other_hosts_processes_count_as_ended(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    note_from_ended_process(store_url, {"killed": ["m"]})
    with ResultStore(store_url) as store:
        me = store_module._this_process()
        with monkeypatch.context() as m:  # a run on another host: its process cannot be asked from here
            m.setattr(store_module, "_this_process", lambda: {**me, "host": "elsewhere"})
            store.note_in_flight("remote", ["m"])
        old = json.dumps({"item_id": "old", "metrics": ["m"], "pid": os.getpid(), "at": "2026-01-01"})
        with store._write() as conn:  # a note of a robojudge before notes named their host (this pid!)
            conn.execute(text("INSERT INTO robojudge_meta (key, value) VALUES (:k, :v)"),
                         {"k": "inflight:0123456789abcdef01234567", "v": old})
        store.note_in_flight("mine", ["m"])
        assert store.in_flight(ended=True) == {"killed": ["m"], "remote": ["m"], "old": ["m"]}
        store.clear_in_flight(["killed", "remote", "old", "mine"])
        assert store.in_flight() == {}


@pytest.mark.skipif(not HAVE_PROC, reason="start times are read from /proc (Linux)")
def test_a_reused_pid_is_told_apart_by_the_start_time(store_url: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with ResultStore(store_url) as store:
        me = store_module._this_process()
        assert isinstance(me["started"], int) and me["boot"]
        with monkeypatch.context() as m:  # this pid, noted by a process that started at another time
            m.setattr(store_module, "_this_process", lambda: {**me, "started": me["started"] - 1})
            store.note_in_flight("before", ["m"])
        store.note_in_flight("now", ["m"])
        assert store.in_flight(ended=True) == {"before": ["m"]}


# -- add_new: the rows actually stored --------------------------------------------------------------


def _row(item_id: str, value: float, fingerprint: str = "f1") -> ResultRow:
    return ResultRow(item_id, "m", "c", "1", "ok", value, fingerprint=fingerprint)


def test_add_new_returns_the_rows_it_inserted(store_url: str) -> None:
    with ResultStore(store_url) as one, ResultStore(store_url) as two:
        assert one.add_new([_row("a", 1.0), _row("b", 1.0)]) == [_row("a", 1.0), _row("b", 1.0)]
        # another run's rows: a is stored from the same inputs (its value dropped), c is new, b's
        # inputs changed (it supersedes), and the second row for c is not stored
        rows = [_row("c", 2.0), _row("a", 2.0), _row("b", 2.0, "f2"), _row("c", 3.0)]
        assert two.add_new(rows) == [_row("c", 2.0), _row("b", 2.0, "f2")]
        assert two.add([_row("a", 4.0)]) == 0 and two.add_new([]) == []
        assert {r.item_id: r.value for r in one.rows()} == {"a": 1.0, "b": 2.0, "c": 2.0}


# -- a PostgreSQL URL without the driver ---------------------------------------------------------------


def test_a_postgresql_url_without_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the postgres extra were not installed
    with pytest.raises(StoreError) as info:
        ResultStore("postgresql://robojudge:secret@db.example/results")
    message = str(info.value)
    assert "PostgreSQL needs the psycopg driver" in message
    assert "pip install '.[postgres]' in a robojudge checkout" in message
    assert message.startswith("cannot use database postgresql+psycopg://robojudge:***@db.example/results")
    assert "secret" not in message


def test_another_postgresql_driver_is_named_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # the postgres extra installs psycopg (3), not psycopg2: the message must not promise it does
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    with pytest.raises(StoreError) as info:
        ResultStore("postgresql+psycopg2://u@db.example/results")
    message = str(info.value)
    assert "PostgreSQL needs the psycopg2 driver" in message and "postgresql+psycopg://" in message


def test_a_value_replaces_an_error_of_its_key_and_inputs_but_nothing_else(store_url: str) -> None:
    # Of two overlapping runs, one failing an item (a memory limit) and one computing it, the error
    # stored first kept the value out, and every later run skipped the item as stored.
    def row(status: str, value: float | None, fingerprint: str = "fp1", item: str = "a") -> ResultRow:
        return ResultRow(item_id=item, metric="m", config_hash="c", version="1", status=status, value=value,
                         fingerprint=fingerprint, error=None if status == "ok" else "out of memory")

    with ResultStore(store_url) as store:
        assert store.add_new([row("error", None)]) == [row("error", None)]
        assert [r.value for r in store.add_new([row("ok", 0.5)])] == [0.5]
        assert [(r.status, r.value) for r in store.rows()] == [("ok", 0.5)]
        assert [r.status for r in store.rows(include_superseded=True) if r.superseded_at] == ["error"]
        assert store.add_new([row("error", None)]) == []  # an error never replaces a value
        assert store.add_new([row("ok", 0.7)]) == []  # of two values the first stays
        # without fingerprints too
        store.add_new([row("error", None, fingerprint="", item="b")])
        assert len(store.add_new([row("ok", 1.0, fingerprint="", item="b")])) == 1
        assert {r.item_id: r.value for r in store.rows()} == {"a": 0.5, "b": 1.0}
        # a value of unknown inputs does not replace an error of known ones (the review)
        store.add_new([row("error", None, fingerprint="fp-old", item="c")])
        assert store.add_new([row("ok", 2.0, fingerprint="", item="c")]) == []
        assert [r.status for r in store.rows() if r.item_id == "c"] == ["error"]
