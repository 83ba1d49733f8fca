"""The help says what the command line takes: flags without a value type, arguments named as the text
names them, help text on every option; and options refused, not ignored, where they cannot apply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    subs = getattr(cmd, "commands", None)
    if not subs:
        return [(path, cmd)]
    return [found for name, sub in subs.items() for found in _commands(sub, (*path, name))]


def test_flags_show_no_value_and_arguments_read_as_in_the_text() -> None:
    res = CliRunner().invoke(build_app("suite"), ["suite", "validate", "--help"], env={"COLUMNS": "150"})
    assert res.exit_code == 0, res.output
    # before: "--deep <bool>" ("--deep true" is an unexpected argument) and "[OPTIONS] {file}"
    assert "<bool>" not in res.output and "{file}" not in res.output
    assert "suite validate [OPTIONS] FILE" in res.output
    usage = CliRunner().invoke(build_app("score"), ["score"], env={"COLUMNS": "150"})
    assert usage.exit_code == 2 and "score [OPTIONS] SUITE" in usage.output


def test_every_option_has_help_text() -> None:
    root = typer.main.get_command(build_app())
    bare = [f"{' '.join(path)} {param.opts[0]}" for path, cmd in _commands(root) for param in cmd.params
            if param.param_type_name == "option" and not getattr(param, "help", None)]
    # before: meta segments --seed and eight options of train sft / grpo had none
    assert not bare, bare


def _suite(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "v.mp4").write_bytes(b"")
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"item_id": f"i{k}", "video": "v.mp4", "clip_id": "c",
                                         "labels": {"pa": 1 + k, "ia": 1 + k}}) + "\n" for k in range(3)))
    run = tmp_path / "run"
    run.mkdir()
    with ResultStore(run / "results.sqlite") as store:
        store.add([ResultRow(f"i{k}", "jitter", "h", "1", "ok", float(k)) for k in range(3)])
    return suite, run


def test_select_checks_out_before_the_work(tmp_path: Path) -> None:
    suite, run = _suite(tmp_path)
    (tmp_path / "afile").write_text("x")
    res = CliRunner().invoke(build_app("select"), [
        "select", "best-of-n", str(suite), "--db", str(run / "results.sqlite"), "--by", "jitter",
        "--higher-is-better", "--bootstrap", "0", "--out", str(tmp_path / "afile" / "p.csv")])
    # before: the picks were computed and printed, then "error: afile: File exists"
    assert res.exit_code == 2 and res.stdout == "", res.output
    assert "--out" in res.stderr and "afile: a file, not a folder" in res.stderr


def test_report_of_a_run_folder_refuses_db(tmp_path: Path) -> None:
    _, run = _suite(tmp_path)
    other = str(tmp_path / "other.sqlite")
    res = CliRunner().invoke(build_app("report"), ["report", str(run), "--db", other])
    # before: --db was ignored and the run folder's store reported, exit 0
    assert res.exit_code == 2 and "--db names the store of a manifest" in res.stderr, res.output


def test_the_root_help_says_where_the_docs_it_names_are() -> None:
    # A pip install has no docs/ folder: the help texts' docs/*.md are the repository's.
    res = CliRunner().invoke(build_app(), ["--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "docs/robots.md" in res.output
    assert "The docs/*.md files that help texts name are in the robojudge repository's docs/ folder" in (
        " ".join(res.output.split()))
