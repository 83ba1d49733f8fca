"""``robojudge suite make-demo --scenes`` and ``--rollout-depth``: the simulator's opt-in scenes and chunked
rollouts from the command line."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest


def rj(*args, check=True):
    env = {**os.environ, "COLUMNS": "200", "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    p = subprocess.run([sys.executable, "-m", "robojudge", *map(str, args)], capture_output=True, text=True,
                       timeout=300, env=env)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def test_unknown_scene_is_refused(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("mujoco")
    bad = rj("suite", "make-demo", "--out", tmp_path / "x", "--scenes", "pick_and_place,aloha", check=False)
    assert bad.returncode == 2 and "unknown scene 'aloha'" in bad.stderr
    assert not (tmp_path / "x" / "suite.jsonl").exists()


@pytest.mark.slow
def test_bimanual_scene_from_the_cli(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("mujoco")
        if importlib.util.find_spec("gym_aloha") is None:
            pytest.skip("gym-aloha's scene files are not installed (pip install --no-deps gym-aloha==0.1.5)")
    out = tmp_path / "sim"
    rj("suite", "make-demo", "--out", out, "--episodes", "1", "--views", "1", "--size", "32",
       "--profiles", "oracle", "--scenes", "bimanual")
    rows = [json.loads(x) for x in (out / "suite.jsonl").read_text().splitlines()]
    assert [(r["item_id"], r["embodiment"], r["task"]) for r in rows] == [
        ("aloha00-oracle", "bimanual", "transfer_cube")]
    assert "ok" in rj("suite", "validate", out / "suite.jsonl").stdout


def test_bad_depth_is_refused(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("mujoco")
    bad = rj("suite", "make-demo", "--out", tmp_path / "x", "--rollout-depth", "1,x", check=False)
    assert bad.returncode == 2 and "whole numbers" in bad.stderr, bad.stderr
    assert not (tmp_path / "x" / "suite.jsonl").exists()


@pytest.mark.slow
def test_depth_from_the_cli(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("mujoco")
    out = tmp_path / "sim"
    rj("suite", "make-demo", "--out", out, "--episodes", "1", "--views", "1", "--size", "32",
       "--profiles", "oracle", "--rollout-depth", "3")
    rows = [json.loads(x) for x in (out / "suite.jsonl").read_text().splitlines()]
    assert [r["meta"]["rollout_depth"] for r in rows] == [3]
    assert rows[0]["meta"]["chunks"] == [[0, 16], [16, 32], [32, 48]]
