"""Motion quality after VBench (Huang et al., CVPR 2024), as RoboPhys-3D App. B.1.4 uses it.

VBench computes Dynamic Degree on RAFT flow; these functions take any Farneback settings (robojudge's
metrics run OpenCV's Farneback so they need no weights).
"""

from __future__ import annotations

import numpy as np

from robojudge.metrics.functional._flow import NATIVE_FLOW, FarnebackSettings, flow_function, top_magnitude
from robojudge.metrics.functional._image import frame_differences


def flicker_score(differences: np.ndarray) -> float:
    """VBench's temporal-flickering score ``(255 - mean_t MAE_t) / 255`` from the step MAEs.

    ``differences`` are the per-step mean absolute differences (:func:`frame_differences`).

    >>> flicker_score(np.array([10.0, 0.0]))  # (255 - 5) / 255
    0.9803921568627451
    """
    return (255.0 - float(np.mean(differences))) / 255.0


def temporal_flickering(frames: np.ndarray) -> float:
    """VBench's Temporal Flickering of ``(T, H, W[, C])`` uint8 frames: 1 is perfectly steady.

    ``(255 - mean_t mean|I_{t+1} - I_t|) / 255`` over every pixel and channel of consecutive frames
    (RoboPhys-3D App. B.1.4, citing VBench). Real motion lowers it too.

    >>> frames = np.stack([np.full((2, 3, 3), v, np.uint8) for v in (0, 10, 10)])
    >>> round(temporal_flickering(frames), 6)  # steps 10 and 0: (255 - 5) / 255
    0.980392
    """
    return flicker_score(frame_differences(frames))


def dynamic_threshold(short_side: int, threshold_at_256: float = 6.0) -> float:
    """VBench's motion threshold in px: 6 px for a 256 px short side, proportionally for others.

    >>> dynamic_threshold(64)
    1.5
    """
    return threshold_at_256 * short_side / 256.0


def dynamic_steps(frames: np.ndarray, top_fraction: float = 0.05, settings: FarnebackSettings = NATIVE_FLOW
                  ) -> np.ndarray:
    """Per-step motion scores of Dynamic Degree: the mean top-5% flow magnitude (:func:`top_magnitude`).

    ``frames`` are ``(T, H, W)`` uint8 grayscale, already thinned to about 8 fps as VBench does.

    >>> dynamic_steps(np.zeros((3, 16, 16), np.uint8)).tolist()
    [0.0, 0.0]
    """
    if frames.ndim != 3:
        raise ValueError(f"expected (T, H, W) grayscale frames, got shape {frames.shape}")
    flow_of = flow_function(settings, frames.shape)
    return np.array([top_magnitude(flow_of(a, b), top_fraction)
                     for a, b in zip(frames[:-1], frames[1:], strict=True)])


def is_dynamic(step_scores: np.ndarray, n_frames: int, short_side: int, *, threshold_at_256: float = 6.0,
               steps_per_16_frames: float = 4.0) -> bool:
    """VBench's decision: at least ``round(4 * n / 16)`` steps above ``6 * short_side / 256`` px.

    ``round`` is Python's (half to even), as in VBench. With no steps the video is not dynamic.

    >>> is_dynamic(np.array([7, 7, 7, 7] + [0] * 11), 16, 256)  # 4 of 15 steps above 6 px
    True
    >>> is_dynamic(np.array([7, 7, 7, 6] + [0] * 11), 16, 256)  # 6 is not above 6
    False
    """
    threshold = dynamic_threshold(short_side, threshold_at_256)
    needed = round(steps_per_16_frames * n_frames / 16.0)
    return len(step_scores) > 0 and int((step_scores > threshold).sum()) >= needed


def dynamic_degree(frames: np.ndarray, *, top_fraction: float = 0.05, threshold_at_256: float = 6.0,
                   steps_per_16_frames: float = 4.0, settings: FarnebackSettings = NATIVE_FLOW) -> float:
    """VBench's Dynamic Degree of one video, 1.0 (dynamic) or 0.0 (RoboPhys-3D App. B.1.4).

    ``frames`` are ``(T, H, W)`` uint8 grayscale at about 8 fps (VBench keeps every
    ``round(fps / 8)``-th frame). Each step scores the mean of its top 5% flow magnitudes; the video is
    dynamic when enough steps exceed the threshold (:func:`is_dynamic`). A model's value is the mean of
    these decisions over its videos.

    >>> dynamic_degree(np.zeros((4, 16, 16), np.uint8))  # nothing moves
    0.0
    """
    scores = dynamic_steps(frames, top_fraction, settings)
    dynamic = is_dynamic(scores, len(frames), min(frames.shape[1:3]), threshold_at_256=threshold_at_256,
                         steps_per_16_frames=steps_per_16_frames)
    return 1.0 if dynamic else 0.0
