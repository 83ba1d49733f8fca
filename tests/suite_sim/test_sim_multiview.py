"""Planted multi-view failures (opt-in profiles): each is drawn in its one view, labelled, and opt-in."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robojudge.suite.sim._multiview import MULTIVIEW_TYPES, lag_frames, multiview_labels

needs_mujoco = pytest.mark.skipif(
    importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"),
    reason="mujoco is not installed (pip install -e '.[sim]'); CI runs these tests",
)
os.environ.setdefault("MUJOCO_GL", "egl")

SEVERITY = 0.8
VIEWS = 3


def _failure(kind: str, severity: float) -> dict[str, Any]:
    return {"type": kind, "axis": "pa", "item": "scene_consistency", "severity": severity}


def test_multiview_labels_by_hand() -> None:
    assert multiview_labels([]) == {"score": 5, "verdict": "Good", "rater": "planted"}
    # 5 - round(2.5 * 0.3) = 5 - round(0.75) = 4; worst 0.3 < 0.5: Medium
    assert multiview_labels([_failure("view_lag", 0.3)])["score"] == 4
    assert multiview_labels([_failure("view_lag", 0.3)])["verdict"] == "Medium"
    # 5 - round(2.5 * (0.7 + 0.9)) = 5 - 4 = 1; worst 0.9: Bad
    two = multiview_labels([_failure("view_pose", 0.7), _failure("view_ghost", 0.9)])
    assert two["score"] == 1 and two["verdict"] == "Bad"
    # 2.5 * 0.6 = 1.5 rounds half up to 2: score 3 (not banker's rounding to 2 -> 3 either way; 0.5 -> 1)
    assert multiview_labels([_failure("view_shake", 0.6)])["score"] == 3
    assert multiview_labels([_failure("view_shake", 0.2)])["score"] == 4  # 2.5 * 0.2 = 0.5 -> 1
    # Other failure types are not about the views agreeing: ignored
    assert multiview_labels([_failure("flicker", 0.9)])["verdict"] == "Good"


def test_lag_grows_with_severity() -> None:
    assert [lag_frames(s) for s in (0.15, 0.3, 0.45, 0.6, 0.8, 1.0)] == [2, 3, 3, 4, 5, 6]


def _profiles() -> list[Any]:
    from robojudge.suite.sim import Profile

    # ``clean`` has a multi-view type but never draws it (rate 0), so it is rendered from the very plan
    # the failing profiles start from (no benign speed or light change).
    clean = Profile("clean", 0.0, (1, 1), (SEVERITY, SEVERITY), ("view_lag",), 0.0, (0.1, 0.1), (), "c")
    one = [
        Profile(k, 1.0, (1, 1), (SEVERITY, SEVERITY), (k,), 0.0, (0.1, 0.1), (), k) for k in MULTIVIEW_TYPES
    ]
    return [clean, *one]


@pytest.fixture(scope="module")
def mv_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from robojudge.suite.sim import make_sim_suite

    return make_sim_suite(tmp_path_factory.mktemp("mv"), seed=1, episodes=1, views=VIEWS, size=32,
                          profiles=_profiles(), workers=1)


def _rows(manifest: Path) -> dict[str, dict[str, Any]]:
    return {r["generator"]: r for r in map(json.loads, manifest.read_text().splitlines())}


def _frames(manifest: Path, rel: str) -> np.ndarray:
    from robojudge.video import sample_frames

    return sample_frames(str(manifest.parent / rel), fps=None, max_frames=None).frames.astype(np.int16)


def _state(manifest: Path, row: dict[str, Any]) -> dict[str, np.ndarray]:
    with np.load(manifest.parent / row["state"]) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.slow
@needs_mujoco
def test_each_failure_is_in_its_view_only(mv_suite: Path) -> None:
    from robojudge.suite import validate_manifest

    assert validate_manifest(mv_suite) == []
    rows = _rows(mv_suite)
    clean = rows["clean"]
    clean_st = _state(mv_suite, clean)
    cams = list(clean["views"])
    for kind in MULTIVIEW_TYPES:
        row = rows[kind]
        (f,) = row["meta"]["failures"]
        assert f["type"] == kind and f["severity"] == SEVERITY
        assert row["meta"]["multiview"] == multiview_labels([f])
        assert row["labels"]["pa"] == 3 and row["labels"]["ia"] == 5
        v, a, b = cams.index(f["detail"]["view"]), f["start"], f["stop"]
        st = _state(mv_suite, row)
        # The rig stays declared fixed, and the state is the consensus (what the other views show).
        for key in ("R", "t", "K", "object_pos", "keypoints_3d", "joint_pos"):
            assert np.array_equal(st[key], clean_st[key]), (kind, key)
        calib = json.loads((mv_suite.parent / row["calibration"]).read_text())
        assert list(calib) == cams
        assert np.allclose(calib[cams[v]]["R"], clean_st["R"][0, v])
        assert np.allclose(calib[cams[v]]["t"], clean_st["t"][0, v])
        # Every other view is the clean render, pixel for pixel and mask for mask.
        for w, cam in enumerate(cams):
            if w != v:
                same = _frames(mv_suite, row["views"][cam]), _frames(mv_suite, clean["views"][cam])
                assert np.array_equal(*same), (kind, cam)
                assert np.array_equal(st["masks"][:, w], clean_st["masks"][:, w])
        m, m0 = st["masks"][:, v], clean_st["masks"][:, v]
        assert np.array_equal(m[:a], m0[:a]) and np.array_equal(m[b:], m0[b:]), kind
        if kind == "view_lag":
            k = f["detail"]["lag_frames"]
            assert k == lag_frames(SEVERITY)
            assert np.array_equal(m[k:], m0[:-k]) and all(np.array_equal(x, m0[0]) for x in m[:k])
            # The video too: frame t is the clean frame t - k (up to the codec), not the clean frame t.
            x, x0 = _frames(mv_suite, row["views"][cams[v]]), _frames(mv_suite, clean["views"][cams[v]])
            lagged = np.abs(x[k:] - x0[:-k]).mean(axis=(1, 2, 3))
            same_t = np.abs(x[k:] - x0[k:]).mean(axis=(1, 2, 3))
            assert lagged.max() < 3  # what the lossy codec leaves (mean absolute difference, 0-255)
            moving = same_t > 4
            assert moving.sum() >= 10 and (lagged[moving] < same_t[moving] / 2).all()
            continue
        changed = np.array([not np.array_equal(m[t], m0[t]) for t in range(a, b)])
        assert changed.mean() > 0.5, (kind, changed)
        if kind == "view_ghost":  # the duplicate body (class 5) is drawn in this view only
            assert (m[a:b] == 5).any(axis=(1, 2)).mean() > 0.5  # the arm may pass in front of it
            assert not (st["masks"][:, [w for w in range(VIEWS) if w != v]] == 5).any()
            assert not (m0 == 5).any()
        if kind == "view_pose":
            cls = 3 if f["detail"]["target"] == "object" else 2
            assert any(not np.array_equal(m[t] == cls, m0[t] == cls) for t in range(a, b))


@pytest.mark.slow
@needs_mujoco
def test_opt_in_leaves_other_profiles_alone(mv_suite: Path, tmp_path: Path) -> None:
    from robojudge.suite.sim import make_sim_suite

    alone = make_sim_suite(tmp_path / "a", seed=1, episodes=1, views=2, size=24, profiles=("oracle",),
                           workers=1)
    both = make_sim_suite(tmp_path / "b", seed=1, episodes=1, views=2, size=24,
                          profiles=("oracle", "mv_mild", "mv_severe"), workers=1)
    a, b = _rows(alone), _rows(both)
    # Without a multi-view profile the manifest is as before: no calibration, no multi-view label.
    assert "calibration" not in a["oracle"] and "multiview" not in a["oracle"]["meta"]
    assert b["oracle"]["calibration"] and "multiview" not in b["oracle"]["meta"]
    for cam in a["oracle"]["views"]:
        same = _frames(alone, a["oracle"]["views"][cam]), _frames(both, b["oracle"]["views"][cam])
        assert np.array_equal(*same), cam
    assert a["oracle"]["labels"] == b["oracle"]["labels"]
    for name, count in (("mv_mild", (1, 1)), ("mv_severe", (1, 2))):
        fs = b[name]["meta"]["failures"]
        assert count[0] <= len(fs) <= count[1] and {f["type"] for f in fs} <= set(MULTIVIEW_TYPES)
        assert b[name]["meta"]["multiview"] == multiview_labels(fs)
    assert b["mv_mild"]["meta"]["multiview"]["verdict"] == "Medium"
    assert b["mv_severe"]["meta"]["multiview"]["verdict"] == "Bad"


@needs_mujoco
def test_multiview_profiles_need_two_views(tmp_path: Path) -> None:
    from robojudge.suite.sim import make_sim_suite

    with pytest.raises(ValueError, match="need views >= 2"):
        make_sim_suite(tmp_path, episodes=1, views=1, profiles=("oracle", "mv_mild"))
    with pytest.raises(ValueError, match="mv_severe"):
        make_sim_suite(tmp_path, episodes=1, profiles=("mv_nope",))


@needs_mujoco
def test_cli_refuses_multiview_profiles_on_one_view(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "200"}
    p = subprocess.run([sys.executable, "-m", "robojudge", "suite", "make-demo", "--out", str(tmp_path / "x"),
                        "--views", "1", "--profiles", "oracle,mv_mild"], capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 2 and "need views >= 2" in p.stderr, p.stdout + p.stderr
    assert not (tmp_path / "x" / "suite.jsonl").exists()


@needs_mujoco
def test_texture_speckles_flat_tables_only() -> None:
    import mujoco

    from robojudge.suite.sim._scenes import build_spec, scene

    def table_look(name: str, texture: bool) -> list[tuple[str, bool]]:
        spec = build_spec(name, 32, texture)
        rgb = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
        return [(g.material, bool(g.material and spec.material(g.material).textures[rgb]))
                for g in spec.body(scene(name).table_body).geoms]

    # Fetch's table is one flat-coloured box: speckled on request, untouched by default.
    assert table_look("pick_and_place", False) == [("table_mat", False)]
    assert table_look("pick_and_place", True) == [("rj_speckle", True)]
    # ADROIT's table already has its marble texture: left as it is.
    assert table_look("relocate", True) == table_look("relocate", False)
