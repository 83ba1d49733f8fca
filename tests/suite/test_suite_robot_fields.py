"""Manifest fields of real episodes for forward kinematics: joint_states, robot, calibration."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from robojudge.suite import ManifestError, load_suite, validate_manifest

ROW = {
    "item_id": "ep1",
    "video": "videos/ep1.mp4",
    "views": {"front": "videos/ep1.mp4"},
    "joint_states": "joints/ep1.csv",
    "robot": "robots/arm.toml",
    "calibration": "calib/ep1.json",
}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for rel in ("videos/ep1.mp4", "joints/ep1.csv", "robots/arm.toml", "calib/ep1.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    return tmp_path


def _write(folder: Path, rows: list[dict[str, object]]) -> Path:
    p = folder / "suite.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def test_fields_are_read_and_resolved_against_the_manifest_folder(suite: Path) -> None:
    item = load_suite(_write(suite, [ROW])).items[0]
    assert item.joint_states == str(suite / "joints" / "ep1.csv")
    assert item.robot == str(suite / "robots" / "arm.toml")
    assert item.calibration == str(suite / "calib" / "ep1.json")
    assert {"joint_states", "robot", "calibration"} <= set(item.file_fields())


def test_csv_manifest_carries_them_too(suite: Path) -> None:
    p = suite / "suite.csv"
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "video", "joint_states", "robot", "calibration"])
        w.writerow(["ep1", "videos/ep1.mp4", "joints/ep1.csv", "robots/arm.toml", "calib/ep1.json"])
    item = load_suite(p).items[0]
    assert item.robot == str(suite / "robots" / "arm.toml")


@pytest.mark.parametrize("field", ["joint_states", "robot", "calibration"])
def test_missing_file_is_an_error_naming_line_and_field(suite: Path, field: str) -> None:
    row = dict(ROW, **{field: "nowhere/x" + Path(str(ROW[field])).suffix})
    problems = [p for p in validate_manifest(_write(suite, [row])) if p.is_error]
    assert [(p.line, p.item_id, p.field) for p in problems] == [(1, "ep1", field)]
    assert "file not found" in problems[0].message
    with pytest.raises(ManifestError):
        load_suite(_write(suite, [row]))


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("joint_states", "joints/ep1.txt", "joint_states must be a .npz, .csv or .npy file"),
        ("robot", "robots/arm.json", "robot must be a robot spec .toml file"),
        ("calibration", "calib/ep1.yaml", "calibration must be a .json file"),
    ],
)
def test_wrong_kind_of_file_is_named(suite: Path, field: str, value: str, words: str) -> None:
    (suite / value).write_bytes(b"")
    problems = [p for p in validate_manifest(_write(suite, [dict(ROW, **{field: value})])) if p.is_error]
    assert [(p.field, words in p.message) for p in problems] == [(field, True)], problems


def test_a_folder_is_not_a_joint_state_file(suite: Path) -> None:
    (suite / "joints" / "dir.csv").mkdir()
    problems = validate_manifest(_write(suite, [dict(ROW, joint_states="joints/dir.csv")]))
    found = [(p.field, "is a folder; expected a file" in p.message) for p in problems]
    assert found == [("joint_states", True)]
