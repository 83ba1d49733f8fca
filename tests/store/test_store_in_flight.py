"""The store's notes of items in flight (``ResultStore.note_in_flight``), on SQLite and PostgreSQL."""

from __future__ import annotations

from robojudge.store import ResultRow, ResultStore


def test_notes_are_kept_replaced_and_cleared(store_url: str) -> None:
    with ResultStore(store_url) as store:
        assert store.in_flight() == {}
        store.note_in_flight("a", ["m1", "m2"])
        store.note_in_flight("b/ep 1", ["m1"])
        store.note_in_flight("a", ["m3"])  # noted again: the latest metrics, still one note
        assert store.in_flight() == {"a": ["m3"], "b/ep 1": ["m1"]}
        store.add([ResultRow("a", "m3", "h", "1", "ok", 1.0)])
        store.clear_in_flight(["a", "never-noted"])  # an id without a note is ignored
        assert store.in_flight() == {"b/ep 1": ["m1"]}
        store.clear_in_flight([])
        assert store.count() == 1 and store.manifests() == []  # rows and manifests are apart from notes
    with ResultStore(store_url, read_only=True) as reader:  # `results status` reads them read-only
        assert reader.in_flight() == {"b/ep 1": ["m1"]}


def test_many_notes_clear_in_one_call(store_url: str) -> None:
    ids = [f"item{i:04d}" for i in range(1200)]  # more than one IN (...) chunk
    with ResultStore(store_url) as store:
        for i in ids[:3]:
            store.note_in_flight(i, ["m"])
        store.note_in_flight(ids[-1], ["m"])
        store.clear_in_flight(ids)
        assert store.in_flight() == {}
