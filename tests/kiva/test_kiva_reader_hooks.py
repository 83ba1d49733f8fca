"""What a loaded reader passes to KIVA's measures: finger pairs, the finger threshold, held frames."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from robojudge.kiva import FINGER_PAIRS, finger_indices, resolve_robot  # noqa: E402
from robojudge.kiva._net import KeypointReader  # noqa: E402
from robojudge.kiva._reader import Reader, read_frames  # noqa: E402


def _reader(meta_extra: dict) -> Reader:
    names = list(resolve_robot("fetch").keypoints)
    meta = {"robot": "fetch", "keypoints": names, "image_size": 16, "links": [[0, 1]],
            "config": {"context": 3}, **meta_extra}
    torch.manual_seed(0)
    return Reader(KeypointReader(len(names), 3, 8).eval(), meta, Path("."))


def test_a_reader_gives_its_stored_finger_pairs_or_its_built_in_robots():
    names = list(resolve_robot("fetch").keypoints)
    old = _reader({})  # trained before finger pairs were stored
    assert FINGER_PAIRS["fetch"] and old.fingers == finger_indices(FINGER_PAIRS["fetch"], names)
    assert _reader({"fingers": [[1, 2, 0]]}).fingers == [(1, 2, 0)]
    assert _reader({"fingers": []}).fingers == []


def test_the_finger_threshold_is_read_and_missing_or_null_means_not_judged():
    cal = {"rigidity": 0.1, "jerk": 5.0}
    before = _reader({"calibration": cal}).thresholds
    assert before is not None and math.isnan(before.finger)
    now = _reader({"calibration": {**cal, "finger": 0.004}}).thresholds
    assert now is not None and (now.rigidity, now.jerk, now.finger) == (0.1, 5.0, 0.004)
    null = _reader({"calibration": {**cal, "finger": None, "rigidity": None}}).thresholds
    assert null is not None and math.isnan(null.finger) and math.isnan(null.rigidity)


def test_the_finger_gap_cut_is_read_and_a_reader_calibrated_before_it_has_none():
    cal = {"rigidity": 0.1, "jerk": 5.0, "finger": 0.004}
    before = _reader({"calibration": cal}).thresholds  # calibrated before measure version 5
    assert before is not None and math.isnan(before.finger_gap) and before.finger == 0.004
    now = _reader({"calibration": {**cal, "finger_gap": 0.03}}).thresholds
    assert now is not None and now.finger_gap == 0.03
    null = _reader({"calibration": {**cal, "finger_gap": None}}).thresholds
    assert null is not None and math.isnan(null.finger_gap)


def test_a_reader_calibrated_before_measure_version_6_is_judged_on_pixel_lengths():
    from robojudge.kiva._reader import tracks_segments
    from robojudge.kiva._score import Tracks

    cal = {"rigidity": 0.1, "jerk": 5.0}
    old, new = _reader({"calibration": cal}), _reader({"calibration": {**cal, "lengths": "relative"}})
    assert (old.relative_lengths, new.relative_lengths) == (False, True)
    assert _reader({}).relative_lengths is False  # not calibrated at all
    # Four keypoints in a row, links 0-1, 1-2, 2-3, all growing by half over 32 frames (a zoom).
    pts = np.zeros((32, len(old.meta["keypoints"]), 2))
    pts[:, :4, 0] = np.array([10.0, 40.0, 70.0, 100.0]) * np.linspace(1.0, 1.5, 32)[:, None]
    vis = np.zeros(pts.shape[:2], bool)
    vis[:, :4] = True
    tracks = Tracks(pts, vis, vis.astype(float), 10.0, 200, 150)
    for reader in (old, new):
        reader.meta["links"] = [[0, 1], [1, 2], [2, 3]]
    assert all(v.rigidity > 0.05 for v in tracks_segments(old, tracks))
    assert all(v.rigidity < 1e-9 for v in tracks_segments(new, tracks))
    assert all(v.rigidity > 0.05 for v in tracks_segments(new, tracks, relative=False))


def test_a_reader_calibrated_before_measure_version_7_is_judged_with_the_centre_windows():
    from robojudge.kiva._reader import tracks_segments
    from robojudge.kiva._score import Tracks

    cal = {"rigidity": 0.1, "jerk": 5.0, "lengths": "relative"}
    old, new = _reader({"calibration": cal}), _reader({"calibration": {**cal, "jerk_windows": "lead"}})
    assert (old.jerk_windows, new.jerk_windows) == ("centre", "lead")
    assert _reader({}).jerk_windows == "centre"  # not calibrated at all
    assert _reader({"calibration": {**cal, "jerk_windows": "sideways"}}).jerk_windows == "centre"
    # One keypoint jumps 3 px between frames 15 and 16: the centre windows show it in segment 0 too.
    pts = np.full((32, len(old.meta["keypoints"]), 2), 20.0)
    pts[16:, 0, 0] += 3.0
    vis = np.ones(pts.shape[:2], bool)
    tracks = Tracks(pts, vis, vis.astype(float), 10.0, 200, 150)
    jerk_old = [v.jerk for v in tracks_segments(old, tracks)]
    jerk_new = [v.jerk for v in tracks_segments(new, tracks)]
    assert jerk_old[0] > 0 and jerk_new[0] == 0 and jerk_new[1] > 0
    assert [v.jerk for v in tracks_segments(new, tracks, window="centre")] == jerk_old


def test_a_stored_calibration_tells_the_measure_version_it_was_drawn_for():
    from robojudge.kiva import MEASURE_VERSION, calibration_version

    cal: dict = {"rigidity": 0.1, "jerk": 5.0, "finger": None}
    assert calibration_version(None) == 0 and calibration_version({}) == 0
    assert calibration_version(cal) == 3
    for key, value, version in (("scales", {"links": [0.1], "keypoints": [2.0]}, 4), ("finger_gap", None, 5),
                                ("lengths", "relative", 6), ("jerk_windows", "lead", 7),
                                ("confidence", 0.7, 8)):
        if key == "confidence":  # the last key before it: no confidence yet, so no floor
            assert math.isnan(_reader({"calibration": cal}).recognition[0])
        cal[key] = value
        assert calibration_version(cal) == version, key
    assert MEASURE_VERSION == 8
    # What a reader judges with follows the same keys.
    reader = _reader({"calibration": cal})
    assert reader.relative_lengths and reader.jerk_windows == "lead" and reader.scales is not None
    assert reader.recognition[0] == pytest.approx(0.35)  # half the references' confidence
    assert reader.recognition[1] == "checked"
    # A reader as sure of a robot-free clip as the floor does not tell its robot from none: no check.
    cal["confidence_negatives"] = {"textured pan": 0.2, "uniform noise": 0.34}
    assert _reader({"calibration": cal}).recognition[0] == pytest.approx(0.35)
    cal["confidence_negatives"]["uniform noise"] = 0.35
    floor, note = _reader({"calibration": cal}).recognition
    assert math.isnan(floor)
    assert "uniform noise (0.350) is not below the floor 0.350 (0.5 of its references' median, 0.700)" in note
    del cal["confidence"]
    assert "before measure version 8" in _reader({"calibration": cal}).recognition[1]


def test_reading_marks_the_frames_that_repeat_the_previous_one():
    frames = np.random.default_rng(0).integers(0, 256, (6, 24, 32, 3), dtype=np.uint8)
    frames[3] = frames[2]
    tracks = read_frames(_reader({}), frames, 10.0)
    assert tracks.held is not None and tracks.held.tolist() == [False, False, False, True, False, False]


def test_a_stored_calibration_names_the_older_rules_it_is_judged_by():
    from robojudge.kiva import OLDER_RULES, older_rules

    cal: dict = {"rigidity": 0.1, "jerk": 5.0}  # version 3
    assert older_rules(None) == [] and older_rules({}) == []
    assert older_rules(cal) == list(OLDER_RULES.values())
    expected = list(OLDER_RULES.values())
    for key, value in (("scales", {"links": [0.1], "keypoints": [2.0]}), ("finger_gap", None),
                       ("lengths", "relative"), ("jerk_windows", "lead"), ("confidence", 0.7)):
        cal[key] = value
        expected.remove(OLDER_RULES[key])
        assert older_rules(cal) == expected, key
        assert _reader({"calibration": cal}).older_rules == expected
    assert _reader({"calibration": cal}).calibration_version == 8
