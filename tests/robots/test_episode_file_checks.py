"""Joint-state, calibration and spec files that cannot be used: each refused with the file and the field."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.robots import RobotSpecError, check_episode_files, load_calibration, load_joint_states
from robojudge.robots._spec import parse_robot_spec

needs_mujoco = pytest.mark.skipif(
    importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"),
    reason="mujoco is not installed (pip install -e '.[sim]')",
)

# A hinge arm with a slide joint between the elbow and the hand: the elbow - hand pair is not rigid.
ARM = """<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <geom type="sphere" size="0.05"/>
      <body name="upper" pos="0 0 0.1">
        <joint name="shoulder" axis="0 1 0" range="-1.5 1.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="elbow" pos="0.3 0 0">
          <joint name="elbow_joint" axis="0 1 0" range="-2 2"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02"/>
          <body name="hand" pos="0.25 0 0">
            <joint name="slide" type="slide" axis="1 0 0" range="0 0.05"/>
            <geom type="box" size="0.02 0.02 0.02"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
SPEC = """name = "arm"
model = "arm.xml"
keypoints = ["base", "upper", "elbow", "hand"]
links = [["upper", "elbow"], ["elbow", "hand"]]
"""
JOINTS = ["shoulder", "elbow_joint", "slide"]
CAMERA = {"K": [[40, 0, 16], [0, 40, 16], [0, 0, 1]], "R": [[1, 0, 0], [0, 0, -1], [0, 1, 0]],
          "t": [0, 0.3, 1.5], "size": [32, 32]}


@pytest.fixture
def arm(tmp_path: Path) -> Path:
    (tmp_path / "arm.xml").write_text(ARM, encoding="utf-8")
    spec = tmp_path / "arm.toml"
    spec.write_text(SPEC, encoding="utf-8")
    return spec


# -- joint states ----------------------------------------------------------------------------------


def test_an_empty_or_broken_npz_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "e.npz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"e\.npz: empty or not a valid \.npz"):
        load_joint_states(tmp_path / "e.npz", JOINTS)
    (tmp_path / "b.npz").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match=r"b\.npz: empty or not a valid \.npz"):
        load_joint_states(tmp_path / "b.npz", JOINTS)
    (tmp_path / "e.npy").write_bytes(b"")
    with pytest.raises(ValueError, match=r"e\.npy: empty or not a valid \.npy"):
        load_joint_states(tmp_path / "e.npy", JOINTS)


def test_joint_states_without_rows_are_refused(tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("shoulder,elbow_joint,slide\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"h\.csv: no rows of joint positions"):
        load_joint_states(tmp_path / "h.csv", JOINTS)
    np.savez(tmp_path / "z.npz", joint_names=np.array(JOINTS), joint_pos=np.zeros((0, 3)))
    with pytest.raises(ValueError, match=r"z\.npz: no rows of joint positions"):
        load_joint_states(tmp_path / "z.npz", JOINTS)
    np.save(tmp_path / "z.npy", np.zeros((0, 3)))
    with pytest.raises(ValueError, match=r"z\.npy: no rows of joint positions"):
        load_joint_states(tmp_path / "z.npy", JOINTS)


def test_a_joint_named_twice_is_refused_not_taken_last(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("shoulder,elbow_joint,slide,elbow_joint\n0,1,2,3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"d\.csv: line 1: column 'elbow_joint' appears twice"):
        load_joint_states(tmp_path / "d.csv", JOINTS)
    np.savez(tmp_path / "d.npz", joint_names=np.array([*JOINTS, "slide"]), joint_pos=np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"d\.npz: field joint_names: joint 'slide' is named twice"):
        load_joint_states(tmp_path / "d.npz", JOINTS)
    # A column no joint of the spec reads may repeat (two time stamps, say).
    (tmp_path / "t.csv").write_text("t,shoulder,elbow_joint,slide,t\n0,1,2,3,0\n", encoding="utf-8")
    assert load_joint_states(tmp_path / "t.csv", JOINTS).tolist() == [[1.0, 2.0, 3.0]]


def test_a_misspelt_joint_column_gets_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("shoulder,elbow_jiont,slide\n0,1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"no column for joint\(s\) \['elbow_joint'\] \(did you mean "
                                         r"'elbow_jiont' for 'elbow_joint'\?\)"):
        load_joint_states(tmp_path / "m.csv", JOINTS)


@needs_mujoco
def test_validate_compares_the_rows_with_the_videos_frames(arm: Path, tmp_path: Path) -> None:
    from robojudge.suite._load import _declared_frames
    from robojudge.video import write_video

    video = _declared_frames(str(write_video(tmp_path / "v.mp4", np.zeros((24, 32, 32, 3), np.uint8), 8.0)))
    assert video == 24
    (tmp_path / "cal.json").write_text(json.dumps({"front": CAMERA}), encoding="utf-8")
    np.save(tmp_path / "short.npy", np.zeros((10, 3)))
    np.save(tmp_path / "ok.npy", np.zeros((24, 3)))
    found = check_episode_files(arm, tmp_path / "short.npy", tmp_path / "cal.json", None, video)
    assert found == [("joint_states", f"{tmp_path / 'short.npy'}: joint_states has 10 rows, video has 24 "
                                      "frames (one row per frame of video)", "error")]
    assert check_episode_files(arm, tmp_path / "ok.npy", tmp_path / "cal.json", None, video) == []
    # Without the video (or one whose frame count is not known) the rows are not compared.
    assert check_episode_files(arm, tmp_path / "short.npy", tmp_path / "cal.json") == []
    (tmp_path / "e.npz").write_bytes(b"")
    found = check_episode_files(arm, tmp_path / "e.npz", tmp_path / "cal.json", None, video)
    assert len(found) == 1 and found[0][0] == "joint_states" and "empty or not a valid .npz" in found[0][1]


# -- calibration -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "words"), [
    ([[0, 0, 16], [0, 40, 16], [0, 0, 1]], "focal lengths .* must be positive; got 0 and 40"),
    ([[40, 0, 16], [0, -40, 16], [0, 0, 1]], "focal lengths .* must be positive; got 40 and -40"),
    ([[float("nan"), 0, 16], [0, 40, 16], [0, 0, 1]], "not a finite number"),
    ([[40, 0, float("inf")], [0, 40, 16], [0, 0, 1]], "not a finite number"),
])
def test_intrinsics_must_be_finite_with_positive_focal_lengths(tmp_path: Path, k: list, words: str) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"front": dict(CAMERA, K=k)}), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"c\.json: view 'front' field K: .*{words}"):
        load_calibration(tmp_path / "c.json")


def test_a_translation_must_be_finite(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"front": dict(CAMERA, t=[0, float("nan"), 1])}))
    with pytest.raises(ValueError, match=r"view 'front' field t: .*not a finite number"):
        load_calibration(tmp_path / "c.json")


def test_a_camera_is_for_frames_of_its_aspect_ratio_at_any_size(tmp_path: Path) -> None:
    from robojudge.robots import Camera, pixel_scale, size_mismatch

    cam = Camera.model_validate(dict(CAMERA, size=[32, 24]))
    assert pixel_scale(cam, 64, 48) == (2.0, 2.0) and size_mismatch(cam, 16, 12, "front") is None
    assert size_mismatch(cam, 33, 24) is None  # a rounded resize: the same framing
    # A generator's rounding of its sides (Wan's 832x480 for 854x480, 2.6%) is a resize too, as a video is
    # paired with its reference (within 5%); 7% is not.
    wide = Camera.model_validate(dict(CAMERA, size=[854, 480]))
    assert size_mismatch(wide, 832, 480) is None and pixel_scale(wide, 832, 480) == (832 / 854, 1.0)
    assert size_mismatch(wide, 800, 480) is not None
    with pytest.raises(ValueError, match=r"^view 'front' is 32x18 \(aspect 1\.778\), its calibration is for "
                                         r"32x24 \(1\.333\): aspect ratios more than 5% apart"):
        pixel_scale(cam, 32, 18, "front")
    (tmp_path / "cal.json").write_text(json.dumps({"front": dict(CAMERA, size=[32, 24]),
                                                   "side": dict(CAMERA, size=[32, 24])}))
    cal = tmp_path / "cal.json"
    sizes = {"front": (64, 48), "side": (32, 18)}
    found = check_episode_files(None, None, cal, ["front", "side"], None, sizes)
    assert [(f, s) for f, _, s in found] == [("calibration", "error")]
    assert found[0][1].startswith(f"{cal}: view 'side' is 32x18 (aspect 1.778), its calibration is for 32x24")
    assert check_episode_files(None, None, cal, ["front", "side"], None, {"front": (64, 48)}) == []


# -- robot spec ------------------------------------------------------------------------------------


def _parse(**fields: object) -> None:
    base = {"name": "arm", "model": "arm.xml", "keypoints": ["base", "upper", "elbow", "hand"]}
    parse_robot_spec({**base, **fields}, "arm.toml", Path("."))


def test_a_link_listed_twice_is_refused_in_either_order() -> None:
    with pytest.raises(RobotSpecError, match=r"field links\[1\]: joins 'elbow' and 'upper', as links\[0\]"):
        _parse(links=[["upper", "elbow"], ["elbow", "upper"]])
    with pytest.raises(RobotSpecError, match=r"field links\[1\]: joins 'upper' and 'elbow', as links\[0\]"):
        _parse(links=[["upper", "elbow"], ["upper", "elbow"]])


def test_a_limit_that_is_not_a_number_says_so() -> None:
    with pytest.raises(RobotSpecError, match=r"limits\.shoulder: lower limit nan is not a finite number"):
        _parse(limits={"shoulder": [float("nan"), 1.0]})
    with pytest.raises(RobotSpecError, match=r"limits\.shoulder: upper limit inf is not a finite number"):
        _parse(limits={"shoulder": [0.0, float("inf")]})


def test_misspelt_names_in_a_spec_get_a_suggestion() -> None:
    with pytest.raises(RobotSpecError, match=r"limits\.elbw: 'elbw' is not one of the joints .*did you mean "
                                             r"'elbow'\?"):
        _parse(joints=["shoulder", "elbow"], limits={"elbw": [0.0, 1.0]})
    with pytest.raises(RobotSpecError, match=r"links\[0\]: 'uper' is not one of the keypoints .*did you mean "
                                             r"'upper'\?"):
        _parse(links=[["base", "uper"]])


def test_robots_check_of_an_unknown_name_lists_the_built_in_robots() -> None:
    from robojudge.cli import app

    out = CliRunner().invoke(app, ["robots", "check", "fech"])
    assert out.exit_code == 2
    assert "fech: no robot spec file of that name, nor a built-in robot (built-in: fetch" in out.output
    assert "did you mean 'fetch'?" in out.output and "Traceback" not in out.output


@needs_mujoco
def test_kiva_leaves_out_the_links_a_joint_lengthens(arm: Path) -> None:
    from robojudge.kiva import resolve_robot

    bot = resolve_robot(str(arm))
    assert bot.links == (("upper", "elbow"),)
    assert bot.not_rigid == (("elbow", "hand"),)
    assert "left out, not rigid: elbow - hand" in bot.source


@needs_mujoco
def test_kiva_names_a_keypoint_that_is_no_body_of_the_model(arm: Path) -> None:
    """`kiva train --robot SPEC` blamed the manifest ("no reference ... holds the keypoints [...]"): the
    spec's own error, with its suggestion, was swallowed with the model check."""
    from robojudge.kiva import resolve_robot
    from robojudge.robots import RobotSpecError

    arm.write_text(arm.read_text().replace('"elbow"', '"elbw"'))  # in keypoints and links alike
    with pytest.raises(RobotSpecError, match=r"'elbw' is not a body of the model \(did you mean 'elbow'\?\)"):
        resolve_robot(str(arm))
    # A stale joint entry (KIVA reads no joints): the robot is used, and the links not checked is said.
    arm.write_text(arm.read_text().replace('"elbw"', '"elbow"') + 'joints = ["shoulder", "wrist"]\n')
    bot = resolve_robot(str(arm))
    assert bot.keypoints == ("base", "upper", "elbow", "hand")
    said = "links not checked against the model: joints[1]: 'wrist' is not a movable 1-DoF joint"
    assert said in bot.source
    (arm.parent / "arm.xml").unlink()  # a model that is not there: used as written, and said
    bot = resolve_robot(str(arm))
    assert "links not checked against the model: file not found" in bot.source
