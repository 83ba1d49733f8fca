"""Unknown ``ROBOJUDGE_*`` variables (audit config F1): a misspelt ``ROBOJUDGE_CONFIN`` was read by
nothing and said by nothing, so the confinement it was meant to set was silently off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robojudge import cli, settings


def rj(*args: object, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("ROBOJUDGE_")}
    return subprocess.run([sys.executable, "-m", "robojudge", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env={**clean, "COLUMNS": "200", **env})


def test_a_misspelt_variable_is_warned_of_by_every_command(tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": "v.mp4"}) + "\n")
    for args in (["weights", "status"], ["suite", "info", manifest], ["metrics", "list"]):
        res = rj(*args, cwd=tmp_path, ROBOJUDGE_CONFIN=str(tmp_path), ROBOJUDGE_WEIGHT="/nowhere")
        assert res.stderr.count("warning: unknown variable ROBOJUDGE_CONFIN (did you mean "
                                "ROBOJUDGE_CONFINE?)") == 1, (args, res.stderr)
        assert "warning: unknown variable ROBOJUDGE_WEIGHT (did you mean ROBOJUDGE_WEIGHTS?)" in res.stderr
        assert "warning" not in res.stdout


def test_known_and_project_variables_are_not_warned_of(tmp_path: Path) -> None:
    res = rj("weights", "status", cwd=tmp_path, ROBOJUDGE_CONFINE=str(tmp_path),
             ROBOJUDGE_TEST_POSTGRES_URL="postgresql://x", ROBOJUDGE_VBENCH_PYTHON="/usr/bin/python3")
    assert res.returncode == 0, res.stderr
    assert "unknown variable" not in res.stderr


def test_unknown_variables_lists_each_with_the_closest(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.upper().startswith("ROBOJUDGE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY", "abc")
    monkeypatch.setenv("robojudge_plugins", "x")  # (names are case-sensitive: this one is not read)
    monkeypatch.setenv("ROBOJUDGE_ZZZ", "1")
    monkeypatch.setenv("ROBOJUDGE_MAX_NETWORKS", "2")
    # a judge's api_key_env of the user's choosing: the judge reads it, so it is not called unknown
    monkeypatch.setenv("ROBOJUDGE_JUDGE_KEY", "sk-x")
    monkeypatch.setenv("ROBOJUDGE_HF_TOKEN", "hf-x")
    assert settings.unknown_variables() == [
        ("ROBOJUDGE_FRAME_MEMORY", "ROBOJUDGE_FRAME_MEMORY_GIB"),
        ("ROBOJUDGE_ZZZ", None),
        ("robojudge_plugins", "ROBOJUDGE_PLUGINS"),
    ]


def test_each_variable_is_warned_of_once_per_process(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "_WARNED_VARIABLES", set())
    monkeypatch.setenv("ROBOJUDGE_DECODE_WORKER", "2")
    cli.warn_unknown_variables()
    cli.warn_unknown_variables()
    assert capsys.readouterr().err.count("unknown variable ROBOJUDGE_DECODE_WORKER (did you mean "
                                         "ROBOJUDGE_DECODE_WORKERS?)") == 1
