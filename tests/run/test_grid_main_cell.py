"""An item whose video is a declared grid of views, with a ``main_view``, is scored by the single-view
metrics on that view's cell: the values of the cell cut out as its own video, one decode of the grid
video shared by all of them, the cell named in the rows; without a ``main_view`` they skip the item and
say to set one. Metrics that read the views keep reading the whole stitched frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _samplings import count_decode_passes
from robojudge.metrics import FrameOptions, Score, get_metric, metric
from robojudge.metrics._select import GRID_VIDEO, missing_inputs
from robojudge.run import Task, build_requests, compute_task
from robojudge.run import _score as run_score
from robojudge.run._fingerprint import Fingerprints, metric_fingerprint
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

#: The weights-free metrics that read only the video (as tests/run/test_one_decode.py names them).
WEIGHTS_FREE = ("cc_photometric", "ctg_camera_control", "flow_motion_magnitude_farneback", "flow_warp_error",
                "mq_dynamic_degree", "mq_flow_score", "mq_temporal_flickering", "pixel_frame_consistency",
                "rbg_stability")

VIEWS = ["gt_ext1", "gt_ext2", "gt_wrist", "ext1", "ext2", "wrist"]
CELL_W, CELL_H = 96, 64


@metric("test_grid_views_width", inputs={"video", "views"}, family="baseline", higher_is_better=True,
        native_range=(None, None), version="1", citation="robojudge test suite", description="test-only")
def views_width(item: Item, config: Any) -> Score:
    """The width of the item's video as a reader of its views samples it."""
    return Score(value=float(sample_frames(item.video, fps=None, max_frames=2).frames.shape[2]))


def _cells(frames: int = 20) -> list[np.ndarray]:
    """Six views of moving blobs, each its own scene and motion: ``(T, CELL_H, CELL_W, 3)`` each."""
    out = []
    for k in range(6):
        rng = np.random.default_rng(10 + k)
        canvas = rng.integers(0, 256, (CELL_H // 4 + 12, CELL_W // 4 + 24, 3), dtype=np.uint8)
        canvas = np.repeat(np.repeat(canvas, 4, 0), 4, 1)  # blobs large enough to track
        dy, dx = k % 2 + 1, (k + 1) % 3 + 1
        out.append(np.stack([canvas[dy * i:dy * i + CELL_H, dx * i:dx * i + CELL_W] for i in range(frames)]))
    return out


def _tile(cells: list[np.ndarray]) -> np.ndarray:
    rows = [np.concatenate(cells[r * 3:(r + 1) * 3], axis=2) for r in range(2)]
    return np.concatenate(rows, axis=1)


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    """The 2x3 grid and its ``ext1`` cell (row 1, col 0) alone, as PNG folders (lossless) and MP4s."""
    folder = tmp_path_factory.mktemp("grid_main_cell")
    cells = _cells()
    return {
        "grid": write_video(folder / "grid", _tile(cells), fps=8),
        "cell": write_video(folder / "cell", cells[3], fps=8),
        "grid.mp4": write_video(folder / "grid.mp4", _tile(cells), fps=8),
        "cell.mp4": write_video(folder / "cell.mp4", cells[3], fps=8),
    }


def _grid_item(path: Path, main_view: str | None = "ext1") -> Item:
    return Item(item_id="g", video=str(path), grid={"rows": 2, "cols": 3, "views": VIEWS},
                main_view=main_view)


def _rows(item: Item, ids: tuple[str, ...] = WEIGHTS_FREE, options: FrameOptions | None = None) -> dict:
    reqs = tuple(build_requests(list(ids), frames=options or FrameOptions()))
    return {r.metric: r for r in compute_task(Task(item, reqs))}


def _without(details: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    return {k: v for k, v in (details or {}).items() if k not in keys}


def test_single_view_metrics_read_the_main_cell_as_the_cell_cut_out(clips):
    grid = _rows(_grid_item(clips["grid"]))
    alone = _rows(Item(item_id="g", video=str(clips["cell"])))
    assert set(grid) == set(WEIGHTS_FREE)
    for mid in WEIGHTS_FREE:
        g, a = grid[mid], alone[mid]
        assert g.status == "ok" and a.status == "ok", (mid, g.error, a.error)
        assert g.value == a.value or (np.isnan(g.value) and np.isnan(a.value)), (mid, g.value, a.value)
        assert g.details["grid_cell"] == "ext1 (row 1, col 0 of a 2x3 grid)"
        # the same details otherwise (the size read included); the warnings name the file read
        assert g.details["frame_size"] in (f"{CELL_W}x{CELL_H}", "256x256"), mid
        assert _without(g.details, "grid_cell", "video_warnings") == _without(a.details, "video_warnings")
    # the metrics measure motion and the cells move differently: another cell gives other values
    other = _rows(_grid_item(clips["grid"], "gt_ext1"), ("flow_motion_magnitude_farneback",))
    assert other["flow_motion_magnitude_farneback"].value != grid["flow_motion_magnitude_farneback"].value


def test_a_sized_read_resizes_the_cell_not_the_grid(clips):
    options = FrameOptions(size=48)
    grid = _rows(_grid_item(clips["grid"]), ("cc_photometric", "mq_flow_score"), options)
    alone = _rows(Item(item_id="g", video=str(clips["cell"])), ("cc_photometric",
                                                                 "mq_flow_score"), options)
    for mid, row in grid.items():
        assert row.value == alone[mid].value and row.details["frame_size"] == "48x32", mid


def test_the_grid_video_is_decoded_once_for_every_cell_reader(clips, monkeypatch):
    seen = count_decode_passes(monkeypatch)
    item = _grid_item(clips["grid.mp4"])
    joint = _rows(item)
    assert seen == ["pass"]  # native frames and the 8 fps gray sequence of the cell, from one decode
    seen.clear()
    monkeypatch.setattr(run_score, "prefetch_main_video", lambda *_: 0)
    apart = _rows(item)
    assert len(seen) == 2
    assert {m: (r.value, r.details) for m, r in joint.items()} == {
        m: (r.value, r.details) for m, r in apart.items()}
    # the cell of the MP4 against the cell encoded alone: the same picture up to the codec
    alone = _rows(Item(item_id="g", video=str(clips["cell.mp4"])))
    for mid in ("flow_motion_magnitude_farneback", "pixel_frame_consistency", "mq_temporal_flickering"):
        assert joint[mid].value == pytest.approx(alone[mid].value, rel=0.15), mid


def test_a_grid_without_main_view_is_skipped_with_the_way_to_score_it(clips):
    item = _grid_item(clips["grid"], main_view=None)
    flow = get_metric("flow_warp_error")
    assert missing_inputs(flow, item) == [GRID_VIDEO]
    assert "set main_view" in GRID_VIDEO
    assert missing_inputs(flow, _grid_item(clips["grid"])) == []
    row = _rows(item, ("flow_warp_error",))["flow_warp_error"]
    assert row.status == "error" and "names no main_view: set main_view" in row.error


def test_metrics_that_read_the_views_still_read_the_whole_frame(clips):
    row = _rows(_grid_item(clips["grid"]), ("test_grid_views_width",))["test_grid_views_width"]
    assert row.value == 3 * CELL_W and "grid_cell" not in (row.details or {})


def test_the_cell_read_is_part_of_a_single_view_metric_fingerprint(clips):
    flow = get_metric("flow_warp_error")
    config = flow.make_config({})
    ext1, wrist = _grid_item(clips["grid"]), _grid_item(clips["grid"], "wrist")
    assert metric_fingerprint(ext1, flow, config) != metric_fingerprint(wrist, flow, config)
    assert Fingerprints().metric(ext1, flow, config).value == metric_fingerprint(ext1, flow, config)
    # an item without a grid keeps its fingerprint, by either path
    plain = Item(item_id="p", video=str(clips["cell"]))
    assert metric_fingerprint(plain, flow, config) == Fingerprints().metric(plain, flow, config).value
