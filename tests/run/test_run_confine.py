"""``score --confine``: items whose files lie outside the folder are refused, the rest are scored."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.run import score_suite
from robojudge.suite import CONFINE_ENV
from robojudge.video import write_video


@pytest.fixture
def manifest(tmp_path):
    root = tmp_path / "suite"
    root.mkdir()
    ramp = np.full((8, 24, 32, 3), 40, np.uint8)
    for i in range(8):
        ramp[i, 8:16, 3 * i:3 * i + 8] = 220  # a square moving across (a flat field that brightens is still)
    write_video(root / "in.mp4", ramp, fps=8)
    outside = write_video(tmp_path / "outside.mp4", ramp, fps=8)
    rows = [{"item_id": "in", "video": "in.mp4"}, {"item_id": "out", "video": str(outside)}]
    path = root / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_score_suite_confined(manifest, tmp_path):
    free = score_suite(manifest, ["pixel_frame_consistency"], db=str(tmp_path / "free.sqlite"))
    assert free.summary.ok == 2 and free.manifest_problems == []
    db = str(tmp_path / "c.sqlite")
    run = score_suite(manifest, ["pixel_frame_consistency"], db=db, confine=manifest.parent)
    assert (run.summary.ok, run.summary.failed) == (1, 0)
    (problem,) = run.manifest_problems
    assert problem.item_id == "out" and "outside the confined folder" in problem.message


def test_score_command_confine_flag_and_variable(manifest, tmp_path, monkeypatch):
    from robojudge.cli import build_app

    app = build_app("score")
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--no-progress"]
    confined = ["--confine", str(manifest.parent)]
    res = CliRunner().invoke(app, [*args, "--db", str(tmp_path / "a.sqlite"), *confined])
    assert res.exit_code == 0, res.output
    assert "1 scored" in res.output and "skipped manifest row" in res.output and "'out'" in res.output
    monkeypatch.setenv(CONFINE_ENV, str(manifest.parent))
    res = CliRunner().invoke(app, [*args, "--db", str(tmp_path / "b.sqlite")])
    assert "1 scored" in res.output and "outside the confined folder" in res.output
    nowhere = ["--confine", str(tmp_path / "no")]
    res = CliRunner().invoke(app, [*args, "--db", str(tmp_path / "c.sqlite"), *nowhere])
    assert res.exit_code == 2 and "does not exist" in res.output
