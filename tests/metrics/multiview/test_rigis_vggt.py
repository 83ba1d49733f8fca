"""RIGIS with VGGT (``rigis_vggt``...): registered like the DA3 variant, scored by the same code on the same
reconstruction, end to end on the synthetic calibrated rig with a tiny random VGGT (no download, no hub;
the values mean nothing, the plumbing is what is tested), and an error row naming the weights without them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from _mv_rig import CAMERAS, H, W, clean_views

from robojudge.metrics import get_metric
from robojudge.metrics.multiview import _da3, _vggt
from robojudge.metrics.multiview._da3 import DA3_IDS, Da3RigisConfig
from robojudge.metrics.multiview._vggt import VGGT_IDS, VggtRigisConfig
from robojudge.suite import Item, load_suite

CFG = {"process_res": 42, "max_instants": 3, "fps": None}


@pytest.fixture(scope="module")
def rig_item(tmp_path_factory: pytest.TempPathFactory) -> Item:
    from robojudge.video import write_video

    root = tmp_path_factory.mktemp("vggt_rig")
    for name, frames in clean_views().items():
        write_video(root / f"{name}.mp4", frames[:6], fps=10)
    (root / "calib.json").write_text(json.dumps({n: c.model_dump() for n, c in CAMERAS.items()}))
    row = {"item_id": "rig", "video": "a.mp4", "views": {n: f"{n}.mp4" for n in CAMERAS}, "main_view": "a",
           "calibration": "calib.json"}
    (root / "suite.jsonl").write_text(json.dumps(row) + "\n")
    return load_suite(root / "suite.jsonl").items[0]


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    _da3.clear_rig_cache()
    yield
    _da3.clear_rig_cache()


def test_registered_like_the_da3_variant() -> None:
    for vid, did in zip(VGGT_IDS, DA3_IDS, strict=True):
        spec, ref = get_metric(vid), get_metric(did)
        assert spec.weights == ("vggt_1b",)
        # RoboWorM has no App. C2, and its Fig. 3b network is VGGT-Omega, not the VGGT-1B loaded here
        assert "Fig. 3b" in spec.citation and "App. C2" not in spec.citation
        assert "in place of the paper's VGGT-Omega" in spec.citation and "Table 10" in spec.citation
        assert "stand-in for RoboWorM's VGGT-Omega" in spec.description
        assert "unverified on the real checkpoint" in spec.description
        assert (spec.family, spec.inputs, spec.higher_is_better, spec.native_range, spec.provider) == (
            ref.family, ref.inputs, ref.higher_is_better, ref.native_range, ref.provider)
    own, da3 = VggtRigisConfig().model_dump(), Da3RigisConfig().model_dump()
    assert own.pop("process_res") == 518 and da3.pop("process_res") == 504
    assert own == da3  # same sampling and scoring defaults: the two differ only in the network


def _plane_depth(k: np.ndarray, c2w: np.ndarray) -> np.ndarray:
    v, u = np.mgrid[0:H, 0:W]
    rays = np.linalg.inv(k) @ np.stack([u.ravel() + 0.5, v.ravel() + 0.5, np.ones(H * W)])
    world = c2w[:3, :3] @ rays
    s = -c2w[2, 3] / world[2]
    return np.where(s > 0, s, np.inf).reshape(H, W)


def _turn_z(deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    m = np.eye(4)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def exact_rig(frames: np.ndarray, *, process_res: int, metric: str) -> Any:
    """The synthetic rig's true geometry, with view c turned by an angle that depends on the frames and a
    one-view ghost in view a, so that neither part is trivially 1."""
    ks = [np.asarray(CAMERAS[n].K) for n in "abc"]
    c2w = []
    for n in "abc":
        w2c = np.eye(4)
        w2c[:3, :3], w2c[:3, 3] = np.asarray(CAMERAS[n].R), np.asarray(CAMERAS[n].t)
        c2w.append(np.linalg.inv(w2c))
    depth = np.stack([_plane_depth(k, p) for k, p in zip(ks, c2w, strict=True)])
    depth[0, 30:50, 50:80] *= 0.5
    c2w[2] = c2w[2] @ _turn_z(float(frames.mean()) * 97.0 % 45.0)
    return SimpleNamespace(depth=depth, intrinsics=np.stack(ks), cam2world=np.stack(c2w))


def test_scoring_equals_da3_on_the_same_reconstruction(rig_item: Item,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_da3, "ESTIMATOR", exact_rig)
    monkeypatch.setattr(_vggt, "ESTIMATOR", exact_rig)
    for vid, did in zip(VGGT_IDS, DA3_IDS, strict=True):
        got = get_metric(vid).compute(rig_item, get_metric(vid).make_config(CFG))
        ref = get_metric(did).compute(rig_item, get_metric(did).make_config(CFG))
        assert got.value == ref.value and got.details == ref.details, vid
        assert 0.0 < got.value < 1.0, (vid, got.value)  # the ghost and the turning camera both cost


def test_end_to_end_with_a_tiny_random_vggt(rig_item: Item, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from robojudge.models._vggt import VggtConfig, build_vggt, vggt_geometry

    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = build_vggt(VggtConfig.tiny())
    seen: list[tuple[int, int]] = []

    def estimator(frames: np.ndarray, *, process_res: int, metric: str) -> Any:
        geo = vggt_geometry(net, frames, target=process_res)
        seen.append((len(frames), geo.depth.shape[2]))
        return geo

    monkeypatch.setattr(_vggt, "ESTIMATOR", estimator)
    out = {mid: get_metric(mid).compute(rig_item, get_metric(mid).make_config(CFG)) for mid in VGGT_IDS}
    assert seen == [(3, 42)] * 3  # three instants of three views at width 42, shared by the three ids
    geo, pose = out["rigis_vggt_geo"], out["rigis_vggt_pose"]
    assert 0.0 <= pose.value <= 1.0
    assert set(pose.details["pairs"]) == {"a-b", "a-c", "b-c"}
    assert all("mean_error_deg" in p for p in pose.details["pairs"].values())  # the calibration was read
    assert len(geo.details["pairs"]) == 6  # ordered pairs of three views
    if math.isnan(geo.value):  # random weights: points may land in no other view
        assert "no view's points land" in geo.details["unscored_reason"]
        assert math.isnan(out["rigis_vggt"].value) and out["rigis_vggt"].details["unscored_reason"]
    else:
        assert 0.0 <= geo.value <= 1.0
        assert out["rigis_vggt"].value == pytest.approx(0.5 * geo.value + 0.5 * pose.value)
    json.dumps({k: s.details for k, s in out.items()})  # stored as JSON


def test_without_weights_an_error_row_names_them(
    rig_item: Item, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from robojudge.metrics import not_run_summary
    from robojudge.run._score import MetricRequest, compute_metric
    from robojudge.settings import WEIGHTS_ENV

    monkeypatch.setenv(WEIGHTS_ENV, str(tmp_path / "weights"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    row = compute_metric(rig_item, MetricRequest.build("rigis_vggt_pose"))
    assert row.status == "error" and row.value is None
    assert "rigis_vggt_pose" in str(row.error) and "vggt_1b" in str(row.error)
    lines = not_run_summary()
    metrics = next(line for line in lines if line.startswith("  need weights: "))
    assert set(VGGT_IDS) <= set(metrics.split(": ", 1)[1].split(", "))
    assert "vggt_1b" in next(line for line in lines if line.startswith("  missing weights ("))


def test_one_view_is_unscored_without_the_network(rig_item: Item, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("the network must not run for a single view")

    monkeypatch.setattr(_vggt, "ESTIMATOR", boom)
    one = rig_item.model_copy(update={"views": {"a": rig_item.views["a"]}, "calibration": None})
    for mid in VGGT_IDS:
        score = get_metric(mid).compute(one, get_metric(mid).make_config(CFG))
        assert math.isnan(score.value) and "at least two views" in score.details["unscored_reason"]
