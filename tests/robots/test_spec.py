"""Robot spec files: what loads, and errors that name the file, the field and the bad value."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest

from robojudge.robots import (
    RobotSpec,
    RobotSpecError,
    load_calibration,
    load_joint_states,
    load_robot_spec,
    read_robot_spec,
)

needs_mujoco = pytest.mark.skipif(
    importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"),
    reason="mujoco is not installed (pip install -e '.[sim]')",
)

ARM = """<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base">
      <geom type="sphere" size="0.05"/>
      <body name="upper" pos="0 0 0.1">
        <joint name="shoulder" type="hinge" axis="0 1 0" range="-1.5 1.5" limited="true"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="elbow" pos="0.3 0 0">
          <joint name="elbow_joint" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02"/>
          <body name="hand" pos="0.25 0 0">
            <joint name="slide" type="slide" axis="1 0 0" range="0 0.05" limited="true"/>
            <geom type="box" size="0.02 0.02 0.02"/>
          </body>
        </body>
      </body>
    </body>
    <body name="ball" pos="1 0 0"><freejoint/><geom type="sphere" size="0.03"/></body>
  </worldbody>
</mujoco>
"""
GOOD = """name = "arm"
model = "models/arm.xml"
keypoints = ["base", "upper", "elbow", "hand"]
links = [["upper", "elbow"], ["elbow", "hand"]]
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "arm.xml").write_text(ARM, encoding="utf-8")
    return tmp_path


def _spec(folder: Path, text: str) -> Path:
    p = folder / "arm.toml"
    p.write_text(text, encoding="utf-8")
    return p


@needs_mujoco
def test_good_spec_loads_with_defaults_from_the_model(folder: Path) -> None:
    spec = load_robot_spec(_spec(folder, GOOD))
    assert spec.model == (folder / "models" / "arm.xml").resolve()  # relative to the spec file
    assert spec.joints == ["shoulder", "elbow_joint", "slide"]  # the free joint is not a 1-DoF joint
    assert spec.limits == {"shoulder": (-1.5, 1.5), "slide": (0.0, 0.05)}
    assert spec.link_index == [(1, 2), (2, 3)]


@needs_mujoco
def test_a_model_copied_in_with_the_same_size_and_time_is_read_anew(folder: Path, tmp_path: Path) -> None:
    import shutil
    import time

    model, other = folder / "models" / "arm.xml", tmp_path / "narrower.xml"
    other.write_text(ARM.replace('range="-1.5 1.5"', 'range="-1.2 1.2"'), encoding="utf-8")
    for p in (model, other):
        os.utime(p, ns=(1_700_000_000_000_000_000,) * 2)  # an archive's normalised time
    spec = _spec(folder, GOOD)
    assert load_robot_spec(spec).limits["shoulder"] == (-1.5, 1.5)
    time.sleep(0.05)  # past the kernel's coarse clock tick, so the copy's change time differs
    shutil.copy2(other, model)  # cp -p: another model, in place, with the same size and time
    # Before: the parse cache was keyed by (mtime, size) only, and gave back the first model.
    assert load_robot_spec(spec).limits["shoulder"] == (-1.2, 1.2)


@needs_mujoco
def test_limits_and_joints_in_the_file_win(folder: Path) -> None:
    text = (
        GOOD
        + 'joints = ["elbow_joint", "shoulder"]\n[limits]\nshoulder = [-0.5, 0.5]\nelbow_joint = [-2, 2]\n'
    )
    spec = load_robot_spec(_spec(folder, text))
    assert spec.joints == ["elbow_joint", "shoulder"]
    assert spec.limits == {"shoulder": (-0.5, 0.5), "elbow_joint": (-2.0, 2.0)}


def test_finger_pairs_of_a_spec_file_reach_kiva(folder: Path) -> None:
    from robojudge.kiva import resolve_robot

    path = _spec(folder, GOOD + 'fingers = [["upper", "hand", "base"]]\n')
    assert read_robot_spec(path).fingers == [("upper", "hand", "base")]
    assert resolve_robot(str(path)).fingers == (("upper", "hand", "base"),)
    assert resolve_robot(str(_spec(folder, GOOD))).fingers == ()  # none declared: no finger check


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (GOOD.replace('name = "arm"\n', ""), "name", "required field is missing"),
        (GOOD.replace("keypoints", "keypionts", 1), "keypionts", "unknown field (did you mean 'keypoints'?)"),
        (GOOD.replace('["base", "upper", "elbow", "hand"]', '"base"'), "keypoints", "list"),
        (GOOD.replace('"base", "upper"', '"base", "base"'), "keypoints", "'base' is listed twice"),
        (
            GOOD.replace('["elbow", "hand"]', '["elbow", "wrist"]'),
            "links[1]",
            "'wrist' is not one of the keypoints",
        ),
        (GOOD.replace('["upper", "elbow"]', '["upper", "upper"]'), "links[0]", "joins 'upper' to itself"),
        (
            GOOD + "[limits]\nshoulder = [1.0, -1.0]\n",
            "limits.shoulder",
            "lower limit 1.0 is above upper limit -1.0",
        ),
        (  # a joint name with a colon, as all of Fetch's: the field was cut at it
            GOOD + '[limits]\n"robot0:shoulder" = [1.0, -1.0]\n',
            "limits.robot0:shoulder",
            "lower limit 1.0 is above upper limit -1.0",
        ),
        (GOOD + "[limits]\nshoulder = [1.0]\n", "limits.shoulder", "expected two numbers [lo, hi]"),
        (
            GOOD + '[limits]\nshoulder = [1.0, "x"]\n',
            "limits.shoulder",
            "expected two numbers [lo, hi] (got 'x')",
        ),
        (GOOD.replace('["elbow", "hand"]', '["elbow"]'), "links[1]", "expected a pair of keypoint names"),
        (GOOD.replace("arm.xml", "arm.obj"), "model", "unknown model format '.obj'"),
        (GOOD + 'fingers = [["upper", "hand", "palm"]]\n', "fingers[0]", "'palm' is not one of the"),
        (GOOD + 'fingers = [["upper", "upper", "base"]]\n', "fingers[0]", "names a keypoint twice"),
        (GOOD + 'fingers = [["upper", "hand"]]\n', "fingers[0]", "expected three keypoint names"),
    ],
)
def test_bad_fields_are_named(folder: Path, text: str, field: str, words: str) -> None:
    path = _spec(folder, text)
    with pytest.raises(RobotSpecError) as e:
        read_robot_spec(path)
    lines = str(e.value).splitlines()
    assert any(line.startswith(f"{path}: field {field}: ") and words in line for line in lines), lines


@needs_mujoco
@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (
            GOOD.replace('"elbow", "hand"]\n', '"elbw", "hand"]\n', 1),
            "keypoints[2]",
            "'elbw' is not a body of the model (did you mean 'elbow'?)",
        ),
        (GOOD + 'joints = ["shoulder", "ball"]\n', "joints[1]", "'ball' is not a movable 1-DoF joint"),
        (GOOD + "[limits]\nwrist = [0, 1]\n", "limits.wrist", "'wrist' is not a movable 1-DoF joint"),
        (GOOD.replace("models/arm.xml", "models/missing.xml"), "model", "file not found"),
    ],
)
def test_spec_checked_against_the_model(folder: Path, text: str, field: str, words: str) -> None:
    # The first keypoint list entry is patched by count=1 in the replace above; keep links consistent.
    text = (
        text.replace('links = [["upper", "elbow"], ["elbow", "hand"]]', 'links = [["elbw", "hand"]]')
        if "elbw" in text
        else text
    )
    path = _spec(folder, text)
    with pytest.raises(RobotSpecError) as e:
        load_robot_spec(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: field {field}: "), msg
    assert words in msg
    assert str(path) in msg


@needs_mujoco
def test_broken_model_and_file_errors(folder: Path) -> None:
    (folder / "models" / "arm.xml").write_text("<mujoco><worldbody><body name='a'>", encoding="utf-8")
    path = _spec(folder, GOOD)
    with pytest.raises(RobotSpecError, match=rf"^{path}: field model: cannot load .*arm\.xml"):
        load_robot_spec(path)
    with pytest.raises(RobotSpecError, match="cannot read robot spec"):
        load_robot_spec(folder / "nope.toml")
    bad = _spec(folder, 'name = "arm"\nkeypoints = [\n')
    with pytest.raises(RobotSpecError, match=rf"^{bad}: not a valid TOML file"):
        read_robot_spec(bad)
    binary = folder / "arm.urdf.gz"
    binary.write_bytes(b"\x1f\x8b\x08\x00\xa2")  # was a bare UnicodeDecodeError naming no file
    with pytest.raises(RobotSpecError, match=rf"^{binary}: not a robot spec \(TOML text\): byte 1 is not"):
        read_robot_spec(binary)


def test_spec_is_a_plain_model(tmp_path: Path) -> None:
    spec = RobotSpec(name="x", model=tmp_path / "a.urdf", keypoints=["a", "b"], links=[("a", "b")])
    assert spec.format == "urdf"
    with pytest.raises(ValueError, match="frozen"):
        spec.name = "y"  # type: ignore[misc]


# -- joint states --------------------------------------------------------------------------------


def test_joint_states_from_npz_csv_npy_in_spec_order(tmp_path: Path) -> None:
    q = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    np.savez(tmp_path / "s.npz", joint_names=np.array(["a", "b", "c"]), joint_pos=q.astype(np.float32))
    got = load_joint_states(tmp_path / "s.npz", ["c", "a"])
    np.testing.assert_allclose(got, q[:, [2, 0]], rtol=1e-6)
    (tmp_path / "s.csv").write_text("time,b,a,c\n0.0,0.2,0.1,0.3\n0.1,0.5,0.4,0.6\n", encoding="utf-8")
    np.testing.assert_array_equal(load_joint_states(tmp_path / "s.csv", ["a", "b", "c"]), q)
    np.save(tmp_path / "s.npy", q)
    np.testing.assert_array_equal(load_joint_states(tmp_path / "s.npy", ["a", "b", "c"]), q)


def test_joint_state_errors_name_file_line_and_joint(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("a,b\n0.1,0.2\n0.3,oops\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"s\.csv: line 3: column 'b': 'oops' is not a number"):
        load_joint_states(tmp_path / "s.csv", ["a", "b"])
    with pytest.raises(ValueError, match=r"s\.csv: line 1: no column for joint\(s\) \['c'\]"):
        load_joint_states(tmp_path / "s.csv", ["a", "c"])
    np.savez(tmp_path / "s.npz", joint_names=np.array(["a"]), joint_pos=np.zeros((3, 1)))
    with pytest.raises(ValueError, match=r"s\.npz: no positions for joint\(s\) \['b'\]"):
        load_joint_states(tmp_path / "s.npz", ["a", "b"])
    np.save(tmp_path / "s.npy", np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"s\.npy: expected a \(frames, 3\) array"):
        load_joint_states(tmp_path / "s.npy", ["a", "b", "c"])
    with pytest.raises(ValueError, match="unknown joint-state format '.txt'"):
        load_joint_states(tmp_path / "s.txt", ["a"])


# -- calibration ----------------------------------------------------------------------------------


def test_calibration_reads_views_and_names_bad_fields(tmp_path: Path) -> None:
    cam = {
        "K": [[100, 0, 32], [0, 100, 24], [0, 0, 1]],
        "R": np.eye(3).tolist(),
        "t": [0, 0, 1],
        "size": [64, 48],
    }
    (tmp_path / "c.json").write_text(json.dumps({"front": cam}), encoding="utf-8")
    cal = load_calibration(tmp_path / "c.json")
    uv, vis = cal["front"].project(np.array([[0.0, 0.0, 1.0]]))
    np.testing.assert_allclose(uv, [[32.0, 24.0]])  # z = 1 + 1 in the camera
    assert vis.all()
    bad = dict(cam, size=[64])
    (tmp_path / "c.json").write_text(json.dumps({"front": cam, "wrist": bad}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"c\.json: view 'wrist' field size"):
        load_calibration(tmp_path / "c.json")
    (tmp_path / "c.json").write_text(json.dumps({"front": dict(cam, R=[[1, 0, 0], [0, 1, 0], [0, 0, -1]])}))
    with pytest.raises(ValueError, match=r"view 'front' field R: .*not a rotation"):
        load_calibration(tmp_path / "c.json")
    (tmp_path / "c.json").write_text("{\n  'front': 1}")
    with pytest.raises(ValueError, match=r"c\.json: line 2: not valid JSON"):
        load_calibration(tmp_path / "c.json")


def test_calibration_example_in_the_manifest_docs_loads(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "manifest.md").read_text(encoding="utf-8")
    block = next(
        b.split("\n", 1)[1] for b in doc.split("```json")[1:] if b.split("\n", 1)[1].startswith('{"front"')
    )
    (tmp_path / "c.json").write_text(block.split("```")[0], encoding="utf-8")
    cal = load_calibration(tmp_path / "c.json")
    assert set(cal) == {"front", "side"}
    # The world origin in the front camera: x_cam = R 0 + t = (0, 0.35, 1.2), so by hand
    # u = 615 * 0 / 1.2 + 320 = 320 and v = 615 * 0.35 / 1.2 + 240 = 419.375.
    uv, vis = cal["front"].project(np.zeros((1, 3)))
    assert vis.all()
    np.testing.assert_allclose(uv, [[320.0, 419.375]])


def test_missing_simulator_extra_is_named(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from robojudge.robots._model import _load_cached

    _load_cached.cache_clear()
    monkeypatch.setitem(sys.modules, "mujoco", None)  # as on the core install: importing it fails
    path = _spec(folder, GOOD)
    with pytest.raises(
        RobotSpecError,
        match=r"field model: reading MJCF needs mujoco \(pip install '\.\[sim\]' in a robojudge checkout\)",
    ):
        load_robot_spec(path)
    _load_cached.cache_clear()
