"""One video file under two item ids is said by ``score`` and ``report``, not only by ``suite validate``
(audit suiteio F8): the generator's mean and interval count the clip twice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.suite import load_suite
from robojudge.video import write_video

runner = CliRunner()
NOTE = ("1 item has the same video file as an earlier item under the same instruction ('b' repeats 'a'): "
        "each is scored twice and counted twice in its groups' means; `robojudge suite validate` names them")


def _run(command: str, *args: str):
    return runner.invoke(build_app(command), [command, *args])


def _suite(folder: Path, instruction_b: str = "push") -> Path:
    (folder / "videos").mkdir(parents=True)
    for k, name in enumerate(["a", "c"]):
        write_video(folder / "videos" / f"{name}.mp4", np.full((6, 32, 32, 3), 60 * (k + 1), np.uint8), fps=4)
    rows = [{"item_id": "a", "video": "videos/a.mp4", "generator": "g", "instruction": "push"},
            {"item_id": "b", "video": "./videos/a.mp4", "generator": "g", "instruction": instruction_b},
            {"item_id": "c", "video": "videos/c.mp4", "generator": "g", "instruction": "push"}]
    manifest = folder / "dupv.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return manifest


def test_score_and_report_say_a_video_counted_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path / "s")
    scored = _run("score", "s/dupv.jsonl", "-m", "uniform_random", "--no-progress")
    assert scored.exit_code == 0, scored.output
    assert "3 scored" in scored.stdout
    assert NOTE in " ".join(scored.stdout.split()), scored.stdout
    report = _run("report", "s/dupv.jsonl", "--no-html", "--out", "rep")
    assert report.exit_code == 0, report.output
    assert f"note: {NOTE}" in " ".join(report.output.split()), report.output
    page = _run("report", "s/dupv.jsonl", "--out", "rep2", "--bootstrap", "0")
    assert page.exit_code == 0, page.output
    assert f"note: {NOTE}" in " ".join(page.output.split()), page.output


def test_one_clip_under_two_instructions_is_no_slip(tmp_path: Path) -> None:
    """An instruction-alignment study scores one clip under several instructions: nothing to say."""
    from robojudge.suite import SameVideos, same_videos_note

    manifest = _suite(tmp_path / "s", instruction_b="pull")
    twins = SameVideos()
    for item in load_suite(manifest):
        twins.see(item)
    assert twins.pairs == [] and same_videos_note(twins.pairs) is None
