"""Per-video metrics on torchvision, pyiqa, lpips and TorchScript networks.

RoboJudge App. B.3: MUSIQ-SPAQ image quality (``musiq_spaq``) and RAFT-Things motion magnitude
(``flow_motion_magnitude_raft``). RoboPhys-3D App. B.1: MUSIQ (``iq1_musiq``), LPIPS (``iq1_lpips``),
style consistency (``cc_style``) and motion smoothness (``mq_motion_smoothness``). The set-level FVD
and Inception Score live in :mod:`robojudge.metrics.learned.tv_sets`.

Each metric samples frames, loads its network through :mod:`robojudge.models` (a missing file raises
``MissingWeightsError`` naming the metric) and calls a pure function of
:mod:`robojudge.metrics.learned.tv_nets` that takes the network as an argument.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from robojudge import models
from robojudge.metrics._content import require_correspondence, require_motion
from robojudge.metrics._frames import main_video_frames
from robojudge.metrics._registry import Family, Input, Provider, metric
from robojudge.metrics._score import Score
from robojudge.metrics.learned import tv_nets
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.metrics.robophys.reference import (
    PairedConfig,
    paired_frames,
    paired_motion,
    with_missing,
    worst_score,
)
from robojudge.suite._schema import Item

ROBOJUDGE_B3 = "RoboJudge: Multimodal Language Models as Judges for Embodied Video Generation, App. B.3"


# --- MUSIQ -------------------------------------------------------------------------------------------


class MusiqConfig(BaseModel):
    """VBench's imaging-quality protocol (RoboJudge App. B.3): every frame, longer side capped at 512."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float | None = Field(default=None, gt=0, description="decode rate; None keeps every frame")
    max_frames: int | None = Field(default=None, ge=1, description="spread at most this many frames")
    max_side: int = Field(default=512, ge=32, description="downscale when the longer side exceeds this")


def _musiq(metric_id: str, item: Item, config: MusiqConfig) -> Score:
    # A one-frame or still video is unscored before the network loads: a frozen video's frames can be
    # as sharp as a good rollout's, so image quality would reward the failure to animate.
    frames = main_video_frames(item, fps=config.fps, max_frames=config.max_frames)
    require_motion(frames)
    net = models.load_musiq_spaq(metric=metric_id)
    per_frame = tv_nets.musiq_scores(frames, net, max_side=config.max_side) / 100.0
    return Score(
        value=float(per_frame.mean()), details={"frames": len(per_frame), "min_frame": float(per_frame.min())}
    )


_MUSIQ_DESCRIPTION = (
    "Mean over frames of MUSIQ (SPAQ checkpoint, pyiqa architecture) on frames whose longer side is "
    "capped at 512 px, divided by 100 as VBench reports it. Higher is better."
)


@metric(
    "musiq_spaq",
    family=Family.quality,
    inputs={Input.video},
    higher_is_better=True,
    native_range=(0.0, 1.0),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
    citation=f"{ROBOJUDGE_B3} (Image Quality with MUSIQ); Ke et al., ICCV 2021",
    description=_MUSIQ_DESCRIPTION,
    config=MusiqConfig,
    provider=Provider.model,
    weights=(models.MUSIQ_SPAQ.name,),
)
def musiq_spaq(item: Item, config: MusiqConfig) -> Score:
    """RoboJudge's MUSIQ baseline: ``mean_t MUSIQ_SPAQ(I_t) / 100`` with VBench's preprocessing."""
    return _musiq("musiq_spaq", item, config)


@robophys_metric(
    "iq1_musiq",
    family=Family.quality,
    inputs={Input.video},
    description=_MUSIQ_DESCRIPTION,
    provider=Provider.model,
    config=MusiqConfig,
    note="same network and protocol as RoboJudge's musiq_spaq (App. B.3)",
    weights=(models.MUSIQ_SPAQ.name,),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
)
def iq1_musiq(item: Item, config: MusiqConfig) -> Score:
    """RoboPhys-3D's MUSIQ on [0, 1]: the same computation as :func:`musiq_spaq`.

    App. B.1.1 names MUSIQ on [0, 1] without a checkpoint or preprocessing; VBench's imaging quality
    (MUSIQ-SPAQ / 100, longer side at most 512) is the protocol that yields that range.
    """
    return _musiq("iq1_musiq", item, config)


# --- RAFT motion magnitude ---------------------------------------------------------------------------


class RaftConfig(BaseModel):
    """Sampling as the Farneback variant (8 fps, 256x256) but RGB; RAFT's refinement count."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float = Field(default=8.0, gt=0)
    # RAFT's four correlation levels need feature maps of 16 px or more at 1/8 scale: 128 px a side
    # (torchvision refuses smaller frames on every item; refused here, before any is read).
    width: int = Field(default=256, ge=128, description="multiple of 8 (RAFT's feature stride), at least 128")
    height: int = Field(default=256, ge=128, description="multiple of 8, at least 128")
    num_flow_updates: int = Field(default=20, ge=1, description="RAFT iterations (20, as EvalCrafter)")

    @field_validator("width", "height")
    @classmethod
    def _multiple_of_8(cls, v: int) -> int:
        if v % 8:
            raise ValueError(f"RAFT needs sides divisible by 8, got {v}")
        return v


@metric(
    "flow_motion_magnitude_raft",
    family=Family.flow,
    inputs={Input.video},
    higher_is_better=True,
    native_range=(0.0, None),
    version="4",  # a camera pan is not "tracking lost" (v3: unscored when it moved past the texture's grain)
    citation=f"{ROBOJUDGE_B3} (Optical-Flow Motion Magnitude); Teed and Deng, ECCV 2020",
    description=(
        "Mean RAFT-Things optical-flow magnitude per pixel between consecutive frames (8 fps, 256x256 "
        "RGB), averaged over time. Amount of motion, not quality: kept in its own direction."
    ),
    config=RaftConfig,
    provider=Provider.model,
    weights=(models.RAFT_THINGS.name,),
)
def flow_motion_magnitude_raft(item: Item, config: RaftConfig) -> Score:
    """``mean_t m_t`` with ``m_t = 1/(HW) sum |F_t|`` and ``F_t = RAFT(I_t, I_{t+1})`` (App. B.3).

    Same aggregation as ``flow_motion_magnitude_farneback``; the paper keeps the raw direction for
    correlations, which ``higher_is_better=True`` expresses. As for the Farneback variant, a still
    video is measured (about 0, the worst value) and frames without correspondence leave the item
    unscored, before RAFT loads.
    """
    frames = main_video_frames(item, fps=config.fps, size=(config.width, config.height))
    lost = require_correspondence(frames)
    net = models.load_raft_things(metric="flow_motion_magnitude_raft")
    per_step = tv_nets.raft_flow_magnitudes(frames, net, num_flow_updates=config.num_flow_updates)
    return Score(value=float(per_step.mean()), details={
        "frames": len(frames), "max_step": float(per_step.max()), "steps_without_correspondence": lost})


# --- LPIPS -------------------------------------------------------------------------------------------


@robophys_metric(
    "iq1_lpips",
    family=Family.reference,
    inputs={Input.video, Input.reference},
    description=(
        "LPIPS v0.1 (VGG-16 backbone) between each generated frame and the reference frame at the same "
        "time, averaged over frames. 0 for identical videos; lower is better."
    ),
    provider=Provider.model,
    config=PairedConfig,
    note="Zhang et al., CVPR 2018; frames paired as iq1_psnr and iq1_ssim",
    weights=(models.VGG16_IMAGENET.name,),
    version="5",  # a blank or still video against a moving reference scores 1 before the network loads, a
    # blank reference is unscored (v4: both compared);
    # v4: an fps above either video's own rate is lowered to it (v3: frames paired by index there);
    # v3: other framings and clips under 16 px unscored (v2: stretched or scaled up and scored)
)
def iq1_lpips(item: Item, config: PairedConfig) -> Score:
    """Mean per-frame LPIPS against ``reference_video`` (RoboPhys-3D App. B.1.1).

    Frames are paired exactly as for ``iq1_psnr``/``iq1_ssim`` (one rate, generated resized to the
    reference, over the reference's length): a reference frame the generated video does not reach
    counts as 1, the top of LPIPS's range. The paper does not name the LPIPS backbone; VGG-16 is used
    because its ImageNet weights are pinned on the hub and shared with ``cc_style``. A blank or still
    video against a moving reference counts 1 on every frame, before the network loads, and a blank
    reference leaves the item unscored (:func:`~robojudge.metrics.robophys.reference.paired_motion`).
    """
    pair = paired_frames(item, config.fps, config.min_reference_coverage)
    motion = paired_motion(pair, str(item.reference_video))
    if motion.penalised:
        return worst_score(pair, motion, 1.0)
    net = models.load_lpips_vgg(metric="iq1_lpips")
    compared = tv_nets.lpips_distances(pair.gen, pair.ref[: len(pair.gen)], net)
    per_frame = with_missing(compared, pair.missing, 1.0)
    details = {**pair.coverage(), "max_frame": float(compared.max()), **motion.details()}
    return Score(value=float(per_frame.mean()), details=details)


# --- Style consistency -------------------------------------------------------------------------------


class StyleConfig(BaseModel):
    """Sampling of the style-consistency frames."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float = Field(default=8.0, gt=0)
    width: int = Field(default=256, ge=32)
    height: int = Field(default=256, ge=32)


@robophys_metric(
    "cc_style",
    family=Family.features,
    inputs={Input.video},
    description=(
        "Mean squared difference between VGG-16 Gram matrices (relu1_2, relu2_2, relu3_3, relu4_3) of "
        "each frame and of the first frame (8 fps, 256x256), averaged over layers and frames. Lower "
        "means the rendering style drifts less."
    ),
    provider=Provider.model,
    config=StyleConfig,
    note="Gram matrices after Gatys et al., CVPR 2016",
    weights=(models.VGG16_IMAGENET.name,),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
)
def cc_style(item: Item, config: StyleConfig) -> Score:
    """Style drift ``mean_{t>=2} mean_l mean((G_l(I_t) - G_l(I_1))^2)``, ``G = F F^T / (CHW)``.

    App. B.1.5 defines style consistency by Gram-matrix statistics of frames and normalizes it as a
    lower-is-better distance with WorldScore's threshold (App. B.5.1, upper bound 0.007). A still
    video (no drift, the best value 0) is unscored before the network loads.
    """
    frames = main_video_frames(item, fps=config.fps, size=(config.width, config.height))
    require_motion(frames)
    net = models.load_vgg16_features(metric="cc_style")
    per_frame = tv_nets.style_distances(tv_nets.gram_matrices(frames, net))
    return Score(
        value=float(per_frame.mean()), details={"frames": len(frames), "max_frame": float(per_frame.max())}
    )


# --- Motion smoothness -------------------------------------------------------------------------------


class SmoothnessConfig(BaseModel):
    """Frames fed to the interpolation network: every frame at native size by default (as VBench)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float | None = Field(default=None, gt=0, description="decode rate; None keeps every frame")
    max_side: int | None = Field(default=None, ge=16, description="scale the longer side to this")


@robophys_metric(
    "mq_motion_smoothness",
    family=Family.flow,
    inputs={Input.video},
    description=(
        "VBench motion smoothness: a frame-interpolation network predicts each odd frame from its "
        "neighbours; the value is (255 - mean absolute error) / 255, averaged. Higher is smoother."
    ),
    provider=Provider.model,
    config=SmoothnessConfig,
    note="VBench's formula; the paper's motion-magnitude weighting is not specified and not applied",
    weights=(models.FRAME_INTERPOLATION.name,),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
)
def mq_motion_smoothness(item: Item, config: SmoothnessConfig) -> Score:
    """``mean_t (255 - mean|interp(I_{t-1}, I_{t+1}) - I_t|) / 255`` over odd ``t`` (VBench).

    App. B.1.4 adds a motion-magnitude weighting and a [0, inf) range (WorldArena's bound 2.6413)
    without giving the formula; this metric is VBench's unweighted [0, 1] form, so its normalized
    score under the taxonomy's affine bounds is not comparable with the paper's. Fewer than 3 frames
    and a still video (perfectly interpolated, the best value 1) are unscored before the network loads.
    """
    frames = main_video_frames(item, fps=config.fps, size=config.max_side, least=3)
    require_motion(frames)
    net = models.load_frame_interpolation(metric="mq_motion_smoothness")
    errors = tv_nets.interpolation_errors(frames, net)
    per_step = (255.0 - errors) / 255.0
    return Score(
        value=float(per_step.mean()), details={"frames": len(frames), "min_step": float(per_step.min())}
    )
