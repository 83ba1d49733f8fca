"""What a judge is sent of an item whose video is a grid of views: the main view's cell by default, the
stitched frame with ``grid_view="whole"``; each row records what was judged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _judge_cli import app
from _judge_server import FakeServer, Reply, image_sizes
from typer.testing import CliRunner

from robojudge.judges import (
    ChatRequest,
    FrameSpec,
    JudgeConfig,
    ResponseCache,
    Scoring,
    get_rubric,
    make_judge,
)
from robojudge.judges._mock import MockBackend
from robojudge.run._fingerprint import JUDGE_INPUTS, judge_fingerprint, read_inputs
from robojudge.run._judge import judge_items
from robojudge.run._judge_rows import JudgePlan
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.suite._demo import _background, _plan_episode, _render
from robojudge.video import write_video


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


REPLY = '{"reasoning": "r", "physical_adherence": 4}'
# The level of each cell of a 2x2 grid of 40x30 cells, row by row: the judge's frames tell which it got.
LEVELS = (40, 100, 160, 220)
GRID = {"rows": 2, "cols": 2, "views": ["front", "left", "wrist", None]}


def _grid_video(path: Path, cell: tuple[int, int] = (40, 30)) -> str:
    w, h = cell
    frames = np.zeros((8, 2 * h, 2 * w, 3), np.uint8)
    for i, level in enumerate(LEVELS):
        r, c = divmod(i, 2)
        frames[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = level
    write_video(path, frames, fps=4)
    return str(path)


def _judge(requests: list[ChatRequest]) -> tuple[JudgeConfig, MockBackend]:
    cfg = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})

    def script(request: ChatRequest) -> str:
        requests.append(request)
        return REPLY

    return cfg, MockBackend(cfg, script)


@pytest.mark.parametrize("decode_workers", [0, 1])
def test_a_grid_item_is_judged_on_its_main_view(tmp_path: Path, decode_workers: int) -> None:
    video = _grid_video(tmp_path / "grid.mp4")
    item = Item(item_id="g", video=video, grid=GRID, main_view="wrist")
    requests: list[ChatRequest] = []
    cfg, backend = _judge(requests)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        summary = judge_items([item], cfg, [get_rubric("pa")], store, cache=cache, backend=backend,
                              decode_workers=decode_workers)
        assert summary.scored == 1
        (row,) = store.rows()
    (request,) = requests
    assert request.frames is not None
    pixels = request.frames.frames
    # The wrist view's cell (row 1, column 0): 40x30 pixels of level 160, not the 80x60 mosaic.
    assert pixels.shape[1:3] == (30, 40)
    assert abs(float(pixels.mean()) - LEVELS[2]) < 3
    assert row.details is not None
    assert row.details["judged"] == {"file": video, "view": "wrist", "main_view": "wrist", "grid": GRID,
                                     "cell": [1, 0]}
    # The default leaves the stored config as it was before grid_view existed: the same hash.
    assert row.config["frames"] == {"fps": 4.0, "max_frames": 32, "size": None}


def test_the_whole_grid_when_asked_under_another_config(tmp_path: Path) -> None:
    video = _grid_video(tmp_path / "grid.mp4")
    item = Item(item_id="g", video=video, grid=GRID)  # no main_view: the first named cell is the main one
    requests: list[ChatRequest] = []
    cfg, backend = _judge(requests)
    pa = get_rubric("pa")
    whole = FrameSpec(grid_view="whole")
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        judge_items([item], cfg, [pa], store, cache=cache, backend=backend, decode_workers=0)
        judge_items([item], cfg, [pa], store, cache=cache, backend=backend, decode_workers=0, frames=whole)
        rows = {r.config["frames"].get("grid_view", "main"): r for r in store.rows()}
    assert [r.frames.frames.shape[1:3] for r in requests if r.frames is not None] == [(30, 40), (60, 80)]
    assert rows["main"].details is not None and rows["whole"].details is not None
    assert rows["main"].details["judged"]["view"] == "front"
    assert rows["main"].details["judged"]["cell"] == [0, 0]
    assert rows["whole"].details["judged"] == {"file": video, "view": None, "main_view": "front",
                                               "grid": GRID}
    assert rows["main"].config_hash != rows["whole"].config_hash


def test_a_cell_is_resized_to_the_frame_size(tmp_path: Path) -> None:
    item = Item(item_id="g", video=_grid_video(tmp_path / "grid.mp4"), grid=GRID, main_view="left")
    requests: list[ChatRequest] = []
    cfg, backend = _judge(requests)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        judge_items([item], cfg, [get_rubric("pa")], store, cache=cache, backend=backend, decode_workers=0,
                    frames=FrameSpec(size=20))
    (request,) = requests
    assert request.frames is not None
    assert request.frames.frames.shape[1:3] == (15, 20)  # the cell's longer side is the size asked for
    assert abs(float(request.frames.frames.mean()) - LEVELS[1]) < 3


def test_a_grid_that_does_not_divide_is_a_video_error(tmp_path: Path) -> None:
    item = Item(item_id="g", video=_grid_video(tmp_path / "grid.mp4"),
                grid={"rows": 1, "cols": 3, "views": ["a", "b", "c"]})
    cfg, backend = _judge([])
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        summary = judge_items([item], cfg, [get_rubric("pa")], store, cache=cache, backend=backend,
                              decode_workers=0)
        (row,) = store.rows()
    assert summary.failed == 1
    assert row.error is not None and "video error:" in row.error
    assert "a 80x60 video does not split into the item's 1x3 grid" in row.error


def test_rows_of_items_without_a_grid_record_the_file_and_view(tmp_path: Path) -> None:
    a, b = _grid_video(tmp_path / "a.mp4"), _grid_video(tmp_path / "b.mp4")
    items = [Item(item_id="plain", video=a),
             Item(item_id="views", video=b, views={"front": b, "side": a}, main_view="front")]
    cfg, backend = _judge([])
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        judge_items(items, cfg, [get_rubric("pa")], store, cache=cache, backend=backend, decode_workers=0)
        judged = {r.item_id: (r.details or {}).get("judged") for r in store.rows()}
    assert judged == {"plain": {"file": a, "view": None, "main_view": None},
                      "views": {"file": b, "view": "front", "main_view": "front"}}


def test_grid_judgments_stored_before_the_cell_are_judged_again(tmp_path: Path) -> None:
    video = _grid_video(tmp_path / "grid.mp4")
    grid_item = Item(item_id="g", video=video, grid=GRID, main_view="wrist")
    plain = Item(item_id="p", video=_grid_video(tmp_path / "p.mp4"))
    # A plain item's fingerprint is what it was; a grid item's covers the layout and main view.
    assert judge_fingerprint(plain) == read_inputs(plain, JUDGE_INPUTS).value
    before = read_inputs(grid_item, JUDGE_INPUTS).value  # what a row judged on the whole mosaic carries
    assert judge_fingerprint(grid_item) != before
    other_main = grid_item.model_copy(update={"main_view": "left"})
    assert judge_fingerprint(other_main) != judge_fingerprint(grid_item)
    cfg, backend = _judge([])
    pa = get_rubric("pa")
    plan = JudgePlan.build(cfg, pa, FrameSpec(), Scoring.argmax, 1, cfg.sampling.temperature)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        store.add([ResultRow("g", plan.metric_id, plan.config_hash, plan.version, "ok", 2.0,
                             config=plan.config, fingerprint=before)])
        summary = judge_items([grid_item], cfg, [pa], store, cache=cache, backend=backend, decode_workers=0)
        assert (summary.stale, summary.scored) == (1, 1)
        assert [r.value for r in store.rows()] == [4.0]



@pytest.mark.parametrize(("option", "sizes"), [([], {(40, 30)}), (["--grid-view", "whole"], {(80, 60)})])
def test_cli_grid_view(tmp_path: Path, option: list[str], sizes: set[tuple[int, int]]) -> None:
    # Through an OpenAI-compatible server: frames decoded in a decoder process and sent as JPEGs.
    item = Item(item_id="g", video=_grid_video(tmp_path / "grid.mp4"), grid=GRID, main_view="left")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps(item.model_dump(exclude_none=True)) + "\n")
    with FakeServer(lambda body, n: Reply(REPLY)) as srv:
        done = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "openai", "--model", "m",
                                        "--base-url", srv.url, "--rubric", "pa", "--db", str(tmp_path / "r"),
                                        "--cache-dir", str(tmp_path / "c"), "--no-progress", *option])
        assert done.exit_code == 0, done.output
        assert [image_sizes(b) for b in srv.bodies] == [sizes]
    bad = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "mock", "--grid-view", "cell"])
    assert bad.exit_code == 2 and "--grid-view" in bad.output and "'cell'" in bad.output


def _tiled_views(path: Path) -> str:
    """Two rollouts of the synthetic demo, each over a table of its own, side by side (a 1x2 tile)."""
    views = []
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        views.append(_render(_background(rng), _plan_episode(rng, "red"))[:12])
    write_video(path, np.concatenate(views, axis=2), fps=8)
    return str(path)


@pytest.mark.parametrize("decode_workers", [0, 1])
def test_a_tiled_video_without_a_grid_warns_in_judged_rows(tmp_path: Path, decode_workers: int) -> None:
    video = _tiled_views(tmp_path / "tiled.mp4")
    items = [Item(item_id="plain", video=video),
             Item(item_id="grid", video=video, grid={"rows": 1, "cols": 2, "views": ["a", "b"]})]
    cfg, backend = _judge([])
    pa = get_rubric("pa")
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        summary = judge_items(items, cfg, [pa], store, cache=cache, backend=backend,
                              decode_workers=decode_workers, frames=FrameSpec(grid_view="whole"))
        warned = {r.item_id: (r.details or {}).get("video_warnings") for r in store.rows()}
        # A warm rerun into another store takes the frames from the cache, the warning with them.
        with ResultStore(tmp_path / "again.sqlite") as again:
            rerun = judge_items(items[:1], cfg, [pa], again, cache=cache, backend=backend, decode_workers=0,
                                frames=FrameSpec(grid_view="whole"))
            (row,) = again.rows()
    (said,) = warned["plain"]
    assert said.startswith(f"{video}: its frames look like a 1x2 grid of views (straight seams at x=256")
    assert warned["grid"] is None  # the grid is declared: the whole frame was asked for
    assert summary.video_warnings == {"plain": [said]}
    assert rerun.stats.cache_hits == 1 and (row.details or {}).get("video_warnings") == [said]
