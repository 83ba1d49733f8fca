"""Every command survives a terminal whose encoding lacks a character it prints.

Standard output and error print such a character as ``?`` (``errors="replace"``) from the entry point,
for every command; it used to be set by a few commands only (report, leaderboard, select, aggregate,
results export), and ``robojudge suite info`` of a suite with a generator named in Japanese ended
with a UnicodeEncodeError traceback (exit 1) after part of its tables. Each command runs in a
subprocess with ``LC_ALL=C``, ``PYTHONUTF8=0`` and ``PYTHONIOENCODING=ascii``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

NAME = "\u65e5\u672c\u8a9e \u2713"  # 日本語 ✓: four characters ASCII lacks, printed as '??? ?'
ASCII_ENV = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
             "PYTHONIOENCODING": "ascii"}


def _robojudge(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **ASCII_ENV}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "robojudge", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=300, check=False)


def test_suite_info_prints_a_name_the_terminal_cannot_encode(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(f'{{"item_id": "a", "video": "v.mp4", "generator": "{NAME}"}}\n'
                        '{"item_id": "b", "video": "v.mp4", "generator": "plain"}\n', encoding="utf-8")
    done = _robojudge("suite", "info", str(manifest), cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"UnicodeEncodeError" not in done.stderr
    out = done.stdout.decode("ascii")  # ASCII indeed
    assert "| ??? ?" in out and "| plain" in out
    assert "labels.labelled: 0" in out  # printed to the end

