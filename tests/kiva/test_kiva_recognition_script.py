"""scripts/kiva_recognition_check.py: the softened and robot-free clips it makes, its table, and its rows
on the tiny suite read by the tiny Fetch reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _scripts import load_script

krc = load_script("kiva_recognition_check")


def test_softened_clips_keep_their_shape_and_lose_detail():
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (3, 32, 48, 3), dtype=np.uint8)
    for soft in (krc.blurred(frames), krc.half_size(frames)):
        assert soft.shape == frames.shape and soft.dtype == np.uint8
        # Neighbouring pixels of noise differ a lot; softened, much less.
        assert np.abs(np.diff(soft.astype(int), axis=2)).mean() < 0.7 * np.abs(np.diff(frames.astype(int),
                                                                                         axis=2)).mean()


def test_robot_free_clips_have_the_shape_asked_and_the_pan_slides_two_pixels_a_frame():
    like = np.random.default_rng(1).integers(0, 256, (6, 20, 30, 3), dtype=np.uint8)
    clips = krc.robot_free(like)
    assert list(clips) == ["textured pan", "uniform noise", "shuffled"]
    assert all(c.shape == like.shape and c.dtype == np.uint8 for c in clips.values())
    pan = clips["textured pan"]
    np.testing.assert_array_equal(pan[1][:, :-2], pan[0][:, 2:])
    assert not np.array_equal(pan[1], pan[0])
    shuffled = clips["shuffled"]
    assert sorted(f.tobytes() for f in shuffled) == sorted(f.tobytes() for f in like)
    assert any(not np.array_equal(a, b) for a, b in zip(shuffled, like, strict=True))


def test_table_gives_each_rows_span_and_counts_shares_below_the_ratio():
    rows = [("fetch", "rollouts", [0.9, 1.05, 0.95]), ("fetch", "adroit", [0.2, 0.6]),
            ("fetch", "uniform noise", [0.1])]
    lines = krc.table(rows, 0.5)
    assert lines[2] == "| fetch | rollouts | 3 | 0.90-1.05 | 0 |"
    assert lines[3] == "| fetch | adroit | 2 | 0.20-0.60 | 1 |"
    assert lines[4] == "| fetch | uniform noise | 1 | 0.10 | 1 |"


def test_by_generator_keeps_the_first_videos_of_each_generator_with_absolute_paths(tmp_path):
    import json

    rows = [{"item_id": f"i{k}", "video": f"clips/c{k}.mp4", "generator": g}
            for k, g in enumerate(["real", "wm", "real", "real", "wm"])]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    got = krc.by_generator(manifest, 2)
    assert got == {"real: real": [tmp_path / "clips/c0.mp4", tmp_path / "clips/c2.mp4"],
                   "real: wm": [tmp_path / "clips/c1.mp4", tmp_path / "clips/c4.mp4"]}


@pytest.mark.slow
def test_check_reads_a_robots_rollouts_near_its_references_and_another_robot_below_them(kiva_suite,
                                                                                      tiny_reader, tmp_path):
    folder = Path(kiva_suite).parent
    root, readers = tmp_path / "suites", tmp_path / "readers"
    for robot in ("fetch", "adroit"):
        for sub in ("reference", "videos"):
            (root / robot / sub).mkdir(parents=True)
            for video in (folder / sub).glob(f"{robot}*.mp4"):
                (root / robot / sub / video.name).symlink_to(video)
        (readers / robot).mkdir(parents=True)
        # (the tiny Fetch reader stands in for the ADROIT one too: only the Fetch rows are checked)
        (readers / robot / "r").symlink_to(tiny_reader)
    extra = {"a reference again": [folder / "reference" / "fetch00.mp4"]}
    rows = krc.check(readers, "r", root, ["fetch", "adroit"], per_robot=1, log=lambda _: None, extra=extra)
    fetch = {what: values for robot, what, values in rows if robot == "fetch"}
    assert list(fetch) == ["rollouts", "blurred", "half-size", "adroit", "textured pan", "uniform noise",
                           "shuffled", "a reference again"]
    assert 0.9 < fetch["a reference again"][0] < 1.1  # one of the references whose median is the base
    assert len(fetch["rollouts"]) == 8 and len(fetch["adroit"]) == 1
    # The reader's own robot sits near its references; the ADROIT hand well below the lowest of them.
    assert min(fetch["rollouts"]) > 0.8 and max(fetch["rollouts"]) < 1.2
    assert fetch["adroit"][0] < 0.8 * min(fetch["rollouts"])
