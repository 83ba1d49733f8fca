"""``robojudge -v`` logs robojudge's own debug lines, not other libraries'.

Before, the flag promised debug messages but robojudge wrote none (``-v score`` added no line), while
``-v report`` wrote hundreds of ``matplotlib.font_manager`` lines (CLI audit F7).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from robojudge.video import write_video


def _rj(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "robojudge", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={**os.environ, "COLUMNS": "200"})


def test_verbose_score_logs_the_store_the_plan_and_the_schedule(tmp_path: Path) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((4, 16, 16, 3), np.uint8), fps=4)
    (tmp_path / "suite.jsonl").write_text(json.dumps({"item_id": "a", "video": "v.mp4"}) + "\n")
    done = _rj("-v", "score", "suite.jsonl", "-m", "uniform_random", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    debug = [line for line in done.stderr.splitlines() if line.startswith("DEBUG ")]
    said = "\n".join(debug)
    assert "DEBUG robojudge.store._store: opened the result store sqlite:///" in said
    assert ("DEBUG robojudge.run._plan: planned 1 items x 1 units: 1 to compute (0 stale), 0 already "
            "stored" in said)
    assert "DEBUG robojudge.run._score: scheduled 1 tasks of 1 items on 1 worker(s)" in said
    assert all(line.startswith("DEBUG robojudge.") for line in debug), said
    quiet = _rj("score", "suite.jsonl", "-m", "uniform_random", "--no-progress", cwd=tmp_path)
    assert quiet.returncode == 0 and "DEBUG" not in quiet.stderr


def test_verbose_keeps_matplotlib_s_font_manager_quiet(tmp_path: Path) -> None:
    script = ("import logging\nfrom robojudge.cli import main\ntry:\n    main(['-v', 'judge', 'rubrics'])\n"
              "except SystemExit:\n    pass\n"
              "print(logging.getLogger('robojudge').getEffectiveLevel(),\n"
              "      logging.getLogger('matplotlib.font_manager').getEffectiveLevel())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == [str(10), str(30)]  # DEBUG for robojudge, WARNING for the fonts
