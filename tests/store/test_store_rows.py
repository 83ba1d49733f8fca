"""Adding, reading and deleting results: identity, no overwrites, failures, NaN and JSON."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from robojudge.store import ResultRow, ResultStore


def ok(item: str, value: float | None, *, metric: str = "ssim", cfg: str = "c1", ver: str = "1") -> ResultRow:
    return ResultRow(item, metric, cfg, ver, "ok", value)


def err(
    item: str, message: str = "boom", *, metric: str = "ssim", cfg: str = "c1", ver: str = "1"
) -> ResultRow:
    return ResultRow(item, metric, cfg, ver, "error", None, error=message, duration_s=0.25)


@pytest.fixture
def store(store_url: str):  # type: ignore[no-untyped-def]
    with ResultStore(store_url) as s:
        yield s


def test_add_then_read_back(store: ResultStore) -> None:
    assert store.add([ok("a", 0.5), ok("b", 1.5)]) == 2
    rows = store.rows()
    assert [(r.item_id, r.value, r.status) for r in rows] == [("a", 0.5, "ok"), ("b", 1.5, "ok")]
    assert store.count() == 2


def test_readding_is_a_noop_and_never_overwrites(store: ResultStore) -> None:
    assert store.add([ok("a", 0.5), err("b")]) == 2
    assert store.add([ok("a", 0.5), err("b")]) == 0
    # Same keys, different content: the first value stays, an error never replaces it.
    assert store.add([ok("a", 9.0), err("a")]) == 0
    # A value for a key whose stored row is an error replaces it (the error is kept, superseded): two
    # overlapping runs, one failing and one computing the item, kept the error.
    assert store.add([ok("b", 3.0)]) == 1
    assert store.count() == 2
    by_item = {r.item_id: r for r in store.rows()}
    assert by_item["a"].value == 0.5 and by_item["b"].value == 3.0
    (old,) = [r for r in store.rows(include_superseded=True) if r.superseded_at is not None]
    assert old.item_id == "b" and old.status == "error" and old.error == "boom"


def test_add_counts_only_new_rows_in_a_mixed_batch(store: ResultStore) -> None:
    store.add([ok("a", 1.0)])
    assert store.add([ok("a", 2.0), ok("b", 2.0), ok("c", 2.0)]) == 2
    assert store.count() == 3


def test_duplicate_keys_in_one_batch_keep_the_first(store: ResultStore) -> None:
    assert store.add([ok("a", 1.0), ok("a", 2.0)]) == 1
    assert [r.value for r in store.rows()] == [1.0]


def test_add_nothing(store: ResultStore) -> None:
    assert store.add([]) == 0
    assert store.add(iter(())) == 0


def test_add_rejects_other_objects(store: ResultStore) -> None:
    with pytest.raises(TypeError):
        store.add([{"item_id": "a"}])  # type: ignore[list-item]


def test_new_config_hash_and_new_version_make_new_rows(store: ResultStore) -> None:
    store.add([ok("a", 1.0)])
    assert store.add([ok("a", 2.0, cfg="c2")]) == 1
    assert store.add([ok("a", 3.0, ver="2")]) == 1
    assert store.add([ok("a", 4.0, metric="psnr")]) == 1
    assert store.count() == 4
    values = {(r.metric, r.config_hash, r.version): r.value for r in store.rows()}
    assert values == {
        ("ssim", "c1", "1"): 1.0,
        ("ssim", "c2", "1"): 2.0,
        ("ssim", "c1", "2"): 3.0,
        ("psnr", "c1", "1"): 4.0,
    }


def test_error_rows_round_trip(store: ResultStore) -> None:
    store.add([ResultRow("a", "ssim", "c1", "1", "error", None, error="Traceback: x\ny ü", duration_s=2.5)])
    (row,) = store.rows()
    assert row.status == "error"
    assert row.value is None
    assert row.error == "Traceback: x\ny ü"
    assert row.duration_s == 2.5
    assert store.count(status="error") == 1 and store.count(status="ok") == 0


def test_an_error_quoting_a_nul_character_is_stored_with_it_written_out(store: ResultStore) -> None:
    # A judge's reply can hold NUL; PostgreSQL refused the whole batch over it (DataError).
    quoted = ResultRow("a", "judge:j:pa", "c1", "1", "error", None, error="JSON has no 'score' (keys: s\x00)",
                       details={"raw": "r\x00"})
    assert store.add([quoted, ok("b", 1.0, metric="judge:j:pa")]) == 2
    rows = {r.item_id: r for r in store.rows()}
    assert rows["a"].error == "JSON has no 'score' (keys: s\\x00)"  # the same on SQLite
    assert rows["a"].details == {"raw": "r\\x00"}  # written out the same way in details
    assert rows["b"].value == 1.0


def test_unscored_ok_rows_read_back_as_nan(store: ResultStore) -> None:
    store.add([ok("nan", math.nan), ok("none", None), ok("inf", math.inf), ok("zero", 0.0)])
    rows = {r.item_id: r for r in store.rows()}
    assert all(r.status == "ok" for r in rows.values())
    assert math.isnan(rows["nan"].value) and math.isnan(rows["none"].value)  # type: ignore[arg-type]
    assert not rows["nan"].scored
    assert rows["inf"].value == math.inf
    assert rows["zero"].value == 0.0 and rows["zero"].scored


def test_a_negative_zero_reads_back_as_zero_on_every_backend(store: ResultStore) -> None:
    # SQLite dropped the sign and PostgreSQL kept it: the two backends' exports differed (audit pgstore 2)
    store.add([ok("negzero", -0.0), ok("neg", -1.5)])
    rows = {r.item_id: r.value for r in store.rows()}
    assert math.copysign(1.0, rows["negzero"]) == 1.0 and rows["neg"] == -1.5  # type: ignore[arg-type]


def test_details_and_config_json_round_trip(store: ResultStore) -> None:
    details = {"frames": 48, "per_frame": [0.1, 0.2], "nested": {"name": "ü→✓", "flag": True, "none": None}}
    config = {"window": 7, "channels": ["r", "g"], "sigma": 1.5}
    store.add([ResultRow("a", "ssim", "c1", "1", "ok", 0.7, details=details, config=config)])
    store.add([ResultRow("b", "ssim", "c1", "1", "ok", 0.7)])
    rows = {r.item_id: r for r in store.rows()}
    assert rows["a"].details == details
    assert rows["a"].config == config
    assert rows["b"].details is None and rows["b"].config is None


def test_rows_share_the_strings_of_their_details(store: ResultStore) -> None:
    # Each row's details held its own copy of every key and of the library versions (most of the memory
    # of reading a large store); equal strings are now one object, and the values are unchanged.
    libs = "numpy 2.4.6, opencv 5.0.0"
    details = [{"libraries": libs, "frames": k, "zero": -0.0, "mixed": [0.5, "seg", {"seg": k}],
                "segments": [{"valid": True, "jerk": 0.25 * k, "reason": "blank"}]} for k in range(3)]
    store.add([ResultRow(f"i{k}", "ssim", "c1", "1", "ok", 0.5, details=d) for k, d in enumerate(details)])
    rows = store.rows()
    assert [r.details for r in rows] == details
    assert all(math.copysign(1.0, r.details["zero"]) == -1.0 for r in rows)  # -0.0 kept, not shared as 0.0
    first, second = rows[0].details, rows[1].details
    assert first["libraries"] is second["libraries"]
    assert [k for k in first if k is not next(j for j in second if j == k)] == []  # keys: one object each
    assert first["segments"][0]["reason"] is second["segments"][0]["reason"]
    first["segments"][0]["reason"] = "changed"  # each row's containers are still its own
    assert second["segments"][0]["reason"] == "blank"


def test_non_finite_floats_in_details_become_null(store: ResultStore) -> None:
    store.add([ResultRow("a", "m", "c", "1", "ok", 1.0, details={"x": math.nan, "y": [math.inf, 1.0]})])
    (row,) = store.rows()
    assert row.details == {"x": None, "y": [None, 1.0]}


def test_created_at_is_set_in_utc(store: ResultStore) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    store.add([ok("a", 1.0)])
    given = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    store.add([ResultRow("b", "ssim", "c1", "1", "ok", 1.0, created_at=given)])
    rows = {r.item_id: r for r in store.rows()}
    created = rows["a"].created_at
    assert created is not None and created.tzinfo is not None
    assert created.utcoffset() == timedelta(0)
    assert before <= created <= datetime.now(UTC) + timedelta(seconds=5)
    assert rows["b"].created_at == given


def test_rows_are_ordered_and_filtered(store: ResultStore) -> None:
    store.add([ok("b", 1.0, metric="psnr"), ok("b", 2.0), err("a"), ok("c", 3.0)])
    assert [(r.item_id, r.metric) for r in store.rows()] == [
        ("a", "ssim"),
        ("b", "psnr"),
        ("b", "ssim"),
        ("c", "ssim"),
    ]
    assert [r.item_id for r in store.rows(metric="ssim", status="ok")] == ["b", "c"]
    assert [r.item_id for r in store.rows(status="error")] == ["a"]
    assert store.count(metric="psnr") == 1
    assert store.count(metric="ssim", status="ok") == 2
    assert store.count(metric="nope") == 0
    with pytest.raises(ValueError):
        store.rows(status="fine")


def test_done_item_ids(store: ResultStore) -> None:
    store.add([ok("a", 1.0), err("b"), ok("c", math.nan), ok("d", 1.0, cfg="c2"), ok("e", 1.0, ver="2")])
    assert store.done_item_ids("ssim", "c1", "1") == {"a", "b", "c"}
    assert store.done_item_ids("ssim", "c1", "1", include_errors=False) == {"a", "c"}
    assert store.done_item_ids("ssim", "c2", "1") == {"d"}
    assert store.done_item_ids("psnr", "c1", "1") == set()


def test_clear_errors_lets_a_rerun_retry(store: ResultStore) -> None:
    store.add([ok("a", 1.0), err("b"), err("c"), err("d", cfg="c2"), err("e", metric="psnr")])
    assert store.clear_errors("ssim", "c1", "1", item_ids=["c", "zzz"]) == 1
    assert store.done_item_ids("ssim", "c1", "1") == {"a", "b"}
    assert store.clear_errors("ssim", "c1", "1") == 1
    assert store.clear_errors("ssim", "c1", "1") == 0
    assert store.done_item_ids("ssim", "c1", "1") == {"a"}
    # Other configs and metrics keep their failures; the retry now inserts.
    assert store.count(status="error") == 2
    assert store.add([ok("b", 2.0)]) == 1


def test_clear_errors_with_many_ids(store: ResultStore) -> None:
    store.add([err(f"i{n:04d}") for n in range(1200)])
    assert store.clear_errors("ssim", "c1", "1", item_ids=(f"i{n:04d}" for n in range(0, 1200, 2))) == 600
    assert store.count() == 600


def test_large_batch(store: ResultStore) -> None:
    rows = [ok(f"item{n:05d}", n / 7) for n in range(5000)]
    assert store.add(rows) == 5000
    assert store.add(rows) == 0
    assert store.count() == 5000


def test_data_survives_reopening(store_url: str) -> None:
    with ResultStore(store_url) as first:
        first.add([ok("a", 1.0), err("b")])
    with ResultStore(store_url) as second:
        assert second.count() == 2
        assert second.add([ok("a", 5.0)]) == 0


def test_result_row_validation() -> None:
    with pytest.raises(ValueError, match="no value"):
        ResultRow("a", "m", "c", "1", "error", 1.0)
    with pytest.raises(ValueError, match="status"):
        ResultRow("a", "m", "c", "1", "done", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="item_id"):
        ResultRow("", "m", "c", "1", "ok", 1.0)
    assert ResultRow("a", "m", "c", "1", "error", math.nan).value is None
    assert math.isnan(ResultRow("a", "m", "c", "1", "ok", None).value)  # type: ignore[arg-type]
    assert ResultRow("a", "m", "c", "1", "ok", 1).value == 1.0
    assert ResultRow("a", "m", "c", "1", "ok", 1).key == ("a", "m", "c", "1")


def test_rows_of_one_config_share_its_decoded_dict(store: ResultStore) -> None:
    # Every row decoded its own copy of its metric's config: a quarter of the memory of reading a large
    # store. Equal stored text gives one dict; other texts (and no config) stay apart.
    cfg = {"model": "m", "nested": {"k": [1, 2.5, None]}, "unicode": "é"}
    rows = [ResultRow(f"i{i}", "ssim", "c1", "1", "ok", float(i), config=dict(cfg)) for i in range(3)]
    rows += [ResultRow("i0", "psnr", "c2", "1", "ok", 1.0, config={"model": "other"}),
             ResultRow("i1", "psnr", "c3", "1", "ok", 1.0, config=None)]
    store.add(rows)
    got = {(r.item_id, r.metric): r for r in store.rows()}
    assert got["i0", "ssim"].config == cfg
    assert got["i0", "ssim"].config is got["i1", "ssim"].config is got["i2", "ssim"].config
    assert got["i0", "psnr"].config == {"model": "other"}
    assert got["i1", "psnr"].config is None
    # include_superseded and the filtered reads decode it the same way
    assert [r.config for r in store.rows(metric="ssim", include_superseded=True)] == [cfg] * 3


def test_rows_of_other_library_versions_are_counted_by_the_database(store: ResultStore) -> None:
    # `score` counts on every rerun the kept rows computed with other library versions: counted in SQL
    # (details.libraries), as many as supersede_other_libraries would mark.
    rows = [ResultRow("a", "m", "c", "1", "ok", 1.0, details={"libraries": "opencv 5.0"}),
            ResultRow("b", "m", "c", "1", "ok", 1.0, details={"libraries": "opencv 5.1"}),
            ResultRow("c", "m", "c", "1", "ok", 1.0, details={"other": 1}),  # no record: not counted
            ResultRow("d", "m", "c", "1", "ok", 1.0),
            ResultRow("e", "m", "c", "1", "error", None, error="boom"),
            ResultRow("f", "m", "c2", "1", "ok", 1.0, details={"libraries": "opencv 4.9"})]
    store.add(rows)
    ids = ["a", "b", "c", "d", "e", "f", "missing"]
    assert store.count_other_libraries("m", "c", "1", "opencv 5.1", ids) == 1
    assert store.count_other_libraries("m", "c", "1", "opencv 5.1", ["b"]) == 0
    assert store.count_other_libraries("m", "c", "1", "opencv 4.0", ids) == 2
    assert store.supersede_other_libraries("m", "c", "1", "opencv 4.0", ids) == 2
    assert store.count_other_libraries("m", "c", "1", "opencv 4.0", ids) == 0


def test_lookups_by_item_id_cover_every_item_past_a_chunk_of_the_query(store: ResultStore) -> None:
    # Item ids are queried in chunks (a database takes only so many parameters): 1,200 ids span three
    # of them, and every lookup must see all 1,200, or resuming recomputes the items at the edges.
    ids = [f"item{i:04d}" for i in range(1200)]
    failed = ids[9::10]  # items 9, 19, ..., 499, ..., 999, ...: some at the end of a chunk
    scored = [i for i in ids if i not in set(failed)]
    store.add([ResultRow(i, "m", "h", "1", "ok", 1.0, fingerprint="fp") for i in scored])
    store.add([err(i, metric="m", cfg="h") for i in failed])
    store.add([ResultRow(i, "m", "h", "0", "ok", 2.0) for i in ids])
    found = store.current_fingerprints("m", "h", "1", item_ids=ids)
    assert sorted(found) == ids and all(found[i] == "fp" for i in scored)
    assert store.count_other_versions("m", "1", ids) == {"0": 1200}
    assert store.clear_errors("m", "h", "1", item_ids=ids) == len(failed) == 120
    assert sorted(store.current_fingerprints("m", "h", "1", item_ids=ids)) == scored
