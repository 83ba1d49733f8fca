"""Kill a `robojudge judge` run mid-way (Ctrl-C and SIGKILL, with decoder processes running), rerun it,
and check that every (item, rubric) ends with exactly one row and no stored row changed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _judge_server import FakeServer, Reply

from _procs import alive, descendants


def _as_in_a_terminal() -> None:
    """Ctrl-C is delivered as in a terminal even when the tests run in the background: a shell starts
    background jobs with SIGINT ignored, and the child would inherit that (CI run with `&`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


N = 24


def _rows(db: Path) -> list[tuple[Any, ...]]:
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return con.execute(
                "select item_id, metric, config_hash, version, created_at, status from robojudge_results "
                "order by item_id, metric"
            ).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGKILL, signal.SIGTERM], ids=["ctrl-c", "sigkill", "sigterm-parent"]
)
def test_killed_judge_run_resumes_exactly_once(make_items: Any, tmp_path: Path, sig: int) -> None:
    items = make_items([f"item{i:02d}" for i in range(N)])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(mode="json")) + "\n" for it in items))
    db = tmp_path / "results.sqlite"
    reply = '{"reasoning": "fine", "physical_adherence": 4, "instruction_alignment": 3}'
    with FakeServer(lambda body, n: Reply(reply, delay=0.25)) as srv:
        cmd = [
            sys.executable, "-m", "robojudge", "judge", str(manifest), "--backend", "openai",
            "--model", "m", "--base-url", srv.url, "--concurrency", "4", "--db", f"sqlite:///{db}",
            "--cache-dir", str(tmp_path / "cache"), "--decode-workers", "1", "--no-progress",
        ]
        proc = subprocess.Popen(cmd, start_new_session=True, preexec_fn=_as_in_a_terminal,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(_rows(db)) < 6:
            assert proc.poll() is None, f"run ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "run made no progress"
            time.sleep(0.05)
        if sig == signal.SIGTERM:  # `kill PID`: the parent alone; its decoder processes must follow
            children = descendants(proc.pid)
            os.kill(proc.pid, sig)
        else:  # the whole group, decoder processes included, as a terminal's Ctrl-C
            os.killpg(proc.pid, sig)
        out, err = proc.communicate(timeout=60)  # must not hang on its worker processes
        # The summary is the run's data (stdout); the interrupted line is a note, on stderr.
        if sig == signal.SIGTERM:
            assert proc.returncode == 130, out + err  # SIGTERM stops a run as Ctrl-C does
            assert "rerun the same command to resume" in err and "interrupted" not in out
            end = time.monotonic() + 5
            while alive(children) and time.monotonic() < end:
                time.sleep(0.1)
            assert alive(children) == set(), "decoder processes outlived the run"
        elif sig == signal.SIGINT:
            assert proc.returncode == 130, out + err
            assert "rerun the same command to resume" in err and "interrupted" not in out
            assert "judgments:" in out
        else:
            assert proc.returncode == -signal.SIGKILL
        before = {r[:4]: r for r in _rows(db)}
        assert 6 <= len(before) < 2 * N, "the kill must land mid-run for this test to mean anything"
        sent_before = srv.settle()  # the killed run's last requests may still be read and counted

        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        after = _rows(db)
        keys = [r[:4] for r in after]
        assert len(after) == 2 * N and len(set(keys)) == 2 * N  # none lost, none duplicated
        assert all(r[5] == "ok" for r in after), after
        for r in after:  # rows stored before the kill are kept as they were
            if r[:4] in before:
                assert r == before[r[:4]]
        # the rerun asks only for what has no reply in the cache: at most the pairs not stored
        assert srv.count - sent_before <= 2 * N - len(before)
