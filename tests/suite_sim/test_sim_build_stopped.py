"""``suite make-demo`` stopped by ``kill`` while its worker processes build episodes: it stops within
seconds (exit 130, the interrupted line, no worker left), and a second SIGTERM does not hang it.

Before, one SIGTERM let each worker finish its episode (39-60 s, past a scheduler's 30 s grace) and a
second one, breaking off that wait, left the process waiting at exit for workers that were never told to
stop (audit signals 1 and 2)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _procs import HAVE_PROC, alive, descendants

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE_PROC, reason="reads the process tree in /proc")]


def _as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell's background job would inherit SIGINT ignored


def _build_until_busy(out: Path) -> tuple[subprocess.Popen[str], set[int]]:
    """``suite make-demo`` with two workers on episodes of many seconds each (three views at 256 px),
    once the first file of an episode is written: both workers are then in the middle of one."""
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "robojudge", "suite", "make-demo", "--out", str(out), "--episodes", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
        preexec_fn=_as_in_a_terminal,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not any((out / "videos").glob("*")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the build wrote nothing"
        time.sleep(0.02)
    workers = descendants(proc.pid)
    assert workers, "no worker process"
    return proc, workers


def _ended(proc: subprocess.Popen[str], within: float) -> tuple[float, str]:
    start = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        pytest.fail(f"still running {within:.0f} s after the stop: {stderr}")
    return time.monotonic() - start, stderr


def _gone(pids: set[int]) -> None:
    deadline = time.monotonic() + 5  # (the resource tracker ends once it sees its last user go)
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pids)


def test_one_sigterm_stops_the_build_within_seconds(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    proc, workers = _build_until_busy(out)
    proc.send_signal(signal.SIGTERM)  # to the command only, as a scheduler's `kill` (not its workers)
    took, stderr = _ended(proc, 60)
    assert proc.returncode == 130, stderr
    assert took < 10, f"{took:.1f} s to stop"  # (an episode here takes 20 s and more)
    assert "interrupted" in stderr and "no suite.jsonl" in stderr and "run the same command" in stderr
    assert "Traceback" not in stderr
    _gone(workers)
    assert not (out / "suite.jsonl").exists()


def test_a_second_sigterm_does_not_hang_the_build(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    proc, workers = _build_until_busy(out)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # `kill` again, a retried `docker stop`
    took, stderr = _ended(proc, 40)
    assert proc.returncode in (130, -signal.SIGTERM), stderr
    assert took < 10, f"{took:.1f} s to stop"
    _gone(workers)

