"""Out of file descriptors on one rubric of an item (review rev9): the item's other rubrics, finished, are
stored; here the run stops (no error row), while a worker of an executor (Ray) keeps its chunk going and
gives only that item's unfinished rubrics error rows (it used to fail the whole chunk, every item an error
row saying the run stopped while it went on)."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run import OpenFilesError, _judge_rows, judge_items
from robojudge.run._executor import SerialExecutor
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "ok", "physical_adherence": 4, "instruction_alignment": 3}'


@pytest.fixture
def pa_runs_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PA rubric's request finds no descriptor left; IA's is answered."""
    real = _judge_rows._judged

    async def judged(engine: Any, rubric: Any, instruction: Any, frames: Any) -> Any:
        if rubric.id == "pa":
            return OSError(errno.EMFILE, "Too many open files")
        return await real(engine, rubric, instruction, frames)

    monkeypatch.setattr(_judge_rows, "_judged", judged)


def _items(tmp_path: Path, n: int) -> list[Item]:
    out = []
    for i in range(n):
        write_video(tmp_path / f"v{i}.mp4", np.full((4, 16, 16, 3), 40 * (i + 1), np.uint8), fps=4)
        out.append(Item(item_id=f"i{i}", video=str(tmp_path / f"v{i}.mp4"), instruction="x"))
    return out


def _judge() -> Any:
    return make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})


def test_here_the_run_stops_and_keeps_the_items_finished_rubrics(tmp_path: Path, pa_runs_out: None) -> None:
    (item,) = _items(tmp_path, 1)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        with pytest.raises(OpenFilesError, match="limit on open files"):
            judge_items([item], _judge(), [get_rubric("pa"), get_rubric("ia")], store, cache=cache,
                        decode_workers=0)
        rows = store.rows()
    assert [(r.metric, r.status) for r in rows] == [("judge:mk:ia", "ok")]


def test_a_worker_keeps_its_chunk_going(tmp_path: Path, pa_runs_out: None) -> None:
    items = _items(tmp_path, 3)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        run = judge_items(items, _judge(), [get_rubric("pa"), get_rubric("ia")], store, cache=cache,
                          executor=SerialExecutor())
        rows = {(r.item_id, r.metric): r for r in store.rows()}
    assert len(rows) == 6 and run.scored == 3
    for it in items:
        assert rows[it.item_id, "judge:mk:ia"].status == "ok"
        pa = rows[it.item_id, "judge:mk:pa"]
        assert pa.status == "error" and "this worker's limit on open files was reached" in (pa.error or "")
        assert "the run stopped" not in (pa.error or "")
