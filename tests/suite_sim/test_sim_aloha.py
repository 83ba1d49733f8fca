"""The opt-in bimanual ALOHA scene (``transfer_cube``): policy, state file, failures, determinism."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

_MISSING = importlib.util.find_spec("mujoco") is None or importlib.util.find_spec("gym_aloha") is None
if _MISSING and not os.environ.get("CI"):
    pytest.skip("needs mujoco and gym-aloha's scene files (make install)", allow_module_level=True)

os.environ.setdefault("MUJOCO_GL", "egl")

from _scene_checks import check_physical_failures  # noqa: E402

from robojudge.suite import load_suite, validate_manifest  # noqa: E402
from robojudge.suite.sim import make_sim_suite  # noqa: E402
from robojudge.video import sample_frames  # noqa: E402

SIZE = 48
PROFILES = ("oracle", "chaotic")


@pytest.fixture(scope="module")
def aloha_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sim_suite(
        tmp_path_factory.mktemp("aloha"),
        seed=1,
        episodes=1,
        size=SIZE,
        profiles=PROFILES,
        workers=1,
        scenes=("bimanual",),
    )


@pytest.fixture(scope="module")
def env() -> object:
    from robojudge.suite.sim._scenes import make_env

    return make_env("transfer_cube", 32)


def _state(manifest: Path, item_id: str) -> dict[str, np.ndarray]:
    item = load_suite(manifest).by_id(item_id)
    assert item.state is not None
    with np.load(item.state) as z:
        return {k: z[k] for k in z.files}


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of the runs of True in a 1-D mask."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(int), 0]))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def test_relay_succeeds_with_both_arms(env: object) -> None:
    from robojudge.suite.sim._policy import faithful_episode, object_positions

    model = env.model  # type: ignore[attr-defined]
    for seed in range(3):
        ep = faithful_episode(env, "transfer_cube", np.random.default_rng(seed), seed)
        cube = object_positions(model, ep, "box")
        assert np.linalg.norm(cube[0] - ep.layout.goal) > 0.15  # it starts far from the goal
        assert np.linalg.norm(cube[-1] - ep.layout.goal) < 0.05
        # Carried twice: once by the right arm to the centre line, once by the left arm to the goal.
        lifts = _runs(cube[:, 2] > 0.04)
        assert len(lifts) == 2, lifts
        (a0, b0), (a1, b1) = lifts
        assert cube[a0, 0] > 0.05 and abs(cube[b0, 0]) < 0.02  # right half -> the relay point
        assert cube[a1, 0] < 0.02 and cube[-1, 0] < -0.05  # relay point -> the goal on the left
        # Each arm's gripper was nearest the cube while it carried it.
        right = object_positions(model, ep, "vx300s_right/gripper_link")
        left = object_positions(model, ep, "vx300s_left/gripper_link")
        mid0, mid1 = (a0 + b0) // 2, (a1 + b1) // 2
        assert np.linalg.norm(right[mid0] - cube[mid0]) < np.linalg.norm(left[mid0] - cube[mid0])
        assert np.linalg.norm(left[mid1] - cube[mid1]) < np.linalg.norm(right[mid1] - cube[mid1])


def test_ia_variants_miss_the_goal(env: object) -> None:
    from robojudge.suite.sim._policy import faithful_episode, object_positions, run_episode

    model = env.model  # type: ignore[attr-defined]
    ep = faithful_episode(env, "transfer_cube", np.random.default_rng(4), 4)
    lay = ep.layout
    for kind in ("wrong_object", "wrong_target", "stop_short", "unrelated"):
        var = run_episode(env, "transfer_cube", lay, 4, kind, 0.8)
        cube = object_positions(model, var, "box")
        dis = object_positions(model, var, "distractor")
        assert np.linalg.norm(cube[-1] - lay.goal) > 0.05, kind
        if kind == "wrong_object":
            assert np.linalg.norm(dis[-1] - lay.goal) < 0.05
            assert np.linalg.norm(cube[-1] - cube[0]) < 0.01
        elif kind == "unrelated":
            assert np.linalg.norm(cube[-1] - cube[0]) < 0.01 and np.linalg.norm(dis[-1] - dis[0]) < 0.01
        else:  # the cube is relayed, but placed somewhere else
            assert cube[:, 2].max() > 0.05 and np.linalg.norm(cube[-1] - cube[0]) > 0.1


def test_manifest_rows(aloha_suite: Path) -> None:
    assert validate_manifest(aloha_suite) == []
    items = list(load_suite(aloha_suite))
    assert [i.item_id for i in items] == ["aloha00-oracle", "aloha00-chaotic"]
    for item in items:
        assert item.embodiment is not None and item.embodiment.value == "bimanual"
        assert item.task == "transfer_cube"
        assert item.views is not None and len(item.views) == 3
        for path in item.views.values():  # every view shows the scene (not clipped away, not black)
            frames = sample_frames(path, fps=None, max_frames=None).frames
            assert frames.shape == (48, SIZE, SIZE, 3) and frames.std() > 20
    st = _state(aloha_suite, "aloha00-oracle")
    for cls in (1, 2, 3, 4, 6):  # table, robot, cube, distractor, goal marker are in the main view
        assert (st["masks"][0, 0] == cls).any(), cls


def test_state_keypoints_are_the_bodies_positions(aloha_suite: Path) -> None:
    """Keypoints and joints in the state file agree with MuJoCo's own forward kinematics."""
    import mujoco

    from robojudge.suite.sim._scenes import build_spec, scene

    st = _state(aloha_suite, "aloha00-oracle")
    info = scene("transfer_cube")
    names = [str(n) for n in st["keypoint_names"]]
    assert names == list(info.keypoint_bodies) and len(names) == 16
    joints = [str(n) for n in st["joint_names"]]
    assert len(joints) == 16 and all(j.startswith(("vx300s_left/", "vx300s_right/")) for j in joints)
    model = build_spec("transfer_cube", 32).compile()
    data = mujoco.MjData(model)
    adr = [int(model.joint(j).qposadr[0]) for j in joints]
    kp = [model.body(n).id for n in names]
    T = len(st["joint_pos"])
    assert st["keypoints_3d"].shape == (T, 16, 3)
    moved = np.linalg.norm(st["keypoints_3d"] - st["keypoints_3d"][:1], axis=2).max(axis=0)
    assert (moved[2:8] > 0.05).all() and (moved[10:16] > 0.05).all()  # both arms moved (not the shoulders)
    for t in range(0, T, 7):
        data.qpos[adr] = st["joint_pos"][t]
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(st["keypoints_3d"][t], data.xpos[kp], atol=1e-5)
        # ... and the 2D keypoints are their projections with the stored calibration.
        cam = np.einsum("vij,kj->vki", st["R"][t], st["keypoints_3d"][t]) + st["t"][t][:, None]
        f, c = st["K"][:, None, [0, 1], [0, 1]], st["K"][:, None, [0, 1], [2, 2]]
        uv = cam[..., :2] / cam[..., 2:] * f + c
        np.testing.assert_allclose(st["keypoints_2d"][t], uv, atol=1e-3)
    vis, uv, masks = st["keypoints_visible"], st["keypoints_2d"], st["masks"]
    hits = total = 0
    for t, v, k in zip(*np.nonzero(vis), strict=True):
        u, w = uv[t, v, k].astype(int)
        hits += bool((masks[t, v, max(0, w - 1) : w + 2, max(0, u - 1) : u + 2] == 2).any())
        total += 1
    assert total > 0.5 * vis.size and hits / total > 0.85
    assert st["success"][-1] and not st["success"][0]
    assert not st["unintended_collision"].any()  # fingertips stay off the table
    opening = st["gripper_opening"]
    assert opening.max() > 0.06 and opening.min() < 0.05  # open at the start, closed on the cube


def _fingerprint(manifest: Path) -> dict[str, str]:
    out = {"suite.jsonl": hashlib.sha256(manifest.read_bytes()).hexdigest()}
    for p in sorted(manifest.parent.rglob("*")):
        rel = str(p.relative_to(manifest.parent))
        if p.suffix == ".npz":
            with np.load(p) as z:
                for k in z.files:
                    out[f"{rel}:{k}"] = hashlib.sha256(np.ascontiguousarray(z[k]).tobytes()).hexdigest()
        elif p.suffix == ".mp4":
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.slow
def test_building_twice_gives_identical_files(aloha_suite: Path, tmp_path: Path) -> None:
    # Once more in this process (the cached env carries the first build's state), and once in two
    # spawned workers with a second episode: episode 0's files must not change.
    again = make_sim_suite(
        tmp_path / "a", seed=1, episodes=1, size=SIZE, profiles=PROFILES, workers=1, scenes=("transfer_cube",)
    )
    a, b = _fingerprint(aloha_suite), _fingerprint(again)
    assert len(a) > 20 and a == b
    two = make_sim_suite(
        tmp_path / "b", seed=1, episodes=2, size=SIZE, profiles=PROFILES, workers=2, scenes=("bimanual",)
    )
    c = _fingerprint(two)
    assert {k: v for k, v in c.items() if "aloha00" in k} == {k: v for k, v in a.items() if "aloha00" in k}
    assert any("aloha01" in k for k in c)


@pytest.mark.slow
def test_every_failure_type_applies_to_the_relay() -> None:
    check_physical_failures("transfer_cube", seed=2)


def test_scene_names_are_checked() -> None:
    from robojudge.suite.sim._build import SCENE_CYCLE, _scene_cycle

    assert _scene_cycle(None) == SCENE_CYCLE and "transfer_cube" not in SCENE_CYCLE
    assert _scene_cycle(["bimanual", "gripper"]) == ("transfer_cube", "pick_and_place")
    with pytest.raises(ValueError, match="unknown scene 'aloha'"):
        _scene_cycle(["aloha"])
    with pytest.raises(ValueError, match=r"unknown scene 'frank' \(did you mean 'franka'\?\).*franka "
                       r"\(panda_pick_and_place\)"):
        _scene_cycle(["frank"])
    with pytest.raises(ValueError, match="non-empty"):
        _scene_cycle([])
