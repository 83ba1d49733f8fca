"""Set-level groups whose keys print alike (NFC/NFD, invisible characters) are kept apart, and said.

An instruction typed on macOS (``e`` and a combining accent) and the same instruction typed elsewhere
(``è``) were two groups of ``metrics sets --by instruction`` that printed identically, each with its own
FVD or JEPA value, and nothing said so. They stay two groups (merging would change what was measured),
and a warning names both spellings, escaped, with their item counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _toy_sets import toy_set_count
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metrics import LookAlikeGroupsWarning
from robojudge.metrics import _sets as sets
from robojudge.run import score_sets_into
from robojudge.store import ResultStore
from robojudge.suite import Item

NFC = "put the cr\u00e8me br\u00fbl\u00e9e on the plate"
NFD = "put the cre\u0300me bru\u0302le\u0301e on the plate"


@pytest.fixture
def count() -> Iterator[None]:
    """A set metric whose value is its group's number of items."""
    with toy_set_count():
        yield


def _items(*instructions: str) -> list[Item]:
    return [Item(item_id=f"i{k}", video=f"v{k}.mp4", instruction=text) for k, text in enumerate(instructions)]


def test_composed_and_decomposed_groups_stay_apart_and_are_warned() -> None:
    with pytest.warns(LookAlikeGroupsWarning) as caught:
        groups = sets.group_items(_items(NFC, NFC, NFD, "open the drawer"), "instruction")
    assert [(g.key, len(g.items)) for g in groups] == [(NFC, 2), (NFD, 1), ("open the drawer", 1)]
    (w,) = caught
    assert str(w.message) == (
        "--by instruction: groups 'put the cr\\xe8me br\\xfbl\\xe9e on the plate' (2 items) and "
        "'put the cre\\u0300me bru\\u0302le\\u0301e on the plate' (1 item) differ only in how their "
        "characters are composed (NFC/NFD; macOS writes file names decomposed): they print alike but are "
        "two groups, each measured on its own items; spell the instruction one way in the manifest "
        "(`robojudge suite validate` names the items)")


@pytest.mark.parametrize(("field", "first", "later"), [
    ("generator", "wan", "wan\u200b"),  # a zero-width space
    ("generator", "wan", "wan\u00a0"),  # a no-break space
    ("generator", "wan", "\ufeffwan"),  # a byte-order mark, from concatenated CSV files
    ("generator", "wan", "w\u2060an"),  # a word joiner
    ("instruction", "open it\nthen close it", "open it\r\nthen close it"),  # a Windows .txt file
])
def test_groups_apart_only_by_invisible_characters_are_warned(field: str, first: str, later: str) -> None:
    items = [Item(item_id=f"i{k}", video=f"v{k}.mp4", **{field: v}) for k, v in enumerate((first, later))]
    with pytest.warns(LookAlikeGroupsWarning) as caught:
        groups = sets.group_items(items, field)
    assert [g.key for g in groups] == [first, later]
    (w,) = caught
    assert str(w.message).startswith(
        f"--by {field}: groups {ascii(first)} (1 item) and {ascii(later)} (1 item) differ only in "
        "characters that print as nothing or as a plain space")


def test_groups_that_read_apart_are_not_warned() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        groups = sets.group_items(_items("open", "Open", "open it", NFC, NFC), "instruction")
    assert len(groups) == 4


def test_stored_groups_keep_both_spellings(count: None, tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store, pytest.warns(LookAlikeGroupsWarning):
        score_sets_into(store, _items(NFC, NFD, NFD), ["toy_set_count"], by="instruction")
        stored = {r.item_id: r.value for r in store.rows()}
    assert stored == {f"group:instruction={NFC}": 1.0, f"group:instruction={NFD}": 2.0}


def test_cli_prints_the_warning_once(count: None, tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(it.model_dump_json() + "\n" for it in _items(NFC, NFD)), encoding="utf-8")
    for k in range(2):
        (tmp_path / f"v{k}.mp4").write_bytes(b"")
    for store in (["--no-store"], ["--db", str(tmp_path / "r.sqlite")]):
        res = CliRunner().invoke(build_app(), ["metrics", "sets", str(manifest), "-m", "toy_set_count",
                                               "--by", "instruction", *store])
        assert res.exit_code == 0, res.output
        text = " ".join(res.output.split())
        assert text.count("warning: --by instruction: groups 'put the cr\\xe8me br\\xfbl\\xe9e on the plate' "
                          "(1 item) and 'put the cre\\u0300me") == 1, res.output


def test_callers_that_only_look_groups_up_say_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        groups = sets.group_items(_items(NFC, NFD), "instruction", look_alike=None)
    assert [g.key for g in groups] == [NFC, NFD]


def test_results_export_by_says_the_warning_once_in_its_own_words(count: None, tmp_path: Path) -> None:
    # Before: `results export --by` let the warning out as Python prints it, with robojudge's file path
    # and source line, and said the groups were "each measured on its own items", which an export is not.
    items = _items(NFC, NFD, NFD)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(it.model_dump_json() + "\n" for it in items), encoding="utf-8")
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store, pytest.warns(LookAlikeGroupsWarning):
        score_sets_into(store, items, ["toy_set_count"], by="instruction")
    args = ["--db", str(db), "--out", str(tmp_path / "e.csv"), "--suite", str(manifest), "--by",
            "instruction"]
    res = CliRunner().invoke(build_app(), ["results", "export", *args])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert text.count("warning: --by instruction: groups 'put the cr\\xe8me br\\xfbl\\xe9e on the plate' "
                      "(1 item) and 'put the cre\\u0300me") == 1, res.output
    assert "are two groups, two values of the instruction column; spell the instruction one way" in text
    assert "measured" not in text and "LookAlikeGroupsWarning" not in text and ".py:" not in text
