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


def _warnings(tmp_path: Path, row: dict[str, object]) -> list[tuple[str | None, str]]:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps(row) + "\n")
    return [(p.field, p.message) for p in validate_manifest(manifest, media="open") if not p.is_error]


def test_a_rig_file_shared_by_an_episode_without_one_view_only_warns(tmp_path: Path) -> None:
    # One calibration for the rig; this episode has no 'top' view (the RIGIS metrics score its two views).
    row = _rig(tmp_path, ["front", "side", "top"])
    row["views"] = {"front": "front", "side": "side"}
    assert _errors(tmp_path, row) == []
    assert _warnings(tmp_path, row) == [
        ("calibration", f"{tmp_path / 'rig.json'}: camera(s) ['top'] of no view of the item (its views: "
                        "['front', 'side']); not read for this item")]


def test_a_camera_of_no_view_warns_and_a_view_without_a_camera_is_still_an_error(tmp_path: Path) -> None:
    # 'back' is read by nothing (a warning); 'side' and 'top' have no camera (the metrics refuse the item)
    row = _rig(tmp_path, ["front", "back"])
    assert _errors(tmp_path, row) == [
        ("calibration", f"{tmp_path / 'rig.json'}: no camera for view(s) ['side', 'top'] (it has ['back', "
                        "'front']); the calibration needs one camera per view")]
    assert [f for f, m in _warnings(tmp_path, row) if "camera(s) ['back'] of no view" in m] == ["calibration"]
    # Names that differ only in case are no camera for the view either.
    row["views"] = {"Front": "front", "Side": "side"}
    found = _errors(tmp_path, row)
    assert len(found) == 1
    assert "no camera for view(s) ['Front', 'Side'] (it has ['back', 'front'])" in found[0][1]


def test_a_view_framed_otherwise_than_its_camera_is_an_error_naming_both_sizes(tmp_path: Path) -> None:
    # 'top' cropped to 16:9 from the 4:3 camera; 'side' at half size, the same framing (scaled, no error)
    row = _rig(tmp_path, ["front", "side", "top"])
    frames = np.random.default_rng(0).integers(0, 256, (4, 48, 64, 3), dtype=np.uint8)
    write_video(tmp_path / "top_crop", frames[:, 6:42], fps=10)
    write_video(tmp_path / "side_half", frames[:, ::2, ::2], fps=10)
    row["views"] = {"front": "front", "side": "side_half", "top": "top_crop"}
    assert _errors(tmp_path, row) == [
        ("calibration", f"{tmp_path / 'rig.json'}: view 'top' is 64x36 (aspect 1.778), its calibration is "
                        "for 64x48 (1.333): aspect ratios more than 5% apart are another framing (a crop, "
                        "padding, another camera), which no scaling of K maps onto the calibrated rays; "
                        "calibrate the view at the framing it is given in")]
    assert _errors(tmp_path, row, media="none") == []  # nothing is opened


def test_a_grid_cell_or_a_single_video_framed_otherwise_too(tmp_path: Path) -> None:
    write_video(tmp_path / "grid", np.zeros((4, 36, 128, 3), np.uint8), fps=10)  # two 64x36 cells
    (tmp_path / "rig.json").write_text(json.dumps({"left": CAMERA, "right": CAMERA}))
    row = {"item_id": "g", "video": "grid", "grid": {"rows": 1, "cols": 2, "views": ["left", "right"]},
           "calibration": "rig.json"}
    found = _errors(tmp_path, row)
    assert [f for f, _ in found] == ["calibration"] * 2
    assert "view 'left' is 64x36 (aspect 1.778), its calibration is for 64x48" in found[0][1]
    assert "view 'right' is 64x36" in found[1][1]
    # An item without views: its one camera describes the video.
    write_video(tmp_path / "wide", np.zeros((4, 36, 64, 3), np.uint8), fps=10)
    (tmp_path / "one.json").write_text(json.dumps({"cam": CAMERA}))
    found = _errors(tmp_path, {"item_id": "w", "video": "wide", "calibration": "one.json"})
    assert len(found) == 1
    assert "view 'cam' is 64x36 (aspect 1.778), its calibration is for 64x48" in found[0][1]


def test_the_calibration_size_check_reuses_the_media_checks_probes(tmp_path: Path, monkeypatch) -> None:
    # The size check (each view against its camera's size) and the joint-state frame count read the
    # probes the media check took: a calibration adds no probe of any video (it probed each view once more).
    import robojudge.video

    real = robojudge.video.probe_video
    calls: dict[str, list[str]] = {"with": [], "without": []}
    run = "with"

    def counted(path):
        calls[run].append(Path(path).name)
        return real(path)

    monkeypatch.setattr(robojudge.video, "probe_video", counted)
    for run in ("with", "without"):  # each in a folder of its own: no memo of the other run's files
        (tmp_path / run).mkdir()
        row = _rig(tmp_path / run, ["front", "side", "top"])
        if run == "without":
            del row["calibration"]
        assert _errors(tmp_path / run, row) == []
    assert sorted(calls["with"]) == sorted(calls["without"])
    assert set(calls["with"]) == {"front", "side", "top"}
