"""A video that crashes the decoder in the judge's own process costs that item, not every rerun.

With ``--decode-workers 0`` (and while the decoder processes start) videos are decoded in threads of
the judge's process, so a segfault in the decoder ends the run; each rerun would start with the same
video and die again. The run notes an item in the store while decoding it there, and the next run
decodes a noted item in a decoder process, where a second crash is an error row for that item.

The crash is planted with a ``sitecustomize`` module that makes ``av.open`` segfault on any file
whose name starts with ``crash``, in every Python process of the test (decoder processes included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _decode_crash import plant

from _in_flight import note_from_ended_process
from robojudge.store import ResultStore

REPLY = json.dumps({"reasoning": "r", "physical_adherence": 3})
JUDGES = f'[judges.m]\nbackend = "mock"\nmodel = "m"\nconcurrency = 1\nreplies = [{json.dumps(REPLY)}]\n'


@pytest.fixture
def setup(tmp_path: Path, make_items: Any) -> tuple[list[str], dict[str, str], Path]:
    items = make_items(["a", "crash", "b"])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    (tmp_path / "judges.toml").write_text(JUDGES)
    planted = plant(tmp_path / "plant")
    env = {**os.environ, "COLUMNS": "200", "ROBOJUDGE_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(planted), os.environ.get("PYTHONPATH", "")])}
    db = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "robojudge", "judge", str(manifest), "--judge", "m", "--judges",
           str(tmp_path / "judges.toml"), "--rubric", "pa", "--db", str(db), "--no-progress",
           "--decode-workers", "0"]
    return cmd, env, db


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


Setup = tuple[list[str], dict[str, str], Path]


def test_a_decoder_crash_in_the_judge_process_costs_one_item(setup: Setup) -> None:
    cmd, env, db = setup
    first = _run(cmd, env)
    assert first.returncode == -11, first.stdout + first.stderr  # the segfault ends the process
    assert "Fatal Python error: Segmentation fault" in first.stderr
    with ResultStore(db) as store:
        noted = store.in_flight()
    # the video being decoded when it died, and a's if its decode (in another thread) was not cleared yet
    assert "crash" in noted and set(noted) <= {"a", "crash"}, first.stderr
    assert set(map(tuple, noted.values())) == {("judge:m:pa",)}

    second = _run(cmd, env)
    assert second.returncode == 0, second.stdout + second.stderr
    out = " ".join(second.stdout.split())
    if len(noted) == 1:
        assert ("1 item an earlier run was working on when it ended (a crash, a kill or a store that "
                "stopped) had its video decoded in a decoder process: crash; a crash there costs that item "
                "only") in out
    else:
        assert ("2 items an earlier run was working on when it ended (a crash, a kill or a store that "
                "stopped) had their videos decoded in a decoder process: a, crash; a crash there costs that "
                "item only") in out
    with ResultStore(db) as store:
        rows = {r.item_id: r for r in store.rows()}
        assert {i: r.status for i, r in rows.items()} == {"a": "ok", "crash": "error", "b": "ok"}
        assert rows["a"].value == rows["b"].value == 3.0
        assert "the decoder process died on this file (twice)" in (rows["crash"].error or "")
        assert store.in_flight() == {}

    third = _run(cmd, env)  # the error row is kept; nothing is decoded apart any more
    assert third.returncode == 0, third.stdout + third.stderr
    assert "decoder process:" not in third.stdout


def test_a_note_left_by_a_kill_is_decoded_apart_and_judged(tmp_path: Path, make_items: Any) -> None:
    from robojudge.judges import ResponseCache, get_rubric, make_judge
    from robojudge.run import judge_items

    pa = get_rubric("pa")

    items = make_items(["a", "b"])
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": [REPLY]})
    note_from_ended_process(tmp_path / "r.sqlite", {
        "b": ["judge:m:pa"],  # a run killed (not crashed) while decoding b
        "elsewhere": ["judge:m:pa"],  # an item of another manifest
        "a": ["pixel_frame_consistency"],  # left by `robojudge score`
    })
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
        s = judge_items(items, cfg, [pa], store, cache=cache, decode_workers=0, items_in_flight=1)
        assert (s.scored, s.failed) == (2, 0)
        assert sorted(s.isolated) == ["a", "b"]  # any note: decoding apart costs little
        # this run's own note is cleared; score's and another manifest's are left to their runs
        assert store.in_flight() == {"elsewhere": ["judge:m:pa"], "a": ["pixel_frame_consistency"]}
        again = judge_items(items, cfg, [pa], store, cache=cache, decode_workers=0)
        assert (again.skipped, again.isolated) == (2, [])  # stored items are not decoded at all


def test_a_note_that_failed_to_clear_once_is_cleared_when_the_item_is_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before, only a run the store stopped cleared its own notes again: a clear refused once (the store
    # locked a moment) outlived a run that then finished, and the next run took the item for a crash
    # (review rev29 F2).
    from robojudge.run._judge import _DecodeNotes
    from robojudge.store import StoreError

    with ResultStore(tmp_path / "r.sqlite") as store:
        notes = _DecodeNotes(store, ["judge:m:pa"], None)
        clear = store.clear_in_flight
        refused = {"left": 1}

        def clear_once_refused(item_ids: Any) -> Any:
            if refused["left"]:
                refused["left"] -= 1
                raise StoreError("database is locked")
            return clear(item_ids)

        monkeypatch.setattr(store, "clear_in_flight", clear_once_refused)
        with notes.noted("a"):
            pass
        assert notes.uncleared == {"a"} and list(store.in_flight()) == ["a"]
        notes.done(["a", "b"])
        assert store.in_flight() == {} and notes.uncleared == set()
