"""Multi-view items: a grid video's declared layout, its cells, and views that must agree in time."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from robojudge.suite import Item, load_suite, main_view_name, validate_manifest
from robojudge.suite._views import GridError, check_views, split_grid, view_sources
from robojudge.video import write_video

W, H = 40, 30


def _views(n: int = 6) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {name: rng.integers(0, 256, (n, H, W, 3), dtype=np.uint8) for name in ("front", "left", "right")}


def _stitch(views: dict[str, np.ndarray], layout: list[str | None], cols: int) -> np.ndarray:
    """Cells row by row; ``None`` cells black."""
    first = next(iter(views.values()))
    cells = [views[n] if n is not None else np.zeros_like(first) for n in layout]
    rows = [np.concatenate(cells[r * cols:(r + 1) * cols], axis=2) for r in range(len(cells) // cols)]
    return np.concatenate(rows, axis=1)


def _manifest(root: Path, rows: list[dict]) -> Path:
    path = root / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_grid_is_split_into_its_named_views_pixel_exact(tmp_path: Path) -> None:
    views = _views()
    layout = ["front", "left", None, "right"]
    write_video(tmp_path / "grid", _stitch(views, layout, cols=2), fps=10)  # PNG frames: lossless
    path = _manifest(tmp_path, [{"item_id": "g1", "video": "grid",
                                 "grid": {"rows": 2, "cols": 2, "views": layout}}])
    item = load_suite(path).by_id("g1")
    assert item.view_names() == ["front", "left", "right"]
    assert main_view_name(item) == "front"
    sources = view_sources(item)
    assert {n: s.cell for n, s in sources.items()} == {"front": (0, 0), "left": (0, 1), "right": (1, 1)}

    from robojudge.metrics.multiview._item import view_frames

    cut = view_frames(item, instants=len(views["front"]))
    assert list(cut) == ["front", "left", "right"]
    for name, frames in views.items():
        np.testing.assert_array_equal(cut[name], frames)


def test_split_grid_refuses_a_size_that_does_not_divide() -> None:
    item = Item(item_id="g", video="v", grid={"rows": 2, "cols": 3, "views": ["a", "b", "c", "d"]})
    assert item.grid is not None
    with pytest.raises(GridError, match=r"a 121x60 video does not split into a 2x3 grid: width 121 by 3 "
                                        r"columns \(remainder 1 px\)"):
        split_grid(np.zeros((2, 60, 121, 3), np.uint8), item.grid)


def test_grid_that_does_not_divide_the_video_is_a_validation_error(tmp_path: Path) -> None:
    write_video(tmp_path / "grid.mp4", np.zeros((4, 32, 50, 3), np.uint8), fps=8)
    path = _manifest(tmp_path, [{"item_id": "g", "video": "grid.mp4",
                                 "grid": {"rows": 2, "cols": 3, "views": ["a", "b", "c"]}}])
    problems = [p for p in validate_manifest(path, media="open") if p.is_error]
    assert [(p.line, p.item_id, p.field) for p in problems] == [(1, "g", "grid")]
    assert "width 50 by 3 columns (remainder 2 px)" in problems[0].message


@pytest.mark.parametrize(
    ("grid", "field", "message"),
    [
        ({"rows": 0, "cols": 2, "views": ["a"]}, "grid.rows", "out of range 1-16"),
        ({"rows": 1, "cols": 2, "views": ["a", "b", "c"]}, "grid", "names 3 cells but a 1x2 grid has 2"),
        ({"rows": 1, "cols": 2, "views": ["a", "a"]}, "grid", "repeats view name(s) ['a']"),
        ({"rows": 1, "cols": 2, "views": [None, None]}, "grid", "names no view"),
        ({"rows": 1, "cols": 2, "view": ["a"]}, "grid.view", "did you mean 'views'?"),
    ],
)
def test_bad_grid_layout_names_the_field(tmp_path: Path, grid: dict, field: str, message: str) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=8)
    rows = [{"item_id": "ok", "video": "v.mp4"}, {"item_id": "x", "video": "v.mp4", "grid": grid}]
    path = _manifest(tmp_path, rows)
    problems = validate_manifest(path)
    found = [(p.line, p.item_id, p.field) for p in problems]
    assert (2, "x", field) in found, problems
    assert any(message in p.message for p in problems if p.field == field)


def test_grid_and_views_together_and_main_view_outside_the_grid(tmp_path: Path) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=8)
    grid = {"rows": 1, "cols": 2, "views": ["a", "b"]}
    path = _manifest(tmp_path, [
        {"item_id": "both", "video": "v.mp4", "grid": grid, "views": {"a": "v.mp4"}},
        {"item_id": "main", "video": "v.mp4", "grid": grid, "main_view": "c"},
    ])
    problems = {p.item_id: p for p in validate_manifest(path)}
    assert problems["both"].field == "grid" and "grid and views are both given" in problems["both"].message
    assert problems["main"].field == "main_view" and "'c' is not one of the views ['a', 'b']" in \
        problems["main"].message


def test_grid_as_a_json_cell_of_a_csv_manifest(tmp_path: Path) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 32, 3), np.uint8), fps=8)
    layout = json.dumps({"rows": 1, "cols": 2, "views": ["a", "b"]}).replace('"', '""')
    (tmp_path / "suite.csv").write_text(f'item_id,video,grid\nc1,v.mp4,"{layout}"\n')
    item = load_suite(tmp_path / "suite.csv").by_id("c1")
    assert item.grid is not None and item.view_names() == ["a", "b"]


@pytest.mark.parametrize("media", ["open", "deep"])
def test_views_that_disagree_in_frame_count_are_named(tmp_path: Path, media: str) -> None:
    views = _views(12)
    write_video(tmp_path / "front.mp4", views["front"], fps=10)
    write_video(tmp_path / "left.mp4", views["left"][:10], fps=10)
    write_video(tmp_path / "right.mp4", views["right"], fps=10)
    path = _manifest(tmp_path, [{"item_id": "m", "video": "front.mp4",
                                 "views": {"front": "front.mp4", "left": "left.mp4", "right": "right.mp4"}}])
    problems = [p for p in validate_manifest(path, media=media) if p.is_error]
    assert [(p.item_id, p.field) for p in problems] == [("m", "views.left")]
    assert problems[0].message.startswith("view 'left' has 10 frames, view 'front' has 12 (2 fewer)")


def test_views_that_disagree_in_rate_are_named(tmp_path: Path) -> None:
    views = _views(12)
    write_video(tmp_path / "a", views["front"], fps=10)
    write_video(tmp_path / "b", views["left"], fps=12)
    item = Item(item_id="r", video=str(tmp_path / "a"),
                views={"a": str(tmp_path / "a"), "b": str(tmp_path / "b")})
    assert check_views(item) == [("views.b", "view 'b' runs at 12 fps, view 'a' at 10 fps (+20.0%); frame t "
                                  "of each is not the same instant", "error")]


def test_views_in_step_pass(tmp_path: Path) -> None:
    views = _views(8)
    for name, frames in views.items():
        write_video(tmp_path / f"{name}.mp4", frames, fps=10)
    item = Item(item_id="ok", video=str(tmp_path / "front.mp4"),
                views={n: str(tmp_path / f"{n}.mp4") for n in views})
    assert check_views(item) == [] and check_views(item, deep=True) == []


def test_views_of_the_same_stamps_in_mp4_and_matroska_pass(tmp_path: Path) -> None:
    # One stall: Matroska's declared 10 fps was compared with MP4's average (about 6 fps) and the views
    # were refused as out of step.
    times = [0.1 * i for i in range(6)] + [2.0 + 0.1 * i for i in range(6)]
    views = _views(12)
    write_video(tmp_path / "front.mp4", views["front"], fps=10, timestamps=times)
    write_video(tmp_path / "wrist.mkv", views["left"], fps=10, timestamps=times)
    item = Item(item_id="s", video=str(tmp_path / "front.mp4"),
                views={"front": str(tmp_path / "front.mp4"), "wrist": str(tmp_path / "wrist.mkv")})
    assert check_views(item) == [] and check_views(item, deep=True) == []


def test_video_must_be_the_main_views_file(tmp_path: Path) -> None:
    # Single-view metrics and judges read `video`; tracking's state view, KIVA's labels and the reference
    # are taken in the main view. An item on which the two are different cameras passed validation.
    for name in ("a", "b", "tile"):
        write_video(tmp_path / f"{name}.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=8)
    views = {"a": "a.mp4", "b": "./b.mp4"}
    path = _manifest(tmp_path, [
        {"item_id": "ok", "video": "a.mp4", "views": views, "main_view": "a"},
        {"item_id": "spelt", "video": "./b.mp4", "views": {"a": "a.mp4", "b": "b.mp4"}},  # one file
        {"item_id": "main_is_b", "video": "a.mp4", "views": views, "main_view": "b"},
        {"item_id": "tile", "video": "tile.mp4", "views": views},
    ])
    problems = validate_manifest(path)
    assert [(p.line, p.item_id, p.field, p.is_error) for p in problems] == [
        (3, "main_is_b", "main_view", True), (4, "tile", "video", True)]
    assert problems[0].message.startswith(
        "main_view 'b' is not the view that video shows: video 'a.mp4' is views.a")
    assert "set main_view to 'a', or video to views.b ('./b.mp4')" in problems[0].message
    assert problems[1].message.startswith("video 'tile.mp4' is the file of none of the views ['a', 'b']")
    assert "declare a stitched video of the views with grid" in problems[1].message
    suite = load_suite(path, strict=False)
    assert [it.item_id for it in suite] == ["ok", "spelt"]
    assert main_view_name(suite.by_id("spelt")) == "b"
    assert str(problems[0]).endswith(f"suite.jsonl:3: item 'main_is_b' field main_view: {problems[0].message}"
                                     ) and str(problems[1]).startswith(f"{path}:4: item 'tile' field video: ")


def test_a_hard_link_to_the_main_views_file_is_that_file(tmp_path: Path) -> None:
    # A hard link is the view's file under another name: it passed before the main-view rule, and still
    # does; a copy of the file is another file, and stays refused.
    for name in ("a", "b"):
        write_video(tmp_path / f"{name}.mp4", np.full((2, 16, 16, 3), ord(name), np.uint8), fps=8)
    os.link(tmp_path / "a.mp4", tmp_path / "linked.mp4")
    shutil.copyfile(tmp_path / "a.mp4", tmp_path / "copied.mp4")
    views = {"a": "a.mp4", "b": "b.mp4"}
    path = _manifest(tmp_path, [
        {"item_id": "linked", "video": "linked.mp4", "views": views, "main_view": "a"},
        {"item_id": "linked_unnamed", "video": "linked.mp4", "views": {"b": "b.mp4", "a": "a.mp4"}},
        {"item_id": "linked_to_b", "video": "linked.mp4", "views": views, "main_view": "b"},
        {"item_id": "copied", "video": "copied.mp4", "views": views, "main_view": "a"},
    ])
    problems = validate_manifest(path)
    assert [(p.line, p.item_id, p.field) for p in problems] == [(3, "linked_to_b", "main_view"),
                                                                (4, "copied", "video")]
    assert problems[0].message.startswith("main_view 'b' is not the view that video shows: video "
                                          "'linked.mp4' is views.a")
    suite = load_suite(path, strict=False)
    assert [it.item_id for it in suite] == ["linked", "linked_unnamed"]
    # Without main_view, the main view is the one the hard link is (not the first listed, b).
    assert main_view_name(suite.by_id("linked_unnamed")) == "a"
