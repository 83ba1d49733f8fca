"""Kill a scoring run mid-way (SIGKILL and Ctrl-C), rerun it, and check exactly-once results."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _as_in_a_terminal() -> None:
    """Ctrl-C is delivered as in a terminal even when the tests run in the background: a shell starts
    background jobs with SIGINT ignored, and the child would inherit that (CI run with `&`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

HERE = Path(__file__).parent
N = 60


def _manifest(tmp_path: Path) -> Path:
    m = tmp_path / "suite.jsonl"
    rows = [{"item_id": f"item{i:03d}", "video": "v.mp4", "instruction": "x"} for i in range(N)]
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_slow never opens it")
    m.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return m


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["ROBOJUDGE_PLUGINS"] = "_toy_metrics"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    return env


def _cmd(manifest: Path, db: Path) -> list[str]:
    return [
        sys.executable, "-m", "robojudge", "score", str(manifest), "--metrics", "test_slow",
        "--set", "test_slow.seconds=0.1", "--db", f"sqlite:///{db}", "--workers", "2", "--no-progress",
    ]


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return con.execute("select count(*) from robojudge_results").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute(
            "select item_id, metric, config_hash, version, created_at from robojudge_results order by item_id"
        ).fetchall()


def _start_and_wait(manifest: Path, db: Path, at_least: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        _cmd(manifest, db), env=_env(), start_new_session=True, preexec_fn=_as_in_a_terminal,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    deadline = time.monotonic() + 120
    while _count(db) < at_least:
        assert proc.poll() is None, f"run ended early: {proc.stdout.read()}"
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.05)
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["sigkill", "ctrl-c"])
def test_killed_run_resumes_exactly_once(tmp_path, sig):
    manifest, db = _manifest(tmp_path), tmp_path / "results.sqlite"
    proc = _start_and_wait(manifest, db, at_least=8)
    # Signal the whole process group, as a terminal's Ctrl-C or an OOM/scheduler kill would.
    os.killpg(proc.pid, sig)
    out, _ = proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, out
        assert "rerun the same command to resume" in out
    else:
        assert proc.returncode == -signal.SIGKILL
    before = {r[0]: r for r in _rows(db)}
    assert 8 <= len(before) < N, "the kill must land mid-run for this test to mean anything"

    done = subprocess.run(_cmd(manifest, db), env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(before)} already stored" in done.stdout
    after = _rows(db)
    keys = [r[:4] for r in after]
    assert len(after) == N and len(set(keys)) == N  # none lost, none duplicated
    assert {r[0] for r in after} == {f"item{i:03d}" for i in range(N)}
    # Results stored before the kill were kept as they were, not recomputed.
    for r in after:
        if r[0] in before:
            assert r == before[r[0]]
