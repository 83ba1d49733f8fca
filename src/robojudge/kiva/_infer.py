"""Running a trained reader on frames, with the five test-time-augmented candidates averaged.

The candidates, all on the ``size x size`` frames the reader was trained on:

1. the frames as they are;
2. and 3. shifted 2 px right and 2 px left (edge pixels repeated), the shift subtracted from the
   predicted x afterwards;
4. and 5. brightness times 1.1 and times 0.9 (clipped to [0, 1]).

Positions are the mean of the five; visibility is the mean of the five probabilities, above 0.5; a
keypoint's confidence (:func:`predict_confident`) is the mean of the five heatmaps' mass near their peak.
Training draws shifts of up to 2 px and brightness of +-10% (see :mod:`robojudge.kiva._train`), so each
candidate is an input of the kind the reader has seen, and their disagreement is reader noise that the
average removes before jerk (a third difference, which amplifies noise) is measured.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch.nn import functional as F

from robojudge.kiva._net import KeypointReader, ReaderEnsemble

SHIFT = 2
CANDIDATES: tuple[tuple[int, float], ...] = ((0, 1.0), (SHIFT, 1.0), (-SHIFT, 1.0), (0, 1.1), (0, 0.9))
"""(horizontal shift in pixels, brightness factor) of each test-time candidate."""


def context_offsets(context: int) -> range:
    """Frame offsets stacked around the frame read: ``-1, 0, 1`` for three frames."""
    return range(-(context // 2), context - context // 2)


def stack_context(frames: np.ndarray, index: np.ndarray, context: int) -> np.ndarray:
    """``(N, S, S, 3 * context)`` uint8: each indexed frame with its neighbours (clamped at the ends)."""
    n = len(frames)
    cols = [frames[np.clip(index + o, 0, n - 1)] for o in context_offsets(context)]
    return np.concatenate(cols, axis=-1)


def to_tensor(stacked: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(stacked)).permute(0, 3, 1, 2).float().div_(255.0)


def shift_x(x: torch.Tensor, dx: int) -> torch.Tensor:
    """Content moved ``dx`` pixels right (left when negative), the exposed edge repeated."""
    if dx == 0:
        return x
    w = x.shape[-1]
    padded = F.pad(x, (abs(dx), abs(dx), 0, 0), mode="replicate")
    start = abs(dx) - dx
    return padded[..., start : start + w]


def predict(
    net: KeypointReader | ReaderEnsemble,
    frames: np.ndarray,
    context: int,
    batch_size: int = 32,
    candidates: Sequence[tuple[int, float]] = CANDIDATES,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(T, K, 2)`` (pixels of the ``S x S`` frames) and visibility probabilities ``(T, K)``."""
    pos, vis, _ = predict_confident(net, frames, context, batch_size, candidates)
    return pos, vis


@torch.no_grad()
def predict_confident(
    net: KeypointReader | ReaderEnsemble,
    frames: np.ndarray,
    context: int,
    batch_size: int = 32,
    candidates: Sequence[tuple[int, float]] = CANDIDATES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`predict`, plus each keypoint's confidence ``(T, K)``: the candidates' mean heatmap mass within
    one cell of the peak (:func:`~robojudge.kiva._net.peak_mass`)."""
    net.eval()
    device = next(net.parameters()).device
    pos_out, vis_out, conf_out = [], [], []
    for lo in range(0, len(frames), batch_size):
        idx = np.arange(lo, min(lo + batch_size, len(frames)))
        x = to_tensor(stack_context(frames, idx, context)).to(device)
        pos = torch.zeros(len(idx), net.keypoints, 2, device=device)
        vis = torch.zeros(len(idx), net.keypoints, device=device)
        conf = torch.zeros(len(idx), net.keypoints, device=device)
        for dx, gain in candidates:
            xi = shift_x(x, dx)
            if gain != 1.0:
                xi = (xi * gain).clamp_(0.0, 1.0)
            p, v, c = net.read_confident(xi)
            p = p.clone()
            p[..., 0] -= dx
            pos += p
            vis += torch.sigmoid(v)
            conf += c
        pos_out.append((pos / len(candidates)).cpu().numpy())
        vis_out.append((vis / len(candidates)).cpu().numpy())
        conf_out.append((conf / len(candidates)).cpu().numpy())
    return (np.concatenate(pos_out).astype(np.float64), np.concatenate(vis_out).astype(np.float64),
            np.concatenate(conf_out).astype(np.float64))
