"""``--group generator``: the picks file has one ``generator`` column, the group's.

The pick's generator is the group's there, so a second column of that name (pandas reads it as
``generator.1``) added nothing; and a group in which nothing was picked kept an empty cell where its
generator belongs. Items: gA a1 (score 1), a2 (score 2); gB b1, b2 with no score.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from robojudge.select import best_of_n, write_picks
from robojudge.store import ResultRow
from robojudge.suite import Item


def _result():
    items = [Item(item_id=i, video="v.mp4", clip_id="c", generator=g)
             for i, g in (("a1", "gA"), ("a2", "gA"), ("b1", "gB"), ("b2", "gB"))]
    rows = [ResultRow(i, "pick", "h", "1", "ok", v) for i, v in (("a1", 1.0), ("a2", 2.0))]
    return best_of_n(items, rows, by="pick", group="generator", bootstrap=0, orient=True)


def test_one_generator_column_holding_the_group(tmp_path: Path) -> None:
    out = write_picks(_result(), tmp_path / "picks.csv")
    with out.open(encoding="utf-8") as f:
        header = next(csv.reader(f))
        f.seek(0)
        rows = list(csv.DictReader(f))
    assert header.count("generator") == 1 and header[0] == "generator"
    assert [(r["generator"], r["item_id"], r["skipped"]) for r in rows] == [
        ("gA", "a2", "unlabelled candidate"), ("gB", "", "no candidate scored")]


def test_the_json_picks_keep_the_group_generator(tmp_path: Path) -> None:
    out = write_picks(_result(), tmp_path / "picks.json")
    picks = json.loads(out.read_text(encoding="utf-8"))["picks"]
    assert [(p["generator"], p["item_id"]) for p in picks] == [("gA", "a2"), ("gB", None)]
