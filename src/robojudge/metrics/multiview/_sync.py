"""Are the views of a rollout taken at the same instants? Lag between views from their motion over time.

Cross-view matches land mostly on the static scene (the table, the walls), whose geometry a view
running ``k`` frames late does not break; the arm and the objects, which would show it, are hard to
match between cameras tens of degrees apart. Their motion over time is easy to compare instead: every
view of one rollout sees the arm start, speed up and stop at the same instants. Per view, the motion
energy of each step (mean absolute gray difference of consecutive frames); per pair of views, the
shift in frames that correlates the two series best (Pearson) is the pair's lag. The reference view is
the one whose lags to the others add up least (the rig's consensus), and each view's offset is its lag
behind the reference, so one late view does not shift the others. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

ENERGY_SIDE = 64
"""Frames are reduced so the longer side has at most this many pixels before their motion is measured."""


def motion_energy(frames: np.ndarray) -> np.ndarray:
    """``(T - 1,)`` mean absolute difference of consecutive frames, gray levels (uint8 gray or RGB in)."""
    arr = np.asarray(frames)
    if arr.ndim == 4:
        arr = np.stack([cv2.cvtColor(np.ascontiguousarray(f), cv2.COLOR_RGB2GRAY) for f in arr])
    h, w = arr.shape[1:3]
    scale = ENERGY_SIDE / max(h, w)
    if scale < 1:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        arr = np.stack([cv2.resize(f, size, interpolation=cv2.INTER_AREA) for f in arr])
    g = arr.astype(np.float32)
    out: np.ndarray = np.abs(np.diff(g, axis=0)).mean(axis=(1, 2)).astype(np.float64)
    return out


def pair_lag(ea: np.ndarray, eb: np.ndarray, max_lag: int, margin: float = 0.05) -> tuple[int, float] | None:
    """How many steps view b runs behind view a (negative: ahead), and the correlation there.

    The shift in ``[-max_lag, max_lag]`` with the largest cross-correlation of the two series, each
    standardised over its whole length and the sum of products over the overlap divided by the full
    length (the usual biased estimate: a shift that leaves little overlap cannot win on a few steps
    that happen to agree). It counts only when it beats no shift by more than ``margin`` (else 0: a flat
    curve is no evidence of a lag). ``None`` when either view has no motion to compare.
    """
    n = min(len(ea), len(eb))
    a, b = ea[:n], eb[:n]
    if n < 3 or a.std() < 1e-9 or b.std() < 1e-9:
        return None
    za, zb = (a - a.mean()) / a.std(), (b - b.mean()) / b.std()
    curve: dict[int, float] = {}
    for d in range(-min(max_lag, n - 2), min(max_lag, n - 2) + 1):
        x, y = (za[: n - d], zb[d:]) if d >= 0 else (za[-d:], zb[: n + d])
        curve[d] = float(np.dot(x, y)) / n
    if not curve or 0 not in curve:
        return None
    best = max(curve, key=lambda d: (curve[d], -abs(d)))
    if curve[best] - curve[0] <= margin:
        return 0, curve[0]
    return best, curve[best]


def view_offsets(
    frames_by_view: Mapping[str, np.ndarray], max_lag: int = 8, margin: float = 0.05
) -> tuple[dict[str, float], dict[str, Any]]:
    """Each view's offset in frames behind the reference view (positive: late), and the pairwise lags.

    A view whose lag to the reference could not be measured (no motion to compare) counts as in step
    with it when it was measured against another view; views measured against none are left out of the
    offsets and named in the details.
    """
    energies = {n: motion_energy(f) for n, f in frames_by_view.items()}
    names = list(energies)
    lags: dict[tuple[str, str], int] = {}
    pairs: dict[str, Any] = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            found = pair_lag(energies[a], energies[b], max_lag, margin)
            if found is None:
                continue
            lags[(a, b)], lags[(b, a)] = found[0], -found[0]
            pairs[f"{a}-{b}"] = {"lag": found[0], "corr": found[1]}
    measured = sorted({a for a, _ in lags}, key=names.index)
    if not measured:
        return {}, {"pairs": pairs, "unmeasured": names}
    ref = min(measured, key=lambda r: sum(abs(lags[(r, u)]) for u in measured if (r, u) in lags))
    offsets = {v: float(lags.get((ref, v), 0)) for v in measured}
    return offsets, {"pairs": pairs, "reference": ref, "unmeasured": [v for v in names if v not in measured]}
