"""The network-backed RIGIS (``rigis_da3*``, ``rigis_vggt*``) reads the items the weights-free ``rigis``
reads, as it reads them: a calibration must name every view (else the same error row), and a grid video
is cut into its named views.

The network is a stub (as in test_rigis_da3.py): it returns the synthetic rig's calibrated poses with view
c turned 20 degrees about its vertical axis, so view c disagrees with the calibration and ``*_pose``
scores below 1 wherever the calibration is read.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from _mv_rig import CAMERAS, clean_views

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.multiview import _da3, _vggt
from robojudge.metrics.multiview._da3 import DA3_IDS
from robojudge.metrics.multiview._vggt import VGGT_IDS
from robojudge.suite import Item, load_suite

CFG = {"process_res": 42, "max_instants": 3, "fps": None}
NETWORKS = [pytest.param(_da3, DA3_IDS, id="da3"), pytest.param(_vggt, VGGT_IDS, id="vggt")]


def _c2w(name: str) -> np.ndarray:
    m = np.eye(4)
    r, t = np.asarray(CAMERAS[name].R), np.asarray(CAMERAS[name].t)
    m[:3, :3], m[:3, 3] = r.T, -r.T @ t
    return m


_TURN = np.eye(4)
_a = math.radians(20)
_TURN[:3, :3] = [[math.cos(_a), 0, math.sin(_a)], [0, 1, 0], [-math.sin(_a), 0, math.cos(_a)]]
POSES = np.stack([_c2w("a"), _c2w("b"), _c2w("c") @ _TURN])


class Stub:
    """The stand-in network: the rig's poses (views in the order a, b, c), and every frame set it got."""

    def __init__(self) -> None:
        self.calls: list[np.ndarray] = []

    def __call__(self, frames: np.ndarray, *, process_res: int, metric: str) -> Any:
        self.calls.append(np.array(frames))
        n = len(frames)
        k = np.array([[12.0, 0, 8], [0, 12.0, 6], [0, 0, 1]])
        return SimpleNamespace(depth=np.ones((n, 12, 16)), intrinsics=k, cam2world=POSES[:n])


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Views a, b, c as lossless frame folders, the same three tiled into a 2x2 grid (last cell black),
    the rig's calibration, and one calibration without c."""
    from robojudge.video import write_video

    root = tmp_path_factory.mktemp("net_rig")
    views = {n: f[:6] for n, f in clean_views().items()}
    for name, frames in views.items():
        write_video(root / name, frames, fps=10)
    black = np.zeros_like(views["a"])
    grid = np.concatenate([np.concatenate([views["a"], views["b"]], axis=2),
                           np.concatenate([views["c"], black], axis=2)], axis=1)
    write_video(root / "grid", grid, fps=10)
    cal = {n: c.model_dump() for n, c in CAMERAS.items()}
    (root / "calib.json").write_text(json.dumps(cal))
    (root / "calib_ab.json").write_text(json.dumps({k: cal[k] for k in ("a", "b")}))
    return root


def _item(root: Path, row: dict[str, Any]) -> Item:
    (root / f"{row['item_id']}.jsonl").write_text(json.dumps(row) + "\n")
    return load_suite(root / f"{row['item_id']}.jsonl").items[0]


def _views_row(item_id: str, names: str = "abc", calibration: str = "calib.json") -> dict[str, Any]:
    views = {n: n.lower() for n in names}
    return {"item_id": item_id, "video": views[names[0]], "views": views, "main_view": names[0],
            "calibration": calibration}


def _grid_row(item_id: str, rows: int, cols: int) -> dict[str, Any]:
    cells: list[str | None] = ["a", "b", "c"] + [None] * (rows * cols - 3)
    return {"item_id": item_id, "video": "grid", "main_view": "a", "calibration": "calib.json",
            "grid": {"rows": rows, "cols": cols, "views": cells}}


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    _da3.clear_rig_cache()
    yield
    _da3.clear_rig_cache()


def _score(module: Any, mid: str, item: Item) -> Any:
    _da3.clear_rig_cache()
    spec = get_metric(mid)
    return spec.compute(item, spec.make_config(CFG))


@pytest.mark.parametrize(("module", "ids"), NETWORKS)
def test_a_calibration_lacking_a_view_or_naming_it_in_another_case_is_rigis_error_row(
    rig: Path, module: Any, ids: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = Stub()
    monkeypatch.setattr(module, "ESTIMATOR", stub)
    # The calibration read: view c's 20 degrees cost the pose score.
    good = _item(rig, _views_row("lower"))
    assert _score(module, ids[2], good).value < 0.9
    assert stub.calls
    for row in (_views_row("upper", "ABC"), _views_row("partial", calibration="calib_ab.json")):
        item = _item(rig, row)
        spec = get_metric("rigis")
        with pytest.raises(MetricInputError) as ref:
            spec.compute(item, spec.make_config({}))
        stub.calls.clear()
        for mid in ids:
            with pytest.raises(MetricInputError) as got:
                _score(module, mid, item)
            assert str(got.value) == str(ref.value), mid
            assert "field calibration: " in str(got.value) and "no camera for view(s)" in str(got.value)
        assert stub.calls == []  # refused before the network runs
    # Without a calibration the pose is the network's stability alone, as before.
    bare = _item(rig, {**_views_row("bare"), "calibration": None})
    pairs = _score(module, ids[2], bare).details["pairs"]
    assert not any("accuracy" in p for p in pairs.values())


@pytest.mark.parametrize(("module", "ids"), NETWORKS)
def test_a_grid_item_is_read_as_its_named_views(
    rig: Path, module: Any, ids: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = Stub()
    monkeypatch.setattr(module, "ESTIMATOR", stub)
    views = _item(rig, _views_row("views"))
    grid = _item(rig, _grid_row("grid", 2, 2))
    for mid in ids:
        stub.calls.clear()
        want = _score(module, mid, views)
        sent = list(stub.calls)
        stub.calls.clear()
        got = _score(module, mid, grid)
        assert len(stub.calls) == len(sent) == 3  # three instants, one pass each
        # the network is sent the grid's cells, frame for frame what it is sent of the separate views
        assert all(np.array_equal(a, b) for a, b in zip(stub.calls, sent, strict=True))
        assert not math.isnan(got.value) and got.value == want.value and got.details == want.details, mid
    assert set(_score(module, ids[2], grid).details["pairs"]) == {"a-b", "a-c", "b-c"}
    # A grid that does not divide the video is an error on the field, as for the weights-free RIGIS.
    odd = _item(rig, _grid_row("odd", 2, 3))
    with pytest.raises(MetricInputError, match=r"field grid: a 256x192 video does not split into a 2x3 grid"):
        _score(module, ids[0], odd)
