"""A video rewritten while it is judged: its judgments are not stored under the fingerprint the run
planned with (the old file's), so the old file, put back, cannot find another video's judgments up to
date; the item stays to judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robojudge.run import JudgeRunSummary
from robojudge.run._fingerprint import judge_inputs
from robojudge.run._judge_rows import inputs_now
from robojudge.store import ResultRow
from robojudge.suite import Item
from robojudge.video import write_video


def _video(path: Path, level: int) -> None:
    write_video(path, np.full((4, 16, 16, 3), level, np.uint8), fps=4)


def _rows(item: Item, fingerprint: str) -> list[ResultRow]:
    return [ResultRow(item.item_id, f"judge:m:{r}", "h", "1", "ok", 4.0, fingerprint=fingerprint)
            for r in ("pa", "ia")]


def test_rows_of_a_video_rewritten_meanwhile_are_not_stored(tmp_path: Path) -> None:
    _video(tmp_path / "v.mp4", 40)
    item = Item(item_id="i", video=str(tmp_path / "v.mp4"), instruction="x")
    planned = judge_inputs(item).value
    rows = _rows(item, planned)
    assert inputs_now(item, rows) == (rows, [])  # unchanged: stored as they are
    _video(tmp_path / "v.mp4", 200)  # rewritten while the judge looked at it
    assert inputs_now(item, rows) == ([], rows)
    (tmp_path / "v.mp4").unlink()  # gone now: an error row carries that, a judgment is kept
    error = ResultRow("i", "judge:m:pa", "h", "1", "error", None, error="x", fingerprint=planned)
    kept, changed = inputs_now(item, [error, rows[1]])
    assert changed == [] and kept[0].fingerprint != planned and kept[1] is rows[1]


def test_the_summary_names_them(capsys: pytest.CaptureFixture[str]) -> None:
    from robojudge.cli._judge import print_judge_summary

    s = JudgeRunSummary(total=3, scored=1, changed_inputs=2, changed_items=["i"])
    assert s.computed == 3
    print_judge_summary("m", s)
    assert "2 judgments not stored: the video changed while it was judged (i)" in capsys.readouterr().out




def test_a_worker_checks_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an executor (Ray) the check runs on the worker, where the video was read, and the driver
    counts what it dropped; a serial executor runs the same chunks in this process."""
    from robojudge.judges import ResponseCache, get_rubric, make_judge
    from robojudge.run import _ray_judge, judge_items
    from robojudge.run._executor import SerialExecutor
    from robojudge.run._judge_rows import judge_one
    from robojudge.store import ResultStore

    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    _video(tmp_path / "v.mp4", 40)
    item = Item(item_id="i", video=str(tmp_path / "v.mp4"), instruction="x")
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m",
                        "replies": ['{"reasoning": "ok", "instruction_alignment": 4}']})

    async def rewritten_meanwhile(*args: Any, **kwargs: Any) -> list[ResultRow]:
        found = await judge_one(*args, **kwargs)
        _video(tmp_path / "v.mp4", 200)
        return found

    monkeypatch.setattr(_ray_judge, "judge_one", rewritten_meanwhile)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        run = judge_items([item], judge, [get_rubric("ia")], store, cache=cache, executor=SerialExecutor())
        assert (run.scored, run.changed_inputs, run.changed_items) == (0, 1, ["i"])
        assert store.rows() == []
        monkeypatch.setattr(_ray_judge, "judge_one", judge_one)
        again = judge_items([item], judge, [get_rubric("ia")], store, cache=cache, executor=SerialExecutor())
        assert (again.scored, again.changed_inputs) == (1, 0)
        assert store.rows()[0].fingerprint == judge_inputs(item).value
