"""Where ``robojudge report`` writes without ``--out``, and what its help says about it (audit cli2 F6:
the help said "next to the store", while a store file or URL has always been reported into ./report)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from _report_data import write_run
from typer.testing import CliRunner

from robojudge.cli import build_app, main


def _out_help() -> str:
    command = typer.main.get_command(build_app("report"))
    report = command.commands["report"]  # type: ignore[attr-defined]
    return " ".join(next(p for p in report.params if "--out" in p.opts).help.split())


def test_the_out_help_names_each_default_folder() -> None:
    said = _out_help()
    assert "next to the store" not in said
    assert "RUN/report for a run folder" in said and "runs/<manifest>/report for a manifest" in said
    assert "./report (in the current folder) for a store file or URL" in said
    shown = CliRunner().invoke(build_app("report"), ["report", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "./report" in shown.output


def test_a_store_file_is_reported_into_the_current_folder(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_run(tmp_path / "run")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    with pytest.raises(SystemExit) as stop:
        main(["report", "../run/results.sqlite", "--suite", "../run/suite/suite.jsonl", "--bootstrap", "0"])
    assert not stop.value.code
    assert (tmp_path / "cwd" / "report" / "index.html").is_file()
    assert not (tmp_path / "run" / "report").exists()
