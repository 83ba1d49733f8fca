"""``robojudge train export`` writes the frames a judge is sent: of a grid item, its main view's cell."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from robojudge.train import export_training_data, read_frames
from robojudge.video import write_video

LEVELS = (40, 100, 160, 220)  # each cell of a 2x2 grid of 40x30 cells, row by row


def test_a_grid_item_exports_its_main_view(tmp_path: Path) -> None:
    frames = np.zeros((8, 60, 80, 3), np.uint8)
    for i, level in enumerate(LEVELS):
        r, c = divmod(i, 2)
        frames[:, r * 30:(r + 1) * 30, c * 40:(c + 1) * 40] = level
    write_video(tmp_path / "grid.mp4", frames, fps=4)
    grid = {"rows": 2, "cols": 2, "views": ["front", "left", "right", "wrist"]}
    item = {"item_id": "g", "video": "grid.mp4", "clip_id": "c", "labels": {"pa": 4}, "grid": grid,
            "main_view": "right"}
    (tmp_path / "suite.jsonl").write_text(json.dumps(item) + "\n")
    out = tmp_path / "export"
    export_training_data(tmp_path / "suite.jsonl", ["pa"], out, fractions={"train": 1.0})
    shown = read_frames(sorted((out / "frames").glob("*/*.png")))
    assert shown.shape[1:3] == (30, 40)  # the right view's cell, not the 80x60 mosaic
    assert abs(float(shown.mean()) - LEVELS[2]) < 3
