"""Scoring a manifest in blocks: the same rows as one block, counts summed, failures cleared once."""

from __future__ import annotations

import json
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)

from robojudge.run import build_requests, score_suite
from robojudge.run._score import score_blocks
from robojudge.store import ResultStore
from robojudge.suite import Item


def _items(ids: list[str]) -> list[Item]:
    return [Item(item_id=i, video="/nonexistent.mp4", instruction="x") for i in ids]


def test_retry_errors_clears_the_stored_failures_once_not_per_block(tmp_path: Path) -> None:
    blocks = [_items(["a", "boom1"]), _items(["b", "boom2"]), _items(["c"])]
    reqs = build_requests(["test_boom"])
    with ResultStore(tmp_path / "r.sqlite") as store:
        first = score_blocks(blocks, reqs, store)
        assert (first.total, first.ok, first.failed) == (5, 3, 2)
        again = score_blocks(blocks, reqs, store, retry_errors=True)
        # Both failures computed again, and both kept: planning the second block must not delete
        # the error row the first block has just stored.
        assert (again.total, again.skipped, again.failed) == (5, 3, 2)
        assert sorted(r.item_id for r in store.rows(status="error")) == ["boom1", "boom2"]


def test_a_manifest_in_blocks_scores_as_in_one(tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    rows = [{"item_id": f"i{i:02d}", "video": "v.mp4", "instruction": "x"} for i in range(11)]
    rows[7]["item_id"] = "i02"  # a duplicate of an id from the first block
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "v.mp4").write_bytes(b"never opened")
    one = score_suite(manifest, ["test_slow"], db=str(tmp_path / "one.sqlite"), block=100)
    many = score_suite(manifest, ["test_slow"], db=str(tmp_path / "many.sqlite"), block=3)
    assert many.manifest_problems == one.manifest_problems and len(one.manifest_problems) == 1
    assert (many.summary.total, many.summary.ok) == (one.summary.total, one.summary.ok) == (10, 10)
    with ResultStore(tmp_path / "one.sqlite") as a, ResultStore(tmp_path / "many.sqlite") as b:
        assert {(r.item_id, r.value) for r in a.rows()} == {(r.item_id, r.value) for r in b.rows()}
    resumed = score_suite(manifest, ["test_slow"], db=str(tmp_path / "many.sqlite"), block=3)
    assert (resumed.summary.skipped, resumed.summary.computed) == (10, 0)
