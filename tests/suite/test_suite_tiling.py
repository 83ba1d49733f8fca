"""A video holding several views tiled in one frame, with no ``grid`` declared, is named by ``suite validate``
and in the rows of the metrics that would read the mosaic as one camera's; ordinary clips are not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robojudge.run import Task, build_requests, compute_task, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item, tiling_warning, validate_manifest
from robojudge.suite._demo import COLORS, _background, _plan_episode, _render, make_synthetic_suite
from robojudge.suite._tiling import find_tiling, look_for_tiling, read_size
from robojudge.video import _filesample, write_video


def _view(seed: int) -> np.ndarray:
    """33 frames of 256x192: a gripper carrying a block over a table, a table of its own per seed."""
    rng = np.random.default_rng(seed)
    episode = _plan_episode(rng, list(COLORS)[seed % len(COLORS)])
    return _render(_background(rng), episode)


def _tile(cells: list[np.ndarray | None], cols: int) -> np.ndarray:
    """Cells row by row; ``None`` cells black."""
    first = next(c for c in cells if c is not None)
    filled = [c if c is not None else np.zeros_like(first) for c in cells]
    return np.concatenate([np.concatenate(filled[r:r + cols], axis=2) for r in range(0, len(filled), cols)],
                          axis=1)


@pytest.fixture(scope="module")
def views() -> list[np.ndarray]:
    return [_view(seed) for seed in range(3)]


@pytest.mark.parametrize(
    ("layout", "cols", "found"),
    [
        ([0, 1], 2, (1, 2, ("x=256",), ())),
        ([0, 1, None, 2], 2, (2, 2, ("x=256", "y=192"), ((1, 0),))),
        ([0, 1], 1, (2, 1, ("y=192",), ())),
        ([0, 1, 2], 1, (3, 1, ("y=192", "y=384"), ())),
        # Read at 192x192, the seams between these look-alike tables are too faint; the blank cell is not.
        ([0, 1, 2, None], 1, (4, 1, (), ((3, 0),))),
    ],
)
def test_tiled_views_are_found(
    tmp_path: Path, views: list[np.ndarray], layout: list[int | None], cols: int, found: tuple[object, ...]
) -> None:
    path = write_video(tmp_path / "tiled.mp4", _tile([None if i is None else views[i] for i in layout], cols),
                       fps=8)
    tiling = look_for_tiling(path)
    assert tiling is not None
    assert (tiling.rows, tiling.cols, tiling.seams, tiling.blank) == found


def test_single_views_and_patterns_are_not(tmp_path: Path, views: list[np.ndarray]) -> None:
    for i, frames in enumerate(views):
        assert look_for_tiling(write_video(tmp_path / f"v{i}.mp4", frames, fps=8)) is None
    # One picture beside a flat band (a padded frame) is no grid of views.
    padded = _tile([views[0], None], 2)
    assert look_for_tiling(write_video(tmp_path / "padded.mp4", padded, fps=8)) is None
    rng = np.random.default_rng(0)
    # Noise, which a codec turns into blocks of 8 pixels: every eighth line jumps as the middle one does.
    noise = rng.integers(0, 256, (10, 32, 48, 3), dtype=np.uint8)
    assert look_for_tiling(write_video(tmp_path / "noise.mp4", noise, fps=8)) is None
    coarse = rng.integers(0, 256, (6, 12, 16, 3)).astype(np.uint8).repeat(8, axis=1).repeat(8, axis=2)
    assert find_tiling(coarse, 128, 96) is None
    # A bar across the middle third between flat grey bands: one picture, two flat cells.
    bar = np.full((6, 120, 160, 3), 128, np.uint8)
    bar[:, 40:80] = rng.integers(0, 2, (6, 1, 160, 1)).astype(np.uint8) * 255
    assert find_tiling(bar, 160, 120) is None


def test_the_frames_are_read_small_with_the_lines_between_pixels() -> None:
    assert read_size(128, 96) == (128, 96)  # small enough already
    assert read_size(1920, 1080) == (192, 108)  # 1920 divides by 2, 3 and 4: a multiple of 12
    assert read_size(768, 256) == (192, 64)
    w, h = read_size(1281, 721)  # divides by none of them: any size
    assert max(w, h) == 192


def test_validate_warns_on_a_tiled_video_without_a_grid(tmp_path: Path, views: list[np.ndarray]) -> None:
    write_video(tmp_path / "grid.mp4", _tile([views[0], views[1], views[2], None], 2), fps=8)
    write_video(tmp_path / "one.mp4", views[0], fps=8)
    grid = {"rows": 2, "cols": 2, "views": ["front", "left", "wrist"]}
    rows = [
        {"item_id": "undeclared", "video": "grid.mp4"},
        {"item_id": "declared", "video": "grid.mp4", "grid": grid},
        {"item_id": "single", "video": "one.mp4", "reference_video": "grid.mp4"},
    ]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = validate_manifest(manifest, media="open")
    tiled = [p for p in problems if "grid of views" in p.message]
    # Only the video read as one camera's: not the declared grid, not a reference.
    assert [(p.item_id, p.field, p.severity) for p in tiled] == [("undeclared", "video", "warning")]
    message = tiled[0].message
    assert message.startswith("its frames look like a 2x2 grid of views (straight seams at x=256, y=192 "
                              "that stay put over the 6 frames read and a blank cell (row 2 column 2))")
    assert '"grid": {"rows": 2, "cols": 2' in message and "--grid 2x2 --grid-views" in message
    assert not any(p.is_error for p in problems)


def test_the_demo_suite_is_not_taken_for_tiles(tmp_path: Path) -> None:
    manifest = make_synthetic_suite(tmp_path / "demo", episodes=2)
    problems = validate_manifest(manifest, media="open")
    assert [p for p in problems if "grid of views" in p.message] == []


def test_score_rows_of_single_view_metrics_carry_the_warning(tmp_path: Path, views: list[np.ndarray]) -> None:
    tiled = write_video(tmp_path / "tiled.mp4", _tile(views[:2], 2), fps=8)
    one = write_video(tmp_path / "one.mp4", views[0], fps=8)
    items = [Item(item_id="tiled", video=str(tiled)), Item(item_id="one", video=str(one)),
             Item(item_id="grid", video=str(tiled), grid={"rows": 1, "cols": 2, "views": ["a", "b"]})]
    said = tiling_warning(tiled)
    assert said is not None and said.startswith("its frames look like a 1x2 grid of views")
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = score_items(items, build_requests(["pixel_frame_consistency", "rigis"]), store)
        rows = {(r.item_id, r.metric): r for r in store.rows()}
    assert rows[("tiled", "pixel_frame_consistency")].details["video_warnings"] == [f"{tiled}: {said}"]
    assert summary.video_warnings == {"tiled": [f"{tiled}: {said}"]}
    # A single view says nothing, nor does a declared grid (read as views by the multi-view metrics; the
    # single-view ones refuse it); rigis reads views, not the video as one camera's.
    assert "video_warnings" not in (rows[("one", "pixel_frame_consistency")].details or {})
    assert "video_warnings" not in (rows[("grid", "rigis")].details or {})
    assert rows[("grid", "pixel_frame_consistency")].status == "error"


def test_a_tiled_reference_is_named_in_the_rows_of_the_metrics_that_compare_with_it(
    tmp_path: Path, views: list[np.ndarray]
) -> None:
    # A 2x2 mosaic of 4:3 views is 4:3 itself, so the framing check passes, and view 0 was scaled 2x and
    # compared with the whole mosaic (PSNR 14 dB) with no word: the check read only the item's video.
    mosaic = write_video(tmp_path / "mosaic.mp4", _tile([views[0], views[1], None, views[2]], 2), fps=8)
    one = write_video(tmp_path / "one.mp4", views[0], fps=8)
    items = [Item(item_id="tiled_ref", video=str(one), reference_video=str(mosaic)),
             Item(item_id="single_ref", video=str(one), reference_video=str(one))]
    said = tiling_warning(mosaic, reference=True)
    assert said is not None
    assert said.startswith("the reference video: its frames look like a 2x2 grid of views")
    assert "give the item a reference of the one view its video shows" in said
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = score_items(items, build_requests(["iq1_psnr", "pixel_frame_consistency"]), store)
        rows = {(r.item_id, r.metric): r for r in store.rows()}
    assert rows[("tiled_ref", "iq1_psnr")].details["video_warnings"] == [f"{mosaic}: {said}"]
    assert summary.video_warnings == {"tiled_ref": [f"{mosaic}: {said}"]}
    # the metric that reads no reference says nothing of it, nor does a single-view reference
    assert "video_warnings" not in (rows[("tiled_ref", "pixel_frame_consistency")].details or {})
    assert "video_warnings" not in (rows[("single_ref", "iq1_psnr")].details or {})


def test_a_grid_item_read_as_its_main_cell_is_compared_with_the_reference_as_one_view(
    tmp_path: Path, views: list[np.ndarray]
) -> None:
    # A grid item with a main_view: the reference metrics compare that cell with the reference, so a tiled
    # reference is named as for a single-view item; the cell itself is not checked for tiling.
    grid = write_video(tmp_path / "grid.mp4", _tile([views[0], views[1]], 2), fps=8)
    mosaic = write_video(tmp_path / "mosaic.mp4", _tile([views[0], views[1], None, views[2]], 2), fps=8)
    one = write_video(tmp_path / "one.mp4", views[0], fps=8)
    layout = {"rows": 1, "cols": 2, "views": ["a", "b"]}
    items = [Item(item_id=name, video=str(grid), grid=layout, main_view="a", reference_video=str(ref))
             for name, ref in (("tiled_ref", mosaic), ("one_ref", one))]
    said = tiling_warning(mosaic, reference=True)
    with ResultStore(tmp_path / "r.sqlite") as store:
        score_items(items, build_requests(["iq1_psnr"]), store)
        rows = {r.item_id: r for r in store.rows()}
    assert rows["tiled_ref"].details["video_warnings"] == [f"{mosaic}: {said}"]
    assert rows["one_ref"].status == "ok" and "video_warnings" not in rows["one_ref"].details
    assert rows["one_ref"].details["grid_cell"] == "a (row 0, col 0 of a 1x2 grid)"
    assert rows["one_ref"].value > 30  # the cell is view 0, as the reference: it was no row at all


def test_the_check_reads_its_frames_in_the_metrics_pass(
    tmp_path: Path, views: list[np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:

    passes: list[int] = []
    real = _filesample._Plan._decode

    def counting(ctx: Any, packets: Any, wanted: Any, *rest: Any) -> Iterator[Any]:
        passes.append(0)
        for frame in real(ctx, packets, wanted, *rest):
            passes[-1] += 1
            yield frame

    monkeypatch.setattr(_filesample._Plan, "_decode", staticmethod(counting))
    tiled = write_video(tmp_path / "tiled.mp4", _tile(views[:2], 2), fps=8)
    flicker = tuple(build_requests(["mq_temporal_flickering"]))
    rows = compute_task(Task(Item(item_id="t", video=str(tiled)), flicker))
    assert passes == [33]  # one pass over the 33 frames, for the metric and the check alike
    assert "grid of views" in rows[0].details["video_warnings"][0]
    # Metrics that refuse the video from its probes read no frame of it, and neither does the check.
    passes.clear()
    ref = write_video(tmp_path / "ref.mp4", views[0][:8, :, :128], fps=8)  # another framing: refused
    other = write_video(tmp_path / "other.mp4", _tile(views[1:], 2), fps=8)
    rows = compute_task(Task(Item(item_id="r", video=str(other), reference_video=str(ref)),
                             tuple(build_requests(["iq1_psnr"]))))
    assert passes == [] and "video_warnings" not in (rows[0].details or {})


def _one_camera(edge: str) -> np.ndarray:
    """6 frames, read at the size of a 1280x720 video, of one camera's scene: a textured wall with a red
    cube moving, and a dark doorway from the centre line (``door``) or a table top below it (``table``)."""
    w, h = read_size(1280, 720)
    rng = np.random.default_rng(1)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = 150 + 30 * yy / h - 20 * xx / w
    texture = np.repeat(np.repeat(rng.normal(0, 6, (h // 2 + 1, w // 2 + 1)), 2, 0), 2, 1)[:h, :w]
    wall = np.stack([base + texture, base * 0.95 + texture, base * 0.85 + texture], -1)
    if edge == "door":
        wall[:, w // 2:] *= 0.55
        wall[:, w // 2:w // 2 + 6] = wall[:, w // 2:w // 2 + 6] * 0.6 + 40  # the jamb
    elif edge == "table":
        wall[h // 2:] = np.array([120, 80, 50]) + texture[h // 2:, :, None]
    frames = []
    for t in range(6):
        frame = wall.copy()
        frame[30:45, 40 + 12 * t:50 + 12 * t] = (200, 30, 30)
        frames.append(np.clip(frame + rng.normal(0, 2, frame.shape), 0, 255).astype(np.uint8))
    return np.stack(frames)


@pytest.mark.parametrize(("edge", "layout"), [("door", (1, 2)), ("table", (2, 1))])
def test_a_scene_edge_on_the_centre_line_is_named_in_the_two_cell_warning(edge: str,
                                                                          layout: tuple[int, int]) -> None:
    # A door jamb or table edge at mid-frame is a seam that stays put: one camera's clip looks like a 1x2
    # or 2x1 grid, and the warning must not send its user to `--grid` without saying so (audit rev3, F1).
    assert find_tiling(_one_camera("plain"), 1280, 720) is None
    found = find_tiling(_one_camera(edge), 1280, 720)
    assert found is not None and (found.rows, found.cols) == layout  # one seam is all the detector has
    said = found.message()
    scene = said.index("a straight edge of the scene on the frame's centre line")
    assert "ignore this for a single camera" in said and scene < said.index("declare them as the item's grid")


def _mosaic_matched_at(views6: list[np.ndarray], lines: dict[int, int]) -> np.ndarray:
    """6 frames of a 2x3 mosaic of 256x192 views, in which frame ``lines[x]`` shows no jump across the column
    line ``x``: the cell right of it starts with the last column of the cell left of it (two cells whose
    edges happen to match)."""
    frames = _tile([v[:6] for v in views6], 3).copy()
    for x, t in lines.items():
        frames[t, :, x:x + 8] = frames[t, :, x - 1:x]
    return frames


@pytest.fixture(scope="module")
def six_views() -> list[np.ndarray]:
    """Six views, each lit its own way (the demo's tables look alike: their seams would be faint)."""
    light = (1.0, 0.6, 0.85, 0.6, 0.85, 1.0)
    return [(_view(seed)[:6] * light[seed]).astype(np.uint8) for seed in range(6)]


def test_a_column_seam_matched_in_one_frame_still_gives_the_full_layout(six_views: list[np.ndarray]) -> None:
    # A real 2x3 Ctrl-World mosaic was read as 2x1, with the advice to ignore it for a single camera,
    # because in one of its 6 frames one column seam did not jump (audit realvid F4).
    whole = find_tiling(_read(_mosaic_matched_at(six_views, {})), 768, 384)
    assert whole is not None and (whole.rows, whole.cols, whole.seams) == (2, 3, ("x=256", "x=512", "y=192"))
    found = find_tiling(_read(_mosaic_matched_at(six_views, {512: 2})), 768, 384)
    assert found is not None and (found.rows, found.cols) == (2, 3)  # it was 2x1
    assert (found.seams, found.unsteady, found.possibly) == (("x=256", "y=192"), ("x=512",), None)
    said = found.message()
    assert "at x=512 in half of them or more" in said and "--grid 2x3" in said
    assert "ignore this for a single camera" not in said


def test_a_row_seam_with_unsteady_column_seams_says_possibly_and_not_single_camera(
    six_views: list[np.ndarray],
) -> None:
    # Both column seams unsteady (in frames of their own): the row seam alone is the layout found, but the
    # columns are named, and the clause meant for a scene edge on a single camera's centre line is not.
    found = find_tiling(_read(_mosaic_matched_at(six_views, {256: 1, 512: 4})), 768, 384)
    assert found is not None and (found.rows, found.cols, found.seams) == (2, 1, ("y=192",))
    said = found.message()
    assert "ignore this for a single camera" not in said
    assert "possibly a 2x3 grid: x=256, x=512 are seams in half the frames read or more" in said
    assert (found.unsteady, found.possibly, found.possibly_seams) == ((), (2, 3), ("x=256", "x=512"))


def _read(frames: np.ndarray) -> np.ndarray:
    """The frames as the check reads them (at :func:`read_size`)."""
    import cv2

    size = read_size(frames.shape[2], frames.shape[1])
    return np.stack([cv2.resize(f, size, interpolation=cv2.INTER_AREA) for f in frames])
