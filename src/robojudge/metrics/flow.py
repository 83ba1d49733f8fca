"""Dense optical-flow metrics on classical (Farneback) flow: no weights needed."""

from __future__ import annotations

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import require_correspondence, require_motion
from robojudge.metrics._frames import GrayPreprocess, gray_sequence
from robojudge.metrics._registry import Family, Input, metric
from robojudge.metrics._score import Score
from robojudge.suite._schema import Item

ROBOJUDGE_B3 = "RoboJudge: Multimodal Language Models as Judges for Embodied Video Generation, App. B.3"


class FarnebackParams(BaseModel):
    """Farneback settings: OpenCV's customary defaults (pyramid scale 0.5, 3 levels, 15 px window,
    3 iterations, 5 px polynomial neighbourhood with sigma 1.2); the papers do not list them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    pyr_scale: float = Field(default=0.5, gt=0, lt=1)
    levels: int = Field(default=3, ge=1)
    winsize: int = Field(default=15, ge=3)
    iterations: int = Field(default=3, ge=1)
    poly_n: int = Field(default=5, ge=3)
    poly_sigma: float = Field(default=1.2, gt=0)


class FarnebackConfig(GrayPreprocess, FarnebackParams):
    """Preprocessing (RoboJudge App. B.3: 8 fps, 256x256, grayscale) and Farneback settings."""


def farneback_flow(prev: np.ndarray, nxt: np.ndarray, cfg: FarnebackParams) -> np.ndarray:
    """Flow ``F`` from ``prev`` to ``nxt``: ``(H, W, 2)`` float32 (x, y), ``prev(p) ~ nxt(p + F(p))``."""
    flow: np.ndarray = cv2.calcOpticalFlowFarneback(  # type: ignore[call-overload]
        prev, nxt, None, cfg.pyr_scale, cfg.levels, cfg.winsize, cfg.iterations, cfg.poly_n,
        cfg.poly_sigma, 0,
    )
    return flow


def warp_by_flow(frame: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """Predict the next frame from ``frame`` and the forward flow: ``pred(p) = frame(p - F(p))``.

    Backward warping with the forward flow read at the target pixel, which is exact for locally
    constant flow; sampling is bilinear and the border pixels are replicated.
    """
    h, w = frame.shape
    gx, gy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    return cv2.remap(
        frame.astype(np.float32), gx - flow[..., 0], gy - flow[..., 1], cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )


def warp_residuals(frames: np.ndarray, cfg: FarnebackParams) -> np.ndarray:
    """Per-step ``e_t = mean |warp(G_t, F_t) - G_{t+1}|`` for a ``(T, H, W)`` uint8 sequence."""
    out = np.empty(len(frames) - 1)
    for t in range(len(frames) - 1):
        flow = farneback_flow(frames[t], frames[t + 1], cfg)
        out[t] = np.abs(warp_by_flow(frames[t], flow) - frames[t + 1].astype(np.float32)).mean()
    return out


def motion_magnitudes(frames: np.ndarray, cfg: FarnebackParams) -> np.ndarray:
    """Per-step mean flow magnitude ``m_t = 1/(HW) sum sqrt(u^2 + v^2)`` in pixels of the resized frame."""
    out = np.empty(len(frames) - 1)
    for t in range(len(frames) - 1):
        flow = farneback_flow(frames[t], frames[t + 1], cfg)
        out[t] = np.sqrt((flow.astype(np.float64) ** 2).sum(axis=-1)).mean()
    return out


@metric(
    "flow_warp_error",
    family=Family.flow,
    inputs={Input.video},
    higher_is_better=False,
    native_range=(0.0, 255.0),
    version="2",
    citation=f"{ROBOJUDGE_B3} (Optical-Flow Warp Error)",
    description=(
        "Mean L1 residual between each frame and the previous frame warped by Farneback flow "
        "(8 fps, 256x256 gray), averaged over time. Lower means motion explains the change."
    ),
    config=FarnebackConfig,
)
def flow_warp_error(item: Item, config: FarnebackConfig) -> Score:
    """RoboJudge's optical-flow warp error: ``mean_t 1/(HW) ||G~_{t+1} - G_{t+1}||_1``.

    ``F_t = Farneback(G_t, G_{t+1})`` and ``G~_{t+1}`` is ``G_t`` warped by ``F_t`` (see
    :func:`warp_by_flow`). Lower is more consistent; correlations use the reversed sign. A still video
    would score the best value, 0, and is left unscored; frames that show nothing of each other are
    measured (their residual is large).
    """
    frames = gray_sequence(item, config)
    require_motion(frames)
    per_step = warp_residuals(frames, config)
    return Score(value=float(per_step.mean()), details={"frames": len(per_step) + 1,
                                                        "max_step": float(per_step.max())})


@metric(
    "flow_motion_magnitude_farneback",
    family=Family.flow,
    inputs={Input.video},
    higher_is_better=True,
    native_range=(0.0, None),
    version="2",
    citation=f"{ROBOJUDGE_B3} (Optical-Flow Motion Magnitude), with Farneback flow instead of RAFT",
    description=(
        "Mean optical-flow magnitude per pixel between consecutive frames (Farneback, 8 fps, 256x256 "
        "gray). Amount of motion, not quality: kept in its own direction, as in the paper."
    ),
    config=FarnebackConfig,
)
def flow_motion_magnitude_farneback(item: Item, config: FarnebackConfig) -> Score:
    """Mean over steps of ``m_t = 1/(HW) sum_{x,y} |F_t(x, y)|``, the offline stand-in for RAFT.

    The paper computes this with RAFT-Things; this id uses classical Farneback flow so it runs with
    no weights, and is a different metric from the RAFT one (values are not interchangeable). The
    paper keeps the raw direction for correlations, which ``higher_is_better=True`` expresses.

    A still video is measured (its value, about 0, is the metric's worst). Frames that show nothing of
    each other give large flow that is not motion: when more than half of the steps lack
    correspondence (:func:`~robojudge.metrics._content.require_correspondence`) the item is unscored.
    """
    frames = gray_sequence(item, config)
    lost = require_correspondence(frames)
    per_step = motion_magnitudes(frames, config)
    return Score(value=float(per_step.mean()), details={"frames": len(per_step) + 1,
                                                        "max_step": float(per_step.max()),
                                                        "steps_without_correspondence": lost})
