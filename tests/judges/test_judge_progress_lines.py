"""``robojudge judge`` and ``leaderboard fps-ablation`` in a log: plain progress lines every
--progress-every seconds, as ``robojudge score`` prints them, instead of one bar drawn at the end."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer
from _judge_server import FakeServer, Reply
from typer.testing import CliRunner

from robojudge.cli._judge_app import app as judge_app
from robojudge.cli._leaderboard import fps_ablation

OK = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4}'


def _slow(body: dict[str, Any], n: int) -> Reply:
    return Reply(OK, delay=0.4)


def _manifest(tmp_path: Path, make_items: Any) -> Path:
    path = tmp_path / "suite.jsonl"
    rows = []
    for k, it in enumerate(make_items(["a", "b"])):
        row = it.model_dump(exclude_none=True, exclude_defaults=True)
        rows.append({**row, "generator": f"g{k}", "labels": {"pa": 3, "ia": 4}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _app(name: str, command: Any) -> typer.Typer:
    app = typer.Typer()
    if isinstance(command, typer.Typer):
        app.add_typer(command, name=name)
    else:
        app.command(name)(command)
    app.command("noop")(lambda: None)
    return app


def test_judge_prints_plain_progress_lines_when_stderr_is_not_a_terminal(tmp_path: Path,
                                                                         make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_slow) as srv:
        res = CliRunner().invoke(_app("judge", judge_app), [
            "judge", str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
            "--concurrency", "1", "--rubric", "pa", "--db", str(tmp_path / "r.sqlite"), "--no-cache",
            "--progress-every", "0.1"])
    assert res.exit_code == 0, res.output
    # before: one rich bar, drawn once when the run ended, and no line while it ran
    assert re.search(r"judging: \d/2 judgments \(\d+%\), [01] in flight, 0 retries, 0 unparsed, 0 failed",
                     res.stderr), res.stderr
    assert "━" not in res.stderr


def test_fps_ablation_prints_progress_lines(tmp_path: Path, make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_slow) as srv:
        res = CliRunner().invoke(_app("fps-ablation", fps_ablation), [
            "fps-ablation", str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
            "--fps", "2", "--db", str(tmp_path / "r.sqlite"), "--no-cache", "--bootstrap", "0",
            "--progress-every", "0.1"])
    assert res.exit_code == 0, res.output
    # before: nothing at all while the rates were judged
    assert re.search(r"judging: \d/4 judgments", res.stderr), res.stderr
    quiet = CliRunner().invoke(_app("fps-ablation", fps_ablation), [
        "fps-ablation", str(manifest), "--backend", "openai", "--model", "m", "--base-url", "http://x/v1",
        "--fps", "2", "--db", str(tmp_path / "r.sqlite"), "--bootstrap", "0", "--no-progress"])
    assert quiet.exit_code == 0 and "judging:" not in quiet.stderr, quiet.output
