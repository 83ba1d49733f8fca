"""A manifest of which no row validates fails the command (exit 2) and makes no store; a run says how
many results found nothing to measure, apart from those scored."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.suite import ManifestError
from robojudge.video import write_video


@pytest.mark.parametrize(("command", "options"), [
    (["score"], ["-m", "pixel_frame_consistency"]),
    (["metrics", "sets"], ["-m", "iq1_fvd"]),
    (["judge"], ["--backend", "mock", "--model", "m", "--rubric", "pa"]),
], ids=["score", "sets", "judge"])
def test_no_valid_row_is_an_error_and_makes_no_store(tmp_path: Path, command: list[str],
                                                     options: list[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item_id": "x", "video": "nope.mp4", "instruction": "y", "generator": "g"})
                   + "\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    app = build_app(command[0])
    for manifest, said in ((bad, "bad.jsonl:1: item 'x' field video: file not found"),
                           (empty, "empty.jsonl: manifest has no items")):
        res = CliRunner().invoke(app, [*command, str(manifest), *options, "--run-dir", str(tmp_path / "run")])
        assert res.exit_code == 2, res.output
        assert said in " ".join(res.output.split())
        assert not (tmp_path / "run").exists()  # no store was made for nothing


def test_the_api_refuses_it_too(tmp_path: Path) -> None:
    from robojudge.run import score_suite

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item_id": "x", "video": "nope.mp4", "instruction": "y"}) + "\n")
    with pytest.raises(ManifestError, match="file not found"):
        score_suite(bad, ["pixel_frame_consistency"], run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_manifest_with_a_valid_row_is_scored_and_its_bad_rows_named(tmp_path: Path) -> None:
    moving = np.zeros((8, 32, 32, 3), np.uint8)
    for t in range(8):
        moving[t, 4:10, 3 * t:3 * t + 5] = 255
    write_video(tmp_path / "mov.mp4", moving, fps=4)
    write_video(tmp_path / "one.mp4", np.zeros((1, 32, 32, 3), np.uint8), fps=4)
    write_video(tmp_path / "still.mp4", np.zeros((8, 32, 32, 3), np.uint8), fps=4)
    manifest = tmp_path / "s.jsonl"
    rows = [{"item_id": n, "video": f"{n}.mp4", "instruction": "x"} for n in ("mov", "one", "still")]
    rows.append({"item_id": "gone", "video": "nope.mp4", "instruction": "x"})
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(build_app("score"), [
        "score", str(manifest), "-m", "pixel_frame_consistency,mq_dynamic_degree", "--db",
        str(tmp_path / "r.sqlite"), "--no-progress"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "skipped manifest row" in out and "'gone'" in out
    # one frame: both metrics unscored; still: dynamic degree measures nothing, consistency is scored
    assert "6 tasks: 3 scored, 3 unscored (nothing to measure), 0 failed" in out
    assert ("unscored: 2 results (1 item): the video gave 1 frame; the metric needs at least 2 frames; "
            "1 result (1 item): the video is still") in out


def test_one_still_clip_is_one_kind_of_reason_in_results_and_items(tmp_path: Path) -> None:
    # A still clip read at several frame counts: its reasons differ only in their numbers (frames read,
    # the largest change). They were counted apart ("1 x ... of its 8 frames ...; 1 x ... of its 4
    # frames ..."), as if each were another still video; now one kind, its frame counts as a range.
    write_video(tmp_path / "still.mp4", np.zeros((8, 32, 32, 3), np.uint8), fps=4)
    manifest = tmp_path / "s.jsonl"
    manifest.write_text(json.dumps({"item_id": "still", "video": "still.mp4", "instruction": "x"}) + "\n")
    res = CliRunner().invoke(build_app("score"), [
        "score", str(manifest), "-m", "mq_temporal_flickering,ctg_camera_control",
        "--set", "mq_temporal_flickering.max_frames=4", "--db", str(tmp_path / "r.sqlite"), "--no-progress"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "2 unscored (nothing to measure)" in out, res.output
    line = out[out.index("unscored: "):]
    assert line.startswith("unscored: 2 results (1 item): the video is still: ") and " x " not in line
    assert "4 to 8 frames" in line
