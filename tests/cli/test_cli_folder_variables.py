"""Errors and help of the folder variables say where the folder came from (audit config F8): a confine
folder from ROBOJUDGE_CONFINE was reported as if --confine had been typed, the cache error advised
setting ROBOJUDGE_CACHE_DIR when it was set to the failing folder, and the help gave a wrong default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.cli._judge import cache_open_error
from robojudge.judges._cache import ResponseCacheError
from robojudge.suite._paths import confine_folder


def test_a_confine_folder_from_the_variable_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ROBOJUDGE_CONFINE", str(tmp_path / "none"))
    with pytest.raises(ValueError, match=re.escape(f"ROBOJUDGE_CONFINE={tmp_path / 'none'}: confine folder "
                                                   f"{tmp_path / 'none'} does not exist")):
        confine_folder(None)
    with pytest.raises(ValueError, match="^confine folder"):  # given as --confine: the option is the source
        confine_folder(tmp_path / "other")


def test_a_cache_folder_from_a_variable_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "c"))
    exc = ResponseCacheError(tmp_path / "c", "Permission denied", default=True)
    assert f"in {tmp_path / 'c'}, the folder $ROBOJUDGE_CACHE_DIR gives (Permission denied)" in str(exc)
    assert "the folder $ROBOJUDGE_CACHE_DIR gives" in cache_open_error(exc, "--cache-dir")
    monkeypatch.delenv("ROBOJUDGE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    exc = ResponseCacheError(tmp_path / "robojudge", "Permission denied", default=True)
    assert "the folder $XDG_CACHE_HOME gives" in cache_open_error(exc, "--cache-dir")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert "gives" not in cache_open_error(ResponseCacheError(tmp_path, "x", default=True), "--cache-dir")
    assert "gives" not in cache_open_error(ResponseCacheError(tmp_path, "x", default=False), "--cache-dir")


@pytest.mark.parametrize("command", [["judge", "--help"], ["leaderboard", "fps-ablation", "--help"],
                                     ["suite", "prompts", "--help"]])
def test_the_cache_dir_help_gives_the_default_the_command_uses(command: list[str]) -> None:
    res = CliRunner().invoke(build_app(command[0]), command, env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "[default: $ROBOJUDGE_CACHE_DIR, else $XDG_CACHE_HOME/robojudge, else ~/.cache/robojudge]" in said
