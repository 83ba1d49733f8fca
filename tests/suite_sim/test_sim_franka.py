"""The opt-in Franka Panda scene (``panda_pick_and_place``): policy, state file, determinism."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip("mujoco is not installed (pip install -e '.[sim]')", allow_module_level=True)

os.environ.setdefault("MUJOCO_GL", "egl")

from _scene_checks import check_physical_failures  # noqa: E402

from robojudge.suite import load_suite, validate_manifest  # noqa: E402
from robojudge.suite.sim import make_sim_suite  # noqa: E402
from robojudge.video import sample_frames  # noqa: E402

SIZE = 32


def _build(out: Path) -> Path:
    # One view and the oracle only: the Panda's detailed meshes make software rendering slow.
    return make_sim_suite(out, seed=2, episodes=1, views=1, size=SIZE, profiles=("oracle",), workers=1,
                          scenes=("franka",))


@pytest.fixture(scope="module")
def panda_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("panda"))


@pytest.fixture(scope="module")
def env() -> object:
    from robojudge.suite.sim._scenes import make_env

    return make_env("panda_pick_and_place", 32)


def test_pick_and_place_succeeds(env: object) -> None:
    from robojudge.suite.sim._policy import faithful_episode, object_positions

    model = env.model  # type: ignore[attr-defined]
    for seed in range(4):
        ep = faithful_episode(env, "franka", np.random.default_rng(seed), seed)
        cube = object_positions(model, ep, "cube")
        assert np.linalg.norm(cube[0] - ep.layout.goal) > 0.1
        assert np.linalg.norm(cube[-1] - ep.layout.goal) < 0.05
        assert cube[:, 2].max() > 0.08  # carried, not pushed
        assert abs(cube[-1, 2] - 0.025) < 0.005  # and put down on the table


def test_ia_variants_miss_the_goal(env: object) -> None:
    from robojudge.suite.sim._policy import faithful_episode, object_positions, run_episode

    model = env.model  # type: ignore[attr-defined]
    ep = faithful_episode(env, "franka", np.random.default_rng(7), 7)
    for kind in ("wrong_object", "wrong_target", "stop_short", "unrelated"):
        var = run_episode(env, "franka", ep.layout, 7, kind, 0.8)
        cube = object_positions(model, var, "cube")
        dis = object_positions(model, var, "distractor")
        assert np.linalg.norm(cube[-1] - ep.layout.goal) > 0.05, kind
        if kind == "wrong_object":
            assert np.linalg.norm(dis[-1] - ep.layout.goal) < 0.05
        if kind in ("wrong_object", "unrelated"):
            assert np.linalg.norm(cube[-1] - cube[0]) < 0.01, kind


@pytest.mark.slow  # ~10 s: the Panda's detailed meshes make software rendering slow
def test_state_file(panda_suite: Path) -> None:
    """Rows validate; joints and keypoints in the state file agree with MuJoCo's forward kinematics."""
    import mujoco

    from robojudge.suite.sim._scenes import build_spec, scene

    assert validate_manifest(panda_suite) == []
    (item,) = list(load_suite(panda_suite))
    assert item.item_id == "panda00-oracle" and item.task == "panda_pick_and_place"
    assert item.embodiment is not None and item.embodiment.value == "gripper"
    frames = sample_frames(item.video, fps=None, max_frames=None).frames
    assert frames.shape == (48, SIZE, SIZE, 3) and frames.std() > 20
    assert item.state is not None
    with np.load(item.state) as z:
        st = {k: z[k] for k in z.files}
    names = [str(n) for n in st["keypoint_names"]]
    assert names == list(scene("franka").keypoint_bodies)
    joints = [str(j) for j in st["joint_names"]]
    assert joints == [f"robot:panda0_joint{i}" for i in range(1, 8)] + [
        "robot:panda0_finger_joint1", "robot:panda0_finger_joint2"]
    model = build_spec("franka", 32).compile()
    data = mujoco.MjData(model)
    adr = [int(model.joint(j).qposadr[0]) for j in joints]
    kp = [model.body(n).id for n in names]
    for t in range(0, len(st["joint_pos"]), 6):
        data.qpos[adr] = st["joint_pos"][t]
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(st["keypoints_3d"][t], data.xpos[kp], atol=1e-5)
    assert st["success"][-1] and not st["success"][0]
    assert not st["unintended_collision"].any()
    assert st["gripper_opening"][0] > 0.075 and st["gripper_opening"].min() < 0.055  # closed on the 5 cm cube
    for cls in (1, 2, 3, 4, 6):  # table, robot, cube, distractor, goal marker are in view at the start
        assert (st["masks"][0, 0] == cls).any(), cls
    vis, uv, masks = st["keypoints_visible"], st["keypoints_2d"], st["masks"]
    hits = total = 0
    for t, v, k in zip(*np.nonzero(vis), strict=True):
        u, w = uv[t, v, k].astype(int)
        hits += bool((masks[t, v, max(0, w - 1) : w + 2, max(0, u - 1) : u + 2] == 2).any())
        total += 1
    assert total > 0 and hits / total > 0.85


@pytest.mark.slow
def test_building_twice_gives_identical_files(panda_suite: Path, tmp_path: Path) -> None:
    def fingerprint(manifest: Path) -> dict[str, str]:
        out = {"suite.jsonl": hashlib.sha256(manifest.read_bytes()).hexdigest()}
        for p in sorted(manifest.parent.rglob("*")):
            if p.suffix == ".npz":
                with np.load(p) as z:
                    for k in z.files:
                        digest = hashlib.sha256(np.ascontiguousarray(z[k]).tobytes())
                        out[f"{p.name}:{k}"] = digest.hexdigest()
            elif p.suffix == ".mp4":
                out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
        return out

    a, b = fingerprint(panda_suite), fingerprint(_build(tmp_path))
    assert len(a) > 10 and a == b


@pytest.mark.slow
def test_every_failure_type_applies_to_the_pick_and_place() -> None:
    check_physical_failures("panda_pick_and_place", seed=3, size=16)
