"""The registered RIGIS metrics on items: views or a grid video, a calibration file or a state file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _mv_rig import CAMERAS, lagged, write_rig

from robojudge.metrics import MetricInputError, get_metric
from robojudge.run._fingerprint import metric_fingerprint
from robojudge.suite import Item
from robojudge.video import frame_cache, write_video

CONFIG = {"instants": 4, "max_features": 300}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic rig as PNG frame folders (lossless), a 2x2 grid of it, calibration and state files."""
    root = tmp_path_factory.mktemp("rig")
    views = write_rig(root)
    write_video(root / "late_b", lagged(views["b"], 4), fps=10)
    top = np.concatenate([views["a"], views["b"]], axis=2)
    bottom = np.concatenate([views["c"], np.zeros_like(views["c"])], axis=2)
    write_video(root / "grid", np.concatenate([top, bottom], axis=1), fps=10)
    names = list(CAMERAS)
    np.savez(root / "state.npz", view_names=np.array(names),
             K=np.stack([np.asarray(CAMERAS[n].K) for n in names]),
             R=np.stack([np.stack([np.asarray(CAMERAS[n].R) for n in names])] * 3),
             t=np.stack([np.stack([np.asarray(CAMERAS[n].t) for n in names])] * 3))
    return root


def _item(root: Path, **fields: object) -> Item:
    base: dict[str, object] = {"item_id": "r", "video": str(root / "a"),
                               "views": {n: str(root / n) for n in ("a", "b", "c")}}
    base.update(fields)
    return Item.model_validate({k: v for k, v in base.items() if v is not None})


def _score(metric: str, item: Item) -> tuple[float, dict]:
    spec = get_metric(metric)
    s = spec.compute(item, spec.make_config(CONFIG))
    return s.value, s.details


def test_views_with_a_calibration_file_score_near_one(rig: Path) -> None:
    item = _item(rig, calibration=str(rig / "calib.json"))
    with frame_cache():
        both, details = _score("rigis", item)
        geo, _ = _score("rigis_geo", item)
        pose, _ = _score("rigis_pose", item)
    assert both >= 0.95 and geo >= 0.95 and pose >= 0.95
    assert both == pytest.approx(0.5 * geo + 0.5 * pose)
    assert details["views"] == ["a", "b", "c"]


def test_grid_video_scores_as_its_views_do(rig: Path) -> None:
    grid = {"rows": 2, "cols": 2, "views": ["a", "b", "c", None]}
    by_grid = _score("rigis", _item(rig, video=str(rig / "grid"), views=None, grid=grid,
                                    calibration=str(rig / "calib.json")))
    by_views = _score("rigis", _item(rig, calibration=str(rig / "calib.json")))
    assert by_grid[0] == pytest.approx(by_views[0], abs=1e-9)


def test_state_file_cameras_stand_in_for_a_calibration(rig: Path) -> None:
    by_state = _score("rigis_geo", _item(rig, state=str(rig / "state.npz")))
    by_file = _score("rigis_geo", _item(rig, calibration=str(rig / "calib.json")))
    assert by_state[0] == pytest.approx(by_file[0], abs=1e-9)


def test_late_view_scores_lower(rig: Path) -> None:
    late = _item(rig, calibration=str(rig / "calib.json"),
                 views={"a": str(rig / "a"), "b": str(rig / "late_b"), "c": str(rig / "c")})
    value, details = _score("rigis_geo", late)
    assert details["sync_details"]["offsets"]["b"] == 4.0
    assert value < 0.5


def test_unmeasurable_items_are_unscored_with_a_reason(rig: Path) -> None:
    value, details = _score("rigis", _item(rig))
    assert math.isnan(value) and details["unscored_reason"].startswith("no calibration")
    value, details = _score("rigis_pose", _item(rig, views=None, calibration=str(rig / "calib.json")))
    assert math.isnan(value) and "at least two views" in details["unscored_reason"]


def test_calibration_without_a_view_is_an_error(rig: Path) -> None:
    spec = get_metric("rigis")
    with pytest.raises(MetricInputError, match=r"calib_ab.json: no camera for view\(s\) \['c'\]"):
        spec.compute(_item(rig, calibration=str(rig / "calib_ab.json")), spec.make_config(CONFIG))


def test_fingerprint_follows_the_calibration_and_the_grid(rig: Path, tmp_path: Path) -> None:
    spec = get_metric("rigis")
    config = spec.make_config(CONFIG)
    cal = tmp_path / "calib.json"
    cal.write_text((rig / "calib.json").read_text())
    item = _item(rig, calibration=str(cal))
    before = metric_fingerprint(item, spec, config)
    data = json.loads(cal.read_text())
    data["a"]["t"][0] += 0.01
    cal.write_text(json.dumps(data))
    assert metric_fingerprint(item, spec, config) != before
    grid = {"rows": 2, "cols": 2, "views": ["a", "b", "c", None]}
    g1 = _item(rig, video=str(rig / "grid"), views=None, grid=grid)
    g2 = _item(rig, video=str(rig / "grid"), views=None, grid={**grid, "views": ["b", "a", "c", None]})
    assert metric_fingerprint(g1, spec, config) != metric_fingerprint(g2, spec, config)


def test_all_runs_rigis_on_grid_and_views_items_only(rig: Path) -> None:
    from robojudge.metrics._select import missing_inputs

    spec = get_metric("rigis")
    grid = {"rows": 2, "cols": 2, "views": ["a", "b", "c", None]}
    assert missing_inputs(spec, _item(rig)) == []
    assert missing_inputs(spec, _item(rig, video=str(rig / "grid"), views=None, grid=grid)) == []
    assert missing_inputs(spec, _item(rig, views=None)) == ["views"]


def test_single_view_metrics_skip_a_grid_video_instead_of_measuring_the_stitched_frame(rig: Path) -> None:
    from robojudge.metrics._select import GRID_VIDEO, missing_inputs
    from robojudge.run import build_requests
    from robojudge.run._score import compute_metric

    grid_item = _item(rig, video=str(rig / "grid"), views=None, grid={"rows": 2, "cols": 2,
                                                                      "views": ["a", "b", "c", None]})
    flow = get_metric("flow_warp_error")
    assert missing_inputs(flow, grid_item) == [GRID_VIDEO]
    assert missing_inputs(flow, _item(rig)) == []  # an item with separate view videos keeps its main one
    assert missing_inputs(get_metric("sim_task_success"), grid_item) == ["state"]  # reads no video
    row = compute_metric(grid_item, build_requests(["flow_warp_error"])[0])
    assert row.status == "error" and row.value is None
    assert row.error == f"item has no {GRID_VIDEO}, which flow_warp_error needs"


def test_registering_the_metrics_keeps_the_package_functions() -> None:
    # A registered module named `rigis` became the package's attribute `rigis` once the registry loaded
    # it, hiding the function: test modules collected after that imported a module as `rigis`.
    import robojudge.metrics.multiview as mv

    get_metric("rigis")
    assert mv.rigis.__module__ == "robojudge.metrics.multiview._rigis" and callable(mv.rigis)
