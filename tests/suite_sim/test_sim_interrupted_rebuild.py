"""A rebuild of the simulator suite over a finished one, stopped half-way, leaves no manifest behind."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

os.environ.setdefault("MUJOCO_GL", "egl")

from robojudge.suite.sim import make_sim_suite  # noqa: E402


def _as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell's background job would inherit SIGINT ignored


@pytest.mark.slow
def test_an_interrupted_rebuild_leaves_no_manifest(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    manifest = make_sim_suite(out, seed=0, episodes=4, views=1, size=16, profiles=("oracle",), workers=1)
    first = out / "state" / "fetch00-oracle.npz"
    before = first.stat().st_mtime_ns
    proc = subprocess.Popen(
        [sys.executable, "-m", "robojudge", "suite", "make-demo", "--out", str(out), "--seed", "1",
         "--episodes", "4", "--views", "1", "--size", "24", "--profiles", "oracle"],
        start_new_session=True, preexec_fn=_as_in_a_terminal, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (first.exists() and first.stat().st_mtime_ns != before):  # the first episode is rewritten
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the rebuild wrote nothing"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr  # stopped before the end
    # Before, the seed-0 manifest stayed and validated, its planted labels over the seed-1 videos.
    assert not manifest.exists() and not (out / "SUITE_KIND").exists()
    assert "interrupted" in stderr and "no suite.jsonl" in stderr and "run the same command" in stderr
