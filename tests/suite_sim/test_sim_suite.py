"""Tests of the simulator-grounded suite (robojudge.suite.sim) on a small build."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

os.environ.setdefault("MUJOCO_GL", "egl")

from robojudge.suite import load_suite, validate_manifest  # noqa: E402
from robojudge.suite.sim import make_sim_suite  # noqa: E402
from robojudge.video import sample_frames  # noqa: E402


def read_video(path: str) -> np.ndarray:
    return sample_frames(path, fps=None, max_frames=None).frames


SIZE = 64
PROFILES = ("oracle", "chaotic")


EPISODES = 4  # one of each scene: pick_and_place, relocate, push, slide


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sim_suite(
        tmp_path_factory.mktemp("sim_a"), seed=3, episodes=EPISODES, size=SIZE, profiles=PROFILES
    )


def _frame_hashes(manifest: Path) -> dict[str, str]:
    out = {}
    for item in load_suite(manifest):
        for name, path in sorted((item.views or {}).items()):
            frames = read_video(path)
            out[f"{item.item_id}/{name}"] = hashlib.sha256(np.ascontiguousarray(frames).tobytes()).hexdigest()
    return out


def _state(manifest: Path, item_id: str) -> dict[str, np.ndarray]:
    item = load_suite(manifest).by_id(item_id)
    assert item.state is not None
    with np.load(item.state) as z:
        return {k: z[k] for k in z.files}


def test_manifest_validates_and_is_labelled(small_suite: Path) -> None:
    assert validate_manifest(small_suite) == []
    assert (small_suite.parent / "SUITE_KIND").read_text() == "sim\n"  # robojudge demo reuses it as sim
    suite = load_suite(small_suite)
    items = list(suite)
    assert len(items) == EPISODES * len(PROFILES)
    assert {i.embodiment.value for i in items if i.embodiment} == {"gripper", "dexterous_hand"}
    assert {i.task for i in items} == {"pick_and_place", "relocate", "push", "slide"}
    instructions = {i.task: i.instruction for i in items}
    assert instructions["push"] == "push the red cube to the green target"
    assert instructions["slide"] == "slide the red puck to the green target"
    for item in items:
        assert item.labels is not None and item.labels.rater == "planted"
        assert item.views is not None and len(item.views) == 3 and item.main_view == "cam0"
        assert item.video == item.views["cam0"]
        assert "failures" in item.meta
        if item.generator == "oracle":
            assert item.labels.pa == 5 and item.labels.ia == 5


def test_deterministic(small_suite: Path, tmp_path: Path) -> None:
    # The fixture built with two spawned workers; this build runs in this (long-lived) process, so
    # the frames and labels must not depend on the worker count, the order workers finish in, or
    # what the process did before.
    again = make_sim_suite(tmp_path, seed=3, episodes=EPISODES, size=SIZE, profiles=PROFILES, workers=1)
    assert _frame_hashes(small_suite) == _frame_hashes(again)
    a = [json.loads(x)["labels"] for x in small_suite.read_text().splitlines()]
    b = [json.loads(x)["labels"] for x in again.read_text().splitlines()]
    assert a == b


def test_keypoints_fall_in_robot_mask(small_suite: Path) -> None:
    for item in load_suite(small_suite):
        st = _state(small_suite, item.item_id)
        vis, uv, masks = st["keypoints_visible"], st["keypoints_2d"], st["masks"]
        T, V, K = vis.shape
        hits, total = 0, 0
        for t in range(T):
            for v in range(V):
                for k in np.flatnonzero(vis[t, v]):
                    u, w = uv[t, v, k].astype(int)
                    patch = masks[t, v, max(0, w - 1) : w + 2, max(0, u - 1) : u + 2]
                    hits += bool((patch == 2).any())
                    total += 1
        assert total > 0
        assert hits / total > 0.85, (item.item_id, hits, total)


def test_object_centre_projects_into_its_mask(small_suite: Path) -> None:
    for item in load_suite(small_suite):
        if item.generator != "oracle":
            continue
        st = _state(small_suite, item.item_id)
        K, R, tr = st["K"], st["R"], st["t"]
        pos, vis, masks = st["object_pos"][:, 0], st["object_visible"][:, 0], st["masks"]
        checked = 0
        for t in range(0, len(pos), 5):
            for v in range(K.shape[0]):
                x = R[t, v] @ pos[t] + tr[t, v]
                u, w = (K[v] @ (x / x[2]))[:2].astype(int)
                if vis[t] and 0 <= u < SIZE and 0 <= w < SIZE and (masks[t, v] == 3).sum() > 4:
                    patch = masks[t, v, max(0, w - 1) : w + 2, max(0, u - 1) : u + 2]
                    # Before the robot arrives the centre must be on the object; later the gripper or
                    # hand may cover it.
                    ok = (patch == 3).any() if t == 0 else ((patch == 3) | (patch == 2)).any()
                    assert ok, (item.item_id, t, v)
                    checked += 1
        assert checked > 0


def test_faithful_episode_succeeds(small_suite: Path) -> None:
    for item in load_suite(small_suite):
        if item.generator == "oracle":
            st = _state(small_suite, item.item_id)
            assert st["success"][-1] and not st["success"][0]
            assert st["gripper_opening"].shape == (len(st["success"]),)


def _check_failure(
    st: dict[str, np.ndarray], f: dict[str, object], frames: np.ndarray, task: str = "",
    others: Sequence[dict[str, Any]] = (),
) -> None:
    a, b = int(f["start"]), int(f["stop"])  # type: ignore[call-overload]
    kind = f["type"]
    pos = st["object_pos"][:, 0]
    masks = st["masks"]
    if kind == "teleport":
        assert np.linalg.norm(np.diff(pos, axis=0), axis=1).max() > 0.04
    elif kind in ("vanish", "appear"):
        assert not st["object_visible"][a:b, 0].any()
        assert not (masks[a:b] == 3).any()
    elif kind == "duplicate":
        assert st["object_visible"][a:b, 2].all()
    elif kind == "frozen" and not any(o is not f and o["start"] < b and a < o["stop"] for o in others):
        # (a failure planted after it inside its window, e.g. floating opening the fingers, edits it)
        assert np.array_equal(st["joint_pos"][a], st["joint_pos"][b - 1])
    elif kind == "interpenetration":
        assert st["penetration"][a:b].max() > 0.01 or (st["object_pos"][a:b, 0, 2] < pos[0, 2] - 0.01).any()
    elif kind == "telekinesis":
        assert np.linalg.norm(pos[a:b] - pos[0], axis=1).max() > 0.02
    elif kind == "floating" and task in ("push", "slide"):  # the object rises off the table
        assert (pos[a:b, 2] > pos[0, 2] + 0.01).any()
        assert st["object_visible"][a:b, 0].all()
    elif kind == "floating":
        assert st["gripper_opening"][a:b].max() > st["gripper_opening"][a - 1] - 1e-6
    elif kind == "camera_drift":
        assert np.linalg.norm(st["t"][-1, 0] - st["t"][a, 0]) > 0.03
    elif kind == "wrong_object":
        assert np.linalg.norm(st["object_pos"][-1, 1] - st["object_pos"][0, 1]) > 0.05
        assert np.linalg.norm(pos[-1, :2] - pos[0, :2]) < 0.02  # xy: other failures may sink it
    elif kind in ("wrong_target", "stop_short", "unrelated"):
        assert not st["success"][-1]


def test_every_planted_failure_is_in_the_render(small_suite: Path) -> None:
    seen = set()
    for item in load_suite(small_suite):
        st = _state(small_suite, item.item_id)
        frames = read_video(item.video)
        for f in item.meta["failures"]:
            _check_failure(st, f, frames, item.task or "", item.meta["failures"])
            seen.add(f["type"])
    assert seen, "the chaotic profile planted nothing"


def test_frozen_frames_are_identical(tmp_path: Path) -> None:
    from robojudge.suite.sim._failures import Editor
    from robojudge.suite.sim._policy import faithful_episode, object_positions
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env

    env = make_env("gripper", 48)
    ep = faithful_episode(env, "gripper", np.random.default_rng(0), 0)
    r = SceneRenderer(env.model, "gripper", 48, 1)
    try:
        ed = Editor(env.model, ep, object_positions(env.model, ep, "object0"))
        f = ed.apply("frozen", 0.5, np.random.default_rng(1))
        frames, _ = r.render(ed.plan, ep.layout.goal)
        assert all(np.array_equal(frames[0, f.start], frames[0, t]) for t in range(f.start, f.stop))
        assert not np.array_equal(frames[0, 0], frames[0, -1])
    finally:
        r.close()


@pytest.mark.parametrize("task", ["push", "slide"])
def test_push_and_slide_failures_are_rendered(task: str) -> None:
    """Every failure type planted on a push / slide episode shows up in the rendered state."""
    from robojudge.suite.sim._build import _state_arrays
    from robojudge.suite.sim._failures import IA_TYPES, PA_TYPES, Editor, applicable, ia_failure
    from robojudge.suite.sim._policy import Episode, faithful_episode, object_positions, run_episode
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env

    size = 32
    env = make_env(task, size)
    ep = faithful_episode(env, task, np.random.default_rng(5), 5)
    r = SceneRenderer(env.model, task, size, 1)

    def render(e: Episode, kind: str | None = None, seed: int = 0) -> tuple[np.ndarray, dict, dict]:
        ed = Editor(env.model, e, object_positions(env.model, e, "object0"))
        f = ed.apply(kind, 0.8, np.random.default_rng(seed)).to_dict() if kind else {}
        frames, raw = r.render(ed.plan, ep.layout.goal)
        return frames[0], _state_arrays(raw, e, r, ed.plan, ep.layout.goal), f

    try:
        _, st, _ = render(ep)
        assert st["success"][-1] and not st["success"][0]
        assert st["contacts"][:, 2, 3].any()  # the gripper touches the object: intended contact
        # Frame 0 is the envs' own start pose, with the closed fingers resting on the table.
        assert not st["unintended_collision"][1:].any()
        # The types adapted to pushing and sliding (the others do not depend on the task).
        adapted = ("teleport", "vanish", "interpenetration", "telekinesis", "floating")
        for i, kind in enumerate(k for k in applicable(task, PA_TYPES) if k in adapted):
            frames, st, f = render(ep, kind, i)
            _check_failure(st, f, frames, task)
        for kind in applicable(task, IA_TYPES):
            var = run_episode(env, task, ep.layout, 5, kind, 0.85)
            frames, st, _ = render(var)
            _check_failure(st, ia_failure(kind, 0.85, len(var.qpos)).to_dict(), frames, task)
    finally:
        r.close()


def test_scanning_the_rendered_videos_gives_back_the_suite_s_items(small_suite: Path, tmp_path: Path) -> None:
    """``robojudge suite scan`` on the suite's own folders, renamed nothing: the same items, views,
    main views, references, generators and clips as the manifest the simulator wrote."""
    from robojudge.suite import scan_folder

    folder = small_suite.parent
    found = scan_folder(
        folder / "videos",
        pattern=r"(?P<clip_id>[a-z]+\d+)-(?P<generator>[a-z_]+)_(?P<view>cam\d)",
        references=folder / "reference",
    )
    n, first = len(found.items), found.items[0]["item_id"]
    assert found.skipped == [] and found.notes == [
        # the references are one per clip, of its main view (cam0), named by the clip alone
        f"{n} item(s) with views were given a reference video that names no view (first: {first}, main "
        "view 'cam0'): the metrics take it to show the main view, as they take the state file's view; a "
        "--reference-pattern with a group named view matches each item to the reference of its main view",
        f"{n} of {n} item(s) have no instruction (first: {first}); the IA judge and instruction metrics "
        "need one",
    ]
    scanned = {row["item_id"]: row for row in found.items}
    written = {item.item_id: item.resolve(folder) for item in load_suite(small_suite)}
    assert scanned.keys() == written.keys()
    for item_id, item in written.items():
        row = scanned[item_id]
        assert (row["generator"], row["clip_id"], row["main_view"]) == (
            item.generator, item.clip_id, item.main_view,
        )  # fmt: skip
        assert row["video"] == item.video and row["reference_video"] == item.reference_video
        assert row["views"] == item.views
