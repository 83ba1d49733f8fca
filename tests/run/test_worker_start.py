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


def _suite(folder: Path) -> None:
    """Three small videos and their manifest, ``suite.jsonl``, in ``folder``."""
    rows = []
    for n in range(3):
        frames = np.zeros((6, 24, 24, 3), np.uint8)
        frames[:, 4:9, 2 * n:2 * n + 6] = 200
        write_video(folder / f"v{n}.mp4", frames, fps=4)
        rows.append({"item_id": f"i{n}", "video": f"v{n}.mp4", "instruction": "x"})
    (folder / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.slow
def test_an_unguarded_script_is_told_and_records_nothing(tmp_path: Path) -> None:
    _suite(tmp_path)
    script = _told(tmp_path, "score_it.py", UNGUARDED)
    with ResultStore(tmp_path / "run" / "results.sqlite", read_only=True) as store:
        assert store.count() == 0  # no item recorded as crashed
    script.write_text(GUARDED)
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert "ok 3 failed 0" in res.stdout


def test_the_hint_names_the_guard_only_for_a_users_script(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    import types

    from robojudge.run._executor import worker_start_hint

    script = types.ModuleType("__main__")
    script.__file__ = str(tmp_path / "score_it.py")
    Path(script.__file__).write_text(GUARDED)
    monkeypatch.setitem(sys.modules, "__main__", script)
    assert 'score_it.py) must do so under `if __name__ == "__main__":`' in worker_start_hint()
    cli = types.ModuleType("__main__")
    cli.__file__ = "/venv/bin/robojudge"  # the console script: its own guard is there
    monkeypatch.setitem(sys.modules, "__main__", cli)
    hint = worker_start_hint()
    assert "__main__" not in hint and "their error is printed above" in hint


SIM_UNGUARDED = """
from robojudge.suite.sim import make_sim_suite
print("top level of", __name__, flush=True)
print(make_sim_suite("sim", seed=0, episodes=2, views=1, size=32, profiles=["oracle"], workers=2))
"""


@pytest.mark.slow
def test_an_unguarded_simulator_build_runs_the_script_once(tmp_path: Path) -> None:
    # The build's workers imported the script again and ran it up to the build (whatever it did first
    # ran twice), then died: WorkerStartError. They need nothing of the script, so they no longer import it.
    script = tmp_path / "build_it.py"
    script.write_text(SIM_UNGUARDED)
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["top level of __main__", "sim/suite.jsonl"], res.stdout
    assert (tmp_path / "sim" / "suite.jsonl").read_text().count("\n") == 2


NOTEBOOK_METRIC = """
from robojudge.metrics import Score, metric
from robojudge.run import score_suite

@metric("nb_brightness", family="quality", inputs={"video"}, higher_is_better=True, native_range=(0, 255),
        version="1", citation="me", description="mean grey level")
def nb_brightness(item, config):
    return Score(value=1.0)

score_suite("suite.jsonl", ["nb_brightness", "pixel_frame_consistency"], workers=2, run_dir="run")
"""


def test_a_metric_of_a_main_module_without_a_file_is_refused_before_the_workers(tmp_path: Path) -> None:
    _suite(tmp_path)
    # `python -c` has a __main__ with no file, as a notebook does.
    res = subprocess.run([sys.executable, "-c", NOTEBOOK_METRIC], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    # Before: every item was stored as "the worker process died while scoring this item", each after a
    # process of its own; why (the workers cannot unpickle __main__.nb_brightness) never reached the caller.
    assert res.returncode != 0
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("robojudge._lifeline.WorkerStartError: metric 'nb_brightness' is defined in ")
    assert "pixel_frame_consistency" not in last
    assert "workers=1" in last and "ROBOJUDGE_PLUGINS" in last
    with ResultStore(tmp_path / "run" / "results.sqlite", read_only=True) as store:
        assert store.count() == 0


NOTEBOOK_SET_METRIC = """
from robojudge.metrics import Score
from robojudge.metrics._sets import SetOutput, SetScores, set_metric
from robojudge.run import score_set_suite

FAIL = [True]

@set_metric("nb_set_count", output=SetOutput.group, family="quality", inputs={"video"}, higher_is_better=True,
            native_range=(0, None), citation="me", description="items per group", provider="computed")
def nb_set_count(group, config):
    if FAIL[0]:
        raise ValueError("not yet")
    return SetScores(group=Score(value=float(len(group.items))))

score_set_suite("suite.jsonl", ["nb_set_count"], by=None, run_dir="run")  # in this process: an error row
FAIL[0] = False
print("stored", flush=True)
score_set_suite("suite.jsonl", ["nb_set_count"], by=None, workers=2, executor="local", run_dir="run",
                retry_errors=True)
"""


def test_a_set_metric_of_a_main_module_without_a_file_is_refused_before_the_workers(tmp_path: Path) -> None:
    _suite(tmp_path)
    res = subprocess.run([sys.executable, "-c", NOTEBOOK_SET_METRIC], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    # Before (a review): only score_suite refused; the set run stored "the worker process died" rows.
    # Then (another review): it refused after --retry-errors had deleted the stored error row.
    assert res.returncode != 0 and res.stdout.strip() == "stored", res.stdout + res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("robojudge._lifeline.WorkerStartError: metric 'nb_set_count' is defined in "), last
    with ResultStore(tmp_path / "run" / "results.sqlite", read_only=True) as store:
        assert [(r.status, r.superseded_at) for r in store.rows(include_superseded=True)] == [("error", None)]


def test_a_script_read_from_standard_input_is_told_to_be_saved_not_guarded(tmp_path: Path) -> None:
    _suite(tmp_path)
    res = subprocess.run([sys.executable, "-"], input=GUARDED, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    # Before: "... must do so under `if __name__ == "__main__":`", though the guard was there; no guard helps,
    # as the workers cannot import <stdin> at all.
    assert res.returncode != 0
    last = res.stderr.strip().splitlines()[-1]
    assert "WorkerStartError" in last and "<stdin> is no file they can import" in last
    assert "save the script to a file" in last and "__name__" not in last


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
