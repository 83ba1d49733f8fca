"""A plugin that cannot be loaded: one error line for a command that computes, a warning and the rest of
the registry for one that only reads (docs/architecture.md, "Plugins")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import robojudge.cli

CLASH = '''
from robojudge.metrics import Score, metric

@metric("iq1_psnr", version="99", family="pixel", inputs={"video"}, higher_is_better=False,
        native_range=(0.0, 1.0), citation="me", description="clashes with a built-in")
def mine(item, config):
    return Score(value=0.1)
'''


def _run(tmp_path: Path, plugin: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "rj_cli_broken.py").write_text("import rj_dependency_not_installed\n")
    (tmp_path / "rj_cli_clash.py").write_text(CLASH)
    env = {**os.environ, "ROBOJUDGE_PLUGINS": plugin, "COLUMNS": "200"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "robojudge", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


def test_a_command_that_computes_stops_with_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"placeholder; never opened")
    (tmp_path / "suite.jsonl").write_text(json.dumps({"item_id": "i0", "video": "v.mp4"}) + "\n")
    res = _run(tmp_path, "rj_cli_broken", "score", "suite.jsonl", "-m", "pixel_frame_consistency",
               "--db", "r.sqlite", "--no-progress")
    # Before: exit status 1 and 88 lines of traceback, ending in an ImportError naming no ROBOJUDGE_PLUGINS.
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines() == [
        "error: cannot load metric plugin module 'rj_cli_broken' (named in ROBOJUDGE_PLUGINS): "
        "ModuleNotFoundError: No module named 'rj_dependency_not_installed' "
        f"(at {tmp_path / 'rj_cli_broken.py'}:1); fix it or remove it from ROBOJUDGE_PLUGINS"]


def test_metrics_list_goes_on_without_the_broken_plugin_and_warns(tmp_path: Path) -> None:
    res = _run(tmp_path, "rj_cli_clash", "metrics", "list", "--json")
    # Before: a traceback ending in "ValueError: metric 'iq1_psnr' is already registered", exit status 1.
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert res.stderr.splitlines() == [
        "warning: cannot load metric plugin module 'rj_cli_clash' (named in ROBOJUDGE_PLUGINS): ValueError: "
        "metric 'iq1_psnr' is already registered (by robojudge.metrics.robophys.reference) "
        f"(at {tmp_path / 'rj_cli_clash.py'}:4); fix it or remove it from ROBOJUDGE_PLUGINS; left out"]
    listed = {m["id"]: m for m in json.loads(res.stdout)}
    assert listed["iq1_psnr"]["version"] != "99" and "pixel_frame_consistency" in listed


@pytest.mark.parametrize(("args", "expected"), [
    (["report", "runs/x"], True),
    (["-v", "results", "export", "-o", "x.csv"], True),
    (["metrics", "list"], True),
    (["metrics", "info", "iq1_psnr"], True),
    (["aggregate", "scores", "--in", "x.csv"], True),
    (["metrics", "sets", "suite.jsonl"], False),
    (["score", "suite.jsonl"], False),
    (["judge", "suite.jsonl"], False),
    (["leaderboard", "generators", "runs/x"], True),
    (["leaderboard", "judges", "suite.jsonl"], True),
    (["leaderboard", "fps-ablation", "suite.jsonl"], False),  # it judges (review rev8)
])
def test_which_commands_only_read(args: list[str], expected: bool) -> None:
    assert robojudge.cli.reads_only(args) is expected
