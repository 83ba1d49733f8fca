"""Warnings about a video (an assumed rate, bad time stamps) reach its result rows and the run summary."""


import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest

from _score_cli import score_one
from robojudge.run import LocalProcessExecutor, SerialExecutor, build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

ASSUMED = "no fps.txt in the frame folder; rate assumed to be 30 fps"


def _ramp():
    return np.stack([np.full((24, 32, 3), 25 * i, np.uint8) for i in range(8)])


@pytest.fixture
def videos(tmp_path):
    folder = write_video(tmp_path / "frames", _ramp(), fps=8)
    (folder / "fps.txt").unlink()  # the rate is now a guess
    clean = write_video(tmp_path / "clean.mp4", _ramp(), fps=8)
    return folder, clean


@pytest.mark.parametrize(
    "executor", [SerialExecutor, lambda: LocalProcessExecutor(2)], ids=["serial", "pool"]
)
def test_rows_that_read_the_video_carry_its_warnings(tmp_path, videos, executor):
    folder, clean = videos
    items = [
        Item(item_id="guess", video=str(folder), instruction="push"),
        Item(item_id="clean", video=str(clean), instruction="push"),
    ]
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        s = score_items(items, build_requests(["pixel_frame_consistency", "test_slow"]), store,
                        executor=executor())
        rows = {(r.item_id, r.metric): r for r in store.rows()}
    assert (s.ok, s.failed) == (4, 0)
    expected = [f"{folder}: {ASSUMED}"]
    assert rows[("guess", "pixel_frame_consistency")].details["video_warnings"] == expected
    # A metric that never looked at the video says nothing about it; a clean video says nothing.
    assert "video_warnings" not in (rows[("guess", "test_slow")].details or {})
    assert "video_warnings" not in (rows[("clean", "pixel_frame_consistency")].details or {})
    assert s.warned == 1 and s.video_warnings == {"guess": expected}


def test_score_command_prints_the_warnings(tmp_path, videos):
    folder, _ = videos
    result = score_one(tmp_path, "guess", folder)
    assert "1 result with video warnings (1 item)" in result.output
    assert f"guess: {folder}: {ASSUMED}" in result.output
