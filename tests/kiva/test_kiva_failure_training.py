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


# Oversampling the frames of planted failures (``TrainConfig.failure_repeat``).


def _episode(frames: int, spans: tuple[tuple[int, int], ...], seed: int = 0):
    from robojudge.kiva._data import Episode, EpisodeData

    rng = np.random.default_rng(seed)
    ep = Episode("x", "g", Path("x.mp4"), None, 0, False, failure_spans=spans)
    return EpisodeData(ep, rng.integers(0, 255, (frames, 16, 16, 3), dtype=np.uint8),
                       rng.uniform(3, 13, (frames, len(NAMES), 2)).astype(np.float32),
                       np.ones((frames, len(NAMES)), bool), (16, 16), 10.0)


def test_failure_rollouts_carry_their_planted_spans_and_references_and_faithful_ones_none(tmp_path):
    episodes, _ = episodes_from_manifest(_suite(tmp_path), failures=True)
    spans = {e.name: e.failure_spans for e in episodes}
    assert spans == {"reference:c0": (), "c0-ok": (), "c0-jit": ((1, 4),), "c0-bend": ((1, 4), (1, 4))}


def test_the_training_index_repeats_the_frames_inside_failure_spans_and_is_unchanged_without():
    pytest.importorskip("torch")
    from robojudge.kiva._train import training_index

    data = [_episode(6, ()), _episode(8, ((2, 4), (3, 6), (7, 20)))]
    once = training_index(data)
    assert once.tolist() == [[0, t] for t in range(6)] + [[1, t] for t in range(8)]  # the index of before
    assert training_index(data, 1).tolist() == once.tolist()
    three = training_index(data, 3)
    counts = {(int(e), int(t)): 0 for e, t in once}
    for e, t in three:
        counts[(int(e), int(t))] += 1
    # Frames 2-5 (two overlapping spans count once) and 7 (a span past the video's end is cut) thrice.
    inside = {(1, 2), (1, 3), (1, 4), (1, 5), (1, 7)}
    assert counts == {key: 3 if key in inside else 1 for key in counts}


def test_training_draws_the_failure_frames_as_often_as_asked(monkeypatch):
    pytest.importorskip("torch")
    import robojudge.kiva._train as train_mod

    drawn: list[tuple[int, int]] = []
    real_batch = train_mod._batch

    def counting(data, batch, context):
        drawn.extend((int(e), int(t)) for e, t in batch)
        return real_batch(data, batch, context)

    monkeypatch.setattr(train_mod, "_batch", counting)
    data = [_episode(10, ((4, 7),), seed=1)]
    base = dict(size=16, width=8, epochs=2, batch_size=4, holdout=0.0, failures=True)
    _, plain = train_mod.train_net(data, len(NAMES), TrainConfig(**base))
    assert sorted(drawn) == sorted([(0, t) for t in range(10)] * 2)  # every frame once an epoch
    drawn.clear()
    _, loss_a = train_mod.train_net(data, len(NAMES), TrainConfig(**base, failure_repeat=4))
    per_frame = {t: sum(1 for _, u in drawn if u == t) for t in range(10)}
    assert per_frame == {t: 8 if 4 <= t < 7 else 2 for t in range(10)}  # 4 times an epoch, 2 epochs
    _, loss_b = train_mod.train_net(data, len(NAMES), TrainConfig(**base, failure_repeat=4))
    assert loss_a == loss_b and loss_a != plain  # seeded, and a different training


def test_failure_repeat_defaults_to_once_needs_failures_and_reads_back_as_once_from_older_configs():
    assert TrainConfig().failure_repeat == 1
    assert TrainConfig(failures=True, failure_repeat=4).model_dump()["failure_repeat"] == 4
    with pytest.raises(ValueError, match="needs failures"):
        TrainConfig(failure_repeat=2)
    with pytest.raises(ValueError):
        TrainConfig(failures=True, failure_repeat=0)
    stored = {k: v for k, v in TrainConfig(failures=True, failure_repeat=3).model_dump().items()
              if k != "failure_repeat"}
    assert TrainConfig.from_stored(stored).failure_repeat == 1


@pytest.mark.slow
def test_the_cli_stores_the_repeat_and_refuses_it_without_failures(kiva_suite: Path, tmp_path: Path):
    pytest.importorskip("torch")
    from robojudge.cli import build_app

    app = build_app("kiva")
    args = ["kiva", "train", "--episodes", str(kiva_suite), "--robot", "fetch", "--size", "32",
            "--epochs", "1", "--holdout", "0.25", "--quiet", "--failure-repeat", "3"]
    bad = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "needs failures" in bad.output
    assert not (tmp_path / "x").exists()
    ok = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r"), "--with-failures"])
    assert ok.exit_code == 0, ok.output
    meta = json.loads((tmp_path / "r" / "reader.json").read_text())
    assert meta["config"]["failures"] is True and meta["config"]["failure_repeat"] == 3
