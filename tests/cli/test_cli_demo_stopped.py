"""``robojudge demo`` stopped by ``kill`` (SIGTERM) while it scores stops there: exit status 130, no KIVA
training, no report (before, it went on to write the report from the partial results and exited 0: audit
s70_notebook 2); stopped while it builds the simulator suite, it stops within seconds and says so."""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from _procs import alive, descendants, stopped

pytestmark = pytest.mark.slow


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return con.execute("select count(*) from robojudge_results").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_a_demo_stopped_while_scoring_exits_130_without_a_report(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    args = ["demo", "--suite", "synthetic", "--out", str(out), "--no-progress", "--workers", "1"]
    status, said = stopped(args, lambda pid: _stored(out / "results.sqlite") > 0)
    assert status == 130, said
    assert "interrupted: stored results are kept; rerun the same command to resume." in said
    assert "tasks:" in said  # the summary of what was scored
    assert "demo summary" not in said and "HTML report" not in said
    assert not (out / "report").exists()
    assert 0 < _stored(out / "results.sqlite") < 63  # stopped mid-run; what was scored is kept


@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs the sim extra (mujoco)")
def test_a_demo_stopped_while_it_builds_the_suite_says_so_within_seconds(tmp_path: Path) -> None:
    # Before: the build went on for 40 s after the SIGTERM, its progress read "scoring: no result yet",
    # and it ended with no word (audit signals 2).
    out = tmp_path / "demo"
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    proc = subprocess.Popen([sys.executable, "-m", "robojudge", "demo", "--suite", "sim", "--out", str(out),
                             "--progress-every", "0.5"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not any((out / "suite" / "videos").glob("*")):
        assert proc.poll() is None, "".join(lines)
        assert time.monotonic() < deadline, "the build wrote nothing"
        time.sleep(0.02)
    workers = descendants(proc.pid)
    proc.send_signal(signal.SIGTERM)
    start = time.monotonic()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    took = time.monotonic() - start
    reader.join(timeout=10)
    said = "".join(lines)
    assert proc.returncode == 130, said
    assert took < 10, f"{took:.1f} s to stop: {said}"
    assert f"interrupted: {out / 'suite'} holds a partial build and no suite.jsonl" in said
    assert "building the demo suite: " in said and "elapsed" in said
    assert "scoring" not in said and "Traceback" not in said
    gone = time.monotonic() + 5  # (the resource tracker ends once it sees its last user go)
    while alive(workers) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not alive(workers)
    assert not (out / "suite" / "suite.jsonl").exists() and not (out / "results.sqlite").exists()
