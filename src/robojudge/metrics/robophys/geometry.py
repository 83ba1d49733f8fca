"""Weights-free geometry metrics: photometric consistency, camera control, sustained stability.

RoboPhys-3D (App. B.1.5, B.2.1, B.2.3) computes these with learned or heavy pipelines: SEA-RAFT /
RAFT flow for photometric consistency, DROID-SLAM poses for camera control, COLMAP SfM matching for
sustained stability. The ids here keep each paper's measured quantity and direction but use classical
OpenCV tools that need no weights, so values are comparable between robojudge runs, not numerically
equal to the paper's:

* ``cc_photometric``: forward-backward end-point error of Farneback flow (instead of RAFT).
* ``ctg_camera_control``: drift of the background under homographies fitted to KLT tracks (instead
  of DROID-SLAM poses); valid for fixed-view episodes only, as the paper uses it.
* ``rbg_stability``: share of ORB (or SIFT) matches that survive two-view geometric verification
  (instead of COLMAP's SIFT matching and verification), over growing frame intervals.

All three read every frame of the main video at native size (the same decode as the motion metrics in
:mod:`robojudge.metrics.robophys.motion`), so the runner decodes the video once for all of them.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import cv2
import numpy as np
from pydantic import Field

from robojudge.metrics._content import require_correspondence, require_motion
from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics.flow import FarnebackParams, farneback_flow
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.metrics.robophys.motion import NativeFrames, native_rgb, to_gray, top_magnitude
from robojudge.suite._schema import Item

WORLDSCORE = "WorldScore (Duan et al., 2025)"
WORLDARENA = "WorldArena (2026)"

# ---------------------------------------------------------------------------------------------
# Photometric consistency (App. B.1.5)


class PhotometricConfig(NativeFrames, FarnebackParams):
    """Forward-backward EPE settings (WorldScore's) and WorldArena's low-motion penalty."""

    crop: int = Field(default=30, ge=0, description="pixels cut from height and width (half per side)")
    static_penalty: bool = Field(default=True, description="scale by soft motion when the clip barely moves")
    static_threshold: float = Field(default=0.1213, ge=0, le=1, description="soft motion at or below which")
    soft_alpha: float = Field(default=5.0, gt=0, description="slope of the soft-motion sigmoid")
    min_epe: float = Field(default=0.01, gt=0, description="EPE floor in px: caps the score at 1 / min_epe")


def forward_backward_epe(forward: np.ndarray, backward: np.ndarray, crop: int = 30) -> float:
    """Mean forward-backward end-point error of a flow pair, WorldScore's form (App. B.1.5, [9]).

    On the central ``(H - crop) x (W - crop)`` window, each pixel ``p`` is carried to
    ``q = p + F(p)``; the backward flow is read at ``q`` rounded to the nearest pixel of the window
    (clipped to its border) and ``e(p) = |q + B(round(q)) - p|``. The result is ``mean_p e(p)``; it is
    0 when the backward flow exactly undoes the forward flow.

    Args:
        forward: flow from frame t to t+1, ``(H, W, 2)`` (x, y).
        backward: flow from frame t+1 to t, same shape.
        crop: total pixels removed from each dimension before scoring.
    """
    h, w = forward.shape[:2]
    ch, cw = h - crop, w - crop
    if ch < 1 or cw < 1:
        raise MetricInputError(f"frames of {w}x{h} are too small for a {crop}px crop")
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    fwd = forward[y0:y0 + ch, x0:x0 + cw].astype(np.float64)
    bwd = backward[y0:y0 + ch, x0:x0 + cw].astype(np.float64)
    ys, xs = np.meshgrid(np.arange(ch), np.arange(cw), indexing="ij")
    qx, qy = xs + fwd[..., 0], ys + fwd[..., 1]
    rx = np.clip(np.round(qx).astype(np.int64), 0, cw - 1)
    ry = np.clip(np.round(qy).astype(np.int64), 0, ch - 1)
    back = bwd[ry, rx]
    return float(np.sqrt((qx + back[..., 0] - xs) ** 2 + (qy + back[..., 1] - ys) ** 2).mean())


def soft_motion(step_magnitudes: np.ndarray, short_side: int, alpha: float) -> float:
    """WorldArena's soft dynamic degree: mean of ``sigmoid(alpha (m_t / thr - 1))``, thr = 6 px per 256 px."""
    thr = 6.0 * short_side / 256.0
    return float(np.mean(1.0 / (1.0 + np.exp(-alpha * (step_magnitudes / thr - 1.0)))))


@robophys_metric(
    "cc_photometric",
    family=Family.flow,
    inputs={Input.video},
    description=(
        "Photometric consistency = 1 / mean forward-backward end-point error (px) of optical flow "
        "between consecutive frames (WorldScore's AEPE, WorldArena's reciprocal and low-motion "
        "penalty), at native rate and size. robojudge uses OpenCV Farneback flow on luma where the "
        "paper's pipeline uses (SEA-)RAFT on RGB, so values are not numerically the paper's."
    ),
    config=PhotometricConfig,
    note=f"AEPE of {WORLDSCORE}, reciprocal score of {WORLDARENA}; Farneback flow instead of RAFT",
    version="2",
)
def cc_photometric(item: Item, config: PhotometricConfig) -> Score:
    """Photometric Consistency (RoboPhys-3D App. B.1.5): higher means more self-consistent flow.

    For each consecutive pair, forward and backward Farneback flows give an AEPE
    (:func:`forward_backward_epe`). The score is ``1 / max(mean_t AEPE_t, min_epe)``, the form whose
    bounds (0.1257-6.7899, WorldArena) Table 13 uses. As in WorldArena, when the clip barely moves
    (soft dynamic degree, :func:`soft_motion`, at or below 0.1213) the score is multiplied by it, so a
    frozen clip does not score as perfectly consistent. The floor ``min_epe`` (0.01 px, far below any
    flow estimator's precision) keeps near-static clips finite: it caps the score at 100, well above
    the normalization's upper bound. Raw AEPE is kept in ``details["aepe"]``.

    Two inputs are left unscored (:mod:`robojudge.metrics._content`): a video in which nothing moves
    at all (the static penalty alone still gave it more than a clip with 2 px of AEPE), and one where
    most consecutive frames show nothing of each other: flow between unrelated frames is small and
    agrees with itself, so noise scored better than a real rollout.
    """
    frames, _ = native_rgb(item, config.size)
    gray = to_gray(frames)
    require_motion(gray)
    lost = require_correspondence(gray)
    epes, tops = [], []
    for a, b in zip(gray[:-1], gray[1:], strict=True):
        fwd = farneback_flow(a, b, config)
        bwd = farneback_flow(b, a, config)
        epes.append(forward_backward_epe(fwd, bwd, config.crop))
        tops.append(top_magnitude(fwd, 0.05))
    aepe = float(np.mean(epes))
    motion = soft_motion(np.asarray(tops), min(gray.shape[1:3]), config.soft_alpha)
    value = 1.0 / max(aepe, config.min_epe)
    penalized = config.static_penalty and motion <= config.static_threshold
    if penalized:
        value *= motion
    return Score(value=value, details={"frames": len(gray), "aepe": aepe, "max_step_epe": float(max(epes)),
                                       "soft_motion": motion, "static_penalty_applied": penalized,
                                       "steps_without_correspondence": lost})


# ---------------------------------------------------------------------------------------------
# Camera control for fixed-view episodes (App. B.2.3)


class CameraControlConfig(NativeFrames):
    """KLT tracking and RANSAC homography settings."""

    max_corners: int = Field(default=500, ge=8, description="Shi-Tomasi corners seeded on frame 0")
    quality_level: float = Field(default=0.003, gt=0, lt=1, description="low: sim scenes have little texture")
    min_distance: float = Field(default=5.0, gt=0, description="px between seeded corners")
    fb_max_px: float = Field(default=1.0, gt=0, description="forward-backward LK check: max round-trip px")
    min_patch_correlation: float = Field(
        default=0.5, ge=-1, le=1,
        description="Pearson correlation of the 21x21 patches around a point in frame 0 and frame t below "
        "which its track is lost",
    )
    ransac_px: float = Field(default=1.0, gt=0, description="RANSAC reprojection threshold, px")
    min_inliers: int = Field(default=8, ge=4, description="fewer RANSAC inliers: the frame is lost")


_LK_CRITERIA = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)


_WINDOW = 21


def _track(
    src: np.ndarray, dst: np.ndarray, pts: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pyramidal LK (21x21 window, 3 levels) of ``pts`` from ``src`` to ``dst``, starting at ``start``."""
    new, status, _ = cv2.calcOpticalFlowPyrLK(
        src, dst, pts, start.copy(), winSize=(_WINDOW, _WINDOW), maxLevel=3, criteria=_LK_CRITERIA,
        flags=cv2.OPTFLOW_USE_INITIAL_FLOW,
    )
    return new, status.ravel() == 1


def patches(img: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """The 21x21 patches of ``img`` around ``pts`` (sub-pixel, bilinear), flattened and centred on their
    means: ``(N, 441)`` float64, the form :func:`patch_correlations` compares."""
    out = np.stack([cv2.getRectSubPix(img, (_WINDOW, _WINDOW), (float(x), float(y)))
                    for x, y in pts.reshape(-1, 2)]).reshape(len(pts), -1).astype(np.float64)
    out -= out.mean(axis=1, keepdims=True)
    return out


def correlate_patches(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Pearson correlation of the rows of two :func:`patches` arrays; 0 where a patch is flat."""
    norms = np.linalg.norm(p, axis=1) * np.linalg.norm(q, axis=1)
    corr: np.ndarray = np.einsum("nd,nd->n", p, q) / np.where(norms > 1e-9, norms, np.inf)
    return corr


def patch_correlations(a: np.ndarray, b: np.ndarray, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Pearson correlation of the 21x21 patches of ``a`` around ``pa`` and of ``b`` around ``pb`` (sub-pixel,
    bilinear), one per point pair; 0 where a patch is flat.

    Where LK cannot move (frame 0's content has left the view) it returns its starting point, and the
    backward track, started at the answer, passes the round-trip check; the patches it "matched" then
    show different content. Correlation, unlike LK's own L1 patch error, ignores the local gain and
    offset that lighting changes bring.
    """
    if len(pa) == 0:
        return np.zeros(0)
    return correlate_patches(patches(a, pa), patches(b, pb))


def contrast_normalized(gray: np.ndarray) -> np.ndarray:
    """Each frame mapped to mean 128 and standard deviation 40 (uint8), so a global change of brightness
    or contrast (lighting flicker) does not break the brightness constancy that LK tracking assumes."""
    f = gray.astype(np.float32)
    mean = f.mean(axis=(1, 2), keepdims=True)
    std = f.std(axis=(1, 2), keepdims=True)
    out: np.ndarray = np.clip(128.0 + 40.0 * (f - mean) / np.maximum(std, 1e-3), 0, 255).astype(np.uint8)
    return out


def corner_drift(h_0t: np.ndarray, width: int, height: int) -> float:
    """Mean displacement (px) of the four image corners under the frame-0-to-t homography."""
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64).reshape(-1, 1, 2)
    moved = cv2.perspectiveTransform(corners, h_0t)
    return float(np.linalg.norm((moved - corners).reshape(-1, 2), axis=1).mean())


class BackgroundMotion(NamedTuple):
    """The fitted background motion of a clip, frame by frame."""

    homographies: list[np.ndarray]  # H_0t for every frame, the identity first
    lost: np.ndarray  # (T,) bool: tracking lost at frame t (never at 0)
    corners: int  # Shi-Tomasi corners seeded on frame 0


def background_homographies(gray: np.ndarray, cfg: CameraControlConfig) -> BackgroundMotion:
    """Homographies ``H_0t`` (frame-0 pixels to frame-t pixels) of the dominant (background) motion.

    Frames are contrast-normalized (:func:`contrast_normalized`). Shi-Tomasi corners of frame 0 are
    tracked directly from frame 0 to each frame t with pyramidal LK, starting from where ``H_0(t-1)``
    puts them, and kept when the track back to frame 0 lands within ``fb_max_px`` and the patches
    around the two ends correlate (:func:`patch_correlations`, ``min_patch_correlation``). ``H_0t``
    is fitted to the kept pairs by RANSAC, so the moving robot and objects, which break the round trip
    or the model, fall out. Tracking against frame 0 rather than chaining frame-to-frame steps keeps
    static background points exact however long the clip. A frame with fewer than ``min_inliers``
    inliers keeps the previous homography (the starting guess for the next frame) and is marked lost.

    Raises:
        Unmeasurable: When frame 0 has fewer than ``min_inliers`` corners (a blank frame): there is no
            background to follow, and every later frame would be lost.
    """
    gray = contrast_normalized(gray)
    found = cv2.goodFeaturesToTrack(gray[0], cfg.max_corners, cfg.quality_level, cfg.min_distance)
    p0 = np.zeros((0, 1, 2), np.float32) if found is None else found.astype(np.float32)
    if len(p0) < cfg.min_inliers:
        raise Unmeasurable(f"the first frame has {len(p0)} trackable corners, fewer than min_inliers "
                           f"({cfg.min_inliers}): no background to follow", frames=len(gray), corners=len(p0))
    # Frame 0's patches are the same for every frame t: extracted once (about half of the per-frame
    # patch work), then picked by each frame's surviving tracks.
    patches0 = patches(gray[0], p0)
    h_0t, out, lost = np.eye(3), [np.eye(3)], np.zeros(len(gray), bool)
    for t in range(1, len(gray)):
        kept = 0
        if len(p0) >= cfg.min_inliers:
            guess = cv2.perspectiveTransform(p0.astype(np.float64), h_0t).astype(np.float32)
            pt, ok = _track(gray[0], gray[t], p0, guess)
            back, ok_back = _track(gray[t], gray[0], pt, p0)
            ok &= ok_back & (np.linalg.norm(back - p0, axis=-1).ravel() < cfg.fb_max_px)
            if ok.any():
                corr = correlate_patches(patches0[ok], patches(gray[t], pt[ok]))
                ok[ok] = corr >= cfg.min_patch_correlation
            if ok.sum() >= cfg.min_inliers:
                h, mask = cv2.findHomography(p0[ok], pt[ok], cv2.RANSAC, cfg.ransac_px)
                if h is not None and int(mask.sum()) >= cfg.min_inliers:
                    h_0t, kept = h, int(mask.sum())
        lost[t] = kept == 0
        out.append(h_0t)
    return BackgroundMotion(out, lost, len(p0))


@robophys_metric(
    "ctg_camera_control",
    family=Family.geometry,
    inputs={Input.video},
    description=(
        "Camera control for fixed-view episodes: 1 - mean over frames of the background drift, "
        "measured as the mean displacement of the image corners under the frame-0-to-t homography "
        "fitted by RANSAC to KLT tracks of frame-0 corners, divided by the image diagonal (clipped "
        "to [0, 1]). "
        "robojudge uses 2D feature tracking and homographies where the paper uses DROID-SLAM poses."
    ),
    config=CameraControlConfig,
    note=f"camera control of {WORLDSCORE}; KLT tracks and homographies instead of DROID-SLAM",
    version="2",
)
def ctg_camera_control(item: Item, config: CameraControlConfig) -> Score:
    """Camera Control (RoboPhys-3D App. B.2.3) on a fixed-view episode: 1 means no spurious drift.

    The paper recovers the camera path with DROID-SLAM and, for fixed-view episodes, scores the drift
    the generator hallucinates. With a fixed camera the true frame-to-frame mapping of the background is
    the identity, so the drift at frame t is how far the image corners move under the fitted background
    homography ``H_0t`` (:func:`background_homographies`, :func:`corner_drift`). The score is
    ``clip(1 - mean_t drift_t / diagonal, 0, 1)``. It is only meaningful for fixed-camera videos.

    What it cannot measure (robojudge's rules, not the paper's): a still video (its drift is 0, the
    best value, for a failure to animate) and a first frame with fewer than ``min_inliers`` trackable
    corners (a blank frame: every later frame would be lost and keep the identity) leave the item
    unscored. A frame where the frame-0 background can no longer be tracked counts as drifted by the
    whole diagonal: when the view pans past the frame-0 content, keeping the last tracked homography
    would freeze the drift (a pan far beyond the frame width stopped falling at about 0.44), and for a
    fixed camera losing the whole background is the failure this metric looks for.
    """
    frames, _ = native_rgb(item, config.size)
    gray = to_gray(frames)
    require_motion(gray)
    h, w = gray.shape[1:3]
    homs, lost, corners = background_homographies(gray, config)
    diagonal = float(np.hypot(w, h))
    drift = np.array([diagonal if gone else corner_drift(m, w, h)
                      for m, gone in zip(homs[1:], lost[1:], strict=True)])
    value = float(np.clip(1.0 - drift.mean() / diagonal, 0.0, 1.0))
    return Score(value=value, details={"frames": len(gray), "mean_drift_px": float(drift.mean()),
                                       "final_drift_px": float(drift[-1]), "max_drift_px": float(drift.max()),
                                       "lost_frames": int(lost.sum()), "corners": corners})


# ---------------------------------------------------------------------------------------------
# Sustained stability (App. B.2.1)


class StabilityConfig(NativeFrames):
    """Feature matching and two-view verification settings."""

    detector: Literal["orb", "sift"] = Field(default="orb", description="ORB (binary) or SIFT features")
    n_features: int = Field(default=1000, ge=16, description="features detected per frame")
    ratio: float = Field(default=0.8, gt=0, le=1, description="Lowe's ratio test for tentative matches")
    ransac_px: float = Field(default=2.0, gt=0, description="RANSAC threshold for F (epipolar) and H, px")
    min_matches: int = Field(default=8, ge=8, description="pairs with fewer tentative matches keep 0")
    intervals: tuple[int, ...] | None = Field(
        default=None, description="frame intervals; None: 1, 2, 4, ... below the clip length"
    )
    pairs_per_interval: int = Field(default=8, ge=1, description="start frames per interval, spread evenly")


def _features(gray: np.ndarray, cfg: StabilityConfig) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    det = cv2.ORB.create(cfg.n_features) if cfg.detector == "orb" else cv2.SIFT.create(cfg.n_features)
    pts, descs = [], []
    for g in gray:
        kps, d = det.detectAndCompute(g, None)
        pts.append(np.array([k.pt for k in kps], np.float32).reshape(-1, 2))
        descs.append(d)
    return pts, descs


#: COLMAP's ``max_H_inlier_ratio``: when H explains this share of F's inliers, the pair is planar/static.
H_F_RATIO = 0.8


def verified_ratio(p1: np.ndarray, p2: np.ndarray, ransac_px: float) -> float:
    """Share of tentative matches ``p1[i] <-> p2[i]`` that survive two-view geometric verification.

    As in COLMAP's two-view geometry, a fundamental matrix and a homography are both fitted with
    RANSAC; when the homography keeps at least 0.8 of the fundamental matrix's inliers the pair is
    planar, static or a pure rotation (F is then under-determined and absorbs outliers), and H's inliers
    count; otherwise F's do. Needs at least 8 matches (the caller enforces it).
    """
    _, mask_f = cv2.findFundamentalMat(p1, p2, cv2.FM_RANSAC, ransac_px, 0.999)
    _, mask_h = cv2.findHomography(p1, p2, cv2.RANSAC, ransac_px)
    n_f = 0 if mask_f is None else int(mask_f.sum())
    n_h = 0 if mask_h is None else int(mask_h.sum())
    kept = n_h if n_h >= H_F_RATIO * n_f else n_f
    return kept / len(p1)


def _pair_ratio(i: int, j: int, pts: list[np.ndarray], descs: list[np.ndarray | None],
                cfg: StabilityConfig) -> float:
    d1, d2 = descs[i], descs[j]
    if d1 is None or d2 is None or len(d1) < 2 or len(d2) < 2:
        return 0.0
    norm = cv2.NORM_HAMMING if cfg.detector == "orb" else cv2.NORM_L2
    knn = cv2.BFMatcher(norm).knnMatch(d1, d2, k=2)
    good = [m[0] for m in knn if len(m) == 2 and m[0].distance < cfg.ratio * m[1].distance]
    if len(good) < cfg.min_matches:
        return 0.0
    p1 = pts[i][[m.queryIdx for m in good]]
    p2 = pts[j][[m.trainIdx for m in good]]
    return verified_ratio(p1, p2, cfg.ransac_px)


def default_intervals(n_frames: int) -> tuple[int, ...]:
    """Powers of two below the clip length: 1, 2, 4, ..., largest < ``n_frames``."""
    out, k = [], 1
    while k < n_frames:
        out.append(k)
        k *= 2
    return tuple(out)


def _starts(n_frames: int, interval: int, count: int) -> list[int]:
    last = n_frames - 1 - interval
    return sorted({int(round(x)) for x in np.linspace(0, last, min(count, last + 1))})


@robophys_metric(
    "rbg_stability",
    family=Family.geometry,
    inputs={Input.video},
    description=(
        "Sustained stability: keep-ratio of feature matches (ORB, Lowe ratio test) that survive RANSAC "
        "two-view verification (fundamental matrix, or homography for planar/static pairs as in "
        "COLMAP), for frame pairs at intervals 1, 2, 4, ...; mean over intervals of the mean over "
        "pairs. robojudge uses "
        "OpenCV ORB/SIFT matching where the paper's pipeline uses COLMAP SfM matching."
    ),
    config=StabilityConfig,
    note="OpenCV ORB/SIFT matching and RANSAC verification instead of COLMAP SfM",
    version="2",
)
def rbg_stability(item: Item, config: StabilityConfig) -> Score:
    """Sustained Stability (RoboPhys-3D App. B.2.1): geometric drift as lost correct matches.

    For each interval ``k`` (default 1, 2, 4, ... below the clip length) up to ``pairs_per_interval``
    frame pairs ``(t, t + k)`` with evenly spread ``t`` are matched; a pair's keep-ratio is
    verified matches / tentative matches (:func:`verified_ratio`), 0 when fewer than ``min_matches``
    tentative matches exist. The score is the mean over intervals of the per-interval mean, in [0, 1];
    per-interval means are in ``details["per_interval"]``.

    A still video (every pair trivially verified, the best value 1) and a clip shorter than every
    configured interval are left unscored; frames with no features or no verified matches score 0.
    """
    frames, _ = native_rgb(item, config.size)
    gray = to_gray(frames)
    require_motion(gray)
    n = len(gray)
    intervals = tuple(k for k in (config.intervals or default_intervals(n)) if 0 < k < n)
    if not intervals:
        raise Unmeasurable(f"no frame interval in {config.intervals} fits a clip of {n} frames", frames=n)
    pts, descs = _features(gray, config)
    per_interval = {
        k: float(np.mean([_pair_ratio(t, t + k, pts, descs, config)
                          for t in _starts(n, k, config.pairs_per_interval)]))
        for k in intervals
    }
    return Score(value=float(np.mean(list(per_interval.values()))),
                 details={"frames": n, "per_interval": {str(k): v for k, v in per_interval.items()},
                          "mean_features": float(np.mean([len(p) for p in pts]))})
