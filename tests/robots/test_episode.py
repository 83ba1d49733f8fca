"""An episode's robot, joint states and calibration, from manifest fields to keypoints in each view."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip("mujoco is not installed (pip install -e '.[sim]')", allow_module_level=True)

os.environ.setdefault("MUJOCO_GL", "egl")

from robojudge.robots import builtin_robot, episode_kinematics, project  # noqa: E402
from robojudge.suite import load_suite  # noqa: E402

ARM = """<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <geom type="sphere" size="0.05"/>
      <body name="upper" pos="0 0 0.1">
        <joint name="shoulder" axis="0 1 0" range="-1.5 1.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="fore" pos="0.3 0 0">
          <joint name="elbow" axis="0 1 0" range="-2 2"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02"/>
          <body name="hand" pos="0.25 0 0"><geom type="box" size="0.02 0.02 0.02"/></body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_manifest_item_to_keypoints_in_each_view(tmp_path: Path) -> None:
    (tmp_path / "arm.xml").write_text(ARM, encoding="utf-8")
    (tmp_path / "arm.toml").write_text(
        'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["upper", "fore", "hand"]\n'
        'links = [["upper", "fore"], ["fore", "hand"]]\n',
        encoding="utf-8",
    )
    q = np.array([[0.0, 0.0], [0.3, -0.4], [0.6, -0.8]])
    rows = "\n".join(f"{a},{b},{i / 10}" for i, (a, b) in enumerate(q))
    (tmp_path / "q.csv").write_text("shoulder,elbow,time\n" + rows + "\n", encoding="utf-8")
    front = {
        "K": [[100, 0, 64], [0, 100, 48], [0, 0, 1]],
        "R": [[0, -1, 0], [0, 0, -1], [1, 0, 0]],
        "t": [0, 0.6, 1.5],
    }
    (tmp_path / "cal.json").write_text(json.dumps({"front": {**front, "size": [128, 96]}}), encoding="utf-8")
    (tmp_path / "v.mp4").write_bytes(b"")
    (tmp_path / "suite.jsonl").write_text(
        json.dumps(
            {
                "item_id": "e",
                "video": "v.mp4",
                "robot": "arm.toml",
                "joint_states": "q.csv",
                "calibration": "cal.json",
            }
        )
        + "\n"
    )
    item = load_suite(tmp_path / "suite.jsonl").items[0]
    assert item.robot is not None and item.joint_states is not None
    ep = episode_kinematics(item.robot, item.joint_states, item.calibration)
    np.testing.assert_array_equal(ep.joint_positions, q)
    # By hand: the shoulder sits at (0, 0, 0.6); at q = 0 the arm points along +x.
    np.testing.assert_allclose(ep.keypoints_3d[0], [[0, 0, 0.6], [0.3, 0, 0.6], [0.55, 0, 0.6]], atol=1e-12)
    # Rigid links keep their length while the joints move.
    lengths = np.linalg.norm(np.diff(ep.keypoints_3d, axis=1), axis=-1)
    np.testing.assert_allclose(lengths, [[0.3, 0.25]] * 3, atol=1e-12)
    uv, vis = ep.keypoints_2d("front")
    assert uv.shape == (3, 3, 2) and vis.shape == (3, 3)
    want, _ = project(ep.keypoints_3d, front["K"], front["R"], front["t"], (128, 96))
    np.testing.assert_allclose(uv, want)
    # The upper arm's origin: camera coordinates (0, 0.6 - 0.6, 0 + 1.5) -> the image centre.
    np.testing.assert_allclose(uv[0, 0], [64.0, 48.0])
    with pytest.raises(KeyError, match="no camera 'side'"):
        ep.keypoints_2d("side")


@pytest.mark.slow
def test_sim_state_files_agree_with_fk_and_projection(tmp_path: Path) -> None:
    from robojudge.suite.sim import make_sim_suite

    scenes = ["pick_and_place", "relocate", "panda_pick_and_place"]
    if importlib.util.find_spec("gym_aloha") is not None:
        scenes.append("transfer_cube")
    manifest = make_sim_suite(
        tmp_path, seed=1, episodes=len(scenes), views=2, size=64, profiles=("oracle",), scenes=scenes
    )
    checked = 0
    for item in load_suite(manifest):
        assert item.state is not None
        robot = {
            "pick_and_place": "fetch",
            "relocate": "adroit",
            "transfer_cube": "aloha",
            "panda_pick_and_place": "franka",
        }[str(item.task)]
        ep = episode_kinematics(builtin_robot(robot), item.state)  # a state file is its own joint states
        with np.load(item.state) as z:
            st = {k: z[k] for k in z.files}
        assert [str(k) for k in st["keypoint_names"]] == ep.spec.keypoints
        # The state stores float32: positions agree to float32 rounding of joints and keypoints.
        np.testing.assert_allclose(ep.keypoints_3d, st["keypoints_3d"], atol=2e-5)
        for v in range(st["K"].shape[0]):
            uv, inside = project(ep.keypoints_3d, st["K"][v], st["R"][:, v], st["t"][:, v], 64)
            np.testing.assert_allclose(uv, st["keypoints_2d"][:, v], atol=0.01)
            # The sim also tests depth: what it sees is inside the image.
            assert not (st["keypoints_visible"][:, v] & ~inside).any()
        checked += 1
    assert checked == len(scenes)
