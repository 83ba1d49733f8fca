"""A machine that cannot render, or a disk that fills, stops a simulator suite build with one line that
says what to do, not a traceback from each worker (audit s69_hostile 8)."""

from __future__ import annotations

import importlib.util
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

BUILD = ["suite", "make-demo", "--episodes", "2", "--views", "1", "--size", "32", "--profiles", "oracle"]


def _robojudge(*args: str, gl: str = "egl", file_limit: int | None = None
               ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["MUJOCO_GL"] = gl

    def limit_files() -> None:  # writes past the limit fail with EFBIG, as on a full disk with ENOSPC
        if file_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run([sys.executable, "-m", "robojudge", *args], env=env, preexec_fn=limit_files,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("gl", ["bogus", "glx"])
def test_a_backend_that_cannot_render_is_refused_before_anything_is_written(tmp_path: Path, gl: str) -> None:
    out = tmp_path / "sim"
    out.mkdir()
    (out / "suite.jsonl").write_text("an earlier build's manifest\n")
    done = _robojudge(*BUILD, "--out", str(out), gl=gl)
    # Before: a 58-71 line traceback (gladLoadGL error, invalid value for MUJOCO_GL ...), exit status 1.
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: MuJoCo cannot render with MUJOCO_GL={gl} (")
    # the Debian packages by name: scripts/ is not installed with the package
    assert "use MUJOCO_GL=egl" in lines[0]
    assert "apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri" in lines[0]
    assert "robojudge demo --suite synthetic" in lines[0]
    assert (out / "suite.jsonl").read_text() == "an earlier build's manifest\n"  # nothing was touched
    assert sorted(p.name for p in out.iterdir()) == ["suite.jsonl"]


@pytest.mark.slow
def test_the_demo_says_the_same(tmp_path: Path) -> None:
    done = _robojudge("demo", "--out", str(tmp_path / "demo"), "--suite", "sim", "--no-progress", gl="bogus")
    assert done.returncode == 2, done.stdout + done.stderr
    # (the demo's "building the demo suite ..." line goes to stderr too now, before the error)
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: MuJoCo cannot render with MUJOCO_GL=bogus (")
    assert "Traceback" not in done.stderr and "robojudge demo --suite synthetic" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("limit", [5_000, 20_000], ids=["video", "state"])
def test_a_file_that_cannot_be_written_is_one_line(tmp_path: Path, limit: int) -> None:
    out = tmp_path / "sim"
    done = _robojudge(*BUILD, "--out", str(out), file_limit=limit)
    # Before: a 103-line traceback from the worker, ending in VideoError (or OSError) "No space left".
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: cannot write the simulator suite into {out}: ")
    assert "File too large" in lines[0] and "no suite.jsonl" in lines[0] and "build it again" in lines[0]
    assert not (out / "suite.jsonl").exists()
