"""``robojudge suite scan --grid ROWSxCOLS --grid-views NAMES``: every video of a folder declared as a grid of
views, as the manifest's ``grid`` field would declare it by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli._suite import app
from robojudge.suite import load_suite, parse_grid, scan_folder, validate_manifest
from robojudge.video import write_video

runner = CliRunner()


def _grid_videos(root: Path, *names: str, size: tuple[int, int] = (64, 48)) -> None:
    rng = np.random.default_rng(3)
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        write_video(root / name, rng.integers(0, 256, (6, size[1], size[0], 3), dtype=np.uint8), fps=6)


def test_scan_declares_the_grid_of_every_video(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _grid_videos(tmp_path / "v", "wan/ep01.mp4", "wan/ep02.mp4")
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["scan", "v", "-o", "s.jsonl", "--grid", "2x2",
                               "--grid-views", "front,left,null,wrist", "--main-view", "wrist"])
    assert done.exit_code == 0, done.output
    assert "wrote s.jsonl: 2 item(s) (each a 2x2 grid of views)" in done.stdout
    rows = [json.loads(line) for line in Path("s.jsonl").read_text().splitlines()]
    layout = {"rows": 2, "cols": 2, "views": ["front", "left", None, "wrist"]}
    assert [r["grid"] for r in rows] == [layout, layout]
    assert [r["main_view"] for r in rows] == ["wrist", "wrist"]
    suite = load_suite("s.jsonl")
    assert [it.view_names() for it in suite.items] == [["front", "left", "wrist"]] * 2
    # The 64x48 videos cut into 2x2 cells of 32x24: the media check finds nothing wrong with the layout.
    assert [p for p in validate_manifest("s.jsonl", media="open") if p.field == "grid"] == []


def test_scan_grid_without_a_main_view_and_from_python(tmp_path: Path) -> None:
    _grid_videos(tmp_path, "g/ep01.mp4", size=(96, 32))
    # Empty names are empty cells too; the main view is then the first named cell, as in a manifest.
    result = scan_folder(tmp_path, grid=parse_grid("1x3", "top,,side"))
    (row,) = result.items
    assert row["grid"] == {"rows": 1, "cols": 3, "views": ["top", None, "side"]} and "main_view" not in row
    assert result.counts()["with_grid"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grid", "2x2"], "--grid 2x2 needs --grid-views, the view name of each cell row by row"),
        (["--grid", "2by2", "--grid-views", "a,b"], "--grid '2by2': expected ROWSxCOLS, such as 2x2 or 1x3"),
        (["--grid-views", "a,b"], "--grid-views names the cells of a --grid; give the layout too"),
        (["--grid", "1x2", "--grid-views", "a,b,c"], "grid.views names 3 cells but a 1x2 grid has 2"),
        (["--grid", "1x2", "--grid-views", "a,a"], "grid.views repeats view name(s) ['a']"),
        (["--grid", "1x2", "--grid-views", "null,"], "grid.views names no view (every cell is null)"),
        (["--grid", "0x2", "--grid-views", "a"], "field grid.rows: value 0 is out of range"),
        (["--grid", "1x2", "--grid-views", "a,b", "--main-view", "c"],
         "--main-view 'c' is not a view of the grid (its views: a, b)"),
        (["--grid", "1x2", "--grid-views", "a,b", "--pattern", r"(?P<clip_id>ep\d+)_(?P<view>\w+)"],
         "--grid and a --pattern with a group named view both give views"),
    ],
)
def test_scan_refuses_a_bad_grid(tmp_path: Path, args: list[str], message: str) -> None:
    _grid_videos(tmp_path / "v", "ep01_a.mp4")
    out = tmp_path / "s.jsonl"
    done = runner.invoke(app, ["scan", str(tmp_path / "v"), "-o", str(out), *args])
    assert done.exit_code == 2 and message in done.stderr, done.output
    assert not out.exists()
