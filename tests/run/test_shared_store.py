"""Two manifests that give one item id other videos never share a store (they would replace each
other's results); manifests of other items, and a copy of the same suite, still do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.run import score_suite
from robojudge.store import ResultStore
from robojudge.video import write_video


def _experiment(folder: Path, level: int, ids: tuple[str, ...] = ("g/ep",)) -> Path:
    """``folder/videos.jsonl`` with one video per id, all of brightness ``level``."""
    rows = []
    for n, item_id in enumerate(ids):
        video = folder / "videos" / f"{n}.mp4"
        video.parent.mkdir(parents=True, exist_ok=True)
        frames = np.full((6, 24, 24, 3), level, np.uint8)
        frames[:, :, n % 24] = 255 - level  # each video of its own content
        write_video(video, frames, fps=4)
        rows.append({"item_id": item_id, "video": f"videos/{n}.mp4", "instruction": "x"})
    manifest = folder / "videos.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_a_second_experiment_of_the_same_name_is_refused(tmp_path: Path) -> None:
    exp1, exp2 = _experiment(tmp_path / "exp1", 40), _experiment(tmp_path / "exp2", 200)
    runs = tmp_path / "runs" / "videos"
    first = score_suite(exp1, ["pixel_frame_consistency"], run_dir=runs)
    assert first.summary.ok == 1
    with pytest.raises(ValueError, match=r"holds results of another manifest, .*exp1.videos\.jsonl, whose "
                                         r"item 'g/ep' has another video .*--run-dir runs/exp2-videos"):
        score_suite(exp2, ["pixel_frame_consistency"], run_dir=runs)
    with ResultStore(runs / "results.sqlite", read_only=True) as store:
        assert [p for p, _ in store.manifests()] == [exp1.resolve()]  # exp2 was not noted
        assert len(store.rows()) == 1  # and nothing of exp1 was replaced
    res = CliRunner().invoke(build_app("score"), ["score", str(exp2), "-m", "pixel_frame_consistency",
                                                  "--run-dir", str(runs), "--no-progress"])
    assert res.exit_code == 2 and "a store of its own" in " ".join(res.output.split())


def test_other_items_and_a_copied_suite_share_a_store(tmp_path: Path) -> None:
    runs = tmp_path / "runs" / "all"
    gen_a = _experiment(tmp_path / "a", 40, ("a/1", "a/2"))
    gen_b = _experiment(tmp_path / "b", 200, ("b/1",))
    assert score_suite(gen_a, ["pixel_frame_consistency"], run_dir=runs).summary.ok == 2
    assert score_suite(gen_b, ["pixel_frame_consistency"], run_dir=runs).summary.ok == 1
    shutil.copytree(tmp_path / "a", tmp_path / "a-copy")  # the same videos elsewhere: the same results
    again = score_suite(tmp_path / "a-copy" / "videos.jsonl", ["pixel_frame_consistency"], run_dir=runs)
    assert (again.summary.ok, again.summary.skipped) == (0, 2)
    # a manifest that is gone claims nothing: the suite moved on and its new videos are scored
    (tmp_path / "a" / "videos.jsonl").unlink()
    (tmp_path / "a-copy" / "videos.jsonl").unlink()
    _experiment(tmp_path / "a2", 90, ("a/1",))
    moved = score_suite(tmp_path / "a2" / "videos.jsonl", ["pixel_frame_consistency"], run_dir=runs)
    assert (moved.summary.ok, moved.summary.stale) == (1, 1)


@pytest.mark.parametrize(("field", "value", "said"), [
    ("instruction", "y", "another instruction ('x') than in"),
    ("reference_video", "videos/ref.mp4", "another reference_video (None) than in"),
    ("meta", {"caption": "a robot"}, "another meta.caption (None) than in"),  # sa_bleu reads it
])
def test_the_same_video_under_another_input_is_refused(tmp_path: Path, field: str, value: object,
                                                       said: str) -> None:
    # Two manifests of one item id and video, one with another reference (or instruction): each run
    # recomputed what the other had stored, and the value flipped back and forth on every run.
    exp1 = _experiment(tmp_path / "exp", 40)
    rows = [json.loads(line) for line in exp1.read_text().splitlines()]
    write_video(tmp_path / "exp" / "videos" / "ref.mp4", np.full((6, 24, 24, 3), 9, np.uint8), fps=4)
    rows[0][field] = value
    exp2 = tmp_path / "exp" / "other.jsonl"
    exp2.write_text("".join(json.dumps(r) + "\n" for r in rows))
    runs = tmp_path / "runs" / "shared"
    assert score_suite(exp1, ["pixel_frame_consistency"], run_dir=runs).summary.ok == 1
    with pytest.raises(ValueError, match="item 'g/ep' has " + said.replace("(", r"\(").replace(")", r"\)")):
        score_suite(exp2, ["pixel_frame_consistency"], run_dir=runs)
