"""Settings of a reader's training (stored in its checkpoint)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Options added after readers were first stored, each with the value that trains the reader as it was
#: trained before the option existed. Configs stored until December 2026 left these options out at those
#: values; ``TrainConfig.from_stored`` reads a missing one back as this value, not as today's default
#: (the heatmap stride and loss defaults have changed since). An option added later belongs here too.
BEFORE_OPTION: dict[str, Any] = {
    "failure_repeat": 1, "failures": False, "heatmap_loss": 0.0, "heatmap_stride": 4, "members": 1,
    "warp": 0.0,
}


class TrainConfig(BaseModel):
    """How a keypoint reader is trained.

    The defaults read 128 px frames: on 128 px videos a 128 px reader found far more planted kinematic
    failures than a 64 px one on every simulated robot (docs/kiva_validation.md, "Larger suites, and the
    reader's size"), for about four times the training of a 64 px one (docs/kiva.md, "Reader size", has the
    times measured). They draw heatmaps of 2 px cells and train them with a heatmap loss of 0.01: with two
    readers a setting, that raised macro rho on unseen clips from 0.40 to 0.52 (docs/kiva_validation.md,
    "A heatmap loss, and one frame of input"), for about 1.5 times the training. The demo trains 32 px
    readers (``robojudge.demo.DEMO_READER``).

    A dump holds every field. Read a stored one with :meth:`from_stored`, which also reads configs stored
    before some options existed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    size: int = Field(default=128, ge=16, le=512, description="frames resized to size x size")
    context: int = Field(default=3, ge=1, le=9, description="consecutive frames stacked per input")
    width: int = Field(default=32, ge=8, le=256, description="channels of the first layer (multiple of 8)")
    heatmap_stride: Literal[2, 4] = Field(
        default=2, description="input pixels per heatmap cell: 2, or 4 for one decoder step fewer"
    )
    heatmap_loss: float = Field(
        default=0.01, ge=0,
        description="weight of a cross-entropy between each visible keypoint's heatmap and a Gaussian of one "
        "heatmap cell round its target, added to the Huber loss on positions (0: positions only)",
    )
    epochs: int = Field(default=30, ge=1)
    batch_size: int = Field(default=16, ge=1)
    lr: float = Field(default=3e-3, gt=0)
    huber_delta: float = Field(default=0.02, gt=0, description="Huber's delta, in units of the image side")
    visibility_weight: float = Field(default=0.1, ge=0)
    shift: int = Field(default=2, ge=0, le=8, description="largest training shift, pixels")
    warp: float = Field(
        default=0.0, ge=0, le=0.1,
        description="standard deviation of a smooth random warp of each training sample, as a fraction of "
        "the image side (0: none); keypoint targets move with it, so link lengths vary in training",
    )
    holdout: float = Field(default=0.2, ge=0, lt=1, description="share of clips held out for the error")
    rollouts: bool = Field(default=True, description="train on faithful rollouts too, not just references")
    views: Literal["main", "all"] = Field(
        default="main",
        description="main: each episode's main view only; all: every view of a faithful rollout or recording "
        "that has a video and keypoints (state file or calibration), so the reader reads any view",
    )
    failures: bool = Field(
        default=False,
        description="also train on rollouts whose planted failures are all kinematic ones the simulator "
        "renders with their keypoints (the broken pose as drawn), so the reader learns to read it",
    )
    failure_repeat: int = Field(
        default=1, ge=1, le=16,
        description="with failures, each frame inside a planted failure's span is drawn this many times an "
        "epoch instead of once (1: no oversampling), so the rare broken poses weigh more in training",
    )
    seed: int = 0
    members: int = Field(
        default=1, ge=1, le=16,
        description="readers trained alike with the seeds seed, seed + 1, ... (same held-out clips); a video "
        "is read by all of them, their positions and visibility probabilities averaged (docs/kiva.md, "
        "\"Several readers\")",
    )
    threads: int = Field(default=1, ge=1, description="torch CPU threads while training")
    device: str = Field(default="cpu", description="cpu, cuda, or auto (cuda when there is one)")

    @model_validator(mode="after")
    def _repeat_needs_failures(self) -> TrainConfig:
        if self.failure_repeat > 1 and not self.failures:
            raise ValueError("failure_repeat above 1 needs failures (training on rollouts with planted "
                             "failures)")
        return self

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> TrainConfig:
        """The config of a stored dump (a checkpoint's ``reader.json``, a JSON dump): options it lacks take
        the value that trained readers before they existed (``BEFORE_OPTION``), not today's defaults."""
        return cls.model_validate({**BEFORE_OPTION, **stored})

    def resolved_device(self) -> str:
        if self.device != "auto":
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
