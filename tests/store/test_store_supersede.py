"""Rows tied to their inputs: a changed fingerprint supersedes the stored row, which is kept."""

from __future__ import annotations

import pytest

from robojudge.store import ResultRow, ResultStore, put_rows


def ok(item: str, value: float, fp: str, *, metric: str = "ssim") -> ResultRow:
    return ResultRow(item, metric, "c1", "1", "ok", value, fingerprint=fp)


@pytest.fixture
def store(store_url: str):  # type: ignore[no-untyped-def]
    with ResultStore(store_url) as s:
        yield s


def test_same_fingerprint_is_a_noop(store: ResultStore) -> None:
    assert store.add([ok("a", 1.0, "f1")]) == 1
    assert store.add([ok("a", 2.0, "f1")]) == 0
    (row,) = store.rows(include_superseded=True)
    assert (row.value, row.fingerprint, row.current) == (1.0, "f1", True)


def test_changed_fingerprint_supersedes_and_keeps_the_old_row(store: ResultStore) -> None:
    store.add([ok("a", 1.0, "f1"), ok("b", 5.0, "g1")])
    assert store.add([ok("a", 2.0, "f2"), ok("b", 6.0, "g1")]) == 1
    current = {r.item_id: r for r in store.rows()}
    assert (current["a"].value, current["a"].fingerprint) == (2.0, "f2")
    assert current["b"].value == 5.0
    every = store.rows(include_superseded=True)
    assert len(every) == 3
    (old,) = [r for r in every if not r.current]
    assert (old.item_id, old.value, old.fingerprint) == ("a", 1.0, "f1")
    assert old.superseded_at is not None and old.created_at is not None
    assert old.superseded_at >= old.created_at
    assert store.count() == 2 and store.count(include_superseded=True) == 3
    assert store.count(metric="ssim", status="ok", include_superseded=True) == 3
    assert store.done_item_ids("ssim", "c1", "1") == {"a", "b"}
    assert store.current_fingerprints("ssim", "c1", "1") == {"a": "f2", "b": "g1"}
    # Back to the first inputs: a third row, the second is superseded in turn.
    assert store.add([ok("a", 1.0, "f1")]) == 1
    assert [r.fingerprint for r in store.rows(metric="ssim") if r.item_id == "a"] == ["f1"]
    assert store.count(include_superseded=True) == 4


def test_a_row_without_fingerprint_never_supersedes(store: ResultStore) -> None:
    store.add([ok("a", 1.0, "f1")])
    assert store.add([ok("a", 2.0, "")]) == 0
    assert [(r.value, r.fingerprint) for r in store.rows(include_superseded=True)] == [(1.0, "f1")]


def test_an_unknown_fingerprint_is_superseded_by_a_known_one(store: ResultStore) -> None:
    store.add([ok("a", 1.0, "")])  # e.g. a row from a version 1 store
    assert store.add([ok("a", 2.0, "f1")]) == 1
    assert [r.value for r in store.rows()] == [2.0]


def test_superseded_rows_are_ignored_by_clear_errors(store: ResultStore) -> None:
    store.add([ResultRow("a", "ssim", "c1", "1", "error", None, error="bad video", fingerprint="f1")])
    store.add([ResultRow("a", "ssim", "c1", "1", "error", None, error="still bad", fingerprint="f2")])
    assert store.clear_errors("ssim", "c1", "1") == 1
    assert store.count() == 0
    (kept,) = store.rows(include_superseded=True)
    assert kept.error == "bad video" and not kept.current


def test_one_batch_supersedes_many(store: ResultStore) -> None:
    store.add([ok(f"i{n:04d}", 1.0, "old") for n in range(1200)])
    assert store.add([ok(f"i{n:04d}", 2.0, "new") for n in range(0, 1200, 2)]) == 600
    assert store.count() == 1200 and store.count(include_superseded=True) == 1800
    assert sum(r.value == 2.0 for r in store.rows()) == 600  # type: ignore[misc]


def test_adding_a_superseded_row_is_refused(store: ResultStore) -> None:
    from datetime import UTC, datetime

    row = ResultRow("a", "ssim", "c1", "1", "ok", 1.0, superseded_at=datetime.now(UTC))
    with pytest.raises(ValueError, match="superseded"):
        store.add([row])


def test_put_rows_replace_keeps_the_old_value_superseded(store: ResultStore) -> None:
    store.add([ok("a", 1.0, "")])
    outcome = put_rows(store, [ok("a", 2.0, "")], replace=True)
    assert [r.value for r in outcome.replaced] == [2.0]
    assert [r.value for r in store.rows()] == [2.0]
    assert sorted(r.value for r in store.rows(include_superseded=True)) == [1.0, 2.0]  # type: ignore[type-var]
    # The next put compares with the current row only.
    again = put_rows(store, [ok("a", 2.0, "")])
    assert len(again.unchanged) == 1


def test_move_rows_stores_them_under_another_configuration_and_supersedes_the_originals(
    store: ResultStore,
) -> None:
    rows = [ResultRow(i, "kiva", "old", "1", "ok", v, details={"n": 1}, config={"reader": "/a/r"},
                      fingerprint=f"f{i}") for i, v in (("a", 1.5), ("b", 2.5), ("c", 3.5))]
    mine = ResultRow("c", "kiva", "new", "1", "ok", 9.0, config={"reader": "/b/r"}, fingerprint="x")
    store.add([*rows, mine])
    assert store.configurations("kiva", "1") == {"old": {"reader": "/a/r"}, "new": {"reader": "/b/r"}}
    moved = store.move_rows("kiva", "1", "old", "new", {"reader": "/b/r"}, ["a", "b", "c", "zz"],
                            note={"taken_over_from": "old"})
    assert moved == ["a", "b"]  # c already has a row of its own there: both are left as they are
    current = {(r.item_id, r.config_hash): r for r in store.rows()}
    assert sorted(current) == [("a", "new"), ("b", "new"), ("c", "new"), ("c", "old")]
    a = current[("a", "new")]
    assert (a.value, a.fingerprint, a.config, a.details) == (1.5, "fa", {"reader": "/b/r"},
                                                             {"n": 1, "taken_over_from": "old"})
    assert a.created_at == next(r for r in store.rows(include_superseded=True)
                                if r.key == ("a", "kiva", "old", "1")).created_at  # when it was computed
    assert current[("c", "new")].value == 9.0
    assert sorted(r.item_id for r in store.rows(include_superseded=True) if not r.current) == ["a", "b"]
    assert store.move_rows("kiva", "1", "old", "new", {"reader": "/b/r"}, ["a"]) == []
