"""A key given twice in a JSON record is that record's error, in every format that holds JSON: JSON Lines,
a ``.json`` list, a CSV or Parquet JSON cell. ``json.loads`` alone kept the last value without a word (a
PA of 2 read as 5, a whole ``labels`` object dropped), while CSV already refused a repeated column."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from robojudge.suite import ManifestError, load_suite


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in ("a.mp4", "b.mp4"):
        (tmp_path / name).write_bytes(b"")
    return tmp_path


Problem = tuple[int | None, int | None, str | None, str | None, str]


def _refused(path: Path) -> tuple[list[str], list[Problem]]:
    """The ids loaded with ``strict=False``, and (line, row, item, field, message) of each problem."""
    suite = load_suite(path, strict=False)
    problems = [(p.line, p.row, p.item_id, p.field, p.message) for p in suite.problems]
    return [it.item_id for it in suite], problems


def test_jsonl_record_with_a_repeated_key_is_left_out(folder: Path) -> None:
    path = folder / "s.jsonl"
    path.write_text(
        '{"item_id": "ep1", "video": "a.mp4", "instruction": "pick up the red cup", "instruction": "open"}\n'
        '{"item_id": "ep2", "video": "b.mp4", "labels": {"pa": 2, "ia": 5, "pa": 5}}\n'
        '{"item_id": "ep3", "video": "a.mp4", "meta": {"steps": [{"x": 1}, {"x": 2, "x": 3}]}}\n'
        '{"item_id": "ep4", "video": "b.mp4", "labels": {"pa": 2, "ia": 5}}\n'
    )
    assert _refused(path) == (["ep4"], [
        (1, None, "ep1", "instruction", "given more than once"),
        (2, None, "ep2", "labels.pa", "given more than once"),
        (3, None, "ep3", "meta.steps[1].x", "given more than once"),
    ])
    with pytest.raises(ManifestError, match=r"s.jsonl:2: item 'ep2' field labels.pa: given more than once"):
        load_suite(path)


def test_json_list_record_with_a_repeated_key_is_left_out(folder: Path) -> None:
    records = ('{"item_id": "ep1", "video": "a.mp4", "labels": {"pa": 1}, "labels": {"ia": 4}}, '
               '{"item_id": "ep2", "video": "b.mp4", "labels": {"pa": 1}}')
    path = folder / "s.json"
    path.write_text(f"[{records}]")
    assert _refused(path) == (["ep2"], [(None, 0, "ep1", "labels", "given more than once")])
    path.write_text(f'{{"items": [{records}]}}')
    assert _refused(path) == (["ep2"], [(None, 0, "ep1", "labels", "given more than once")])
    path.write_text(f'{{"items": [], "items": [{records}]}}')  # the wrapper's own key: the file is refused
    with pytest.raises(ManifestError, match=r"s.json: key 'items' given more than once"):
        load_suite(path, strict=False)


def test_csv_json_cell_with_a_repeated_key_is_left_out(folder: Path) -> None:
    path = folder / "s.csv"
    path.write_text('item_id,video,labels,meta\n'
                    'ep1,a.mp4,"{""pa"": 1, ""pa"": 5}",\n'
                    'ep2,b.mp4,"{""pa"": 1}","{""seed"": {""a"": 1, ""a"": 2}}"\n'
                    'ep3,a.mp4,"{""pa"": 1}","{""seed"": 7}"\n')
    assert _refused(path) == (["ep3"], [
        (2, None, "ep1", "labels.pa", "given more than once"),
        (3, None, "ep2", "meta.seed.a", "given more than once"),
    ])


def test_parquet_json_cell_with_a_repeated_key_is_left_out(folder: Path) -> None:
    path = folder / "s.parquet"
    table = pa.table({"item_id": ["ep1", "ep2"], "video": ["a.mp4", "b.mp4"],
                      "labels": ['{"ia": 3, "ia": 4}', json.dumps({"ia": 3})]})
    pq.write_table(table, path)
    assert _refused(path) == (["ep2"], [(None, 0, "ep1", "labels.ia", "given more than once")])


def test_a_csv_grid_cell_with_a_repeated_key_is_refused(folder: Path) -> None:
    """The grid cell is read by the item's own schema, not with the record's JSON cells (review rev25 F2):
    `{"rows":1,"cols":2,...,"rows":2,"cols":1}` read as 2x1 without a word."""
    path = folder / "s.csv"
    twice = '{""rows"": 1, ""cols"": 2, ""views"": [""a"", ""b""], ""rows"": 2, ""cols"": 1}'
    once = '{""rows"": 1, ""cols"": 2, ""views"": [""a"", ""b""]}'
    path.write_text(f'item_id,video,grid\nep1,a.mp4,"{twice}"\nep2,b.mp4,"{once}"\n')
    ids, problems = _refused(path)
    assert ids == ["ep2"]
    ((line, _, item, field, message),) = problems
    assert (line, item, field) == (2, "ep1", "grid") and "grid.rows, grid.cols more than once" in message
