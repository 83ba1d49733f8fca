"""Epochs and a step count both given: TRL trains the steps and drops the epochs, so the pair is refused.

Since GRPO's ``max_steps`` defaults to App. G.1's 200, ``GRPOSettings(epochs=3)`` trained 200 steps and
recorded 3 epochs without a word (review rev5, 2). The check runs before the data or the model is read,
so no training stack is needed here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from robojudge.train import GRPOSettings, SFTSettings, TrainingError, train_grpo, train_sft


def test_epochs_with_max_steps_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match=r"epochs 3 \(--epochs\) with max_steps 200 .*max_steps -1"):
        train_grpo("x", tmp_path, tmp_path / "o", GRPOSettings(epochs=3.0), device="cpu")
    with pytest.raises(TrainingError, match=r"epochs 2.5 \(--epochs\) with max_steps 10 "):
        train_sft("x", tmp_path, tmp_path / "o", SFTSettings(epochs=2.5, max_steps=10), device="cpu")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("settings", [GRPOSettings(), GRPOSettings(epochs=3.0, max_steps=-1),
                                      GRPOSettings(max_steps=5), SFTSettings(epochs=3.0)])
def test_one_length_passes_the_check(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # past the settings check, the next refusal is the missing export: the settings were accepted
    train = train_grpo if isinstance(settings, GRPOSettings) else train_sft
    with pytest.raises(TrainingError, match="no export.json"):
        train("x", tmp_path, tmp_path / "o", settings, device="cpu")
