"""Motion quality from frames and classical optical flow (RoboPhys-3D App. B.1.4).

The paper computes Dynamic Degree and Flow Score with RAFT; these ids use OpenCV's DIS flow
(Farneback with ``estimator="farneback"``) so they run with no weights. Values are therefore close in
spirit but not numerically equal to RAFT-based ones. All three metrics read the item's video at its
native rate and size in RGB by default (one decode per item, shared), as VBench and EvalCrafter do.
"""

from __future__ import annotations

import cv2
import numpy as np
from pydantic import Field

from robojudge.metrics import functional as F
from robojudge.metrics._content import require_correspondence, require_frames, require_motion
from robojudge.metrics._derived import derived, frozen
from robojudge.metrics._flow_cache import flow_steps
from robojudge.metrics._frames import NativeFrames, native_rgb, profile_details, profile_step
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics.flow import FarnebackParams, FlowEstimator
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item

VBENCH = "VBench (Huang et al., CVPR 2024)"


def luma(frames: np.ndarray) -> np.ndarray:
    """BT.601 luma of RGB frames, ``(T, H, W)`` uint8 (same as ``sample_frames(..., gray=True)``)."""
    out = np.empty(frames.shape[:3], np.uint8)
    for t in range(len(frames)):
        cv2.cvtColor(frames[t], cv2.COLOR_RGB2GRAY, dst=out[t])  # written in place: no list to stack
    return out


def to_gray(frames: np.ndarray, stride: int = 1) -> np.ndarray:
    """:func:`luma` of every ``stride``-th frame.

    The native-size metrics of an item all read the same cached RGB frames; the gray version is
    computed once for them (:func:`robojudge.metrics._derived.derived`) and then read-only, so the
    content checks on it are shared as well. Frames that can change give a fresh, writeable array.
    Shared frames read with a stride get a view of the full gray clip (the other native metrics
    convert every frame anyway), kept with it so every reader gets the same array.
    """
    if stride > 1 and frozen(frames):
        return derived(frames, ("gray", stride), lambda: to_gray(frames)[::stride])

    def compute() -> np.ndarray:
        out = luma(frames[::stride])
        out.flags.writeable = not frozen(frames)
        return out

    return derived(frames, ("gray", stride), compute)


@robophys_metric(
    "mq_temporal_flickering",
    family=Family.pixel,
    inputs={Input.video},
    description=(
        "VBench temporal flickering: (255 - mean absolute difference of consecutive frames) / 255, "
        "over every frame at native rate and size, RGB. Higher means steadier appearance."
    ),
    config=NativeFrames,
    note=f"definition of {VBENCH}",
    version="3",  # v3: a frozen picture that fades or flashes is still; under 16 px a side unscored
)
def mq_temporal_flickering(item: Item, config: NativeFrames) -> Score:
    """VBench's Temporal Flickering (RoboPhys-3D App. B.1.4, citing VBench).

    VBench scores ``(255 - mean_t mean|I_{t+1} - I_t|) / 255`` on all frames of videos generated from
    static-scene prompts. Manipulation rollouts are not static, so every frame pair is used and real
    motion lowers the score too; the paper itself notes that low-motion videos score high. A video in
    which nothing moves at all would score the best value, 1, for a failure to animate; it is left
    unscored (:func:`~robojudge.metrics._content.require_motion`), and so is a video under 16 px on a
    side (version 3; before, 2x2 frames of random colours that brighten once scored 0.992), as the pixel
    and flow metrics leave it.
    """
    frames, _ = native_rgb(item, config, least_side=True)
    require_motion(frames)
    mae = F.frame_differences(frames)
    value = F.flicker_score(mae)  # = F.temporal_flickering(frames), with the steps kept for details
    return Score(value=value, details={"frames": len(frames), "max_step_mae": float(mae.max()),
                                       **profile_details(config)})


class DynamicDegreeConfig(NativeFrames, FlowEstimator, FarnebackParams):
    """VBench's dynamic-degree settings (frame stride for ~8 fps, top 5%, 6 px at 256 px, 4 per 16)."""

    target_fps: float = Field(default=8.0, gt=0, description="keep every round(fps / target_fps)-th frame")
    top_fraction: float = Field(default=0.05, gt=0, le=1, description="share of largest magnitudes averaged")
    threshold_at_256: float = Field(default=6.0, gt=0, description="threshold in px for a 256 px short side")
    steps_per_16_frames: float = Field(default=4.0, gt=0, description="moving steps needed per 16 frames")


@robophys_metric(
    "mq_dynamic_degree",
    family=Family.flow,
    inputs={Input.video},
    description=(
        "VBench dynamic degree with DIS optical flow: 1 if enough frame steps (4 per 16 frames, ~8 fps) "
        "have a top-5% flow magnitude above 6 px per 256 px of short side, else 0. Mean over videos = "
        "share of dynamic videos."
    ),
    config=DynamicDegreeConfig,
    note=f"decision rule of {VBENCH}, with DIS flow instead of RAFT",
    version="6",  # a camera pan is not "tracking lost" (v5: unscored when it moved past the texture's grain)
)
def mq_dynamic_degree(item: Item, config: DynamicDegreeConfig) -> Score:
    """VBench's Dynamic Degree per video, 0 or 1 (RoboPhys-3D App. B.1.4).

    Frames are taken every ``round(fps / 8)`` source frames; for each consecutive pair the score is
    the mean of the top 5% flow magnitudes; the video is dynamic when at least ``round(4 T / 16)`` of
    them exceed ``6 * min(H, W) / 256`` px. The paper's per-model values are means of these binary
    decisions. The continuous share of moving steps is kept in ``details["moving_fraction"]``.

    A still video is measured (0, not dynamic). Frames that show nothing of each other give large
    flow that is not motion: with more than half of the steps lacking correspondence
    (:func:`~robojudge.metrics._content.require_correspondence`) the item is unscored. So is a clip of
    fewer than 3 frames after the stride (version 4): there VBench's rule needs ``round(4 * 2 / 16) =
    0`` moving steps, and a frozen two-frame clip came out dynamic.
    """
    frames, fps = native_rgb(item, config)
    stride = max(1, round(fps / config.target_fps))
    gray = to_gray(frames, stride)
    require_frames(gray, 3, f"the video after the {stride}-frame stride")
    lost = require_correspondence(gray)
    # F.dynamic_degree(gray, ...) in two steps, to keep the step scores for details. The scores are
    # F.dynamic_steps(gray, config.top_fraction, config); at stride 1 cc_photometric reads these frames too.
    # (not under the fast profile: cc_photometric then reads every other pair, these read all)
    steps = flow_steps(gray, config, top_fraction=config.top_fraction,
                       share_backward=stride == 1 and profile_step(config, fps) == 1)
    scores = steps.top_magnitude
    short_side = min(gray.shape[1:3])
    threshold = F.dynamic_threshold(short_side, config.threshold_at_256)
    dynamic = F.is_dynamic(scores, len(gray), short_side, threshold_at_256=config.threshold_at_256,
                           steps_per_16_frames=config.steps_per_16_frames)
    return Score(
        value=1.0 if dynamic else 0.0,
        details={"frames": len(gray), "stride": stride, "threshold_px": threshold,
                 "moving_fraction": float((scores > threshold).mean()), "max_step": float(scores.max()),
                 "steps_without_correspondence": lost, **profile_details(config)},
    )


class FlowScoreConfig(NativeFrames, FlowEstimator, FarnebackParams):
    """Native-resolution, every-frame optical flow (DIS by default)."""


@robophys_metric(
    "mq_flow_score",
    family=Family.flow,
    inputs={Input.video},
    description=(
        "Mean optical-flow magnitude (DIS; px per frame) over all pixels and all consecutive "
        "frame pairs at native rate and size. Amount of motion."
    ),
    config=FlowScoreConfig,
    note="EvalCrafter-style flow score, with DIS flow instead of RAFT",
    version="5",  # a camera pan is not "tracking lost" (v4: unscored when it moved past the texture's grain)
)
def mq_flow_score(item: Item, config: FlowScoreConfig) -> Score:
    """Flow Score (RoboPhys-3D App. B.1.4): ``mean_t 1/(HW) sum_p |F_t(p)|`` over consecutive frames.

    Unlike ``flow_motion_magnitude_farneback`` (8 fps, 256x256), it keeps every frame at native size,
    so values are in pixels of the source video per source frame, like the WorldArena bounds
    (0.0531-8.9414) that normalize it. As for ``flow_motion_magnitude_farneback``, a still video is
    measured (about 0, the worst value) and frames without correspondence leave the item unscored.
    """
    frames, fps = native_rgb(item, config)
    gray = to_gray(frames)
    lost = require_correspondence(gray)
    # F.motion_magnitudes(gray, config) (mean: F.motion_magnitude); cc_photometric reads these frames too
    step = profile_step(config, fps)
    per_step = flow_steps(gray, config, share_backward=True, pair_step=step).mean_magnitude
    details = {"frames": len(frames), "max_step": float(per_step.max()), "steps_without_correspondence": lost,
               **profile_details(config)}
    return Score(value=float(per_step.mean()), details=details)
