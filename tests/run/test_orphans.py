"""A killed or terminated ``robojudge score`` leaves no process behind.

Only the parent is signalled here (a scheduler's ``kill PID``, an OOM kill of the main process), not
the whole process group as a terminal's Ctrl-C does: the worker processes and the multiprocessing
resource tracker must notice on their own that their parent is gone. With model metrics a stray
worker would keep its GPU memory.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _procs import HAVE_PROC, alive, descendants

HERE = Path(__file__).parent


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return con.execute("select count(*) from robojudge_results").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _hangup_as_on_a_terminal() -> None:
    # A run started from a terminal has SIGHUP's default action; a test suite run under `nohup` (as CI
    # may be) would hand its ignored SIGHUP down, and the run would rightly outlive a hangup.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _start(tmp_path: Path, apart: bool = False) -> tuple[subprocess.Popen[str], Path]:
    """A 200-item run of a slow toy metric, once it has stored 4 rows; ``apart``: stderr on a pipe of its
    own (else mixed into stdout)."""
    manifest, db = tmp_path / "suite.jsonl", tmp_path / "results.sqlite"
    rows = [{"item_id": f"item{i:03d}", "video": "v.mp4", "instruction": "x"} for i in range(200)]
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_slow never opens it")
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "ROBOJUDGE_PLUGINS": "_toy_metrics"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    cmd = [
        sys.executable, "-m", "robojudge", "score", str(manifest), "--metrics", "test_slow",
        "--set", "test_slow.seconds=0.3", "--db", f"sqlite:///{db}", "--workers", "2", "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd, env=env, start_new_session=True, stdout=subprocess.PIPE, text=True,
        stderr=subprocess.PIPE if apart else subprocess.STDOUT, preexec_fn=_hangup_as_on_a_terminal,
    )
    deadline = time.monotonic() + 120
    while _count(db) < 4:
        assert proc.poll() is None, f"run ended early: {proc.stdout.read() if proc.stdout else ''}"
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.05)
    return proc, db


def _wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_PROC, reason="reads the process tree from /proc")
def test_sigkill_of_the_parent_leaves_no_worker(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path)
    children = descendants(proc.pid)
    assert len(children) >= 3, children  # two workers and the resource tracker at least
    try:
        os.kill(proc.pid, signal.SIGKILL)  # the parent only, not its process group
        proc.wait(timeout=30)
        left = _wait_gone(children, 5.0)
        assert left == set(), f"still alive 5 s after the parent was killed: {sorted(left)}"
    finally:
        for p in alive(children):
            os.kill(p, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_PROC, reason="reads the process tree from /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_sigterm_and_sighup_shut_down_like_ctrl_c(tmp_path: Path, sig: int) -> None:
    # SIGHUP (a closed terminal) used to end the run at once: exit status 129, no summary, no resume hint.
    proc, db = _start(tmp_path, apart=True)
    children = descendants(proc.pid)
    try:
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out + err  # what Ctrl-C gives, so scripts treat both alike
        # The summary is the run's data (stdout); the interrupted line is a note, on stderr with the
        # progress (it was on stdout, in `score ... > summary.txt`).
        assert "interrupted: stored results are kept; rerun the same command to resume" in err
        assert "interrupted" not in out and "tasks:" in out
        left = _wait_gone(children, 5.0)
        assert left == set(), f"still alive 5 s after {signal.Signals(sig).name}: {sorted(left)}"
        stored = _count(db)
        assert 4 <= stored < 200  # what finished was committed; the run really stopped early
    finally:
        for p in alive(children):
            os.kill(p, signal.SIGKILL)
