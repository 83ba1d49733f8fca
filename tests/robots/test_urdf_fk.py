"""A URDF robot and the MJCF MuJoCo makes of it give the same forward kinematics; both match yourdfpy."""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest

if (
    importlib.util.find_spec("mujoco") is None or importlib.util.find_spec("yourdfpy") is None
) and not os.environ.get("CI"):
    pytest.skip("mujoco and yourdfpy are needed (pip install -e '.[sim]')", allow_module_level=True)

import mujoco  # noqa: E402

from robojudge.robots import RobotSpec, forward_kinematics, load_robot_spec, sample_configurations  # noqa: E402

INERTIAL = '<inertial><origin xyz="0.01 0 0.02"/><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'  # noqa: E501

# Revolute, prismatic, fixed and continuous joints; origins with offsets and roll-pitch-yaw, one axis not
# along a frame axis; the fixed joint's child is a keypoint, so a fused body would be caught.
TEMPLATE = """<?xml version="1.0"?>
<robot name="toy">
  <mujoco><compiler fusestatic="false" discardvisual="true"/></mujoco>
  <link name="base">{inertial}</link>
  <link name="upper">{inertial}</link>
  <link name="slider">{inertial}</link>
  <link name="bracket">{inertial}</link>
  <link name="tip">{inertial}</link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0.1 -0.05 0.3" rpy="{rpy[0]}"/>
    <axis xyz="{axis}"/>
    <limit lower="-1.2" upper="1.5" effort="10" velocity="1"/>
  </joint>
  <joint name="extend" type="prismatic">
    <parent link="upper"/><child link="slider"/>
    <origin xyz="0.25 0.02 -0.04" rpy="{rpy[1]}"/>
    <axis xyz="1 0 0"/>
    <limit lower="0.0" upper="0.2" effort="10" velocity="1"/>
  </joint>
  <joint name="mount" type="fixed">
    <parent link="slider"/><child link="bracket"/>
    <origin xyz="0.05 0.07 0.01" rpy="{rpy[2]}"/>
  </joint>
  <joint name="wrist" type="continuous">
    <parent link="bracket"/><child link="tip"/>
    <origin xyz="0.0 0.12 0.03" rpy="{rpy[3]}"/>
    <axis xyz="0 0 1"/>
  </joint>
</robot>
"""
URDF = TEMPLATE.format(
    inertial=INERTIAL, rpy=["0.3 -0.2 0.7", "-0.4 0.1 0.25", "1.1 0.4 -0.6", "0.0 0.5 0.2"], axis="0 1 1"
)


def _angle(cos_half: float, sin_half: float) -> str:
    return repr(2 * math.atan2(sin_half, cos_half))


# mj_saveLastXML writes 6 significant digits. For the file round trip to be exact, each rotation is
# made of half-angles with cosines and sines from Pythagorean triples (0.6/0.8, 0.28/0.96), so every
# quaternion component has at most 6 decimals, and the revolute axis is a unit vector (0, 0.6, 0.8).
_A, _B, _C = _angle(0.6, 0.8), _angle(0.96, -0.28), _angle(0.8, 0.6)
URDF_EXACT = TEMPLATE.format(
    inertial=INERTIAL, rpy=[f"{_A} {_B} 0", f"0 {_C} {_B}", f"{_B} {_C} {_A}", f"{_C} 0 0"], axis="0 0.6 0.8"
)
KEYPOINTS = ["base", "upper", "slider", "bracket", "tip"]


def _write(folder: Path, model: str, links: str = "", urdf: str = URDF) -> Path:
    (folder / "toy.urdf").write_text(urdf, encoding="utf-8")
    spec = folder / "toy.toml"
    spec.write_text(f'name = "toy"\nmodel = "{model}"\nkeypoints = {KEYPOINTS!r}\n{links}'.replace("'", '"'))
    return spec


@pytest.fixture
def urdf_spec(tmp_path: Path) -> RobotSpec:
    return load_robot_spec(_write(tmp_path, "toy.urdf"))


def test_urdf_spec_reads_joints_and_limits_from_the_file(urdf_spec: RobotSpec) -> None:
    assert urdf_spec.format == "urdf"
    assert urdf_spec.joints == ["shoulder", "extend", "wrist"]  # movable joints, fixed one left out
    assert urdf_spec.limits == {"shoulder": (-1.2, 1.5), "extend": (0.0, 0.2)}  # continuous: none


def test_urdf_fk_equals_yourdfpy(urdf_spec: RobotSpec) -> None:
    import yourdfpy

    ref = yourdfpy.URDF.load(str(urdf_spec.model), build_scene_graph=True, load_meshes=False)
    q = sample_configurations(urdf_spec, 40, seed=5)
    got = forward_kinematics(urdf_spec, q)
    for t in range(len(q)):
        ref.update_cfg(dict(zip(urdf_spec.joints, q[t], strict=True)))
        want = np.array([ref.get_transform(k, "base")[:3, 3] for k in KEYPOINTS])
        np.testing.assert_allclose(got[t], want, rtol=0, atol=1e-9)


def test_urdf_fk_equals_mujoco_kinematics_of_the_same_urdf(urdf_spec: RobotSpec) -> None:
    model = mujoco.MjModel.from_xml_path(str(urdf_spec.model))  # MuJoCo's own URDF import
    d = mujoco.MjData(model)
    adr = [int(model.joint(j).qposadr[0]) for j in urdf_spec.joints]
    ids = [model.body(k).id for k in KEYPOINTS]
    q = sample_configurations(urdf_spec, 100, seed=9)
    got = forward_kinematics(urdf_spec, q)
    for t in range(len(q)):
        d.qpos[adr] = q[t]
        mujoco.mj_kinematics(model, d)
        np.testing.assert_allclose(got[t], d.xpos[ids], rtol=0, atol=1e-9)


def test_urdf_and_the_mjcf_mujoco_writes_of_it_agree(tmp_path: Path) -> None:
    urdf_spec = load_robot_spec(_write(tmp_path, "toy.urdf", urdf=URDF_EXACT))
    model = mujoco.MjModel.from_xml_path(str(urdf_spec.model))
    mujoco.mj_saveLastXML(str(tmp_path / "toy.xml"), model)
    mjcf = load_robot_spec(_write(tmp_path, "toy.xml", urdf=URDF_EXACT))
    assert mjcf.format == "mjcf"
    assert mjcf.joints == urdf_spec.joints
    assert mjcf.limits["shoulder"] == pytest.approx(urdf_spec.limits["shoulder"])
    q = sample_configurations(urdf_spec, 200, seed=7)
    a = forward_kinematics(urdf_spec, q)
    b = forward_kinematics(mjcf, q)
    assert np.ptp(a[:, -1], axis=0).max() > 0.05  # the tip really moves
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


@pytest.mark.parametrize("multiplier", ["0.1", "0"])  # 0: the joint holds its offset, not the source
def test_mimic_joint_follows_its_source(tmp_path: Path, multiplier: str) -> None:
    import yourdfpy

    # The prismatic joint mimics the shoulder, so the slider and everything below it follow.
    mimic = f'<mimic joint="shoulder" multiplier="{multiplier}" offset="0.05"/>'
    urdf = URDF.replace(
        '<joint name="extend" type="prismatic">', f'<joint name="extend" type="prismatic">{mimic}'
    )
    (tmp_path / "m.urdf").write_text(urdf, encoding="utf-8")
    spec = RobotSpec(name="m", model=tmp_path / "m.urdf", keypoints=KEYPOINTS, joints=["shoulder", "wrist"])
    q = np.array([[0.4, 0.1], [-0.9, 0.05], [1.2, -0.3]])
    got = forward_kinematics(spec, q)
    ref = yourdfpy.URDF.load(str(tmp_path / "m.urdf"), build_scene_graph=True, load_meshes=False)
    for t in range(len(q)):
        ref.update_cfg({"shoulder": q[t, 0], "wrist": q[t, 1]})
        want = np.array([ref.get_transform(k, "base")[:3, 3] for k in KEYPOINTS])
        np.testing.assert_allclose(got[t], want, rtol=0, atol=1e-9)
    # The slider moves along its axis with the shoulder, unless the multiplier is 0.
    slide = np.linalg.norm(got[:, 2] - got[:, 1], axis=1)
    assert np.ptp(slide) > 0.01 if multiplier != "0" else np.ptp(slide) < 1e-12
