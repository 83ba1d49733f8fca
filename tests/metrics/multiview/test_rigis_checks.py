"""What RIGIS refuses or leaves out: views at different frame rates (an error row, as for different
lengths), ``instants`` below 2 (refused with the config), a part of weight 0 that cannot be measured
(does not make S unscored), a calibration without one of the views or for another framing than a view's
(an error naming the field)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from _mv_rig import CAMERAS, clean_views, flat_views, instants, write_rig

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.multiview import RigisParams, rigis
from robojudge.metrics.multiview._item import view_frames
from robojudge.suite import Item
from robojudge.video import write_video

IDS = ("rigis", "rigis_geo", "rigis_pose")
N = 4


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic rig as PNG frame folders at 10 fps, view b also at 20 and at 10.05 fps, view c also
    centre-cropped to 16:9 (128x72, as a 16:9 export of the 4:3 camera) and at half size (64x48)."""
    import cv2

    root = tmp_path_factory.mktemp("rig")
    views = write_rig(root)
    write_video(root / "b20", views["b"], fps=20)
    write_video(root / "b1005", views["b"], fps=10.05)
    write_video(root / "c_crop", views["c"][:, 12:84], fps=10)
    half = np.stack([cv2.resize(f, (64, 48), interpolation=cv2.INTER_AREA) for f in views["c"]])
    write_video(root / "c_half", half, fps=10)
    return root


def _item(root: Path, b: str = "b", calibration: str = "calib.json", c: str = "c") -> Item:
    return Item(item_id="r", video=str(root / "a"), calibration=str(root / calibration),
                views={"a": str(root / "a"), "b": str(root / b), "c": str(root / c)})


@pytest.mark.parametrize("metric", IDS)
def test_views_at_different_frame_rates_are_an_error_naming_the_view(rig: Path, metric: str) -> None:
    spec = get_metric(metric)
    with pytest.raises(MetricInputError, match=(
            r"^views are not synchronised: view 'b' runs at 20 fps, view 'a' at 10 fps \(\+100\.0%\); "
            "frame t of each is not the same instant")):
        spec.compute(_item(rig, "b20"), spec.make_config({"instants": N, "max_features": 300}))


def test_a_rate_within_the_validators_tolerance_is_the_same_rate(rig: Path) -> None:
    frames = view_frames(_item(rig, "b1005"), N)  # 0.5% apart: suite validate accepts it too
    assert list(frames) == ["a", "b", "c"] and all(len(f) == N for f in frames.values())


def test_a_calibration_without_a_view_is_an_error_on_the_field(rig: Path) -> None:
    spec = get_metric("rigis_pose")
    with pytest.raises(MetricInputError, match=(
            rf"^field calibration: {rig / 'calib_ab.json'}: no camera for view\(s\) \['c'\] "
            r"\(it has \['a', 'b'\]\)")):
        spec.compute(_item(rig, calibration="calib_ab.json"), spec.make_config({"instants": N}))


@pytest.mark.parametrize("metric", IDS)
def test_a_view_cropped_from_its_calibrated_framing_is_an_error_naming_both_sizes(rig: Path,
                                                                                  metric: str) -> None:
    # K scaled per axis to a cropped view read a consistent rig as one out of calibration (rigis 0.57).
    spec = get_metric(metric)
    with pytest.raises(MetricInputError, match=(
            rf"^field calibration: {rig / 'calib.json'}: view 'c' is 128x72 \(aspect 1\.778\), its "
            r"calibration is for 128x96 \(1\.333\): aspect ratios more than 5% apart")):
        spec.compute(_item(rig, c="c_crop"), spec.make_config({"instants": N, "max_features": 300}))


def test_a_view_at_another_size_of_the_same_aspect_is_scaled() -> None:
    from robojudge.metrics.multiview._geometry import intrinsics_for

    cam = CAMERAS["c"]
    k, half = np.asarray(cam.K), intrinsics_for(cam, 64, 48, "c")
    assert np.allclose(half[:2], k[:2] / 2) and np.allclose(half[2], k[2])
    with pytest.raises(ValueError, match=r"^view 'c' is 128x72 \(aspect 1\.778\), its calibration is for "):
        intrinsics_for(cam, 128, 72, "c")


def test_a_half_size_view_is_scored(rig: Path) -> None:
    spec = get_metric("rigis_pose")
    score = spec.compute(_item(rig, c="c_half"), spec.make_config({"instants": N, "max_features": 300}))
    assert score.value > 0.9, score.details


@pytest.mark.parametrize("metric", IDS)
def test_one_instant_is_refused_with_the_config(metric: str) -> None:
    spec = get_metric(metric)
    with pytest.raises(ValueError, match=(
            rf"invalid config for metric '{metric}': instants: must be at least 2 \(got 1\): RIGIS reads the "
            "rollout's motion between instants, and one instant shows none")):
        spec.make_config({"instants": 1})
    assert spec.make_config({"instants": 2}).instants == 2  # type: ignore[attr-defined]
    assert spec.describe()["config"]["instants"]["minimum"] == 2


def test_a_part_of_weight_zero_does_not_leave_s_unscored() -> None:
    # View c shows a scene of its own, which stays put: no view matches it, so S_geo cannot be measured;
    # S_pose reads the other pairs. (A view of noise makes the item unscored: test_rigis.py.)
    views = clean_views()
    other = np.random.default_rng(0).integers(0, 256, views["c"].shape[1:], dtype=np.uint8)
    views["c"] = np.repeat(other[None], len(views["c"]), axis=0)
    frames = instants(views, N)
    pose_only, d = rigis(frames, CAMERAS, RigisParams(max_features=300, geo_weight=0.0), timing=views)
    assert math.isnan(d["geo"]) and "unscored_reason" in d["geo_details"]
    assert pose_only == d["pose"] == pytest.approx(1.0)
    both, d = rigis(frames, CAMERAS, RigisParams(max_features=300), timing=views)
    assert math.isnan(both) and d["unscored_reason"].startswith("S_geo: too few matches")
    # Flat-coloured views without the stillness reading: S_pose cannot be measured, S_geo can.
    views = flat_views()
    frames = instants(views, N)
    geo_only, d = rigis(frames, CAMERAS, RigisParams(max_features=300, geo_weight=1.0, still=False),
                        timing=views)
    assert math.isnan(d["pose"]) and geo_only == d["geo"] == 1.0
    half, d = rigis(frames, CAMERAS, RigisParams(max_features=300, still=False), timing=views)
    assert math.isnan(half) and d["unscored_reason"].startswith("S_pose: too few matches")


@pytest.mark.parametrize(("content", "why"), [
    (b"", "the file is empty (0 bytes)"),
    (b"K,R,t\n1,2,3\n", "not an npz archive"),
])
def test_an_unreadable_state_file_says_why(tmp_path: Path, content: bytes, why: str) -> None:
    """Cameras read from a state file go through the state reader of the tracking metrics: a 0-byte file
    gave a bare EOFError, a text file numpy's advice to load pickles."""
    from robojudge.metrics.multiview._item import item_cameras

    state = tmp_path / "state.npz"
    state.write_bytes(content)
    item = Item(item_id="i", video=str(tmp_path / "v.mp4"), state=str(state))
    with pytest.raises(MetricInputError, match=rf"cannot read state file .*state\.npz: {re.escape(why)}"):
        item_cameras(item, ["cam0"])
