"""Judge rows carry the fingerprint of what the judge read: a changed video or instruction is re-judged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._fingerprint import judge_fingerprint
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "fine", "instruction_alignment": 4}'


def _video(path: Path, level: int) -> str:
    frames = np.full((8, 32, 32, 3), level, np.uint8)
    frames[:, 4:8, 4:8] = 255 - level
    write_video(path, frames, fps=4)
    return str(path)


def test_changed_inputs_are_judged_again(tmp_path: Path) -> None:
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    ia = get_rubric("ia")
    items = [Item(item_id=n, video=_video(tmp_path / f"{n}.mp4", 30 * (i + 1)), instruction=f"task {n}")
             for i, n in enumerate(["a", "b", "c"])]
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items(items, judge, [ia], store, cache=cache, decode_workers=0)
        assert first.scored == 3
        rows = {r.item_id: r for r in store.rows()}
        assert all(rows[it.item_id].fingerprint == judge_fingerprint(it) for it in items)

        again = judge_items(items, judge, [ia], store, cache=cache, decode_workers=0)
        assert (again.skipped, again.computed) == (3, 0)

        _video(tmp_path / "a.mp4", 200)  # new content under the same item id
        items[1] = items[1].model_copy(update={"instruction": "another task"})
        third = judge_items(items, judge, [ia], store, cache=cache, decode_workers=0)
        assert (third.skipped, third.scored) == (1, 2)
        superseded = sorted(r.item_id for r in store.rows(include_superseded=True) if not r.current)
        assert superseded == ["a", "b"]
        assert store.count() == 3
        expected = {it.item_id: judge_fingerprint(it) for it in items}
        assert {r.item_id: r.fingerprint for r in store.rows()} == expected


@pytest.mark.parametrize("field", ["reference_video", "state"])
def test_inputs_a_judge_does_not_read_change_nothing(tmp_path: Path, field: str) -> None:
    item = Item(item_id="a", video=_video(tmp_path / "a.mp4", 40), instruction="x")
    other = tmp_path / "other.bin"
    other.write_bytes(b"anything")
    assert judge_fingerprint(item) == judge_fingerprint(item.model_copy(update={field: str(other)}))


def test_judgments_without_fingerprint_are_kept_unless_asked(tmp_path: Path) -> None:
    from robojudge.store import ResultRow

    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    ia = get_rubric("ia")
    item = Item(item_id="a", video=_video(tmp_path / "a.mp4", 60), instruction="task")
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items([item], judge, [ia], store, cache=cache, decode_workers=0)
        assert first.scored == 1
        (row,) = store.rows()
        # The same judgment as a store from before schema 2 holds it: no fingerprint, another value.
        with ResultStore(tmp_path / "old.sqlite") as old:
            old.add([ResultRow(row.item_id, row.metric, row.config_hash, row.version, "ok", 2.0,
                               config=row.config)])
            kept = judge_items([item], judge, [ia], old, cache=cache, decode_workers=0)
            assert (kept.skipped, kept.computed) == (1, 0)
            assert [r.value for r in old.rows()] == [2.0]
            redone = judge_items(
                [item], judge, [ia], old, cache=cache, decode_workers=0, rescore_unknown=True
            )
            assert redone.scored == 1
            assert [r.value for r in old.rows()] == [4.0]
            assert [r.value for r in old.rows(include_superseded=True) if not r.current] == [2.0]
