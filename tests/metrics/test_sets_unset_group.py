"""Set-level grouping keeps the items without a value apart from a value spelt like their group.

Items without a generator form the group ``-`` (stored under ``group:generator=-``). A generator
literally named ``-`` used to land in the same group: its 2 items and the 1 item without a generator
were one group of 3, and FVD per generator mixed two populations under one row. Such a value is now
refused, naming the item and the field; the ordinary case keeps its groups and its stored ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _toy_sets import toy_set_count
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metrics import _sets as sets
from robojudge.run import score_sets_into
from robojudge.store import ResultStore
from robojudge.suite import MAX_ITEM_ID_BYTES, Item


@pytest.fixture
def count() -> Iterator[None]:
    """A set metric whose value is its group's number of items."""
    with toy_set_count():
        yield


def _items(dashed: int) -> list[Item]:
    """``dashed`` items of generator '-', 1 item without a generator, 2 of generator 'a'."""
    gens = ["-"] * dashed + [None, "a", "a"]
    return [Item(item_id=f"i{k}", video=f"v{k}.mp4", generator=g) for k, g in enumerate(gens)]


def test_a_value_spelt_like_the_unset_group_is_refused_naming_item_and_field(count: None) -> None:
    with pytest.raises(ValueError) as err:
        sets.score_sets(_items(2), ["toy_set_count"], by="generator")
    assert str(err.value) == (
        "--by generator: 2 items 'i0', 'i1' have the generator '-', the name of the group of the items "
        "without a generator (stored as 'group:generator=-'), so both would be one group; give them another "
        "generator in the manifest")
    with pytest.raises(ValueError, match="item 'i0' has the generator '-'.* give it another generator"):
        sets.group_items(_items(1), "generator")
    # the same items grouped by another field are fine, and ungrouped too
    assert [(g.key, len(g.items)) for g in sets.group_items(_items(2), "task")] == [("-", 5)]
    assert [(g.key, len(g.items)) for g in sets.group_items(_items(2), None)] == [("all", 5)]


def test_the_ordinary_case_keeps_its_groups_and_stored_ids(count: None, tmp_path: Path) -> None:
    items = _items(0)  # i0 without a generator, i1 and i2 of 'a'
    groups = sets.group_items(items, "generator")
    assert [(g.key, [it.item_id for it in g.items]) for g in groups] == [("-", ["i0"]), ("a", ["i1", "i2"])]
    with ResultStore(tmp_path / "results.sqlite") as store:
        score_sets_into(store, items, ["toy_set_count"], by="generator")
        stored = {r.item_id: r.value for r in store.rows()}
    assert stored == {"group:generator=-": 1.0, "group:generator=a": 2.0}


def test_cli_refuses_the_suite_with_exit_code_2(count: None, tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in _items(1)))
    for k in range(4):
        (tmp_path / f"v{k}.mp4").write_bytes(b"")
    res = CliRunner().invoke(build_app(), ["metrics", "sets", str(manifest), "-m", "toy_set_count",
                                           "--no-store"])
    assert res.exit_code == 2, res.output
    assert "item 'i0' has the generator '-'" in " ".join(res.output.split())


@pytest.mark.parametrize("field", ["labels", "meta", "views", "grid"])
def test_a_field_holding_a_structure_is_no_group_key(field: str) -> None:
    # labels grouped by their printed form: "pa=4.0 ia=None ..." became a group name
    items = [Item(item_id="a", video="a.mp4", labels={"pa": 4}, meta={"k": 1})]
    with pytest.raises(ValueError, match=f"--by '{field}' holds a structure, not a text; use one of "
                                         "calibration, clip_id, embodiment,"):
        sets.group_items(items, field)
    with pytest.raises(ValueError, match="--by 'nope' is not an item field"):
        sets.group_items(items, "nope")
    assert [g.key for g in sets.group_items(items, "embodiment")] == ["-"]


def test_a_value_too_long_for_a_group_id_gets_a_shortened_one_on_every_backend(
    count: None, store_url: str
) -> None:
    # --by instruction made an item id 'group:instruction=<the instruction>' of any length, which SQLite
    # stored and PostgreSQL's unique index refused mid-run; then one long instruction refused the whole
    # run. Now a long one is stored under its start and a hash of it, the whole value in the details.
    import hashlib

    long_a, long_b = "é" * 600 + "a", "é" * 600 + "b"  # alike for their first 1,200 bytes
    items = [Item(item_id="short", video="v0.mp4", instruction="pick"),
             Item(item_id="a1", video="v1.mp4", instruction=long_a),
             Item(item_id="a2", video="v2.mp4", instruction=long_a),
             Item(item_id="b", video="v3.mp4", instruction=long_b)]
    with ResultStore(store_url) as store:
        score_sets_into(store, items, ["toy_set_count"], by="instruction")
        rows = {r.details["group"]: r for r in store.rows()}
    assert set(rows) == {"pick", long_a, long_b}
    assert rows["pick"].item_id == "group:instruction=pick"
    for value, n in ((long_a, 2), (long_b, 1)):
        row = rows[value]
        digest = hashlib.sha256(value.encode()).hexdigest()[:sets.GROUP_HASH_CHARS]
        assert row.item_id.startswith("group:instruction=" + "é" * 400)
        assert row.item_id.endswith("...#" + digest)
        assert len(row.item_id.encode()) <= MAX_ITEM_ID_BYTES and row.value == n
    assert sets.group_item_id("instruction", long_a) != sets.group_item_id("instruction", long_b)
    assert [g.key for g in sets.group_items(items[:1], "instruction")] == ["pick"]
