"""Judging from a notebook: ``judge_suite`` called where an event loop runs (a Jupyter kernel always has
one), and stopped there by Ctrl-C ("Interrupt kernel")."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from _loops import ctrl_c_once, in_a_running_loop
from robojudge.judges import ChatRequest, get_rubric, make_judge
from robojudge.judges._mock import MockBackend
from robojudge.run import JudgeSuiteRun, RunInterrupted, judge_suite
from robojudge.store import ResultStore

REPLY = '{"reasoning": "fine", "instruction_alignment": 4}'


def _manifest(make_items: Any, tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "suite.jsonl"
    rows = [{"item_id": it.item_id, "video": it.video, "instruction": it.instruction}
            for it in make_items(names)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_judge_suite_in_a_running_loop(make_items: Any, tmp_path: Path) -> None:
    # Before: RuntimeError "asyncio.run() cannot be called from a running event loop", nothing judged.
    manifest = _manifest(make_items, tmp_path, ["a", "b", "c"])
    judge = make_judge({"name": "nb", "backend": "mock", "model": "m", "replies": [REPLY]})
    run = in_a_running_loop(lambda: judge_suite(manifest, judge, [get_rubric("ia")],
                                                db=str(tmp_path / "r.sqlite"), decode_workers=0))
    assert (run.summary.scored, run.summary.failed) == (3, 0)
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert sorted(r.item_id for r in store.rows()) == ["a", "b", "c"]


def test_ctrl_c_in_a_running_loop_stops_judge_suite(make_items: Any, tmp_path: Path) -> None:
    # Before: judge_suite returned (summary.interrupted set) and the rest of the cell ran on.
    manifest = _manifest(make_items, tmp_path, ["a", "stop", "c"])
    judge = make_judge({"name": "nb", "backend": "mock", "model": "m", "replies": [REPLY]})
    waiting = threading.Event()

    async def script(request: ChatRequest) -> str:
        if "ITEM:stop" in request.user:  # a slow server: Ctrl-C comes while this request waits
            waiting.set()
            await asyncio.sleep(60)
        return REPLY

    with ctrl_c_once(waiting), pytest.raises(RunInterrupted) as stop:
        in_a_running_loop(lambda: judge_suite(
            manifest, judge, [get_rubric("ia")], db=str(tmp_path / "r.sqlite"), decode_workers=0,
            items_in_flight=1, backend=MockBackend(judge, script=script)))
    assert isinstance(stop.value, KeyboardInterrupt)
    summary, run = stop.value.summary, stop.value.run
    assert summary.interrupted and summary.scored == 1
    assert isinstance(run, JudgeSuiteRun) and run.summary is summary and run.db_url.endswith("r.sqlite")
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert [r.item_id for r in store.rows()] == ["a"]  # what was judged before it is kept
