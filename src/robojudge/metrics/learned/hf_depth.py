"""Depth accuracy (RoboPhys-3D App. B.2.2): monocular depth of generated vs reference frames.

The paper compares monocular depth estimates of the generated and the ground-truth video with a
median-based scale alignment. Both maps come from the same estimator (Depth Anything V2 Small here),
so the metric needs the item's ``reference_video``, not simulator depth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import require_same_span
from robojudge.metrics._errors import Unmeasurable
from robojudge.metrics._registry import Family, Input, Provider
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.metrics.robophys.reference import pairing_rates, require_paired_framing, size_text
from robojudge.suite._schema import Item
from robojudge.video import SampledFrames, report_warnings, sample_frames

DEPTH = "depth_anything_v2_small"


class DepthAccuracyConfig(BaseModel):
    """Frames compared: both videos sampled at one rate and resized to one size, paired by index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float | None = Field(
        default=4.0, gt=0,
        description="common decode rate, at most both videos' own (null, or above either: the lower own "
        "rate)",
    )
    max_frames: int = Field(default=16, ge=1, description="uniform cap on compared frames")
    size: int = Field(default=256, ge=16, description="frames resized to size x size before estimation")
    eps: float = Field(default=1e-6, gt=0, description="reference values at or below this are ignored")
    batch_size: int = Field(default=8, ge=1)
    min_coverage: float = Field(
        default=0.9, gt=0, le=1,
        description="each video must last at least this share of the other; otherwise the item is unscored",
    )


def median_scaled_abs_rel(pred: np.ndarray, ref: np.ndarray, eps: float = 1e-6) -> float:
    """``mean |s * pred - ref| / ref`` over pixels with ``ref > eps``, ``s = median(ref) / median(pred)``.

    The median ratio removes the unknown scale of monocular depth (median scaling, as in
    monocular-depth evaluation since Eigen et al.); the result is the absolute relative error.

    Raises:
        Unmeasurable: (a ``MetricInputError``) no valid pixel, or a non-positive prediction median:
            the runner stores NaN with the reason.
    """
    pred = np.asarray(pred, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if pred.shape != ref.shape:
        raise ValueError(f"depth maps differ in shape: {pred.shape} vs {ref.shape}")
    valid = ref > eps
    if not valid.any():
        raise Unmeasurable("the reference depth has no positive value")
    mp = float(np.median(pred[valid]))
    if mp <= 0:
        raise Unmeasurable("the generated frame's depth median is not positive; cannot scale it")
    s = float(np.median(ref[valid])) / mp
    return float(np.mean(np.abs(s * pred[valid] - ref[valid]) / ref[valid]))


def depth_accuracy(
    pred_maps: np.ndarray, ref_maps: np.ndarray, eps: float = 1e-6
) -> tuple[float, np.ndarray]:
    """Per-frame :func:`median_scaled_abs_rel` over ``(N, H, W)`` pairs, and their mean."""
    n = min(len(pred_maps), len(ref_maps))
    if n == 0:
        raise Unmeasurable("no frames to compare")
    per = np.array([median_scaled_abs_rel(pred_maps[i], ref_maps[i], eps) for i in range(n)])
    return float(per.mean()), per


@robophys_metric(
    "dc_depth_accuracy",
    family=Family.geometry,
    inputs={Input.video, Input.reference},
    description=(
        "Absolute relative error between monocular depth (Depth Anything V2 Small) of generated and "
        "reference frames after per-frame median scaling, averaged over frames paired by index (both at "
        "4 fps or the lower own rate, at most 16, 256x256). Lower is better."
    ),
    provider=Provider.model,
    config=DepthAccuracyConfig,
    note="estimator Depth Anything V2 Small (transformers); error = median-scaled AbsRel on its output maps",
    weights=(DEPTH,),
    version="3",  # videos framed unlike their reference, or under 16 px, unscored (v2: squashed and scored);
    # both read at one rate, at most both own rates (v2: each at fps or every frame, paired by index)
)
def dc_depth_accuracy(item: Item, config: DepthAccuracyConfig) -> Score:
    """RoboPhys-3D depth accuracy of the item against its reference episode.

    Depth maps are compared pixel by pixel, so the two videos must show one framing: a video whose
    aspect ratio differs from the reference's (a crop, padding, a wider view) is left unscored from the
    probes, as the frame-paired metrics leave it (:func:`~robojudge.metrics.robophys.reference.
    require_paired_framing`); both resized to one square, a 16:9 crop of a 4:3 scene put every depth
    on another pixel of the scene.
    """
    from robojudge.models import load_depth, predict_depth

    assert item.reference_video is not None  # the runner checks Input.reference
    sizes = dict(zip(("video_size", "reference_size"), map(size_text, require_paired_framing(item)),
                     strict=True))
    gen, ref, facts = depth_frames(item, config)
    net = load_depth(DEPTH, metric="dc_depth_accuracy")
    n = min(len(gen), len(ref))
    value, per = depth_accuracy(predict_depth(net, gen.frames[:n], config.batch_size),
                                predict_depth(net, ref.frames[:n], config.batch_size), config.eps)
    return Score(value=value, details={"frames": n, "max_frame": float(per.max()), **facts, **sizes})


def depth_frames(
    item: Item, config: DepthAccuracyConfig
) -> tuple[SampledFrames, SampledFrames, dict[str, Any]]:
    """The generated and reference frames :func:`dc_depth_accuracy` pairs by index, and what its row
    records of them (both spans, the rates: :meth:`~robojudge.metrics.robophys.reference.PairingRate.
    details`); read before the network loads.

    Both videos are read at one rate, ``fps`` or the lower own rate where that is lower
    (:func:`~robojudge.metrics.robophys.reference.pairing_rates`, warning when ``fps`` is lowered): asked
    for 4 fps, a 3-fps reference kept its frames 1/3 s apart while the clip gave 1/4 s, and the pairs
    drifted up to 0.9 s apart (version 3 on 2026-12-07 and before).

    Raises:
        Unmeasurable: either video gives fewer than 2 frames, or lasts less than ``min_coverage`` of
            the other (:func:`~robojudge.metrics._content.require_same_span`).
    """
    assert item.reference_video is not None
    rates = pairing_rates(item.video, item.reference_video, config.fps)
    report_warnings(Path(item.video), [n for n in (rates.note(),) if n is not None])
    size = (config.size, config.size)
    gen = sample_frames(item.video, fps=rates.fps, max_frames=config.max_frames, size=size)
    ref = sample_frames(item.reference_video, fps=rates.fps, max_frames=config.max_frames, size=size)
    # Frames are paired by index and spread over each video's own length, so both must last about as
    # long (a video cut short was compared as if complete).
    span = require_same_span(gen, ref, config.min_coverage)
    return gen, ref, {**span, **rates.details()}
