"""``S_move``: what moves in one view must move, at some depth along its ray, in every other view too.

Keypoints and colour regions rarely reach the parts that move: a grey arm gives few matches between
cameras far apart, and an object drawn into one view only is skipped by the colour matcher. Frame
differences reach them. At each step ``t -> t + 1`` every view's moving pixels form a mask. A moving
pixel of view a is explained when some point on its ray (the calibrated camera's back-projection,
depths sampled between ``near`` and ``far``) projects onto moving pixels of every other view that sees
it, and at least one view sees it: the same moving thing, seen by the whole rig. A camera that shakes or
drifts moves everywhere in its own view; an arm shown elsewhere or an object appearing in one view moves
where the others show nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from robojudge.metrics.multiview._geometry import intrinsics_for
from robojudge.robots import Camera


def moving_masks(frames: np.ndarray, levels: float, least: int) -> np.ndarray:
    """Per step ``t -> t + 1`` of gray ``(T, H, W)`` frames, the pixels whose level changes by more than
    ``levels``, opened by a 3x3 cross (lone pixels are noise); a step with fewer than ``least`` such pixels
    is left empty (compression, light flicker)."""
    g = frames.astype(np.int16)
    diff = np.abs(g[1:] - g[:-1]) > levels
    kernel = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
    out = np.zeros(diff.shape, dtype=bool)
    for i, d in enumerate(diff):
        m = cv2.morphologyEx(d.astype(np.uint8), cv2.MORPH_OPEN, kernel).astype(bool)
        if int(m.sum()) >= least:
            out[i] = m
    return out


def _gray(name: str, frames: Any) -> np.ndarray:
    arr = np.asarray(frames)
    if arr.dtype != np.uint8 or arr.ndim not in (3, 4):
        raise ValueError(f"view {name!r}: frames must be uint8 (T, H, W) or (T, H, W, 3); got {arr.dtype} "
                         f"{arr.shape}")
    if arr.ndim == 4:
        arr = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in arr])
    return arr


def moving_agreement(
    frames_by_view: Mapping[str, Any],
    cameras: Mapping[str, Camera],
    *,
    levels: float = 12.0,
    explain_levels: float = 6.0,
    least_share: float = 0.002,
    dilate: float = 0.025,
    near: float = 0.2,
    far: float = 5.0,
    depths: int = 96,
    sample: int = 200,
    hold: int = 1,
    beyond: float = 0.25,
    seed: int = 0,
) -> tuple[float, dict[str, Any]]:
    """``S_move`` in 0-1 and its details: per view, the share of its moving pixels (pooled over the steps,
    each step weighted by its moving pixel count) that the other views explain; the least over the views.

    Args:
        frames_by_view: view name -> every frame, ``(T, H, W)`` gray or ``(T, H, W, 3)`` RGB uint8, the
            same ``T`` for every view.
        cameras: view name -> calibrated camera (world-to-camera ``R``, ``t`` in metres; ``K`` scaled to
            the frames' size).
        levels: a pixel moves when its gray level changes by more than this between two frames.
        explain_levels: ... and it is explained by other views' pixels that change by more than this
            (lower: a grey arm over a grey floor changes less in one view than over a bright table in
            another).
        least_share: a step of a view moves when at least this share of its pixels does.
        dilate: the other views' moving masks are grown by this share of their longer side (at least
            1 px): calibration error, and the edges a frame difference leaves of a uniform part.
        near, far, depths: the depths (metres) tried along each ray, evenly spaced in inverse depth.
        sample: moving pixels tried per view and step, at most (drawn with ``seed``).
        hold: the other views' motion ``hold`` steps either side counts too (held or dropped frames).
        beyond: the other views' masks are extended past their edges by this share of their longer
            side, each edge pixel's motion carried outwards: an arm that leaves one view through its top
            edge while a camera above sees all of it moves on past that edge.

    NaN with ``details["unscored_reason"]`` when no view moves at any step.
    """
    names = list(frames_by_view)
    arrays = {n: _gray(n, frames_by_view[n]) for n in names}
    lengths = {n: len(a) for n, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"views are not synchronised: frame counts {lengths}")
    sizes = {n: (int(a.shape[2]), int(a.shape[1])) for n, a in arrays.items()}
    masks = {n: moving_masks(a, levels, max(4, round(least_share * a.shape[1] * a.shape[2])))
             for n, a in arrays.items()}
    weak = {n: moving_masks(a, min(levels, explain_levels), 1) for n, a in arrays.items()}
    intr = {n: intrinsics_for(cameras[n], *sizes[n], view=n) for n in names}
    rot = {n: np.asarray(cameras[n].R, dtype=np.float64) for n in names}
    tra = {n: np.asarray(cameras[n].t, dtype=np.float64).ravel() for n in names}
    grow = {n: np.ones((2 * r + 1, 2 * r + 1), np.uint8)
            for n in names for r in [max(1, round(dilate * max(sizes[n])))]}
    pads = {n: round(beyond * max(sizes[n])) for n in names}
    inv_d = np.linspace(1.0 / near, 1.0 / far, depths)
    steps = max(0, min(lengths.values()) - 1)
    rng = np.random.default_rng(seed)
    moved = {n: np.zeros(steps) for n in names}
    explained = {n: np.zeros(steps) for n in names}
    for t in range(steps):
        grown: dict[str, np.ndarray] = {}
        for n in names:
            near_t = np.asarray(weak[n][max(0, t - hold):t + hold + 1].any(axis=0), dtype=np.uint8)
            pad = pads[n]
            grown[n] = cv2.copyMakeBorder(cv2.dilate(near_t, grow[n]), pad, pad, pad, pad,
                                          cv2.BORDER_REPLICATE) > 0
        for a in names:
            ya, xa = np.nonzero(masks[a][t])
            if not len(xa):
                continue
            moved[a][t] = len(xa)
            pa = np.c_[xa, ya].astype(np.float64)
            if len(pa) > sample:
                pa = pa[rng.choice(len(pa), sample, replace=False)]
            rays = (rot[a].T @ np.linalg.inv(intr[a]) @ np.c_[pa, np.ones(len(pa))].T).T  # (N, 3), world
            centre = -rot[a].T @ tra[a]
            pts = centre + rays[:, None, :] / inv_d[None, :, None]  # (N, D, 3)
            ok = np.ones(pts.shape[:2], dtype=bool)
            seen = np.zeros(pts.shape[:2], dtype=bool)
            for b in names:
                if b == a:
                    continue
                cam = pts @ rot[b].T + tra[b]
                uvw = cam @ intr[b].T
                z = uvw[..., 2]
                front = z > 1e-9
                u = np.full(z.shape, -1.0)
                v = np.full(z.shape, -1.0)
                u[front] = np.floor(uvw[..., 0][front] / z[front] + 0.5)
                v[front] = np.floor(uvw[..., 1][front] / z[front] + 0.5)
                w, h = sizes[b]
                pad = pads[b]
                u, v = u + pad, v + pad
                inside = front & (u >= 0) & (u < w + 2 * pad) & (v >= 0) & (v < h + 2 * pad)
                hit = np.zeros(z.shape, dtype=bool)
                hit[inside] = grown[b][v[inside].astype(int), u[inside].astype(int)]
                ok &= hit | ~inside  # a view that does not see the point cannot contradict it
                seen |= inside
            explained[a][t] = len(xa) * float((ok & seen).any(axis=1).mean())
    per_view: dict[str, Any] = {}
    shares: list[float] = []
    for n in names:
        total = float(moved[n].sum())
        if total:
            share = float(explained[n].sum()) / total
            shares.append(share)
            per_view[n] = {"share": share, "moving_steps": int(np.count_nonzero(moved[n]))}
        else:
            per_view[n] = {"moving_steps": 0}
    if not shares:
        return math.nan, {"views": per_view, "unscored_reason": (
            f"no view moves at any step (no {least_share:g} of its pixels change by more than {levels:g} "
            "levels)")}
    return min(shares), {"views": per_view}
