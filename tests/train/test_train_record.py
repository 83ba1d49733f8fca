"""What a training records about its data, read before the model loads (audit train F2, F3, F6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robojudge.judges import load_judges_file
from robojudge.train import SFTSettings, TrainingError, TrainResult, export_training_data, train_sft


def test_resume_from_checkpoint_is_refused_before_training(labelled_suite: Path, tmp_path: Path) -> None:
    """TRL reads it in trainer.train(), not from its config: passed as an override, the training started
    again at step 1 while robojudge-train.json listed the resume."""
    export_training_data(labelled_suite, ["pa"], tmp_path / "data")
    with pytest.raises(TrainingError, match="resume_from_checkpoint 'ck/checkpoint-2': robojudge train does "
                       "not resume"):
        train_sft("no-such-model", tmp_path / "data", tmp_path / "out", SFTSettings(max_steps=1),
                  device="cpu", overrides={"resume_from_checkpoint": "ck/checkpoint-2"})
    assert not (tmp_path / "out").exists()


def test_the_printed_entry_samples_frames_as_the_training_data(tmp_path: Path) -> None:
    frames = {"fps": 2.0, "max_frames": 8, "size": 64, "grid_view": "whole"}
    result = TrainResult(tmp_path / "ck", "sft", 2, [1.0], [], "base-model", frames, 4)
    entry = result.judge_toml("ck")
    assert "max_images = 4\n" in entry
    assert "# trained on frames sampled as: robojudge judge ... --fps 2 --max-frames 8 --size 64 " \
           "--grid-view whole" in entry
    toml = tmp_path / "robojudge.toml"
    toml.write_text(entry)
    judge = load_judges_file(toml)["ck"]
    assert judge.max_images == 4 and judge.stage == "sft"  # (the comment is TOML's, the entry still loads)
    plain = TrainResult(tmp_path / "ck", "sft", 2, [1.0], [], "base-model",
                        {"fps": 4.0, "max_frames": 32, "size": None}, 32).judge_toml("ck")
    assert "--fps 4 --max-frames 32\n" in plain and "--size" not in plain
