"""``judge --confine``: no frame of a file outside the folder reaches the judge server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import typer
from _judge_server import FakeServer, Reply
from typer.testing import CliRunner

from robojudge.cli._judge import judge

app = typer.Typer()
app.command("judge")(judge)


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


def test_confined_judge_never_sends_the_outside_item(tmp_path: Path, make_items: Any) -> None:
    inside, outside = make_items(["inside", "outside"])
    root = tmp_path / "suite"
    root.mkdir()
    shutil.copy(inside.video, root / "inside.mp4")
    rows = [
        {"item_id": "inside", "video": "inside.mp4", "instruction": inside.instruction},
        {"item_id": "outside", "video": outside.video, "instruction": outside.instruction},  # elsewhere
    ]
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--rubric", "pa", "--no-cache",
            "--no-progress"]  # fmt: skip
    with FakeServer(lambda body, n: Reply('{"reasoning": "ok", "physical_adherence": 4}')) as srv:
        args = [*base, "--base-url", srv.url, "--db", str(tmp_path / "a.sqlite"), "--confine", str(root)]
        res = CliRunner().invoke(app, args)
        confined = srv.count
        free = CliRunner().invoke(app, [*base, "--base-url", srv.url, "--db", str(tmp_path / "b.sqlite")])
    assert res.exit_code == 0, res.output
    assert "skipped manifest row" in res.output and "'outside'" in res.output
    assert "outside the confined folder" in res.output
    assert confined == 1  # the inside item only: nothing of the outside file was sent
    assert free.exit_code == 0 and srv.count == 3  # unconfined, both items are judged
