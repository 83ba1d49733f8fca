"""``iter_suite``: a manifest read in blocks gives what ``load_suite`` gives, block by block."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from robojudge.suite import ManifestError, _read, iter_suite, load_suite


def _rows(n: int) -> list[dict[str, str]]:
    rows = [{"item_id": f"i{i:03d}", "video": "v.mp4", "instruction": "x"} for i in range(n)]
    rows[9]["item_id"] = "i001"  # a duplicate id two blocks after its first use
    del rows[12]["video"]  # a record missing a required field
    return rows


def _write(tmp_path: Path, fmt: str, rows: list[dict[str, str]]) -> Path:
    (tmp_path / "v.mp4").write_bytes(b"never opened")
    path = tmp_path / f"suite.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "csv":
        cols = ["item_id", "video", "instruction"]
        lines = [",".join(cols)] + [",".join(r.get(c, "") for c in cols) for r in rows]
        path.write_text("\n".join(lines) + "\n")
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_blocks_add_up_to_the_whole_load(tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_read, "PARQUET_BATCH", 3)  # several record batches, not aligned with blocks
    path = _write(tmp_path, fmt, _rows(17))
    whole = load_suite(path, strict=False)
    blocks = list(iter_suite(path, block=4))
    assert [len(b.items) + len({(p.line, p.row) for p in b.problems}) for b in blocks] == [4, 4, 4, 4, 1]
    assert [it for b in blocks for it in b.items] == whole.items
    assert [p for b in blocks for p in b.problems] == whole.problems
    dupes = [p for b in blocks for p in b.problems if "duplicate" in p.message]
    assert len(dupes) == 1 and dupes[0].item_id == "i001"
    where = [(p.line, p.row) for p in whole.problems]
    expected = {"jsonl": [(10, None), (13, None)], "csv": [(11, None), (14, None)],
                "parquet": [(None, 9), (None, 12)]}
    assert where == expected[fmt]


def test_a_jsonl_manifest_is_read_as_it_is_consumed(tmp_path: Path) -> None:
    path = _write(tmp_path, "jsonl", _rows(17))
    blocks = iter_suite(path, block=4)
    first = next(blocks)
    # Lines after the first block can still change: they are read only when asked for.
    with path.open("a") as fh:
        fh.write(json.dumps({"item_id": "late", "video": "v.mp4", "instruction": "x"}) + "\n")
    rest = [it.item_id for b in blocks for it in b.items]
    assert len(first.items) == 4 and rest[-1] == "late"


def test_file_level_problems_and_bad_block_sizes(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="manifest file not found"):
        next(iter_suite(tmp_path / "missing.jsonl"))
    (tmp_path / "empty.jsonl").write_text("")
    (only,) = iter_suite(tmp_path / "empty.jsonl")
    assert [p.message for p in only.problems] == ["manifest has no items"]
    with pytest.raises(ValueError, match="block must be at least 1"):
        next(iter_suite(tmp_path / "empty.jsonl", block=0))
