"""Frame-paired fidelity to the reference video: PSNR and SSIM (RoboPhys-3D App. B.1.1).

Both metrics read the generated video and ``Item.reference_video`` the same way (see
:func:`paired_frames`), so within one item the pair is decoded once and shared.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item
from robojudge.video import probe_video, sample_frames


class PairedConfig(BaseModel):
    """How generated and reference frames are paired."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float | None = Field(
        default=None,
        gt=0,
        description="common sampling rate; None: the lower of the two videos' own frame rates",
    )


def paired_frames(item: Item, fps: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Generated and reference RGB frames paired in time, both ``(N, H, W, 3)`` uint8.

    Both videos are sampled at one rate (``fps``, or the lower of their native rates, which keeps
    every frame when they agree); generated frames are resized to the reference's size; the longer
    sequence is truncated to the shorter one.

    Raises:
        MetricInputError: When the item has no reference video.
    """
    if not item.reference_video:
        raise MetricInputError("item has no reference_video to compare against")
    rate = fps if fps is not None else min(probe_video(item.video).fps, probe_video(item.reference_video).fps)
    ref = sample_frames(item.reference_video, fps=rate, max_frames=None).frames
    h, w = ref.shape[1:3]
    gen = sample_frames(item.video, fps=rate, max_frames=None, size=(w, h)).frames
    n = min(len(ref), len(gen))
    return gen[:n], ref[:n]


class PsnrConfig(PairedConfig):
    """Pairing settings and the cap that stands in for the infinite PSNR of identical frames."""

    max_db: float = Field(default=100.0, gt=0, description="per-frame PSNR cap in dB (identical frames)")


def psnr(gen: np.ndarray, ref: np.ndarray, max_db: float = 100.0) -> float:
    """``10 log10(255^2 / MSE)`` over all pixels and channels of one frame, capped at ``max_db``.

    Matches ``skimage.metrics.peak_signal_noise_ratio(ref, gen, data_range=255)`` below the cap;
    identical frames (MSE 0, PSNR infinite) give ``max_db``.
    """
    mse = float(np.mean((gen.astype(np.float64) - ref.astype(np.float64)) ** 2))
    if mse == 0.0:
        return max_db
    return min(10.0 * math.log10(255.0**2 / mse), max_db)


@robophys_metric(
    "iq1_psnr",
    family=Family.reference,
    inputs={Input.video, Input.reference},
    description=(
        "Peak signal-to-noise ratio (data range 255, RGB) between each generated frame and the "
        "reference frame at the same time, averaged over frames; capped at 100 dB per frame."
    ),
    config=PsnrConfig,
)
def iq1_psnr(item: Item, config: PsnrConfig) -> Score:
    """Mean per-frame PSNR against the reference video (RoboPhys-3D App. B.1.1).

    Per-frame PSNR is averaged (not the PSNR of the pooled MSE), as the paper scores "each generated
    frame and its ground-truth counterpart". The cap only matters for (near-)identical frames; any
    value at or above 50 dB normalizes to 1 (App. B.5.3, eq. 6).
    """
    gen, ref = paired_frames(item, config.fps)
    per_frame = np.array([psnr(g, r, config.max_db) for g, r in zip(gen, ref, strict=True)])
    return Score(
        value=float(per_frame.mean()),
        details={"frames": len(per_frame), "min_frame": float(per_frame.min()),
                 "capped_frames": int((per_frame >= config.max_db).sum())},
    )


class SsimConfig(PairedConfig):
    """Pairing settings and the SSIM window (Wang et al. 2004 by default)."""

    gray: bool = Field(default=False, description="compare BT.601 luma instead of RGB channels")
    gaussian_weights: bool = Field(
        default=True, description="11x11 Gaussian window, sigma 1.5 (Wang et al.); False: 7x7 uniform"
    )


def ssim(gen: np.ndarray, ref: np.ndarray, *, gaussian_weights: bool = True) -> float:
    """SSIM of one frame pair with skimage: data range 255, RGB channels averaged (``channel_axis``).

    With ``gaussian_weights`` it uses the original paper's settings (Gaussian sigma 1.5, population
    covariance); otherwise skimage's defaults (7x7 uniform window, sample covariance).

    Raises:
        MetricInputError: When a frame is smaller than the window.
    """
    from skimage.metrics import structural_similarity

    win = 11 if gaussian_weights else 7
    if min(ref.shape[:2]) < win:
        h, w = ref.shape[:2]
        raise MetricInputError(f"frames of {w}x{h} are smaller than the {win}px SSIM window")
    kw: dict[str, object] = {"gaussian_weights": True, "sigma": 1.5, "use_sample_covariance": False}
    channel_axis = -1 if ref.ndim == 3 else None
    value = structural_similarity(  # type: ignore[no-untyped-call]
        ref, gen, data_range=255, channel_axis=channel_axis, **(kw if gaussian_weights else {})
    )
    return float(value)


@robophys_metric(
    "iq1_ssim",
    family=Family.reference,
    inputs={Input.video, Input.reference},
    description=(
        "Structural similarity (Wang et al. 2004: Gaussian window sigma 1.5, RGB channels averaged) "
        "between each generated frame and the reference frame at the same time, averaged over frames."
    ),
    config=SsimConfig,
)
def iq1_ssim(item: Item, config: SsimConfig) -> Score:
    """Mean per-frame SSIM against the reference video (RoboPhys-3D App. B.1.1).

    Identical videos score exactly 1. SSIM can dip below 0 for anti-correlated frames; such values are
    kept as computed (the paper's [0, 1] range describes realistic videos).
    """
    import cv2

    gen, ref = paired_frames(item, config.fps)
    if config.gray:
        gen = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in gen])
        ref = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in ref])
    per_frame = np.array(
        [ssim(g, r, gaussian_weights=config.gaussian_weights) for g, r in zip(gen, ref, strict=True)]
    )
    details = {"frames": len(per_frame), "min_frame": float(per_frame.min())}
    return Score(value=float(per_frame.mean()), details=details)
