"""RIGIS without network weights, for calibrated rigs: pure functions of synchronised frames and cameras.

RoboWorM (paper 001, Fig. 3b) scores a multi-view rollout by two parts: geometric consistency across the
views, ``S_geo``, and the stability of the rig's camera poses, ``S_pose``, joined into one score ``S``.
The paper reconstructs each synchronised frame set with a feed-forward network; here the known
calibration takes the network's place (docs/rigis.md):

* ``S_geo = S_epi * S_sync * S_move``. ``S_epi``: SIFT matches between each pair of views at the same
  instant should satisfy the epipolar constraint of the calibrated pair; per pair, the matches within
  ``tau`` pixels (Sampson distance) of it, against the most that any relative pose estimated from the
  same matches explains; the mean over the pairs. ``S_sync``: whether the views show the same instants
  (their motion over time, :mod:`robojudge.metrics.multiview._sync`). ``S_move``: whether what moves in
  each view moves where the other views' rays say it should
  (:mod:`robojudge.metrics.multiview._moving`).
* ``S_pose``: per pair and instant (or group of instants, when matches are few), the relative pose
  estimated from the matches (essential matrix and plane homography) is compared with the calibrated
  one (accuracy), and the estimates of a pair over time with each other (stability: a fixed rig's
  relative pose does not change). Each is an angle error in degrees mapped to 0-1 by
  ``exp(-max(0, e - e0) / s)``; ``S_pose`` is the mean over the pairs of the mean of the two.
* ``S = w S_geo + (1 - w) S_pose`` (the paper gives no formula; ``w = 0.5``).

Each function returns ``(score, details)``; the score is NaN, with ``details["unscored_reason"]``, when
the views give nothing to measure (fewer than two views, a blank view, a still rollout, too few
matches).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics import _content
from robojudge.metrics.multiview._blobs import blob_matches, colour_blobs
from robojudge.metrics.multiview._features import Features, detect, match, to_gray
from robojudge.metrics.multiview._geometry import (
    direction_angle_deg,
    fundamental,
    intrinsics_for,
    relative_pose,
    rotation_angle_deg,
    sampson_distance,
    skew,
    tolerance_score,
)
from robojudge.metrics.multiview._moving import moving_agreement
from robojudge.metrics.multiview._still import view_stillness
from robojudge.metrics.multiview._sync import view_offsets
from robojudge.robots import Camera

BLANK_STD = 2.0
"""A view whose every frame has a gray standard deviation at or below this (levels of 255) is blank."""

STILL_LEVELS = _content.STILL_LEVELS
"""As :data:`robojudge.metrics._content.STILL_LEVELS`: no 8x8 block mean of any view moves more than this,
past a change of the whole view's brightness and contrast (:func:`robojudge.metrics._content.is_still`)."""


class RigisParams(BaseModel):
    """How the weights-free RIGIS measures (defaults documented in docs/rigis.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ratio: float = Field(default=0.7, gt=0, lt=1, description="Lowe's ratio test for putative matches")
    contrast_threshold: float = Field(default=0.01, gt=0, description="SIFT contrast threshold")
    max_features: int = Field(default=1000, ge=16, description="SIFT keypoints kept per frame, strongest")
    min_matches: int = Field(default=12, ge=8, description="matches a view pair needs at one instant")
    min_share: float = Field(
        default=0.6, ge=0, le=1, description="share of an instant's matches a pose must explain to measure it"
    )
    tau: float = Field(
        default=0.01, gt=0, description="epipolar tolerance, share of the longer image side (at least 1 px)"
    )
    pose_free_deg: float = Field(default=5.0, ge=0, description="pose error (degrees) that costs nothing")
    pose_scale_deg: float = Field(default=10.0, gt=0, description="pose error beyond the free one per 1/e")
    pair_matches: int = Field(
        default=24, ge=8, description="keypoint matches a pair must pool over its measured instants"
    )
    pose_matches: int = Field(
        default=40, ge=8, description="matches pooled (over consecutive instants) per pose estimate"
    )
    support: float = Field(
        default=0.9, gt=0, le=1, description="a pose hypothesis needs this share of the best one's inliers"
    )
    geo_weight: float = Field(default=0.5, ge=0, le=1, description="w in S = w S_geo + (1 - w) S_pose")
    blob_tau: float = Field(
        default=0.03, gt=0, description="colour-region tolerance, share of the longer side (at least 2 px)"
    )
    blob_area: float = Field(default=0.0005, ge=0, description="smallest colour region, share of the image")
    blob_min_matches: int = Field(default=1, ge=1, description="colour-region matches a pair needs")
    max_lag: int = Field(default=8, ge=1, description="largest lag between views looked for, frames")
    lag_margin: float = Field(
        default=0.05, ge=0, description="correlation a lag must gain over no lag to count"
    )
    lag_free: float = Field(default=1.0, ge=0, description="lag (frames) that costs nothing")
    lag_scale: float = Field(default=3.0, gt=0, description="lag beyond the free one per 1/e")
    still: bool = Field(
        default=True, description="read each camera's stillness from its own view (a rig fixed in the world)"
    )
    still_tau: float = Field(
        default=0.005, gt=0, description="in-view match tolerance, share of the longer side (at least 1 px)"
    )
    still_matches: int = Field(default=8, ge=4, description="in-view matches that read an instant")
    still_cover: float = Field(
        default=0.1, ge=0, le=1, description="share of the image a moved scene's matches must span"
    )
    still_free_deg: float = Field(default=0.5, ge=0, description="camera turn (degrees) that costs nothing")
    still_scale_deg: float = Field(default=2.0, gt=0, description="camera turn beyond the free one per 1/e")
    move: bool = Field(default=True, description="S_geo times S_move (moving parts agree across views)")
    move_levels: float = Field(default=12.0, gt=0, description="gray change (levels) that makes a pixel move")
    move_explain_levels: float = Field(
        default=6.0, gt=0, description="gray change (levels) of another view's pixel that explains one"
    )
    move_dilate: float = Field(
        default=0.025, ge=0, description="other views' moving masks grown by this share of the longer side"
    )
    move_near: float = Field(default=0.2, gt=0, description="nearest depth (metres) tried along a moving ray")
    move_far: float = Field(default=5.0, gt=0, description="farthest depth (metres) tried along a moving ray")


def _as_frames(name: str, frames: Any) -> np.ndarray:
    arr = np.asarray(frames)
    if arr.dtype != np.uint8 or arr.ndim not in (3, 4) or (arr.ndim == 4 and arr.shape[-1] != 3):
        raise ValueError(f"view {name!r}: frames must be uint8 (T, H, W) or (T, H, W, 3); got {arr.dtype} "
                         f"{arr.shape}")
    return arr


def check_rig(frames_by_view: Mapping[str, Any], cameras: Mapping[str, Camera],
              timing: Mapping[str, Any] | None = None) -> str | None:
    """Why these views give RIGIS nothing to measure, or ``None`` when they can be measured.

    Not measurable: fewer than two views, a view without frames, a blank view, a view that shows
    nothing of itself from one frame to the next (more than half of its consecutive frames' block means
    correlate below :data:`robojudge.metrics._content.MIN_CORRELATION`, as in
    :func:`robojudge.metrics._content.require_correspondence`: noise), read on ``timing`` (every frame
    of each view, as :func:`rigis_geo` takes it; not checked without it: instants spread over the video
    can be far enough apart for a fast motion to change most of a view), and a rig whose every view is
    still.

    Raises:
        ValueError: frames of the wrong type or shape, views of different lengths, or a view without
            a camera (these are errors of the input, not properties of the rollout).
    """
    names = list(frames_by_view)
    if len(names) < 2:
        return f"RIGIS needs at least two views; the item has {len(names)}"
    missing = [n for n in names if n not in cameras]
    if missing:
        raise ValueError(f"no camera for view(s) {missing} in the calibration (it has {sorted(cameras)})")
    arrays = {n: _as_frames(n, frames_by_view[n]) for n in names}
    lengths = {n: len(a) for n, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"views are not synchronised: frame counts {lengths}")
    if not min(lengths.values()):
        return "the views hold no frames"
    grays = {n: np.stack([to_gray(f) for f in a]) for n, a in arrays.items()}
    blank = [n for n, g in grays.items() if max(float(f.std()) for f in g) <= BLANK_STD]
    if blank:
        return (f"view(s) {blank} are blank (no frame has a gray standard deviation above {BLANK_STD:g} "
                "levels): nothing to match")
    unreadable: dict[str, tuple[int, int]] = {}
    for n in names:
        steps = None if timing is None else _steps_lost(np.asarray(timing[n]))
        if steps is not None:
            unreadable[n] = steps
    if unreadable:
        said = ", ".join(f"{n} {lost} of {steps}" for n, (lost, steps) in unreadable.items())
        return (f"view(s) {list(unreadable)} show nothing of themselves from one frame to the next ({said} "
                f"consecutive frame pairs correlate below {_content.MIN_CORRELATION:g}, as they are and "
                "after the translation that aligns them best): a view of noise is no view of the scene, "
                "and the other views alone cannot tell whether the rig holds")
    if all(_still(g) for g in grays.values()):
        return (f"every view is still (no {_content.BLOCK}x{_content.BLOCK} block moves by more than "
                f"{STILL_LEVELS:g} levels, past a change of the view's brightness and contrast): a frozen "
                "rollout is not scored")
    return None


def _steps_lost(frames: np.ndarray) -> tuple[int, int] | None:
    """How many of a view's consecutive frame pairs show nothing of each other, and of how many pairs,
    where more than half do (the rule of :func:`robojudge.metrics._content.require_correspondence`);
    ``None`` otherwise."""
    if len(frames) < 2:
        return None
    corr = _content.step_correlations(frames)
    lost = int((corr < _content.MIN_CORRELATION).sum())  # NaN (a flat frame) compares False
    return (lost, len(corr)) if 2 * lost > len(corr) else None


def _still(gray: np.ndarray) -> bool:
    """Whether a view's gray frames are still (:func:`robojudge.metrics._content.is_still`)."""
    return len(gray) < 2 or _content.is_still(gray)


@dataclass
class Instant:
    """One view pair at one instant: its matches, and how well poses explain them."""

    t: int
    matches: int
    calibrated: int  # matches within tau of the calibrated pair's epipolar geometry
    best: int  # matches the best-supported pose explains (the calibrated one included)
    median_px: float  # median Sampson distance of the matches under the calibrated F, pixels
    na: np.ndarray  # the matches in normalised camera coordinates, view a (N, 2)
    nb: np.ndarray  # and view b
    thr: float  # tau in normalised coordinates


@dataclass
class PairResult:
    """What one view pair gave: its measured instants, and how many instants it could not measure."""

    a: str
    b: str
    instants: list[Instant] = field(default_factory=list)
    skipped: int = 0
    # Colour-region matches at each instant: (matches, consistent); read when keypoints are too few.
    blobs: list[tuple[int, int]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.a}-{self.b}"

    def keypoints_ok(self, p: RigisParams) -> bool:
        """Whether the measured instants pool enough keypoint matches to judge the pair by them (one
        instant of a dozen matches may be a coincidence of wrong ones)."""
        return sum(i.matches for i in self.instants) >= p.pair_matches

    def blob_counts(self) -> tuple[int, int]:
        """Colour-region matches over the instants, and how many of them are consistent."""
        return sum(n for n, _ in self.blobs), sum(c for _, c in self.blobs)


@dataclass
class RigAnalysis:
    """Every view pair of a rig, measured at every instant (:func:`analyse_rig`)."""

    views: list[str]
    pairs: list[PairResult]
    n_frames: int
    # Each view's keypoints per instant, frame size (width, height) and focal length (pixels): what
    # the stillness of each camera is read from (:mod:`robojudge.metrics.multiview._still`).
    features: dict[str, list[Features]] = field(default_factory=dict)
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    focal: dict[str, float] = field(default_factory=dict)


def tolerance_px(size: tuple[int, int], p: RigisParams) -> float:
    """The epipolar tolerance ``tau`` in pixels for a view of ``size`` (width, height)."""
    return max(1.0, p.tau * max(size))


def _support(r: np.ndarray, t: np.ndarray, na: np.ndarray, nb: np.ndarray, thr: float) -> int:
    """How many matches (normalised coordinates) lie within ``thr`` of the epipolar geometry of ``(r, t)``."""
    if float(np.linalg.norm(t)) < 1e-9:
        return 0
    return int(np.sum(sampson_distance(skew(np.asarray(t, dtype=np.float64).ravel()) @ r, na, nb) <= thr))


def _pose_hypotheses(
    na: np.ndarray, nb: np.ndarray, thr: float
) -> tuple[list[tuple[np.ndarray, np.ndarray]], int]:
    """Relative poses ``(R, t)`` estimated from the matches (normalised coordinates), and the essential
    matrix's RANSAC inlier count.

    The essential matrix (RANSAC, then the pose that puts the points in front of both cameras) gives one;
    when most matches lie on one plane (a table top) a second pose explains them as well, so the
    physically valid decompositions of the plane's homography are candidates too.
    """
    eye = np.eye(3)
    cands: list[tuple[np.ndarray, np.ndarray]] = []
    cv2.setRNGSeed(0)
    try:
        e, mask = cv2.findEssentialMat(na, nb, eye, method=cv2.RANSAC, prob=0.999, threshold=thr)
    except cv2.error:
        # OpenCV 5.1's five-point solver asserts on some near-degenerate samples (its polynomial's
        # leading coefficient near 0) where 5.0 returns a model or none: treat it as none found
        # (docs/rigis_validation.md, "OpenCV 5.1").
        e, mask = None, None
    # no model: no inliers (OpenCV may leave the mask unwritten then)
    inliers = 0 if e is None or mask is None else int(np.count_nonzero(mask))
    if e is not None and mask is not None and e.shape[0] >= 3:
        for k in range(e.shape[0] // 3):  # a stack of candidates: take each
            n, r, t, _ = cv2.recoverPose(e[3 * k:3 * k + 3], na, nb, eye, mask=mask.copy())
            if n >= 5:
                cands.append((r, t.ravel()))
    h, hmask = cv2.findHomography(na, nb, cv2.RANSAC, thr)
    if h is not None:
        n_sol, rs, ts, normals = cv2.decomposeHomographyMat(h, eye)
        keep = cv2.filterHomographyDecompByVisibleRefpoints(
            rs, normals, na.reshape(-1, 1, 2).astype(np.float32), nb.reshape(-1, 1, 2).astype(np.float32),
            pointsMask=hmask,
        )
        for i in (range(n_sol) if keep is None else [int(k) for k in np.asarray(keep).ravel()]):
            cands.append((np.asarray(rs[i]), np.asarray(ts[i]).ravel()))
    return cands, inliers


def _pose_error(r: np.ndarray, t: np.ndarray, r_ref: np.ndarray, t_ref: np.ndarray) -> float:
    return max(rotation_angle_deg(r @ r_ref.T), direction_angle_deg(t, t_ref))


def _measure(
    pa: np.ndarray, pb: np.ndarray, ka: np.ndarray, kb: np.ndarray, cal: tuple[np.ndarray, np.ndarray],
    tau: float, t: int, p: RigisParams,
) -> Instant | None:
    r_cal, t_cal = cal
    na = cv2.undistortPoints(pa.reshape(-1, 1, 2), ka, None).reshape(-1, 2)
    nb = cv2.undistortPoints(pb.reshape(-1, 1, 2), kb, None).reshape(-1, 2)
    thr = tau / float(np.sqrt(ka[0, 0] * kb[1, 1]))
    calibrated = _support(r_cal, t_cal, na, nb, thr)
    cands, e_inliers = _pose_hypotheses(na, nb, thr)
    explained = max(calibrated, e_inliers)
    if explained < p.min_matches or explained < p.min_share * len(pa):
        # Neither the calibration nor an essential matrix explains enough of the matches: they are mostly
        # wrong (a homography, with more freedom, gathers a dozen wrong ones easily; it does not decide).
        return None
    best = max([calibrated, *(_support(r, tt, na, nb, thr) for r, tt in cands)])
    d = sampson_distance(fundamental(ka, kb, r_cal, t_cal), pa, pb)
    return Instant(t=t, matches=len(pa), calibrated=calibrated, best=best, median_px=float(np.median(d)),
                   na=na, nb=nb, thr=thr)


def _estimate(
    na: np.ndarray, nb: np.ndarray, thr: float, cal: tuple[np.ndarray, np.ndarray], p: RigisParams
) -> tuple[np.ndarray, np.ndarray] | None:
    """The relative pose the matches support that lies nearest the calibration, or ``None``.

    The calibrated pose is one of the candidates: when it explains the matches as well as the estimates
    do, the images give no reason to place the cameras anywhere else (an estimate from a near-planar
    scene can sit degrees off while explaining the same matches).
    """
    cands = [*_pose_hypotheses(na, nb, thr)[0], cal]
    hyps = [(r, tt, _support(r, tt, na, nb, thr)) for r, tt in cands]
    best = max(h[2] for h in hyps)
    if best == 0:
        return None
    fit = [h for h in hyps if h[2] >= p.support * best]
    r, t, _ = min(fit, key=lambda h: _pose_error(h[0], h[1], *cal))
    return r, t


def _chunks(instants: list[Instant], least: int) -> list[list[Instant]]:
    """Consecutive instants grouped so each group pools at least ``least`` matches (a short tail joins the
    group before it): few matches give a poor pose, and a fixed rig's pose is the same at every instant."""
    out: list[list[Instant]] = []
    cur: list[Instant] = []
    for i in instants:
        cur.append(i)
        if sum(x.matches for x in cur) >= least:
            out.append(cur)
            cur = []
    if cur:
        if out:
            out[-1].extend(cur)
        else:
            out.append(cur)
    return out


def analyse_rig(
    frames_by_view: Mapping[str, Any], cameras: Mapping[str, Camera], params: RigisParams | None = None
) -> RigAnalysis:
    """Match every view pair at every instant and measure it (call :func:`check_rig` first).

    An instant of a pair is measured when it has ``min_matches`` putative matches and some pose (the
    calibrated one, or one estimated from the matches) explains at least ``min_matches`` of them.
    """
    p = params or RigisParams()
    names = list(frames_by_view)
    arrays = {n: _as_frames(n, frames_by_view[n]) for n in names}
    n_frames = len(arrays[names[0]])
    sizes = {n: (int(a.shape[2]), int(a.shape[1])) for n, a in arrays.items()}
    intr = {n: intrinsics_for(cameras[n], *sizes[n], view=n) for n in names}
    pairs = [PairResult(a, b) for a, b in combinations(names, 2)]
    cal = {pr.key: relative_pose(cameras[pr.a], cameras[pr.b]) for pr in pairs}
    per_view: dict[str, list[Features]] = {n: [] for n in names}
    for t in range(n_frames):
        feats: dict[str, Features] = {n: detect(arrays[n][t], p.contrast_threshold, p.max_features)
                                      for n in names}
        for n in names:
            per_view[n].append(feats[n])
        blobs: dict[str, dict[int, list[np.ndarray]]] = {}
        for pr in pairs:
            pa, pb = match(feats[pr.a], feats[pr.b], p.ratio)
            tau = max(tolerance_px(sizes[pr.a], p), tolerance_px(sizes[pr.b], p))
            got = None
            if len(pa) >= p.min_matches:
                got = _measure(pa, pb, intr[pr.a], intr[pr.b], cal[pr.key], tau, t, p)
            if got is not None:
                pr.instants.append(got)
            else:
                pr.skipped += 1
            for v in (pr.a, pr.b):
                if v not in blobs:
                    w, h = sizes[v]
                    blobs[v] = colour_blobs(arrays[v][t], max(4, round(p.blob_area * w * h)))
            ba, bb = blob_matches(blobs[pr.a], blobs[pr.b])
            if len(ba):
                f = fundamental(intr[pr.a], intr[pr.b], *cal[pr.key])
                btau = max(_blob_tolerance(sizes[pr.a], p), _blob_tolerance(sizes[pr.b], p))
                pr.blobs.append((len(ba), int(np.sum(sampson_distance(f, ba, bb) <= btau))))
    focal = {n: float(np.sqrt(intr[n][0, 0] * intr[n][1, 1])) for n in names}
    return RigAnalysis(names, pairs, n_frames, per_view, sizes, focal)


def _blob_tolerance(size: tuple[int, int], p: RigisParams) -> float:
    return max(2.0, p.blob_tau * max(size))


def _measured(pr: PairResult, p: RigisParams, regions: bool) -> bool:
    return pr.keypoints_ok(p) or (regions and pr.blob_counts()[0] >= p.blob_min_matches)


def _too_few(m: RigAnalysis, p: RigisParams, regions: bool) -> str | None:
    also = f", nor {p.blob_min_matches} colour-region matches," if regions else ""
    if not any(_measured(pr, p, regions) for pr in m.pairs):
        return (f"too few matches: no view pair has {p.min_matches} keypoint matches that some pose explains "
                f"at any of the {m.n_frames} instants{also} (views too far apart, or too little texture)")
    seen = {v for pr in m.pairs if _measured(pr, p, regions) for v in (pr.a, pr.b)}
    lost = [v for v in m.views if v not in seen]
    if lost:
        return (f"too few matches: view(s) {lost} have fewer than {p.min_matches} keypoint matches that some "
                f"pose explains with every other view at every instant{also.rstrip(',')}")
    return None


def _prepare(
    frames_by_view: Mapping[str, Any], cameras: Mapping[str, Camera], p: RigisParams,
    analysis: RigAnalysis | None, regions: bool, timing: Mapping[str, Any] | None = None,
) -> tuple[RigAnalysis | None, str | None]:
    reason = check_rig(frames_by_view, cameras, timing)
    if reason is not None:
        return None, reason
    m = analysis or analyse_rig(frames_by_view, cameras, p)
    return m, _too_few(m, p, regions)


def rig_sync(
    timing_by_view: Mapping[str, Any], params: RigisParams | None = None
) -> tuple[float, dict[str, Any]]:
    """``S_sync`` in 0-1: whether every view shows the same instants (1: no view lags the others).

    ``exp(-max(0, L - lag_free) / lag_scale)`` for the largest offset ``L`` (frames) of a view behind or
    ahead of the rig's reference view (:func:`robojudge.metrics.multiview._sync.view_offsets`). 1 when no
    view moves (nothing to time). ``timing_by_view``: every frame of each view (a coarser sampling only
    sees lags of whole sampling steps).
    """
    p = params or RigisParams()
    arrays = {n: _as_frames(n, f) for n, f in timing_by_view.items()}
    offsets, details = view_offsets(arrays, max_lag=p.max_lag, margin=p.lag_margin)
    worst = max((abs(o) for o in offsets.values()), default=0.0)
    score = tolerance_score(worst, p.lag_free, p.lag_scale)
    return score, {"offsets": offsets, "largest_lag": worst, **details}


def rig_motion(
    motion_by_view: Mapping[str, Any], cameras: Mapping[str, Camera], params: RigisParams | None = None
) -> tuple[float, dict[str, Any]]:
    """``S_move`` in 0-1 (:func:`robojudge.metrics.multiview._moving.moving_agreement` with the
    ``move_*`` parameters): the least, over the views, of the share of a view's moving pixels that every
    other view seeing them shows moving too. ``motion_by_view``: every frame of each view."""
    p = params or RigisParams()
    if p.move_far <= p.move_near:
        raise ValueError(f"move_far ({p.move_far:g}) must lie beyond move_near ({p.move_near:g})")
    return moving_agreement(motion_by_view, cameras, levels=p.move_levels,
                            explain_levels=p.move_explain_levels, dilate=p.move_dilate, near=p.move_near,
                            far=p.move_far)


def rigis_geo(
    frames_by_view: Mapping[str, Any],
    cameras: Mapping[str, Camera],
    params: RigisParams | None = None,
    *,
    analysis: RigAnalysis | None = None,
    timing: Mapping[str, Any] | None = None,
    motion: Mapping[str, Any] | None = None,
) -> tuple[float, dict[str, Any]]:
    """``S_geo = S_epi * S_sync * S_move`` in 0-1 (1: the views agree as one scene seen at one instant).

    ``S_epi``: per pair, ``sum_t calibrated_t / sum_t best_t`` over its measured instants: the matches
    within ``tau`` of the calibrated epipolar geometry, against the most that any relative pose
    estimated from the same matches explains (wrong matches, which no pose explains, cancel out); the
    mean over the measured pairs. ``S_sync`` (:func:`rig_sync`) stands in for what the matches cannot
    reach: a view running late contradicts the others in every moving part (the arm, the objects),
    which are rarely matched between cameras far apart, while the static scene it matches still agrees.
    ``S_move`` (:func:`rig_motion`, with ``move``) reaches the moving parts directly: an arm or object
    shown elsewhere in one view, a camera that shakes. It is 1 (and says why) when no view moves.

    Args:
        frames_by_view: view name -> ``(T, H, W)`` or ``(T, H, W, 3)`` uint8 frames; the same ``T`` for
            every view, frame ``t`` of every view taken at the same instant.
        cameras: view name -> calibrated camera (``K`` for ``Camera.size``; frames of another size get
            ``K`` scaled), world-to-camera ``R``, ``t``.
        params: see :class:`RigisParams`.
        analysis: the result of :func:`analyse_rig` on the same input, to share it with :func:`rigis_pose`.
        timing: every frame of each view, for :func:`rig_sync` (``frames_by_view`` when not given) and
            for the check that no view is noise (:func:`check_rig`; not made when not given).
        motion: every frame of each view, for :func:`rig_motion`; ``timing`` (else ``frames_by_view``)
            when not given.
    """
    p = params or RigisParams()
    m, reason = _prepare(frames_by_view, cameras, p, analysis, regions=True, timing=timing)
    if m is None:
        return math.nan, {"unscored_reason": reason}
    per_pair: dict[str, Any] = {}
    shares: list[float] = []
    for pr in m.pairs:
        if not pr.keypoints_ok(p):
            n, ok = pr.blob_counts()
            if n >= p.blob_min_matches:  # too few keypoints here: the colour regions stand in
                shares.append(ok / n)
                per_pair[pr.key] = {"share": ok / n, "regions": n, "regions_consistent": ok, "instants": 0,
                                    "skipped": pr.skipped}
            else:
                per_pair[pr.key] = {"instants": 0, "skipped": pr.skipped, "regions": n}
            continue
        share = sum(i.calibrated for i in pr.instants) / sum(i.best for i in pr.instants)
        shares.append(share)
        per_pair[pr.key] = {
            "share": share, "matches": sum(i.matches for i in pr.instants),
            "calibrated": sum(i.calibrated for i in pr.instants), "best": sum(i.best for i in pr.instants),
            "median_px": float(np.median([i.median_px for i in pr.instants])),
            "instants": len(pr.instants), "skipped": pr.skipped,
        }
    sync, sync_d = rig_sync(timing if timing is not None else frames_by_view, p)
    details: dict[str, Any] = {"pairs": per_pair, "instants": m.n_frames, "sync": sync,
                               "sync_details": sync_d}
    if reason is not None:
        return math.nan, {"unscored_reason": reason, **details}
    epi = float(np.mean(shares))
    move = 1.0
    if p.move:
        src = motion if motion is not None else timing if timing is not None else frames_by_view
        got, move_d = rig_motion(src, cameras, p)
        details["move_details"] = move_d
        if not math.isnan(got):  # nothing moves: nothing to contradict
            move = got
        details["move"] = move
    return epi * sync * move, {"epi": epi, **details}


def _score(err_deg: float, p: RigisParams) -> float:
    return tolerance_score(err_deg, p.pose_free_deg, p.pose_scale_deg)


def rig_stillness(m: RigAnalysis, p: RigisParams) -> tuple[float, dict[str, Any]]:
    """``S_still`` in 0-1: whether every camera stays where it is mounted, read from its own view.

    Per view, the camera's turn since the first instant at each later instant
    (:func:`robojudge.metrics.multiview._still.view_stillness`), mapped by
    ``exp(-max(0, turn - still_free_deg) / still_scale_deg)`` and averaged over the instants it could be
    read at; ``S_still`` is the least of the views' scores (a rig is as steady as its least steady
    camera). NaN with a reason when no view's static scene can be read at any instant.
    """
    per_view: dict[str, Any] = {}
    scores: list[float] = []
    for v in m.views:
        feats = m.features.get(v, [])
        if len(feats) < 2:
            per_view[v] = {"instants_read": 0}
            continue
        got = view_stillness(feats, m.sizes[v], m.focal[v], ratio=p.ratio,
                             thr_px=max(1.0, p.still_tau * max(m.sizes[v])), support=p.support,
                             least=p.still_matches, cover=p.still_cover)
        read = [x for x in got["turn_deg"] if x is not None]
        if not read:
            per_view[v] = {"instants_read": 0}
            continue
        score = float(np.mean([tolerance_score(x, p.still_free_deg, p.still_scale_deg) for x in read]))
        scores.append(score)
        per_view[v] = {"score": score, "largest_turn_deg": max(read), "instants_read": len(read),
                       "turn_deg": got["turn_deg"]}
    read_from = [v for v in m.views if "score" in per_view[v]]
    if not scores:
        return math.nan, {"views": per_view, "views_read": read_from, "unscored_reason": (
            f"no view has {p.still_matches} matches with itself over time on a static scene at any instant")}
    return min(scores), {"views": per_view, "views_read": read_from}


def _relative(
    m: RigAnalysis, cameras: Mapping[str, Camera], p: RigisParams
) -> tuple[float, dict[str, Any]]:
    """``S_rel`` in 0-1: relative poses estimated across views against the calibration and over time."""
    reason = _too_few(m, p, regions=False)
    per_pair: dict[str, Any] = {}
    scores: list[float] = []
    for pr in m.pairs:
        cal = relative_pose(cameras[pr.a], cameras[pr.b])
        poses: list[tuple[np.ndarray, np.ndarray]] = []
        for group in _chunks(pr.instants if pr.keypoints_ok(p) else [], p.pose_matches):
            found = _estimate(np.concatenate([i.na for i in group]), np.concatenate([i.nb for i in group]),
                              group[0].thr, cal, p)
            if found is not None:
                poses.append(found)
        if not poses:
            per_pair[pr.key] = {"estimates": 0, "skipped": pr.skipped}
            continue
        errors = [_pose_error(r, t, *cal) for r, t in poses]
        accuracy = float(np.mean([_score(e, p) for e in errors]))
        spread = _spread(poses)
        stability = _score(spread, p) if len(poses) > 1 else accuracy
        score = 0.5 * (accuracy + stability)
        scores.append(score)
        per_pair[pr.key] = {"score": score, "accuracy": accuracy, "stability": stability,
                            "median_error_deg": float(np.median(errors)), "spread_deg": spread,
                            "estimates": len(poses), "instants": len(pr.instants), "skipped": pr.skipped}
    if reason is None and not scores:
        reason = "too few matches to estimate any relative pose"
    if reason is not None:
        return math.nan, {"pairs": per_pair, "unscored_reason": reason}
    return float(np.mean(scores)), {"pairs": per_pair}


def rigis_pose(
    frames_by_view: Mapping[str, Any],
    cameras: Mapping[str, Camera],
    params: RigisParams | None = None,
    *,
    analysis: RigAnalysis | None = None,
    timing: Mapping[str, Any] | None = None,
    motion: Mapping[str, Any] | None = None,
) -> tuple[float, dict[str, Any]]:
    """``S_pose`` in 0-1 (1: the rig's cameras stay as calibrated), from two readings of the rig:

    * ``S_rel`` (across views): per pair, the measured instants are grouped in time so that each group
      pools ``pose_matches`` matches (one instant each when matches are plenty), and one pose is
      estimated per group: of the relative poses estimated from its matches (:func:`_pose_hypotheses`),
      those that explain at least ``support`` of the best one's matches are equally good readings of the
      images (a table top leaves a twofold ambiguity), and the one nearest the calibration is taken. Its
      error is the larger of the rotation angle error and the angle between the translation directions,
      in degrees. Accuracy: the mean over groups of ``exp(-max(0, e - e0) / s)``; stability: the same
      mapping of the median error of the groups' estimates against their medoid. Per pair, the mean of
      the two; ``S_rel`` is the mean over the measured pairs.
    * ``S_still`` (each view against itself over time, :func:`rig_stillness`): a calibration holds one
      pose per camera, so each camera must stay put; it reads where views share too few keypoints for
      ``S_rel`` (flat-coloured scenes seen from far apart).

    ``S_pose = S_rel x S_still`` where both are measured, else the one that is; NaN with both reasons
    when neither is. Arguments as :func:`rigis_geo` (``timing`` is read only by :func:`check_rig`, and
    ``motion`` not at all: it is accepted so that the three functions take the same arguments).
    ``details["views_read"]`` names the views the value rests on (those of the pairs ``S_rel`` was read
    on and those ``S_still`` was read in), and ``details["notice"]`` says so when they are not all.
    """
    p = params or RigisParams()
    reason = check_rig(frames_by_view, cameras, timing)
    if reason is not None:
        return math.nan, {"unscored_reason": reason}
    m = analysis or analyse_rig(frames_by_view, cameras, p)
    rel, rel_d = _relative(m, cameras, p)
    if p.still:
        still, still_d = rig_stillness(m, p)
    else:
        still, still_d = math.nan, {"unscored_reason": "not read (config still = false)"}
    details: dict[str, Any] = {"pairs": rel_d["pairs"], "instants": m.n_frames, "relative": rel,
                               "stillness": still, "still_details": still_d}
    if "unscored_reason" in rel_d:
        details["relative_unscored"] = rel_d["unscored_reason"]
    parts = [x for x in (rel, still) if not math.isnan(x)]
    if not parts:
        return math.nan, {"unscored_reason": (f"{rel_d['unscored_reason']}; and the cameras' stillness: "
                                              f"{still_d['unscored_reason']}"), **details}
    # The views the value rests on: those of the pairs S_rel was read on, and those S_still was read in.
    read = set(still_d.get("views_read", [])) if not math.isnan(still) else set()
    if not math.isnan(rel):
        for pr in m.pairs:
            if "score" in rel_d["pairs"].get(pr.key, {}):
                read.update((pr.a, pr.b))
    details["views_read"] = [v for v in m.views if v in read]
    if len(read) < len(m.views):
        details["notice"] = (f"S_pose rests on {len(read)} of the rig's {len(m.views)} views "
                             "(details.views_read): the others gave no relative pose and no stillness "
                             "reading")
    return float(np.prod(parts)), details


def _spread(poses: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Median pose error of each estimate against the medoid estimate (degrees); 0 for one estimate."""
    n = len(poses)
    if n < 2:
        return 0.0
    d = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            d[i, j] = d[j, i] = _pose_error(poses[i][0], poses[i][1], poses[j][0], poses[j][1])
    medoid = int(np.argmin(d.sum(axis=1)))
    return float(np.median(np.delete(d[medoid], medoid)))


def rigis(
    frames_by_view: Mapping[str, Any],
    cameras: Mapping[str, Camera],
    params: RigisParams | None = None,
    *,
    analysis: RigAnalysis | None = None,
    timing: Mapping[str, Any] | None = None,
    motion: Mapping[str, Any] | None = None,
) -> tuple[float, dict[str, Any]]:
    """``S = w S_geo + (1 - w) S_pose`` and the details of both parts (``geo``, ``pose``).

    NaN with the part's reason when a part that weighs in cannot be measured; a part of weight 0
    (``geo_weight`` 0 or 1) does not count, so ``S`` is then the other part alone.
    """
    p = params or RigisParams()
    reason = check_rig(frames_by_view, cameras, timing)
    if reason is not None:
        return math.nan, {"unscored_reason": reason}
    m = analysis or analyse_rig(frames_by_view, cameras, p)
    geo, geo_d = rigis_geo(frames_by_view, cameras, p, analysis=m, timing=timing, motion=motion)
    pose, pose_d = rigis_pose(frames_by_view, cameras, p, analysis=m, timing=timing)
    details: dict[str, Any] = {"geo": geo, "pose": pose, "geo_details": geo_d, "pose_details": pose_d}
    details.update({k: pose_d[k] for k in ("views_read", "notice") if k in pose_d})
    parts = (("S_geo", p.geo_weight, geo, geo_d), ("S_pose", 1 - p.geo_weight, pose, pose_d))
    for part, weight, _, d in parts:
        if weight > 0 and "unscored_reason" in d:
            return math.nan, {"unscored_reason": f"{part}: {d['unscored_reason']}", **details}
    return float(sum(weight * value for _, weight, value, _ in parts if weight > 0)), details
