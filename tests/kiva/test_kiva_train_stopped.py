"""``kiva train`` stopped by ``kill`` (SIGTERM) says what it kept: before, it ended with exit status 130 and
no word, which a scheduler's log cannot tell from a crash (audit signals 6a)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_a_stopped_training_says_out_is_as_it_was(kiva_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "reader"
    proc = subprocess.Popen(
        [sys.executable, "-m", "robojudge", "kiva", "train", "--episodes", str(kiva_suite), "--robot",
         "fetch", "--out", str(out), "--size", "32", "--epochs", "200", "--holdout", "0.25"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    deadline = time.monotonic() + 240
    while not any("training" in line for line in lines):  # (the bar or the plain lines)
        assert proc.poll() is None, "".join(lines)
        assert time.monotonic() < deadline, "never trained"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    said = " ".join("".join(lines).split())  # (folded to the terminal's width)
    assert proc.returncode == 130, said
    assert "interrupted: --out is as it was" in said and "rerun the same command" in said
    assert not out.exists()
