"""Forward kinematics of the simulator's robots equals MuJoCo's own body positions in the sim's scenes."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

import mujoco  # noqa: E402

from robojudge.robots import (  # noqa: E402
    builtin_robot,
    chain_pairs,
    forward_kinematics,
    link_lengths,
    rigid_pairs,
    sample_configurations,
    suggest_links,
)
from robojudge.suite.sim._scenes import build_spec, scene, subtree_bodies  # noqa: E402

SCENE_OF = {"fetch": "pick_and_place", "adroit": "relocate", "franka": "panda_pick_and_place"}
if importlib.util.find_spec("gym_aloha") is not None:  # the bimanual scene's files (make test installs them)
    SCENE_OF["aloha"] = "transfer_cube"


def _recorded_qpos(model: mujoco.MjModel, frames: int, seed: int) -> np.ndarray:
    """qpos of a short physics rollout of the sim's own model under random controls."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(model)
    mujoco.mj_resetData(model, d)
    lo, hi = model.actuator_ctrlrange.T if model.nu else (np.zeros(0), np.zeros(0))
    out = []
    for _ in range(frames):
        if model.nu:
            d.ctrl[:] = lo + (hi - lo) * rng.random(model.nu)
        if model.nmocap:  # the Fetch arm follows its mocap handle
            d.mocap_pos[0] += rng.normal(0.0, 0.02, 3)
        for _ in range(10):
            mujoco.mj_step(model, d)
        out.append(d.qpos.copy())
    return np.asarray(out)


@pytest.mark.parametrize("robot", sorted(SCENE_OF))
def test_fk_equals_mujoco_body_positions_in_the_sim_scene(robot: str) -> None:
    spec = builtin_robot(robot)
    model = build_spec(SCENE_OF[robot], 64).compile()  # the scene the sim renders, not the spec's file
    qpos = _recorded_qpos(model, 12, seed=3)
    adr = [int(model.joint(j).qposadr[0]) for j in spec.joints]
    got = forward_kinematics(spec, qpos[:, adr])
    d = mujoco.MjData(model)
    ids = [model.body(k).id for k in spec.keypoints]
    want = []
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_forward(model, d)
        want.append(d.xpos[ids].copy())
    want_arr = np.asarray(want)
    assert got.shape == (12, len(spec.keypoints), 3)
    # The rollout moved the robot, so equality is not that of a resting pose.
    assert np.ptp(want_arr, axis=0).max() > 0.01
    np.testing.assert_allclose(got, want_arr, rtol=0, atol=1e-9)


@pytest.mark.parametrize("robot", sorted(SCENE_OF))
def test_builtin_matches_what_the_sim_records(robot: str) -> None:
    spec = builtin_robot(robot)
    info = scene(SCENE_OF[robot])
    assert spec.keypoints == list(info.keypoint_bodies)
    model = build_spec(SCENE_OF[robot], 64).compile()
    roots = getattr(info, "robot_roots", ()) or (info.robot_root,)
    robot_bodies = {b for r in roots for b in subtree_bodies(model, model.body(r).id)}
    # The state file's joint_names: the joints on the robot's bodies, in model order.
    assert spec.joints == [
        model.joint(j).name for j in range(model.njnt) if model.jnt_bodyid[j] in robot_bodies
    ]
    for j, (lo, hi) in spec.limits.items():  # limits are the sim scene's, including its widened ARTy
        jid = model.joint(j).id
        assert model.jnt_limited[jid]
        assert (lo, hi) == pytest.approx(tuple(model.jnt_range[jid]))


@pytest.mark.parametrize("robot", sorted(SCENE_OF))
def test_builtin_links_follow_the_rule_and_are_rigid(robot: str) -> None:
    spec = builtin_robot(robot)
    assert spec.links == suggest_links(spec)
    assert set(spec.links) <= set(chain_pairs(spec))
    q = sample_configurations(spec, 200, seed=11)
    lengths = link_lengths(forward_kinematics(spec, q), spec.link_index)
    assert np.ptp(lengths, axis=0).max() < 1e-9
    assert lengths.min() > 1e-3  # no zero-length link (two keypoints on one origin)
    # The chain pairs left out really do change length (a finger joint, a slide between them).
    left_out = [p for p in chain_pairs(spec) if p not in spec.links]
    assert left_out
    assert not set(left_out) & set(rigid_pairs(spec))


def test_fk_of_thousands_of_frames_in_one_call_equals_frame_by_frame() -> None:
    # Its speed is a benchmark's business (no timed tests); here the batch must equal single frames.
    spec = builtin_robot("adroit")
    q = sample_configurations(spec, 5000, seed=0)
    out = forward_kinematics(spec, q)
    assert out.shape == (5000, len(spec.keypoints), 3)
    for i in (0, 1, 2499, 4999):
        np.testing.assert_array_equal(out[i], forward_kinematics(spec, q[i : i + 1])[0])


def test_fk_rejects_wrong_shapes_and_nan() -> None:
    spec = builtin_robot("fetch")
    with pytest.raises(ValueError, match=r"\(frames, 15\)"):
        forward_kinematics(spec, np.zeros((3, 14)))
    q = np.zeros((4, 15))
    q[2, 7] = np.nan
    with pytest.raises(ValueError, match=r"shoulder_lift_joint.*frame 2"):
        forward_kinematics(spec, q)


def test_franka_model_file_is_written_once_to_the_cache(_cache_dir: Path) -> None:
    first = builtin_robot("franka")
    assert first.model.parent == _cache_dir / "robots"
    stamp = first.model.stat().st_mtime_ns
    again = builtin_robot("franka")
    assert again.model == first.model and again.model.stat().st_mtime_ns == stamp
    assert [p.name for p in (_cache_dir / "robots").iterdir()] == [first.model.name]  # no temporary left
