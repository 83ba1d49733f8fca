"""Training a reader on rollouts with planted kinematic failures too (``TrainConfig.failures``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.kiva import RENDERED_FAILURES, TrainConfig, episodes_from_manifest
from robojudge.video import write_video

NAMES = ["a", "b", "c"]
T, W, H = 6, 40, 20


def _suite(root: Path) -> Path:
    """A reference and four rollouts of clip c0: faithful, jitter, jitter with a vanish, a vanish alone."""
    for sub in ("videos", "reference", "state"):
        (root / sub).mkdir()
    frames = np.zeros((T, H, W, 3), np.uint8)
    kp2 = np.random.default_rng(0).uniform(0, [W, H], (T, 1, len(NAMES), 2)).astype(np.float32)
    rows = []
    planted = {"ok": [], "jit": ["jitter"], "mixed": ["jitter", "vanish"], "vanish": ["vanish"],
               "bend": ["bend", "finger_pass"]}
    for name in ("reference/c0", *(f"videos/c0-{k}" for k in planted)):
        write_video(root / f"{name}.mp4", frames, fps=10)
    for name in ("reference/c0", *(f"state/c0-{k}" for k in planted)):
        np.savez(root / f"{name}.npz", keypoint_names=np.array(NAMES), keypoints_2d=kp2,
                 keypoints_visible=np.ones(kp2.shape[:3], bool))
    for k, types in planted.items():
        rows.append({"item_id": f"c0-{k}", "video": f"videos/c0-{k}.mp4",
                     "reference_video": "reference/c0.mp4", "clip_id": "c0", "state": f"state/c0-{k}.npz",
                     "meta": {"failures": [{"type": t, "start": 1, "stop": 4} for t in types]}})
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_only_rollouts_whose_every_failure_is_a_rendered_kinematic_one_join_and_only_when_asked(tmp_path):
    manifest = _suite(tmp_path)
    plain, _ = episodes_from_manifest(manifest)
    assert [e.name for e in plain] == ["reference:c0", "c0-ok"]
    with_failures, names = episodes_from_manifest(manifest, failures=True)
    # A vanish edits the scene, not the robot's pose: a rollout holding one stays out, even beside a jitter.
    assert [e.name for e in with_failures] == ["reference:c0", "c0-ok", "c0-jit", "c0-bend"]
    assert {e.group for e in with_failures} == {"c0"}  # held-out splitting stays by clip
    assert names == NAMES
    refs, _ = episodes_from_manifest(manifest, rollouts=False, failures=True)
    assert [e.name for e in refs] == ["reference:c0"]
    kinematic = {"link_stretch", "bend", "joint_limit", "jitter", "config_jump", "finger_pass"}
    assert kinematic == RENDERED_FAILURES


def test_the_option_is_off_by_default_dumped_and_off_in_a_config_stored_before_it():
    off = TrainConfig()
    assert off.failures is False and json.loads(off.model_dump_json())["failures"] is False
    on = TrainConfig(failures=True)
    assert on.model_dump()["failures"] is True
    assert TrainConfig.model_validate(on.model_dump()) == on
    assert TrainConfig.model_validate_json(on.model_dump_json()) == on
    stored = {k: v for k, v in on.model_dump().items() if k != "failures"}  # a checkpoint written before it
    assert TrainConfig.from_stored(stored).failures is False


@pytest.mark.slow
def test_the_cli_trains_on_the_failure_rollouts_and_stores_that_it_did(kiva_suite: Path, tmp_path: Path):
    pytest.importorskip("torch")
    from robojudge.cli import build_app

    result = CliRunner().invoke(build_app("kiva"), [
        "kiva", "train", "--episodes", str(kiva_suite), "--robot", "fetch", "--out", str(tmp_path / "r"),
        "--size", "32", "--epochs", "1", "--holdout", "0.25", "--with-failures", "--quiet"])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "r" / "reader.json").read_text())
    assert meta["config"]["failures"] is True
    used = meta["episodes"]["train"] + meta["episodes"]["held_out"]
    jitter = [n for n in used if "jitter_only" in n]
    assert jitter and len(jitter) == sum("-oracle" in n for n in used)  # one jitter rollout per faithful one
    assert any("jitter_only" in f for f in meta["data"]["files"])  # in the data fingerprint too
