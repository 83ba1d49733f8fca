"""Rollout depth: a rollout rendered as chunks, with kinematic failures that grow more likely chunk by chunk.

A long-horizon world model generates a clip chunk by chunk, each chunk conditioned on the last frames of
the one before; its errors compound with every re-conditioning, and RoboWorM reports KIVA against the
number of chunks per clip (paper 001, Table C4, Fig. 6c). The simulator has no model to re-condition,
so depth is staged: a rollout of depth ``d`` is cut into ``d`` chunks of (nearly) equal length, and chunk
``i`` (0-based) draws one kinematic failure, inside the chunk, with probability
``min(1, pa_rate * (i + 1) / FULL_AT)``: a quarter at the first chunk, certain from the fourth on. A deeper
rollout therefore has more failures, later ones more often. The chunk bounds are recorded
(``meta.chunks``); nothing else happens at a boundary (no seam is drawn).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FULL_AT = 4  # the chunk (1-based) from which a kinematic profile plants a failure in every chunk


def chunk_bounds(n_frames: int, depth: int) -> list[tuple[int, int]]:
    """``[start, stop)`` of ``depth`` consecutive chunks over ``n_frames`` frames (sizes differ by <= 1)."""
    if depth < 1 or n_frames < depth:
        raise ValueError(f"need 1 <= depth <= n_frames, got depth {depth} for {n_frames} frames")
    edges = [round(i * n_frames / depth) for i in range(depth + 1)]
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def chunk_rate(index: int, pa_rate: float) -> float:
    """Chance that chunk ``index`` (0-based) plants a kinematic failure."""
    return min(1.0, pa_rate * (index + 1) / FULL_AT)


def depth_of(depths: int | Sequence[int], episode: int) -> int:
    """The depth of episode ``episode``'s rollouts: ``depths`` itself, or ``depths[episode % len]``."""
    if isinstance(depths, int):
        return depths
    return int(depths[episode % len(depths)])


def check_depths(depths: int | Sequence[int] | None) -> tuple[int, ...] | None:
    """The depths as a tuple of ints >= 1, or None; a clear error for anything else."""
    if depths is None:
        return None
    seq = (depths,) if isinstance(depths, int) else tuple(depths)
    if not seq or any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1 for d in seq):
        raise ValueError(f"rollout_depth must be an int >= 1 or a non-empty list of them, got {depths!r}")
    return tuple(int(d) for d in seq)


def draw_chunk_failures(
    kinds: Sequence[str],
    severity: tuple[float, float],
    pa_rate: float,
    bounds: list[tuple[int, int]],
    rng: np.random.Generator,
) -> list[tuple[str, float, int]]:
    """(kind, severity, chunk index) of each kinematic failure drawn for a rollout cut at ``bounds``."""
    out = []
    for i in range(len(bounds)):
        if rng.random() < chunk_rate(i, pa_rate):
            out.append((str(rng.choice(list(kinds))), float(rng.uniform(*severity)), i))
    return out
