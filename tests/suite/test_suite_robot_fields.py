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


# -- content, checked with the media (robojudge suite validate without --no-media) -----------------

ARM = """<mujoco><compiler angle="radian"/><worldbody>
  <body name="base"><geom type="sphere" size="0.05"/>
    <body name="upper" pos="0 0 0.1"><joint name="shoulder" axis="0 1 0" range="-1 1"/>
      <geom type="sphere" size="0.02"/>
      <body name="hand" pos="0.3 0 0"><geom type="sphere" size="0.02"/></body></body></body>
</worldbody></mujoco>
"""
CAMERA = {
    "K": [[50, 0, 32], [0, 50, 24], [0, 0, 1]],
    "R": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    "t": [0, 0, 1],
    "size": [64, 48],
}


@pytest.fixture
def real(suite: Path) -> Path:
    pytest.importorskip("mujoco")
    (suite / "robots" / "arm.xml").write_text(ARM)
    (suite / "robots" / "arm.toml").write_text(
        'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "upper", "hand"]\n'
        'links = [["upper", "hand"]]\n'
    )
    (suite / "joints" / "ep1.csv").write_text("shoulder\n0.1\n0.2\n")
    (suite / "calib" / "ep1.json").write_text(json.dumps({"front": CAMERA}))
    return suite


def _errors(folder: Path, row: dict[str, object], media: str = "open") -> list[tuple[str | None, str]]:
    problems = validate_manifest(_write(folder, [row]), media=media)
    return [(p.field, p.message) for p in problems if p.is_error]


def test_good_files_pass_the_content_check(real: Path) -> None:
    assert _errors(real, ROW) == []


def test_bad_robot_spec_is_an_error_on_the_robot_field(real: Path) -> None:
    (real / "robots" / "arm.toml").write_text(
        'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "elbow"]\n'
    )
    found = _errors(real, ROW)
    assert [f for f, _ in found] == ["robot"]
    assert "arm.toml: field keypoints[1]: 'elbow' is not a body of the model" in found[0][1]
    assert _errors(real, ROW, media="none") == []  # existence only: nothing is opened


def test_joint_states_missing_a_joint_of_the_spec(real: Path) -> None:
    (real / "joints" / "ep1.csv").write_text("elbow\n0.1\n")
    found = _errors(real, ROW)
    assert [f for f, _ in found] == ["joint_states"]
    assert "ep1.csv: line 1: no column for joint(s) ['shoulder']" in found[0][1]


def test_calibration_views_must_be_the_items_views(real: Path) -> None:
    # A camera of no view of the item only warns: one rig file serves episodes that lack a view.
    (real / "calib" / "ep1.json").write_text(json.dumps({"front": CAMERA, "side": CAMERA}))
    assert _errors(real, ROW) == []
    warned = [(p.field, p.message) for p in validate_manifest(_write(real, [ROW]), media="open")
              if not p.is_error and p.field == "calibration"]
    assert warned == [("calibration", f"{real / 'calib' / 'ep1.json'}: camera(s) ['side'] of no view of the "
                                      "item (its views: ['front']); not read for this item")]
    no_views = {k: v for k, v in ROW.items() if k != "views"}
    found = _errors(real, no_views)
    assert found == [("calibration", "an item without views needs one camera (for its video); found 2")]
    (real / "calib" / "ep1.json").write_text(json.dumps({"front": dict(CAMERA, size=[64])}))
    found = _errors(real, ROW)
    assert [f for f, _ in found] == ["calibration"] and "view 'front' field size" in found[0][1]
