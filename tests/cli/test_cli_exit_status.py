"""``robojudge score`` exits 1 when tasks failed and nothing was measured (a suite of broken videos), so
that a script or CI job notices; a run that measured something exits 0 with its failures listed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.video import write_video


def _suite(tmp_path: Path, good: bool) -> Path:
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "text.mp4").write_text("not a video")
    rows = [{"item_id": "empty", "video": "empty.mp4", "instruction": "x"},
            {"item_id": "text", "video": "text.mp4", "instruction": "x"}]
    if good:
        frames = np.zeros((8, 32, 32, 3), np.uint8)
        for t in range(8):
            frames[t, 8:16, 2 + 2 * t:10 + 2 * t] = 200
        write_video(tmp_path / "good.mp4", frames, fps=4)
        rows.append({"item_id": "good", "video": "good.mp4", "instruction": "x"})
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def _score(manifest: Path, run_dir: Path):  # type: ignore[no-untyped-def]
    # uniform_random reads no input: its rows on broken videos do not count as measuring them
    args = ["score", str(manifest), "-m", "pixel_frame_consistency,uniform_random", "--run-dir", str(run_dir),
            "--no-progress"]
    return CliRunner().invoke(build_app("score"), args)


def test_broken_videos_only_exit_1(tmp_path: Path) -> None:
    res = _score(_suite(tmp_path, good=False), tmp_path / "run")
    text = " ".join(res.output.split())
    assert res.exit_code == 1, res.output
    assert "2 scored" in text and "2 failed" in text  # the two uniform_random rows
    assert "nothing was measured" in text


def test_one_measured_video_exits_0(tmp_path: Path) -> None:
    res = _score(_suite(tmp_path, good=True), tmp_path / "run")
    assert res.exit_code == 0, res.output
    assert "2 failed" in " ".join(res.output.split())
    rerun = _score(tmp_path / "suite.jsonl", tmp_path / "run")  # nothing computed: nothing failed now
    assert rerun.exit_code == 0, rerun.output


def test_a_rerun_left_with_only_the_broken_videos_exits_0(tmp_path: Path) -> None:
    # --retry-errors recomputes only the failures: this run measures nothing, the suite was measured
    manifest = _suite(tmp_path, good=True)
    assert _score(manifest, tmp_path / "run").exit_code == 0
    args = ["score", str(manifest), "-m", "pixel_frame_consistency,uniform_random", "--run-dir",
            str(tmp_path / "run"), "--no-progress", "--retry-errors"]
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    assert "2 failed" in " ".join(res.output.split())
