"""What ``--executor ray --address local`` leaves behind is what docs/ray.md says: no process once the run
ends, and Ray's session folder in ``$TMPDIR/ray``, one per run, never removed.

Before, docs/ray.md said only that the private instance "stops when the run ends", and a user found a
session folder per run in ``$TMPDIR/ray`` (audit "leftovers", finding 3).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from robojudge.video import write_video

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _ours(tmp: Path) -> list[str]:
    """The command lines of the processes started with ``TMPDIR`` set to ``tmp``."""
    mark = f"TMPDIR={tmp}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if mark in (proc / "environ").read_bytes().split(b"\0"):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # ended meanwhile, or another user's
            continue
    return found


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary folder with a short path: Ray's socket paths in its session folder must fit in 107
    bytes, which pytest's folders do not leave room for."""
    folder = Path(tempfile.mkdtemp(prefix="rj-", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="processes are found through /proc")
def test_a_local_instance_leaves_its_session_folder_and_no_process(tmp_path: Path, short_tmp: Path) -> None:
    write_video(tmp_path / "a.mp4", np.zeros((6, 16, 16, 3), np.uint8), fps=10)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": str(tmp_path / "a.mp4")}) + "\n")
    tmp, home = short_tmp, tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_TMPDIR", "RAY_ADDRESS")}
    env.update(TMPDIR=str(tmp), HOME=str(home), ROBOJUDGE_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "robojudge", "score", str(manifest), "-m", "pixel_frame_consistency",
           "--db", str(tmp_path / "r.sqlite"), "--executor", "ray", "--address", "local", "--workers", "1",
           "--no-progress"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    deadline = time.monotonic() + 30  # Ray's shutdown stops its processes; give them time to exit
    while _ours(tmp) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _ours(tmp) == []
    sessions = sorted((tmp / "ray").glob("session_2*"))
    assert len(sessions) == 1 and (sessions[0] / "logs").is_dir()
    assert (tmp / "ray" / "session_latest").resolve() == sessions[0].resolve()
    assert (home / ".ray" / "auth_token").is_file()

    doc = " ".join((ROOT / "docs" / "ray.md").read_text(encoding="utf-8").split())
    assert "it stops when the run ends |" not in doc
    for said in ("`ray/session_<date>_<time>_<pid>/`", "else in `$TMPDIR` (on Linux)", "`$RAY_TMPDIR`",
                 "Ray never removes them", "`ray::DashboardAgent`", "`~/.ray/auth_token`"):
        assert said in doc, said


def test_rays_own_lines_stay_out_of_a_runs_output(tmp_path: Path, short_tmp: Path) -> None:
    """A run on a private instance writes what a local run writes: not Ray's lines on starting it ("Started
    a local Ray instance", the auth token's WARNING) nor its raylet's notes on a dead worker and a retried
    task, which came with colour codes even into a file (audit "ray", F4). robojudge's own warning and
    error row say how the task ended."""
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "instruction": "x"}) + "\n"
                                for i in ("a", "crash")))
    (tmp_path / "v.mp4").write_bytes(b"never opened: test_crash reads the instruction only")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_TMPDIR", "RAY_ADDRESS", "RAY_COLOR_PREFIX")}
    env.update(TMPDIR=str(short_tmp), HOME=str(home), ROBOJUDGE_CACHE_DIR=str(tmp_path / "cache"),
               ROBOJUDGE_PLUGINS="_toy_metrics",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "robojudge", "score", str(manifest), "-m", "test_crash", "--db",
           str(tmp_path / "r.sqlite"), "--executor", "ray", "--address", "local", "--workers", "1"]
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        run = subprocess.run(cmd, env=env, stdout=out, stderr=err, timeout=300, check=False)
    said = (tmp_path / "out").read_text() + (tmp_path / "err").read_text()
    assert run.returncode == 0, said
    # robojudge's own account of the dead worker (the task ran 4 times: 3 retries)
    assert "crash / test_crash: the Ray worker died while scoring this item (4 attempts)" in said
    assert "1 scored, 1 failed" in said
    for ray_said in ("Started a local Ray instance", "Token authentication", "(raylet)", "A worker died",
                     "will be retried"):
        assert ray_said not in said, ray_said
    assert "\x1b[" not in said
