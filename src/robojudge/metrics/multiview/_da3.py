"""RIGIS with a feed-forward reconstruction network: Depth Anything 3 in place of the paper's VGGT-Omega.

RoboWorM (paper 001, Fig. 3b) reconstructs each synchronised frame set of a multi-view rollout with a
feed-forward network (VGGT-Omega) and scores the reconstruction: ``S_geo``, how consistent the views'
geometry is, and ``S_pose``, how stable the rig's estimated camera poses stay. robojudge has no port of
VGGT-Omega; Depth Anything 3 (:mod:`robojudge.models`) is the same kind of network (frames of several
views in, depth, intrinsics and camera poses of every frame out, in one pass), so it stands in, as
VGGT-1B does in :mod:`robojudge.metrics.multiview._vggt`. Unverified on the real checkpoint: tested on a
randomly initialised DA3-Small only (docs/rigis_validation.md).

Per instant ``t`` (one frame of every view, sampled at ``fps``, at most ``max_instants``) the network gives
each view ``v`` a depth map ``D_tv``, intrinsics ``K_tv`` and a camera-to-world pose ``P_tv`` (all in one
arbitrary scale per instant). Then:

* ``S_geo`` (cross-view consistency). For every ordered view pair ``(a, b)``, pixels of ``a`` on a grid
  (every ``stride``-th) are lifted with ``D_ta`` and ``K_ta``, moved to ``b`` with ``P_tb^-1 P_ta`` and
  projected with ``K_tb``. A point that lands inside ``b`` with depth ``z`` contradicts ``b`` when it lies
  in the free space ``b`` sees through: ``z < (1 - depth_tol) D_tb`` at that pixel (a point behind ``b``'s
  surface is only hidden there, which is no contradiction). ``S_geo`` = 1 - the share of contradicting
  points, pooled over the pairs and instants.
* ``S_pose`` (rig stability). For every view pair, the relative pose ``P_tb^-1 P_ta`` per instant is
  compared with the other instants': the error of two poses is the larger of the rotation angle between
  them and the angle between their translation directions (scale differs between instants), in degrees;
  a pair's spread is the median error of its instants against their medoid. Its score is
  ``exp(-max(0, spread - e0) / s)`` (``e0`` = 5, ``s`` = 10 degrees, the weights-free RIGIS's mapping).
  With a calibration the pair's accuracy (the same mapping of the mean error against the calibrated
  relative pose) is averaged in, as in the weights-free ``rigis_pose``. ``S_pose`` is the mean over pairs.
* ``S = w S_geo + (1 - w) S_pose``, ``w = 0.5``.

The estimator is any callable with :class:`~robojudge.metrics.robophys.rbg_reprojection.GeometryEstimator`'s
signature (frames in; ``depth``, ``intrinsics``, ``cam2world`` out), so tests and other networks plug in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics.multiview._geometry import (
    direction_angle_deg,
    relative_pose,
    rotation_angle_deg,
    tolerance_score,
)
from robojudge.robots import Camera

Estimator = Callable[..., Any]
"""``estimator(frames (N, H, W, 3) uint8, *, process_res, metric) -> geometry`` with ``depth`` (N, h, w),
``intrinsics`` (N, 3, 3) and ``cam2world`` (N, 4, 4)."""


class Da3RigisConfig(BaseModel):
    """Sampling, network resolution and the two parts' settings (defaults documented in the module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float | None = Field(default=4.0, gt=0, description="instants per second (null: every frame)")
    max_instants: int = Field(default=16, ge=2, description="uniform cap on the instants reconstructed")
    process_res: int = Field(default=504, ge=14, description="DA3 input: longer side in pixels")
    stride: int = Field(default=4, ge=1, description="grid step, in network pixels, of the points moved")
    depth_tol: float = Field(default=0.05, ge=0, lt=1, description="relative depth slack, free-space test")
    pose_free_deg: float = Field(default=5.0, ge=0, description="pose spread (degrees) that costs nothing")
    pose_scale_deg: float = Field(default=10.0, gt=0, description="pose spread beyond the free one per 1/e")
    geo_weight: float = Field(default=0.5, ge=0, le=1, description="w in S = w S_geo + (1 - w) S_pose")


@dataclass(frozen=True)
class RigGeometry:
    """The network's reconstruction of each instant: ``T`` instants of ``V`` views at ``h x w``."""

    views: list[str]
    depth: np.ndarray  # (T, V, h, w)
    intrinsics: np.ndarray  # (T, V, 3, 3)
    cam2world: np.ndarray  # (T, V, 4, 4)


def reconstruct_rig(
    frames_by_view: Mapping[str, np.ndarray], estimator: Estimator, *, process_res: int, metric: str
) -> RigGeometry:
    """Run ``estimator`` once per instant on that instant's frame of every view (one multi-view pass)."""
    names = list(frames_by_view)
    arrays = [np.asarray(frames_by_view[n]) for n in names]
    n = {len(a) for a in arrays}
    if len(n) != 1:
        counts = dict(zip(names, map(len, arrays), strict=True))
        raise ValueError(f"views are not synchronised: frame counts {counts}")
    depth, intr, c2w = [], [], []
    for t in range(n.pop()):
        geo = estimator(np.stack([a[t] for a in arrays]), process_res=process_res, metric=metric)
        k = np.asarray(geo.intrinsics, dtype=np.float64)
        depth.append(np.asarray(geo.depth, dtype=np.float64))
        intr.append(np.broadcast_to(k, (len(names), 3, 3)) if k.ndim == 2 else k)
        c2w.append(np.asarray(geo.cam2world, dtype=np.float64))
    return RigGeometry(names, np.stack(depth), np.stack(intr), np.stack(c2w))


def _relative(c2w_a: np.ndarray, c2w_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(R, t)`` with ``x_b = R x_a + t`` from two camera-to-world poses."""
    m = np.linalg.inv(c2w_b) @ c2w_a
    return m[:3, :3], m[:3, 3]


def pose_error_deg(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """The larger of the rotation angle between two relative poses and the angle of their translations."""
    rot = rotation_angle_deg(a[0] @ b[0].T)
    d = direction_angle_deg(a[1], b[1])
    return rot if math.isnan(d) else max(rot, d)


def _spread(poses: list[tuple[np.ndarray, np.ndarray]]) -> float:
    n = len(poses)
    if n < 2:
        return 0.0
    d = np.zeros((n, n))
    for i, j in combinations(range(n), 2):
        d[i, j] = d[j, i] = pose_error_deg(poses[i], poses[j])
    medoid = int(np.argmin(d.sum(axis=1)))
    return float(np.median(np.delete(d[medoid], medoid)))


def _mapped(err: float, cfg: Da3RigisConfig) -> float:
    return tolerance_score(err, cfg.pose_free_deg, cfg.pose_scale_deg)


def pose_stability(
    rig: RigGeometry, cfg: Da3RigisConfig, cameras: Mapping[str, Camera] | None = None
) -> tuple[float, dict[str, Any]]:
    """``S_pose`` in 0-1 and per-pair details (see the module doc)."""
    scores, pairs = [], {}
    for a, b in combinations(range(len(rig.views)), 2):
        poses = [_relative(rig.cam2world[t, a], rig.cam2world[t, b]) for t in range(len(rig.cam2world))]
        spread = _spread(poses)
        stability = _mapped(spread, cfg)
        info: dict[str, Any] = {"spread_deg": spread, "stability": stability}
        score = stability
        na, nb = rig.views[a], rig.views[b]
        if cameras is not None and na in cameras and nb in cameras:
            cal = relative_pose(cameras[na], cameras[nb])
            err = float(np.mean([pose_error_deg(p, cal) for p in poses]))
            accuracy = float(np.mean([_mapped(pose_error_deg(p, cal), cfg) for p in poses]))
            info.update(mean_error_deg=err, accuracy=accuracy)
            score = 0.5 * (stability + accuracy)
        info["score"] = score
        scores.append(score)
        pairs[f"{na}-{nb}"] = info
    return float(np.mean(scores)), {"pairs": pairs, "instants": len(rig.cam2world)}


def _contradictions(depth_a: np.ndarray, depth_b: np.ndarray, k_a: np.ndarray, k_b: np.ndarray,
                    a_to_b: np.ndarray, stride: int, tol: float) -> tuple[int, int]:
    """(points of ``a`` that land inside ``b``, those in ``b``'s free space)."""
    h, w = depth_a.shape
    v, u = np.mgrid[stride // 2:h:stride, stride // 2:w:stride]
    z = depth_a[v, u]
    ok = np.isfinite(z) & (z > 0)
    pix = np.stack([u[ok] + 0.5, v[ok] + 0.5, np.ones(int(ok.sum()))])
    pts = (np.linalg.inv(k_a) @ pix) * z[ok]
    pb = a_to_b[:3, :3] @ pts + a_to_b[:3, 3:4]
    front = pb[2] > 1e-9
    proj = k_b @ pb[:, front]
    ub, vb = proj[0] / proj[2], proj[1] / proj[2]
    hb, wb = depth_b.shape
    inside = (ub >= 0) & (ub < wb) & (vb >= 0) & (vb < hb)
    zb = pb[2, front][inside]
    surf = depth_b[vb[inside].astype(int), ub[inside].astype(int)]
    valid = np.isfinite(surf) & (surf > 0)
    bad = int(np.sum(zb[valid] < (1.0 - tol) * surf[valid]))
    return int(valid.sum()), bad


def geo_consistency(rig: RigGeometry, cfg: Da3RigisConfig) -> tuple[float, dict[str, Any]]:
    """``S_geo`` in 0-1 (1 when no view's points lie in another view's free space) and per-pair details."""
    landed: dict[str, int] = {}
    bad: dict[str, int] = {}
    for t in range(len(rig.depth)):
        for a, b in permutations(range(len(rig.views)), 2):
            key = f"{rig.views[a]}->{rig.views[b]}"
            a_to_b = np.linalg.inv(rig.cam2world[t, b]) @ rig.cam2world[t, a]
            n, k = _contradictions(rig.depth[t, a], rig.depth[t, b], rig.intrinsics[t, a],
                                   rig.intrinsics[t, b], a_to_b, cfg.stride, cfg.depth_tol)
            landed[key] = landed.get(key, 0) + n
            bad[key] = bad.get(key, 0) + k
    total = sum(landed.values())
    details: dict[str, Any] = {
        "pairs": {k: {"points": landed[k], "contradicting": bad[k]} for k in landed},
        "instants": len(rig.depth),
    }
    if total == 0:
        return math.nan, {"unscored_reason": "no view's points land inside another view", **details}
    return 1.0 - sum(bad.values()) / total, details


DA3_IDS = ("rigis_da3", "rigis_da3_geo", "rigis_da3_pose")
"""The metric ids of the DA3 variant: combined score, ``S_geo``, ``S_pose``."""


def rig_parts(
    rig: RigGeometry, cfg: Da3RigisConfig, cameras: Mapping[str, Camera] | None = None,
    ids: tuple[str, str, str] = DA3_IDS,
) -> dict[str, tuple[float, dict[str, Any]]]:
    """``{ids[0]: S, ids[1]: S_geo, ids[2]: S_pose}``, each ``(value, details)``, of any network's rig."""
    if len(rig.views) < 2:
        reason = {"unscored_reason": f"RIGIS needs at least two views; the item has {len(rig.views)}"}
        return {k: (math.nan, reason) for k in ids}
    geo = geo_consistency(rig, cfg)
    pose = pose_stability(rig, cfg, cameras)
    s = cfg.geo_weight * geo[0] + (1 - cfg.geo_weight) * pose[0]
    both = {"geo": geo[0], "pose": pose[0]}
    if math.isnan(s):
        both["unscored_reason"] = geo[1].get("unscored_reason", "no value")
    return {ids[0]: (s, both), ids[1]: geo, ids[2]: pose}


def rigis_da3_parts(
    rig: RigGeometry, cfg: Da3RigisConfig, cameras: Mapping[str, Camera] | None = None
) -> dict[str, tuple[float, dict[str, Any]]]:
    """``{"rigis_da3": S, "rigis_da3_geo": S_geo, "rigis_da3_pose": S_pose}``, each ``(value, details)``."""
    return rig_parts(rig, cfg, cameras, DA3_IDS)


# ---------------------------------------------------------------------------------------------------
# The metrics: an item's views and calibration in, one reconstruction shared by the three ids.


def _default_estimator(frames: np.ndarray, *, process_res: int, metric: str) -> Any:
    from robojudge.metrics.robophys.rbg_reprojection import da3_estimator

    return da3_estimator(frames, process_res=process_res, metric=metric)


#: The reconstruction network (DA3-BASE by default); replace it to plug in another one (tests do).
#: :mod:`robojudge.metrics.multiview._vggt` scores the same way with VGGT through :func:`score_rig_item`.
ESTIMATOR: Estimator = _default_estimator
_CACHE: dict[tuple[object, ...], RigGeometry] = {}


def clear_rig_cache() -> None:
    """Forget the shared reconstruction (tests, or after swapping :data:`ESTIMATOR`)."""
    _CACHE.clear()


def item_views(item: Any, cfg: Da3RigisConfig) -> dict[str, np.ndarray]:
    """The item's views sampled alike (``fps``, ``max_instants``), main view first: each view's own video,
    or the cells of a grid video (sampled once and cut, as the weights-free RIGIS reads it).

    Raises:
        MetricInputError: When the views' sampled frames do not come from the same source frames, or a
            grid does not divide the video.
    """
    from robojudge.metrics._errors import MetricInputError
    from robojudge.suite import main_view_name
    from robojudge.suite._views import GridError, split_grid, view_sources
    from robojudge.video import sample_frames

    sources = view_sources(item)
    main = main_view_name(item) if sources else None
    order = ([main] if main else []) + [v for v in sources if v != main]
    if item.grid is not None:
        sampled = sample_frames(str(item.video), fps=cfg.fps, max_frames=cfg.max_instants)
        try:
            cells = split_grid(sampled.frames, item.grid)
        except GridError as e:
            raise MetricInputError(f"field grid: {e}") from None
        return {name: cells[name] for name in order}
    out: dict[str, np.ndarray] = {}
    first = None
    for name in order:
        s = sample_frames(str(sources[name].path), fps=cfg.fps, max_frames=cfg.max_instants)
        if first is None:
            first = (name, s.indices)
        elif not np.array_equal(s.indices, first[1]):
            raise MetricInputError(
                f"views {first[0]!r} and {name!r} are not sampled at the same frames (frame counts or rates "
                "differ); run `robojudge suite validate` on the manifest"
            )
        out[name] = s.frames
    return out


def _rig(item: Any, cfg: Da3RigisConfig, metric: str, estimator: Estimator) -> RigGeometry:
    from robojudge.suite._views import view_sources
    from robojudge.video import FileFingerprint

    # A grid's cells share one file: the cell (and the layout's names) tell them apart.
    sources = sorted((n, src.path, src.cell) for n, src in view_sources(item).items())
    key = (tuple((n, str(p), cell, FileFingerprint.of(str(p))) for n, p, cell in sources), cfg.fps,
           cfg.max_instants, cfg.process_res, estimator)
    if key not in _CACHE:
        # One item's reconstruction per network at a time: an item's three ids of one network run one
        # after the other, so a newer item (or setting) replaces that network's entry.
        for old in [k for k in _CACHE if k[-1] is estimator]:
            del _CACHE[old]
        _CACHE[key] = reconstruct_rig(item_views(item, cfg), estimator, process_res=cfg.process_res,
                                      metric=metric)
    return _CACHE[key]


def score_rig_item(item: Any, cfg: Da3RigisConfig, metric: str, *, estimator: Estimator,
                   ids: tuple[str, str, str]) -> Any:
    """The :class:`~robojudge.metrics._score.Score` of ``metric`` (one of ``ids``) for ``item``, with the rig
    reconstructed by ``estimator`` (shared by the three ids, see :func:`clear_rig_cache`).

    Raises:
        MetricInputError: The item's ``calibration`` cannot be read or has no camera for one of its views
            (names compared exactly, as the weights-free RIGIS does; checked before the network runs), or
            its views cannot be read alike (:func:`item_views`).
    """
    from robojudge.metrics._score import Score
    from robojudge.metrics.multiview._item import item_cameras
    from robojudge.suite._views import view_sources

    names = list(view_sources(item))
    if len(names) < 2:
        return Score(value=math.nan, details={
            "unscored_reason": f"RIGIS needs at least two views; the item has {len(names)}"})
    # A calibration that lacks a view (or names it in another case) would leave that view's pairs
    # without their accuracy term, and a view that disagrees with the rig would look steady.
    cameras = item_cameras(item, names) if item.calibration else None
    value, details = rig_parts(_rig(item, cfg, metric, estimator), cfg, cameras, ids)[metric]
    return Score(value=value, details=details)


def score_item(item: Any, cfg: Da3RigisConfig, metric: str) -> Any:
    """The :class:`~robojudge.metrics._score.Score` of ``metric`` (one of the three DA3 ids) for ``item``."""
    return score_rig_item(item, cfg, metric, estimator=ESTIMATOR, ids=DA3_IDS)


def _register() -> None:
    from robojudge.metrics.multiview._rig_metrics import register_rig_metrics
    from robojudge.models import DA3_BASE

    register_rig_metrics(
        DA3_IDS,
        network="Depth Anything 3",
        common=("Depth Anything 3 (Base) reconstructs each synchronised frame set (one frame per view, "
                "4 fps, at most 16 instants, longer side 504) in place of RoboWorM's VGGT-Omega; unverified "
                "on the real checkpoint. "),
        citation="RoboWorM (paper 001), Fig. 3b, App. D; Depth Anything 3 as the reconstruction network",
        config=Da3RigisConfig,
        weights=(DA3_BASE.name,),
        score=score_item,
        # v1: without main_view, the first view listed went first (now the view whose file is video)
        version="2",
    )


_register()
