"""Text a database cannot hold as it is: NUL (PostgreSQL), a lone surrogate (no UTF-8 encoding), and item
ids too long for PostgreSQL's index of current rows. Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from robojudge.store import ResultRow, ResultStore, StoreError
from robojudge.suite import MAX_ITEM_ID_BYTES


@pytest.fixture
def store(store_url: str) -> Iterator[ResultStore]:
    with ResultStore(store_url) as s:
        yield s


def _libraries_row(item: str, details: dict[str, object]) -> ResultRow:
    return ResultRow(item, "m", "c", "1", "ok", 1.0, details={"libraries": "numpy 1", **details})


def test_nul_in_details_leaves_the_library_check_working(store: ResultStore) -> None:
    # Before: PostgreSQL stored NUL as \u0000 in json, and the next run's library check (->>) failed on it.
    store.add([_libraries_row("a", {"reason": "x\x00y"}), _libraries_row("b", {"k\x00": "v"}),
               ResultRow("c", "m", "c", "1", "ok", 1.0, details={"libraries": "num\x00py 1"})])
    assert store.count_other_libraries("m", "c", "1", "numpy 2", ["a", "b", "c"]) == 3
    assert store.count_other_libraries("m", "c", "1", "numpy 1", ["a", "b", "c"]) == 1  # c's record differs
    details = {r.item_id: r.details for r in store.rows()}
    assert details["a"] == {"libraries": "numpy 1", "reason": "x\\x00y"}  # as the error column writes it
    assert details["b"] == {"libraries": "numpy 1", "k\\x00": "v"}
    assert store.supersede_other_libraries("m", "c", "1", "numpy 2", ["a", "b", "c"]) == 3


def test_a_row_stored_with_nul_before_is_left_out_of_the_library_check(
    store: ResultStore, store_url: str
) -> None:
    # Before: one such row (written by an older robojudge) made every later `score` of its metric fail.
    store.add([_libraries_row("old", {}), _libraries_row("new", {})])
    engine = create_engine(make_url(store_url))
    with engine.begin() as conn:  # the JSON text an older robojudge wrote
        conn.execute(text("UPDATE robojudge_results SET details = :d WHERE item_id = 'old'"),
                     {"d": '{"libraries":"numpy 1","reason":"x\\u0000y"}'})
    engine.dispose()
    assert store.count_other_libraries("m", "c", "1", "numpy 2", ["old", "new"]) == 1
    assert store.supersede_other_libraries("m", "c", "1", "numpy 2", ["old", "new"]) == 1


def test_lone_surrogates_are_stored_written_out(store: ResultStore) -> None:
    # Before: the driver could not encode '\udcff' (UnicodeEncodeError) and the whole batch was lost.
    judged = ResultRow("a", "judge:j:pa", "c", "1", "ok", 4.0, details={"reasoning": "odd \udcff byte",
                                                                         "k\udcfe": ["\udcfd"]})
    failed = ResultRow("b", "pixel", "c", "1", "error", None, error="cannot read image frame_002\udcff.png")
    assert store.add([judged, failed, ResultRow("c", "pixel", "c", "1", "ok", 1.0)]) == 3
    rows = {r.item_id: r for r in store.rows()}
    assert rows["a"].details == {"reasoning": "odd \\udcff byte", "k\\udcfe": ["\\udcfd"]}
    assert rows["b"].error == "cannot read image frame_002\\udcff.png"


def test_an_id_that_cannot_be_encoded_is_a_store_error_naming_it(store: ResultStore) -> None:
    # Before: a bare UnicodeEncodeError that named neither the store nor the text.
    with pytest.raises(StoreError, match=r"cannot store results in .*: 'ep\\udcff7' holds '\\udcff' at "
                                         r"position 2, a character without a UTF-8 encoding"):
        store.add([ResultRow("ep\udcff7", "pixel", "c", "1", "ok", 1.0)])
    assert store.count() == 0


def test_the_longest_item_id_is_stored(store: ResultStore) -> None:
    # PostgreSQL's unique index holds 2,704 bytes per entry; a 3,000-character id failed every run there.
    rng = random.Random(7)  # letters that do not compress, as a random id would not
    longest = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                      for _ in range(MAX_ITEM_ID_BYTES))
    metric = "judge:" + "a_rather_long_judge_name" * 4 + ":physical_adherence"
    assert store.add([ResultRow(longest, metric, "0123456789abcdef", "12", "ok", 1.0)]) == 1
    assert store.done_item_ids(metric, "0123456789abcdef", "12") == {longest}
