"""``leaderboard fps-ablation`` where every reply at a rate is unparsable (audit cli2 F5): before, the
command exited 2 (a bad command line or store) and the table of the other rates was lost, while
``robojudge judge`` counts such a run and exits 0; its hint named ``robojudge results``, a command group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from _judge_server import FakeServer, Reply, n_images
from typer.testing import CliRunner

from robojudge.cli._leaderboard import fps_ablation

OK = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4}'
UNPARSABLE = '{"reasoning": "r", "score": 3}'  # no key of the rubric


def _few_frames_unparsable(body: dict[str, Any], n: int) -> Reply:
    # 8 frames at 4 fps: 1 fps sends 2 images, native all 8
    return Reply(UNPARSABLE if n_images(body) <= 2 else OK)


def _manifest(tmp_path: Path, make_items: Any) -> Path:
    path = tmp_path / "suite.jsonl"
    rows = []
    for k, it in enumerate(make_items(["a", "b", "c"])):
        row = it.model_dump(exclude_none=True, exclude_defaults=True)
        rows.append({**row, "generator": f"g{k}", "clip_id": f"c{k}", "labels": {"pa": 3, "ia": 4}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _invoke(*args: str) -> Any:
    app = typer.Typer()
    app.command("fps-ablation")(fps_ablation)
    app.command("noop")(lambda: None)
    return CliRunner().invoke(app, ["fps-ablation", *args], env={"COLUMNS": "250"})


def test_a_rate_of_unparsable_replies_is_left_out_and_the_others_are_tabulated(tmp_path: Path,
                                                                                make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_few_frames_unparsable) as srv:
        res = _invoke(str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
                      "--fps", "1,native", "--db", str(tmp_path / "r.sqlite"), "--no-cache", "--bootstrap",
                      "0", "--no-progress", "--out", str(tmp_path / "out"))
    assert res.exit_code == 0, res.output
    assert "m-fps1: 0 scored, 6 unparsable" in res.stdout and "m-fpsnative: 6 scored" in res.stdout
    said = " ".join(res.stderr.split())
    assert "note: left out of the table, with no scored judgment" in said and "m-fps1;" in said, said
    assert "robojudge results export --metric judge:m-fps1:pa -o -" in said
    md = (tmp_path / "out" / "fps_ablation.md").read_text()
    assert "| native |" in md and "| 1 |" not in md
    assert "Left out, with no scored judgment (every reply unparsable or every request failed): m-fps1" \
        in " ".join(md.split())


def test_no_rate_with_a_scored_reply_says_so_and_exits_1(tmp_path: Path, make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(lambda body, n: Reply(UNPARSABLE)) as srv:
        res = _invoke(str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
                      "--fps", "1,2", "--db", str(tmp_path / "r.sqlite"), "--no-cache", "--bootstrap", "0",
                      "--no-progress")
    assert res.exit_code == 1, res.output
    assert "m-fps1: 0 scored, 6 unparsable" in res.stdout and "m-fps2: 0 scored, 6 unparsable" \
        in res.stdout
    said = " ".join(res.stderr.split())
    assert "nothing to compare: no frame rate has a scored judgment (m-fps1, m-fps2" in said, said
    assert "`robojudge results export --metric judge:m-fps1:ia -o -`" in said
    assert "see `robojudge results` for" not in said


def test_the_left_out_hint_names_a_rubric_the_run_judged(tmp_path: Path, make_items: Any) -> None:
    """With --rubric ia the hint named judge:NAME:pa, which the store does not hold (review rev28 F3)."""
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_few_frames_unparsable) as srv:
        res = _invoke(str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
                      "--fps", "1,native", "--rubric", "ia", "--db", str(tmp_path / "r.sqlite"), "--no-cache",
                      "--bootstrap", "0", "--no-progress")
    assert res.exit_code == 0, res.output
    assert "robojudge results export --metric judge:m-fps1:ia -o -" in " ".join(res.stderr.split())
