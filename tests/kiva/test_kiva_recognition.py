"""A video in which the reader does not recognise its robot is unscored (measure version 8): the reader's
confidence (its heatmaps' mass near their peaks) against half of what it has on its reference videos,
checked only for a reader less sure of robot-free clips than that."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from robojudge.kiva import (
    CONFIDENCE_RATIO,
    Thresholds,
    Tracks,
    judge_tracks,
    reader_confidence,
)

FPS = 10.0
LINKS = [(0, 1), (1, 2)]
CUTS = Thresholds(rigidity=0.05, jerk=50.0, finger=math.nan, finger_gap=math.nan)


def swinging_arm(confidence: np.ndarray | None) -> Tracks:
    """A 3-keypoint arm whose tip swings smoothly 20 px in a 200 x 150 picture (a valid, moving robot)."""
    t = np.arange(48) / FPS
    pts = np.zeros((48, 3, 2))
    pts[:, 0] = (60.0, 100.0)
    pts[:, 1] = (90.0, 100.0)
    angle = (20.0 / 30.0) * np.sin(2 * np.pi * 0.25 * t)
    pts[:, 2] = np.stack([90.0 + 30.0 * np.cos(angle), 100.0 + 30.0 * np.sin(angle)], axis=-1)
    seen = np.ones((48, 3), bool)
    return Tracks(pts, seen, seen.astype(float), FPS, 200, 150, confidence=confidence)


def test_reader_confidence_is_the_median_over_frames_and_keypoints_and_nan_without_confidence():
    conf = np.full((48, 3), 0.6)
    conf[:10] = 0.1  # 30 of 144 values low: the median stays 0.6
    assert reader_confidence(swinging_arm(conf)) == pytest.approx(0.6)
    conf[:30] = 0.1  # 90 of 144 low
    assert reader_confidence(swinging_arm(conf)) == pytest.approx(0.1)
    assert math.isnan(reader_confidence(swinging_arm(None)))


def test_a_video_read_below_the_confidence_floor_is_unscored_and_says_why():
    floor = CONFIDENCE_RATIO * 0.7
    sure = judge_tracks(swinging_arm(np.full((48, 3), 0.6)), LINKS, CUTS, min_confidence=floor)
    assert sure.reason is None and len(sure.verdicts) == 3 and sure.value()[0] == 0.0
    assert sure.details()["reader_confidence"] == 0.6 and sure.details()["min_confidence"] == 0.35

    unsure = judge_tracks(swinging_arm(np.full((48, 3), 0.2)), LINKS, CUTS, min_confidence=floor)
    assert not unsure.verdicts and "does not recognise its robot" in unsure.reason
    assert "0.200, below 0.350" in unsure.reason
    assert unsure.details()["reader_confidence"] == 0.2 and math.isnan(unsure.value()[0])

    # No floor (a reader calibrated before version 8), or reads without confidence: judged as before.
    for tracks, floor_ in ((swinging_arm(np.full((48, 3), 0.2)), math.nan), (swinging_arm(None), floor)):
        judged = judge_tracks(tracks, LINKS, CUTS, min_confidence=floor_)
        assert judged.reason is None and len(judged.verdicts) == 3
    assert "reader_confidence" not in judge_tracks(swinging_arm(None), LINKS, CUTS).details()


# ------------------------------------------------------------------ with a trained reader (slow)

#: A 64 px reader (the tiny reader of the other tests reads 32 px: its 16 x 16 heatmaps are too coarse
#: to tell a picture without its robot, whose 3 x 3 cells round any peak hold much of the map).
SHARP = {"size": 64}


def test_robot_free_clips_are_seeded_and_shaped_as_asked():
    from robojudge.kiva._reader import robot_free_clips

    clips = robot_free_clips((5, 24, 40, 3), seed=3)
    assert list(clips) == ["textured pan", "uniform noise"]
    assert all(c.shape == (5, 24, 40, 3) and c.dtype == np.uint8 for c in clips.values())
    again = robot_free_clips((5, 24, 40, 3), seed=3)
    assert all(np.array_equal(clips[k], again[k]) for k in clips)
    other = robot_free_clips((5, 24, 40, 3), seed=4)
    assert not np.array_equal(other["uniform noise"], clips["uniform noise"])


@pytest.fixture(scope="module")
def sharp_reader(kiva_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from _kiva_consts import TINY

    from robojudge.kiva import TrainConfig, calibrate_reader, train_reader

    out = tmp_path_factory.mktemp("kiva_sharp_reader")
    train_reader(kiva_suite, "fetch", out, TrainConfig(**{**TINY, **SHARP}))
    calibrate_reader(out, kiva_suite)
    return out


@pytest.mark.slow
def test_calibration_stores_the_references_median_confidence(sharp_reader, kiva_suite):
    from robojudge.kiva import load_reader, read_frames
    from robojudge.kiva._reader import read_video, robot_free_clips
    from robojudge.video import sample_frames

    reader = load_reader(sharp_reader)
    cal = reader.meta["calibration"]
    each = [reader_confidence(read_video(reader, v)) for v in cal["videos"]]
    assert len(each) == 4 and not any("adroit" in v for v in cal["videos"])  # the Fetch references
    assert cal["confidence"] == pytest.approx(float(np.median(each)))
    # The robot-free clips, shaped like the first reference, read below the floor: the check is on.
    first = sample_frames(cal["videos"][0], fps=None, max_frames=None)
    clips = robot_free_clips(first.frames.shape)
    assert cal["confidence_negatives"] == {
        k: pytest.approx(reader_confidence(read_frames(reader, c, float(first.source_fps))))
        for k, c in clips.items()}
    assert reader.recognition[0] == pytest.approx(CONFIDENCE_RATIO * cal["confidence"])
    assert max(cal["confidence_negatives"].values()) < reader.recognition[0]
    assert reader.recognition[1] == "checked"


@pytest.mark.slow
def test_a_reader_as_sure_of_a_robot_free_clip_makes_no_check_and_judges_noise(tiny_reader, kiva_suite,
                                                                              tmp_path):
    from robojudge.kiva import load_reader
    from robojudge.metrics import get_metric
    from robojudge.suite import Item, load_suite
    from robojudge.video import sample_frames, write_video

    reader = load_reader(tiny_reader)
    cal = reader.meta["calibration"]
    assert max(cal["confidence_negatives"].values()) >= CONFIDENCE_RATIO * cal["confidence"]
    assert math.isnan(reader.recognition[0]) and "does not tell its robot" in reader.recognition[1]
    frames = sample_frames(load_suite(kiva_suite).by_id("fetch00-oracle").video, fps=None,
                           max_frames=None).frames
    write_video(tmp_path / "noise", np.random.default_rng(1).integers(0, 256, frames.shape, dtype=np.uint8),
                fps=10)
    spec = get_metric("kiva")
    out = spec.compute(Item(item_id="noise", video=str(tmp_path / "noise")),
                       spec.make_config({"reader": str(tiny_reader)}))
    assert out.value == 100.0 and out.details["recognition"].startswith("not checked")
    assert "min_confidence" not in out.details and out.details["reader_confidence"] > 0


@pytest.mark.slow
def test_the_metric_judges_its_robot_and_leaves_another_robot_and_noise_unscored(sharp_reader, kiva_suite,
                                                                                 tmp_path):
    from robojudge.metrics import get_metric
    from robojudge.suite import Item, load_suite
    from robojudge.video import sample_frames, write_video

    suite = load_suite(kiva_suite)
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(sharp_reader)})
    fetch = spec.compute(suite.by_id("fetch00-oracle"), cfg)
    assert fetch.scored and fetch.details["reader_confidence"] >= fetch.details["min_confidence"]
    assert fetch.details["recognition"] == "checked"

    # The ADROIT hand, read by a reader of Fetch (its embodiment left out, so the metric does not refuse it
    # first), and uniform noise: the reader's heatmaps spread out.
    adroit = suite.by_id("adroit01-oracle")
    frames = sample_frames(adroit.video, fps=None, max_frames=None).frames
    write_video(tmp_path / "noise", np.random.default_rng(1).integers(0, 256, frames.shape, dtype=np.uint8),
                fps=10)
    noise = Item(item_id="noise", video=str(tmp_path / "noise"))
    for item in (Item(item_id="hand", video=adroit.video), noise):
        for metric in ("kiva", "kiva_rigidity", "kiva_jerk"):
            spec_m = get_metric(metric)
            out = spec_m.compute(item, spec_m.make_config({"reader": str(sharp_reader)}))
            assert math.isnan(out.value), (item.item_id, metric, out.details)
            assert "does not recognise its robot" in out.details["unscored_reason"]
            assert out.details["reader_confidence"] < out.details["min_confidence"]
