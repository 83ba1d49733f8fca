"""``robojudge judge`` beside other runs on one store: ``--retry-errors`` leaves another manifest's
failures, another run's video in flight is not a crash, and judgments another run stored first are
counted apart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _in_flight import noting_process
from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run import _judge, judge_items
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

REPLY = json.dumps({"reasoning": "r", "physical_adherence": 3})
MakeItems = Callable[..., list[Item]]


def test_retry_errors_leaves_another_manifests_unscored_rows(tmp_path: Path, make_items: MakeItems) -> None:
    pa = get_rubric("pa")
    mine, theirs = make_items(["a1", "a2", "b1"])[:2], make_items(["a1", "a2", "b1"])[2:]
    unparsable = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": ["no idea"]})
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
        judge_items(mine, unparsable, [pa], store, cache=cache, decode_workers=0)  # manifest A
        judge_items(theirs, unparsable, [pa], store, cache=cache, decode_workers=0)  # manifest B
        again = judge_items(mine, unparsable, [pa], store, cache=cache, decode_workers=0, retry_errors=True)
        assert (again.unscored, again.skipped) == (2, 0)
        rows = store.rows(include_superseded=True)
        assert sorted(r.item_id for r in rows) == ["a1", "a2", "b1"]  # b1's row was not deleted
        assert all(r.value is not None and r.value != r.value for r in rows)  # NaN: unscored


def test_a_video_another_running_judge_decodes_is_not_taken_for_a_crash(
    tmp_path: Path, make_items: MakeItems
) -> None:
    pa = get_rubric("pa")
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": [REPLY]})
    db = tmp_path / "r.sqlite"
    with noting_process(db, {"b": ["judge:m:pa"]}), ResultStore(db) as store, \
            ResponseCache(tmp_path / "c") as cache:
        s = judge_items(make_items(["a", "b"]), cfg, [pa], store, cache=cache, decode_workers=0)
        assert (s.scored, s.isolated) == (2, [])  # b decoded here, not apart in a decoder process
        assert store.in_flight() == {"b": ["judge:m:pa"]}  # the other run's note, for it to clear


def test_judgments_another_run_stored_meanwhile_are_counted_apart(
    tmp_path: Path, make_items: MakeItems, monkeypatch: pytest.MonkeyPatch
) -> None:
    pa = get_rubric("pa")
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": [REPLY]})
    judge_one = _judge.judge_one
    with ResultStore(tmp_path / "r.sqlite") as store, ResultStore(tmp_path / "r.sqlite") as other, \
            ResponseCache(tmp_path / "c") as cache:

        async def other_run_first(item: Item, *args: Any, **kwargs: Any) -> list[ResultRow]:
            rows = await judge_one(item, *args, **kwargs)
            if item.item_id == "b":
                other.add(rows)  # another run judged b too, and stored it first
            return rows

        monkeypatch.setattr(_judge, "judge_one", other_run_first)
        s = judge_items(make_items(["a", "b"]), cfg, [pa], store, cache=cache, decode_workers=0)
        assert (s.scored, s.unscored, s.failed, s.duplicates, s.computed, s.total) == (1, 0, 0, 1, 2, 2)
        assert store.count(include_superseded=True) == 2
