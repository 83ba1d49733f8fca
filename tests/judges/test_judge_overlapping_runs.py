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


def _judged_elsewhere(tmp_path: Path, item: Item, cfg: Any) -> list[ResultRow]:
    """The rows another run of the same judge stores for ``item`` (judged into a store of its own)."""
    with ResultStore(tmp_path / "theirs.sqlite") as theirs, ResponseCache(tmp_path / "theirs-cache") as cache:
        judge_items([item], cfg, [get_rubric("pa")], theirs, cache=cache, decode_workers=0)
        return theirs.rows()


def test_a_second_launch_does_not_send_what_the_first_stored_meanwhile(
    tmp_path: Path, make_items: MakeItems, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The same `judge` launched twice: the first stores b while this run judges a. Before, this run then
    sent b's request too, and the store threw the reply away (the judge's bill twice); now it looks in
    the store before sending, and leaves b to the first."""
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": [REPLY]})
    a, b = make_items(["a", "b"])
    rows_b = _judged_elsewhere(tmp_path, b, cfg)
    judge_one = _judge.judge_one
    with ResultStore(tmp_path / "r.sqlite") as store, ResultStore(tmp_path / "r.sqlite") as first, \
            ResponseCache(tmp_path / "c") as cache:

        async def first_stores_b(item: Item, *args: Any, **kwargs: Any) -> list[ResultRow]:
            rows = await judge_one(item, *args, **kwargs)
            if item.item_id == "a":
                first.add(rows_b)
            return rows

        monkeypatch.setattr(_judge, "judge_one", first_stores_b)
        with caplog.at_level("WARNING", logger="robojudge.run._judge"):
            s = judge_items([a, b], cfg, [get_rubric("pa")], store, cache=cache, decode_workers=0,
                            items_in_flight=1)
        assert (s.stats.sent, s.scored, s.duplicates) == (1, 1, 0)  # before: 2 sent, b's reply thrown away
        assert (s.by_other_run, s.skipped) == (1, 1)
        assert store.count(include_superseded=True) == 2
    assert any("another run stored judgments" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("stores", [True, False], ids=["first-stores", "first-dies"])
def test_an_item_another_running_judge_has_in_flight_is_left_to_it_and_checked_at_the_end(
    tmp_path: Path, make_items: MakeItems, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    stores: bool,
) -> None:
    """A live process notes b in flight (the first launch, decoding it): b is put last, with a warning
    naming that process. If it stores b while this run judges a, b is never sent from here; if it dies
    without storing, b is judged here at the end."""
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": [REPLY]})
    b, a = make_items(["b", "a"])
    rows_b = _judged_elsewhere(tmp_path, b, cfg)
    judge_one = _judge.judge_one
    db = tmp_path / "r.sqlite"
    ResultStore(db).close()
    with noting_process(db, {"b": ["judge:m:pa"]}) as first, ResultStore(db) as store, \
            ResponseCache(tmp_path / "c") as cache:

        async def first_ends(item: Item, *args: Any, **kwargs: Any) -> list[ResultRow]:
            if item.item_id == "a":  # (b, first in the manifest, was put off)
                if stores:
                    store.add(rows_b)
                first.kill()
                first.communicate(timeout=60)
            return await judge_one(item, *args, **kwargs)

        monkeypatch.setattr(_judge, "judge_one", first_ends)
        with caplog.at_level("WARNING", logger="robojudge.run._judge"):
            s = judge_items([b, a], cfg, [get_rubric("pa")], store, cache=cache, decode_workers=0,
                            items_in_flight=1)
        warned = [r.getMessage() for r in caplog.records if f"pid {first.pid}," in r.getMessage()]
        assert len(warned) == 1 and "1 item(s) of this run (b)" in warned[0]
        if stores:
            assert (s.stats.sent, s.scored, s.by_other_run) == (1, 1, 1)
        else:  # the first launch died: b is judged here
            assert (s.stats.sent, s.scored, s.by_other_run) == (2, 2, 0)
        assert sorted(r.item_id for r in store.rows()) == ["a", "b"]


def test_a_live_note_of_other_metrics_is_no_overlap(
    tmp_path: Path, make_items: MakeItems, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A score run beside this judge run on one store notes b in flight under its metric: no second launch
    of this run, so b keeps its place and nothing is said (review rev16 F2)."""
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": [REPLY]})
    b, a = make_items(["b", "a"])
    db = tmp_path / "r.sqlite"
    ResultStore(db).close()
    order: list[str] = []
    judge_one = _judge.judge_one

    async def noting(item: Item, *args: Any, **kwargs: Any) -> list[ResultRow]:
        order.append(item.item_id)
        return await judge_one(item, *args, **kwargs)

    monkeypatch.setattr(_judge, "judge_one", noting)
    caplog.set_level("WARNING", logger="robojudge.run._judge")
    with noting_process(db, {"b": ["pixel_frame_consistency"]}), ResultStore(db) as store, \
            ResponseCache(tmp_path / "c") as cache:
        s = judge_items([b, a], cfg, [get_rubric("pa")], store, cache=cache, decode_workers=0,
                        items_in_flight=1)
    assert (s.scored, s.by_other_run) == (2, 0) and order == ["b", "a"]
    assert not [r for r in caplog.records if "another run" in r.getMessage()]
