"""Dense optical flow (OpenCV Farneback) and the metrics built on it: warp error, motion magnitude.

RoboJudge (App. B.3) and RoboPhys-3D (App. B.1.4) compute these with RAFT; robojudge uses classical
Farneback flow so they run with no weights (values are close in spirit, not equal to RAFT's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np


class FarnebackSettings(Protocol):
    """Anything with the six Farneback settings as attributes: :class:`Farneback`, or a metric's config."""

    @property
    def pyr_scale(self) -> float: ...
    @property
    def levels(self) -> int: ...
    @property
    def winsize(self) -> int: ...
    @property
    def iterations(self) -> int: ...
    @property
    def poly_n(self) -> int: ...
    @property
    def poly_sigma(self) -> float: ...


@dataclass(frozen=True)
class Farneback:
    """Farneback settings: OpenCV's customary values (the papers do not list theirs).

    Pyramid scale 0.5 with 3 levels, a 15 px averaging window, 3 iterations per level, and a 5 px
    polynomial neighbourhood smoothed with sigma 1.2.
    """

    pyr_scale: float = 0.5
    levels: int = 3
    winsize: int = 15
    iterations: int = 3
    poly_n: int = 5
    poly_sigma: float = 1.2


#: The default settings, shared by every function here.
FARNEBACK = Farneback()


def _gray_sequence(frames: np.ndarray) -> None:
    if frames.ndim != 3:
        raise ValueError(f"expected (T, H, W) grayscale frames, got shape {frames.shape}")
    if len(frames) < 2:
        raise ValueError(f"needs at least 2 frames, got {len(frames)}")


def farneback_flow(prev: np.ndarray, nxt: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Flow ``F`` from ``prev`` to ``nxt`` (uint8 grayscale ``(H, W)``): ``(H, W, 2)`` float32 (x, y).

    ``prev(p) ~ nxt(p + F(p))``. Farneback (2003), "Two-frame motion estimation based on polynomial
    expansion", as implemented by ``cv2.calcOpticalFlowFarneback``.

    >>> f = np.zeros((32, 32), np.uint8)
    >>> farneback_flow(f, f).shape
    (32, 32, 2)
    """
    s = settings
    flow: np.ndarray = cv2.calcOpticalFlowFarneback(  # type: ignore[call-overload]
        prev, nxt, None, s.pyr_scale, s.levels, s.winsize, s.iterations, s.poly_n, s.poly_sigma, 0,
    )
    return flow


def flow_magnitude(flow: np.ndarray) -> np.ndarray:
    """Per-pixel length ``sqrt(u^2 + v^2)`` of a ``(H, W, 2)`` flow field, float64 ``(H, W)``.

    >>> flow_magnitude(np.array([[[3.0, 4.0]]])).tolist()
    [[5.0]]
    """
    magnitude: np.ndarray = np.sqrt((flow.astype(np.float64) ** 2).sum(axis=-1))
    return magnitude


def top_magnitude(flow: np.ndarray, fraction: float = 0.05) -> float:
    """Mean of the largest ``int(H * W * fraction)`` flow magnitudes (at least one pixel).

    VBench's per-step motion score for Dynamic Degree (Huang et al., CVPR 2024): the mean of the top
    5% of RAFT magnitudes; VBench takes no pixel when the share rounds to 0, robojudge takes one.

    >>> flow = np.zeros((10, 10, 2))
    >>> flow[0, :5] = (3.0, 4.0)  # five pixels of length 5 are the top 5% of 100
    >>> top_magnitude(flow, 0.05), top_magnitude(flow, 0.10)
    (5.0, 2.5)
    """
    mag = flow_magnitude(flow).ravel()
    k = max(1, int(mag.size * fraction))
    return float(np.partition(mag, mag.size - k)[mag.size - k:].mean())


def warp_by_flow(frame: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """Predict the next frame from ``frame`` and the forward flow: ``pred(p) = frame(p - F(p))``.

    Backward warping with the forward flow read at the target pixel, which is exact for locally
    constant flow; sampling is bilinear (``cv2.remap``) and border pixels are replicated. Returns
    float32 ``(H, W)``.

    >>> frame = np.arange(16, dtype=np.uint8).reshape(4, 4)
    >>> flow = np.zeros((4, 4, 2), np.float32)
    >>> flow[..., 0] = 1  # everything moved one pixel right
    >>> warp_by_flow(frame, flow)[0].tolist()
    [0.0, 0.0, 1.0, 2.0]
    """
    h, w = frame.shape
    gx, gy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    warped: np.ndarray = cv2.remap(
        frame.astype(np.float32), gx - flow[..., 0], gy - flow[..., 1], cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return warped


def warp_residuals(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Per-step ``e_t = mean |warp(G_t, F_t) - G_{t+1}|`` of a ``(T, H, W)`` uint8 sequence, ``(T - 1,)``.

    ``F_t`` is the Farneback flow from ``G_t`` to ``G_{t+1}`` and ``warp`` is :func:`warp_by_flow`.

    >>> frames = np.zeros((3, 16, 16), np.uint8)
    >>> warp_residuals(frames).tolist()
    [0.0, 0.0]
    """
    _gray_sequence(frames)
    out = np.empty(len(frames) - 1)
    for t in range(len(frames) - 1):
        flow = farneback_flow(frames[t], frames[t + 1], settings)
        out[t] = np.abs(warp_by_flow(frames[t], flow) - frames[t + 1].astype(np.float32)).mean()
    return out


def warp_error(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> float:
    """Optical-flow warp error, RoboJudge App. B.3: ``mean_t 1/(HW) ||warp(G_t, F_t) - G_{t+1}||_1``.

    The mean of :func:`warp_residuals` over the ``T - 1`` steps of a grayscale sequence. Lower means
    motion explains the change between frames; a brightness flicker is not motion and scores high.

    >>> frames = np.stack([np.full((16, 16), v, np.uint8) for v in (0, 40)])
    >>> warp_error(frames)
    40.0
    """
    return float(warp_residuals(frames, settings).mean())


def motion_magnitudes(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Per-step mean flow length ``m_t = 1/(HW) sum_p |F_t(p)|`` of a ``(T, H, W)`` uint8 sequence.

    >>> motion_magnitudes(np.zeros((3, 16, 16), np.uint8)).tolist()
    [0.0, 0.0]
    """
    _gray_sequence(frames)
    out = np.empty(len(frames) - 1)
    for t in range(len(frames) - 1):
        out[t] = flow_magnitude(farneback_flow(frames[t], frames[t + 1], settings)).mean()
    return out


def motion_magnitude(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> float:
    """Mean optical-flow magnitude in pixels per frame: the mean of :func:`motion_magnitudes`.

    RoboJudge App. B.3 (Optical-Flow Motion Magnitude) on 8 fps 256x256 frames, and RoboPhys-3D
    App. B.1.4's Flow Score (after EvalCrafter) at native rate and size; both with RAFT in the papers.

    >>> motion_magnitude(np.zeros((2, 16, 16), np.uint8))
    0.0
    """
    return float(motion_magnitudes(frames, settings).mean())
