"""What a reader may judge: segments of the length its thresholds were calibrated on, and items of its
own robot. Each of these was judged before, and the numbers meant nothing (second KIVA audit):

* a `segment` other than the calibrated 16 frames moved a faithful rollout from 17% to 33% to 100%
  (a segment's maxima grow with its length); calibration now stores its length, `kiva calibrate
  --segment N` sets it, and the metrics refuse a config with another;
* an item whose manifest names another robot's spec was read as the reader's robot (a Fetch reader gave
  an ADROIT clip 0%, the best value);
* references shorter than a segment ended calibration with "part scales need at least one reference
  segment", naming neither the manifest nor the cause.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from robojudge.metrics import MetricInputError, get_metric
from robojudge.suite import load_suite

pytestmark = pytest.mark.slow


def _item(kiva_suite: Path, **update: object):
    return load_suite(kiva_suite).by_id("fetch00-oracle").model_copy(update=update)


def test_a_segment_other_than_the_calibrated_one_is_refused_until_calibrated_for_it(
        tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    from robojudge.kiva import calibrate_reader, load_reader

    spec = get_metric("kiva")
    with pytest.raises(MetricInputError, match=r"calibrated on 16-frame segments, and segment is 8.*"
                                               r"kiva calibrate --segment 8"):
        spec.compute(_item(kiva_suite), spec.make_config({"reader": str(tiny_reader), "segment": 8}))
    eight = tmp_path / "reader8"
    shutil.copytree(tiny_reader, eight)
    cal = calibrate_reader(eight, kiva_suite, segment=8)
    assert cal["segment"] == 8 and load_reader(eight).segment == 8
    assert json.loads((eight / "reader.json").read_text())["calibration"]["segment"] == 8
    score = spec.compute(_item(kiva_suite), spec.make_config({"reader": str(eight), "segment": 8,
                                                              "min_segment": 8}))
    spans = [(s["start"], s["stop"]) for s in score.details["segments"]]
    assert score.scored and spans[:2] == [(0, 8), (8, 16)]
    with pytest.raises(MetricInputError, match="calibrated on 8-frame segments, and segment is 16"):
        spec.compute(_item(kiva_suite), spec.make_config({"reader": str(eight)}))
    with pytest.raises(Exception, match=r"none of the \d+ reference video\(s\) of robot 'fetch' gives a "
                                        r"64-frame segment \(reference:fetch00: 48 frames"):
        calibrate_reader(eight, kiva_suite, segment=64)


def test_an_item_of_another_robot_is_refused(tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    from robojudge.kiva import load_reader

    keypoints = load_reader(tiny_reader).meta["keypoints"]
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(tiny_reader)})
    arm = tmp_path / "arm.toml"
    arm.write_text('name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "upper"]\n')
    with pytest.raises(MetricInputError,
                       match=r"item 'fetch00-oracle' is robot 'arm' .* reader .* reads robot 'fetch'"):
        spec.compute(_item(kiva_suite, robot=str(arm)), cfg)
    same = tmp_path / "fetch.toml"  # the reader's robot under a spec file of the user's: judged
    same.write_text(f'name = "fetch"\nmodel = "fetch.xml"\nkeypoints = {json.dumps(keypoints)}\n')
    assert spec.compute(_item(kiva_suite, robot=str(same)), cfg).scored
    assert spec.compute(_item(kiva_suite), cfg).scored  # no spec named: judged as before


def test_a_state_file_with_fewer_rows_than_its_video_is_refused(kiva_suite: Path, tmp_path: Path) -> None:
    """It was cut silently to the shorter one (a recording's joint states were refused for the same):
    a state file of another episode, or cut short, puts its keypoints on the wrong frames."""
    import numpy as np
    from _kiva_consts import TINY

    from robojudge.kiva import KivaDataError, TrainConfig, train_reader

    copy = tmp_path / "suite"
    shutil.copytree(kiva_suite.parent, copy)
    state = copy / "reference" / "fetch00.npz"
    with np.load(state) as z:
        arrays = {k: z[k] for k in z.files}
    for k in ("keypoints_2d", "keypoints_visible", "keypoints_3d"):
        arrays[k] = arrays[k][:40]
    np.savez(state, **arrays)
    with pytest.raises(KivaDataError, match=rf"state file {state} has 40 rows of keypoints and its video "
                                            r".*fetch00\.mp4 48 frames"):
        train_reader(copy / kiva_suite.name, "fetch", tmp_path / "r", TrainConfig(**TINY))


def test_a_video_of_another_shape_than_the_training_videos_is_refused(
        tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    """Frames are squashed to a square as in training: black bars above and below showed the reader a
    robot squashed another way, and took a faithful clip from 0% to 100%. Within 3% is judged."""
    import numpy as np

    from robojudge.kiva import load_reader
    from robojudge.video import sample_frames, write_video

    assert load_reader(tiny_reader).aspects == [1.0]  # the suite's square clips
    item = _item(kiva_suite)
    frames = sample_frames(item.video, fps=None, max_frames=None).frames
    h, w = frames.shape[1:3]
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(tiny_reader)})
    bars = np.pad(frames, ((0, 0), (h // 4, h // 4), (0, 0), (0, 0)))
    write_video(tmp_path / "bars.mp4", np.ascontiguousarray(bars), fps=10)
    with pytest.raises(MetricInputError, match=rf"video is {w}x{bars.shape[1]} \(width/height 0\.667\) and "
                                               r"reader .* was trained on videos of width/height 1\.000"):
        spec.compute(item.model_copy(update={"video": str(tmp_path / "bars.mp4")}), cfg)
    import cv2

    near = np.stack([cv2.resize(f, (w + 1, h)) for f in frames])  # 65x64: 1.6% off, judged
    write_video(tmp_path / "near.mp4", np.ascontiguousarray(near), fps=10)
    assert spec.compute(item.model_copy(update={"video": str(tmp_path / "near.mp4")}), cfg).scored


def test_the_error_lines_say_why_there_is_no_error() -> None:
    from robojudge.cli._kiva import _error_line

    # the holdout asked for is named (it said "--holdout 0" whatever was given: one clip leaves none out)
    assert _error_line("held-out error", {"episodes": 0, "keypoints": 0}, 0.2) == (
        "held-out error: no clip to measure it on (--holdout 0.2 held out no clip)")
    assert _error_line("held-out error", {"episodes": 0, "keypoints": 0}, 0) == (
        "held-out error: no clip to measure it on (--holdout 0 held out no clip)")
    assert _error_line("held-out error", {"episodes": 2, "keypoints": 0}) == (
        "held-out error: no visible keypoint to measure")


def test_a_video_judged_below_the_floor_a_checked_reader_would_apply_is_marked(
        tiny_reader: Path, kiva_suite: Path) -> None:
    """A reader that does not tell its robot from none judges every video; a value read with less
    confidence than the floor a checked reader would apply is marked, so such values can be found (an
    audit's ADROIT clip, read by a small Fetch reader at 0.277 against a floor of 0.292, got 0%, the best
    value, and looked like any other)."""
    import math
    from types import SimpleNamespace

    from robojudge.kiva import CONFIDENCE_RATIO
    from robojudge.metrics.learned.kiva import _unchecked_floor

    reader = SimpleNamespace(meta={"calibration": {"confidence": 0.7}})
    floor = CONFIDENCE_RATIO * 0.7
    assert _unchecked_floor(reader, SimpleNamespace(confidence=0.3), math.nan) == {
        "below_unchecked_floor": pytest.approx(floor)}
    assert _unchecked_floor(reader, SimpleNamespace(confidence=0.5), math.nan) == {}  # above it
    assert _unchecked_floor(reader, SimpleNamespace(confidence=0.3), floor) == {}  # checked: unscored
    assert _unchecked_floor(reader, SimpleNamespace(confidence=math.nan), math.nan) == {}
    # On the tests' reader (not checked) a faithful rollout, read with full confidence, is not marked.
    spec = get_metric("kiva")
    faithful = spec.compute(_item(kiva_suite), spec.make_config({"reader": str(tiny_reader)}))
    assert "below_unchecked_floor" not in faithful.details and "reader_confidence" in faithful.details
