"""``suite validate`` reports a calibration that has no camera for one of the item's views (every RIGIS
metric stores an error row for such an item), for ``views`` and for a grid's named cells."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from robojudge.suite import validate_manifest
from robojudge.video import write_video

CAMERA = {"K": [[50, 0, 32], [0, 50, 24], [0, 0, 1]], "R": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
          "t": [0, 0, 1], "size": [64, 48]}


def _errors(tmp_path: Path, row: dict[str, object], media: str = "open") -> list[tuple[str | None, str]]:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps(row) + "\n")
    return [(p.field, p.message) for p in validate_manifest(manifest, media=media) if p.is_error]


def _rig(tmp_path: Path, cameras: list[str]) -> dict[str, object]:
    frames = np.random.default_rng(0).integers(0, 256, (4, 48, 64, 3), dtype=np.uint8)
    for v in ("front", "side", "top"):
        write_video(tmp_path / v, frames, fps=10)
    (tmp_path / "rig.json").write_text(json.dumps({c: CAMERA for c in cameras}))
    return {"item_id": "ep", "video": "front", "views": {v: v for v in ("front", "side", "top")},
            "calibration": "rig.json"}


def test_a_view_without_a_camera_is_an_error_on_the_calibration(tmp_path: Path) -> None:
    row = _rig(tmp_path, ["front", "side"])
    assert _errors(tmp_path, row) == [
        ("calibration", f"{tmp_path / 'rig.json'}: no camera for view(s) ['top'] (it has ['front', 'side']); "
                        "the calibration needs one camera per view")]
    assert _errors(tmp_path, row, media="none") == []  # existence only: nothing is opened
    assert _errors(tmp_path, _rig(tmp_path, ["front", "side", "top"])) == []


def test_a_grid_cell_without_a_camera_too(tmp_path: Path) -> None:
    write_video(tmp_path / "grid", np.zeros((4, 48, 128, 3), np.uint8), fps=10)
    (tmp_path / "rig.json").write_text(json.dumps({"left": CAMERA}))
    row = {"item_id": "g", "video": "grid", "grid": {"rows": 1, "cols": 2, "views": ["left", "right"]},
           "calibration": "rig.json"}
    found = _errors(tmp_path, row)
    assert [f for f, _ in found] == ["calibration"] and "no camera for view(s) ['right']" in found[0][1]


def test_one_message_for_a_calibration_that_is_wrong_already(tmp_path: Path) -> None:
    # a camera of no view is reported as before; the missing view is not stacked on it
    row = _rig(tmp_path, ["front", "back"])
    assert _errors(tmp_path, row) == [
        ("calibration", "camera 'back' is not one of the item's views ['front', 'side', 'top']")]
