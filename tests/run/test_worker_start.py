"""A script that calls ``score_suite`` with several workers at its top level, without a
``__main__`` guard: spawned workers import the script again and die as they start. The run stops
with :class:`WorkerStartError` saying what to do, instead of storing every item as crashed (rows that
then stayed failed after the script was fixed); with the guard the same script scores every item."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _limits import limited
from robojudge.store import ResultStore
from robojudge.video import write_video

UNGUARDED = """
from robojudge.run import score_suite
run = score_suite("suite.jsonl", ["pixel_frame_consistency"], workers=2, run_dir="run")
print("ok", run.summary.ok, "failed", run.summary.failed)
"""
GUARDED = """
from robojudge.run import score_suite
if __name__ == "__main__":
    run = score_suite("suite.jsonl", ["pixel_frame_consistency"], workers=2, run_dir="run")
    print("ok", run.summary.ok, "failed", run.summary.failed)
"""


def _told(folder: Path, name: str, source: str) -> Path:
    """Run ``source`` as the script ``folder/name``: it fails with WorkerStartError naming the guard."""
    script = folder / name
    script.write_text(source)
    res = subprocess.run([sys.executable, str(script)], cwd=folder, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode != 0
    assert "WorkerStartError" in res.stderr and 'if __name__ == "__main__":' in res.stderr
    return script


@pytest.mark.slow
def test_an_unguarded_script_is_told_and_records_nothing(tmp_path: Path) -> None:
    rows = []
    for n in range(3):
        frames = np.zeros((6, 24, 24, 3), np.uint8)
        frames[:, 4:9, 2 * n:2 * n + 6] = 200
        write_video(tmp_path / f"v{n}.mp4", frames, fps=4)
        rows.append({"item_id": f"i{n}", "video": f"v{n}.mp4", "instruction": "x"})
    (tmp_path / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = _told(tmp_path, "score_it.py", UNGUARDED)
    with ResultStore(tmp_path / "run" / "results.sqlite", read_only=True) as store:
        assert store.count() == 0  # no item recorded as crashed
    script.write_text(GUARDED)
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert "ok 3 failed 0" in res.stdout


def test_the_hint_names_the_guard_only_for_a_users_script(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from robojudge.run._executor import worker_start_hint

    script = types.ModuleType("__main__")
    script.__file__ = "/home/me/score_it.py"
    monkeypatch.setitem(sys.modules, "__main__", script)
    assert 'score_it.py) must do so under `if __name__ == "__main__":`' in worker_start_hint()
    cli = types.ModuleType("__main__")
    cli.__file__ = "/venv/bin/robojudge"  # the console script: its own guard is there
    monkeypatch.setitem(sys.modules, "__main__", cli)
    hint = worker_start_hint()
    assert "__main__" not in hint and "their error is printed above" in hint


SIM_UNGUARDED = """
from robojudge.suite.sim import make_sim_suite
print(make_sim_suite("sim", seed=0, episodes=2, views=1, size=32, profiles=None, workers=2))
"""


@pytest.mark.slow
def test_an_unguarded_simulator_build_is_told_too(tmp_path: Path) -> None:
    # The snippets of docs/sim_suite.md pasted into a script died with a bare BrokenProcessPool.
    _told(tmp_path, "build_it.py", SIM_UNGUARDED)
    assert not (tmp_path / "sim" / "suite.jsonl").exists()


def test_too_few_open_files_for_the_workers_is_one_clear_line(tmp_path: Path) -> None:
    rows = [{"item_id": f"i{n}", "video": "v.mp4", "instruction": "x"} for n in range(4)]
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_slow never opens it")
    (tmp_path / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "ROBOJUDGE_PLUGINS": "_toy_metrics"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "robojudge", "score", str(tmp_path / "suite.jsonl"), "-m", "test_slow",
           "--db", str(tmp_path / "results.sqlite"), "--workers", "2", "--no-progress"]
    # `ulimit -n 16`: enough to start, not for the workers' pipes.
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300,
                         preexec_fn=limited("nofile", 16))
    # Before: a traceback ending in os.pipe()'s "OSError: [Errno 24] Too many open files" (exit status 1).
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert "limit on open files (16, `ulimit -n`)" in res.stderr and "fewer --workers" in res.stderr
