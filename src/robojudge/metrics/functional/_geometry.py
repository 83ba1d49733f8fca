"""Camera control and sustained stability from 2-D feature geometry (RoboPhys-3D App. B.2.3, B.2.1).

The paper recovers camera poses with DROID-SLAM (camera control, citing WorldScore) and counts the
SfM matches COLMAP keeps over growing frame intervals (sustained stability, citing [33]). robojudge
uses classical OpenCV tools that need no weights: KLT tracks and RANSAC homographies for the
background drift of a fixed camera (``ctg_camera_control``), ORB/SIFT matches verified by two-view
geometry (``rbg_stability``). Values keep each paper's quantity and direction, not its numbers.

Both take grayscale frames ``(T, H, W)`` uint8.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import cv2
import numpy as np

from robojudge.metrics._errors import Unmeasurable

# -- camera control (App. B.2.3) --------------------------------------------------------------------

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
    means: ``(N, 441)`` float64, the form :func:`correlate_patches` compares."""
    out = np.stack([cv2.getRectSubPix(img, (_WINDOW, _WINDOW), (float(x), float(y)))
                    for x, y in pts.reshape(-1, 2)]).reshape(len(pts), -1).astype(np.float64)
    out -= out.mean(axis=1, keepdims=True)
    return out


def correlate_patches(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Pearson correlation of the rows of two :func:`patches` arrays; 0 where a patch is flat.

    >>> p = np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    >>> correlate_patches(p, np.array([[2.0, -2.0, 0.0], [1.0, -1.0, 0.0]])).round(9).tolist()
    [1.0, 0.0]
    """
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

    >>> a = np.random.default_rng(0).integers(0, 256, (40, 40)).astype(np.uint8)
    >>> dimmed = (a * 0.5 + 20).astype(np.uint8)  # the same content under other lighting
    >>> pts = np.array([[20.0, 20.0]], np.float32)
    >>> patch_correlations(a, dimmed, pts, pts).round(2).tolist()
    [1.0]
    >>> bool(patch_correlations(a, a.T, pts, pts)[0] < 0.5)  # other content
    True
    """
    if len(pa) == 0:
        return np.zeros(0)
    return correlate_patches(patches(a, pa), patches(b, pb))


def contrast_normalized(gray: np.ndarray) -> np.ndarray:
    """Each frame mapped to mean 128 and standard deviation 40 (uint8), so a global change of brightness
    or contrast (lighting flicker) does not break the brightness constancy that LK tracking assumes.

    >>> contrast_normalized(np.array([[[0, 10], [0, 10]]], np.uint8)).tolist()
    [[[88, 168], [88, 168]]]
    """
    # Frame by frame: the same float32 reductions as over axes (1, 2) of the whole clip (each frame's
    # pixels are contiguous either way), without a float32 copy of the clip.
    out = np.empty(gray.shape, np.uint8)
    buffer = np.empty(gray.shape[1:], np.float32)
    for t in range(len(gray)):
        _normalize_frame(gray[t], buffer, out[t])
    return out


def _normalize_frame(frame: np.ndarray, buffer: np.ndarray, out: np.ndarray) -> np.ndarray:
    """One frame of :func:`contrast_normalized`, written to ``out`` through the float32 ``buffer``.

    The steps of ``clip(128 + 40 (f - mean) / std, 0, 255)`` run in place, in the order and precision
    of that expression, so the result is the same bit for bit without its temporaries.
    """
    np.copyto(buffer, frame)
    mean = buffer.mean(keepdims=True)
    std = np.maximum(buffer.std(keepdims=True), 1e-3)
    buffer -= mean
    np.multiply(40.0, buffer, out=buffer)
    buffer /= std
    np.add(128.0, buffer, out=buffer)
    np.clip(buffer, 0, 255, out=buffer)
    np.copyto(out, buffer, casting="unsafe")
    return out


def corner_drift(h_0t: np.ndarray, width: int, height: int) -> float:
    """Mean displacement (px) of the four image corners under the frame-0-to-t homography.

    >>> corner_drift(np.array([[1.0, 0, 3], [0, 1, 4], [0, 0, 1]]), 64, 48)  # a (3, 4) translation
    5.0
    """
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64).reshape(-1, 1, 2)
    moved = cv2.perspectiveTransform(corners, h_0t)
    return float(np.linalg.norm((moved - corners).reshape(-1, 2), axis=1).mean())


class BackgroundMotion(NamedTuple):
    """The fitted background motion of a clip, frame by frame."""

    homographies: list[np.ndarray]  # H_0t for every frame, the identity first
    lost: np.ndarray  # (T,) bool: tracking lost at frame t (never at 0)
    corners: int  # Shi-Tomasi corners seeded on frame 0


def background_homographies(
    gray: np.ndarray,
    *,
    max_corners: int = 500,
    quality_level: float = 0.003,
    min_distance: float = 5.0,
    fb_max_px: float = 1.0,
    min_patch_correlation: float = 0.5,
    ransac_px: float = 1.0,
    min_inliers: int = 8,
) -> BackgroundMotion:
    """Homographies ``H_0t`` (frame-0 pixels to frame-t pixels) of the dominant (background) motion.

    Frames are contrast-normalized (:func:`contrast_normalized`). Up to ``max_corners`` Shi-Tomasi
    corners of frame 0 (``quality_level``, ``min_distance`` px apart) are tracked directly from frame
    0 to each frame t with pyramidal LK, starting from where ``H_0(t-1)`` puts them, and kept when the
    track back to frame 0 lands within ``fb_max_px`` and the patches around the two ends correlate
    (:func:`patch_correlations`, ``min_patch_correlation``). ``H_0t`` is fitted to the kept pairs by
    RANSAC (``ransac_px``), so the moving robot and objects, which break the round trip or the model,
    fall out. Tracking against frame 0 rather than chaining frame-to-frame steps keeps static
    background points exact however long the clip. A frame with fewer than ``min_inliers`` inliers
    keeps the previous homography (the starting guess for the next frame) and is marked lost.

    Raises:
        Unmeasurable: (a ``ValueError``) when frame 0 has fewer than ``min_inliers`` corners (a blank
            frame): there is no background to follow, and every later frame would be lost.

    >>> rng = np.random.default_rng(0)
    >>> texture = cv2.GaussianBlur(rng.integers(0, 256, (96, 128)).astype(np.float32), (0, 0), 1.5)
    >>> texture = cv2.normalize(texture, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    >>> homs, lost, corners = background_homographies(np.stack([texture[:, t:t + 96] for t in range(3)]))
    >>> [round(float(h[0, 2])) for h in homs], lost.tolist()  # the content moves 1 px left per frame
    ([0, -1, -2], [False, False, False])
    """
    # Frames are normalized as they are read (:func:`contrast_normalized` frame by frame): a normalized
    # copy of the whole clip would be a third of its RGB bytes, and on a VM touching that much fresh
    # memory costs about as much as the arithmetic.
    buffer = np.empty(gray.shape[1:], np.float32)
    first = _normalize_frame(gray[0], buffer, np.empty(gray.shape[1:], np.uint8))
    frame = np.empty_like(first)
    found = cv2.goodFeaturesToTrack(first, max_corners, quality_level, min_distance)
    p0 = np.zeros((0, 1, 2), np.float32) if found is None else found.astype(np.float32)
    if len(p0) < min_inliers:
        raise Unmeasurable(f"the first frame has {len(p0)} trackable corners, fewer than min_inliers "
                           f"({min_inliers}): no background to follow", frames=len(gray), corners=len(p0))
    # Frame 0's patches are the same for every frame t: extracted once (about half of the per-frame
    # patch work), then picked by each frame's surviving tracks.
    patches0 = patches(first, p0)
    h_0t, out, lost = np.eye(3), [np.eye(3)], np.zeros(len(gray), bool)
    for t in range(1, len(gray)):
        kept = 0
        if len(p0) >= min_inliers:
            _normalize_frame(gray[t], buffer, frame)
            guess = cv2.perspectiveTransform(p0.astype(np.float64), h_0t).astype(np.float32)
            pt, ok = _track(first, frame, p0, guess)
            back, ok_back = _track(frame, first, pt, p0)
            ok &= ok_back & (np.linalg.norm(back - p0, axis=-1).ravel() < fb_max_px)
            if ok.any():
                corr = correlate_patches(patches0[ok], patches(frame, pt[ok]))
                ok[ok] = corr >= min_patch_correlation
            if ok.sum() >= min_inliers:
                h, mask = cv2.findHomography(p0[ok], pt[ok], cv2.RANSAC, ransac_px)
                if h is not None and int(mask.sum()) >= min_inliers:
                    h_0t, kept = h, int(mask.sum())
        lost[t] = kept == 0
        out.append(h_0t)
    return BackgroundMotion(out, lost, len(p0))


class CameraControl(NamedTuple):
    """:func:`camera_control`'s value and the drift behind it."""

    value: float
    drift: np.ndarray  # (T - 1,) px per frame after the first, at most the diagonal (a lost frame's)
    lost_frames: int
    corners: int
    #: Frames whose fitted homography moved the corners farther than the diagonal (counted as the
    #: diagonal): a wild fit to a few tracks on a flat background, not a larger failure than a lost frame.
    frames_beyond_diagonal: int = 0


def camera_control(
    gray: np.ndarray,
    *,
    max_corners: int = 500,
    quality_level: float = 0.003,
    min_distance: float = 5.0,
    fb_max_px: float = 1.0,
    min_patch_correlation: float = 0.5,
    ransac_px: float = 1.0,
    min_inliers: int = 8,
) -> CameraControl:
    """Camera Control (RoboPhys-3D App. B.2.3) of a fixed-view clip: ``clip(1 - mean_t drift_t / diagonal,
    0, 1)``, 1 when the background does not move.

    With a fixed camera the true mapping of the background is the identity, so the drift at frame t
    is how far the image corners move under the fitted background homography ``H_0t``
    (:func:`background_homographies`, whose keyword arguments these are; :func:`corner_drift`). A
    frame where the frame-0 background can no longer be tracked counts as drifted by the whole
    diagonal (robojudge's rule: for a fixed camera, losing the background is the failure looked for).
    No frame counts more than that: a homography fitted to a few tracks on a flat wall can throw the
    corners thousands of px away, and such a frame counts as the diagonal, as a lost one does
    (``frames_beyond_diagonal`` counts them).

    >>> rng = np.random.default_rng(0)
    >>> texture = cv2.GaussianBlur(rng.integers(0, 256, (96, 128)).astype(np.float32), (0, 0), 1.5)
    >>> texture = cv2.normalize(texture, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    >>> pan = np.stack([texture[:, t:t + 96] for t in range(4)])  # the view slides 1 px per frame
    >>> res = camera_control(pan)
    >>> res.drift.round(1).tolist(), res.lost_frames  # corners move 1, 2, 3 px
    ([1.0, 2.0, 3.0], 0)
    >>> round(res.value, 3), round(float(1 - 2 / np.hypot(96, 96)), 3)  # mean drift 2 px of a 136 px diagonal
    (0.985, 0.985)

    Raises:
        Unmeasurable: (a ``ValueError``) when frame 0 has fewer than ``min_inliers`` corners.
    """
    h, w = gray.shape[1:3]
    homs, lost, corners = background_homographies(
        gray, max_corners=max_corners, quality_level=quality_level, min_distance=min_distance,
        fb_max_px=fb_max_px, min_patch_correlation=min_patch_correlation, ransac_px=ransac_px,
        min_inliers=min_inliers,
    )
    diagonal = float(np.hypot(w, h))
    fitted = np.array([diagonal if gone else corner_drift(m, w, h)
                       for m, gone in zip(homs[1:], lost[1:], strict=True)])
    # A frame's drift is capped at the diagonal: a degenerate fit is no worse than losing the frame (on a
    # real static-camera crop, uncapped, one such frame outweighed a lost frame 20 times).
    drift = np.minimum(fitted, diagonal)
    value = float(np.clip(1.0 - drift.mean() / diagonal, 0.0, 1.0))
    return CameraControl(value, drift, int(lost.sum()), corners, int(np.count_nonzero(fitted > diagonal)))


# -- sustained stability (App. B.2.1) ---------------------------------------------------------------

#: COLMAP's ``max_H_inlier_ratio``: when H explains this share of F's inliers, the pair is planar/static.
def verified_ratio(p1: np.ndarray, p2: np.ndarray, ransac_px: float) -> float:
    """Share of tentative matches ``p1[i] <-> p2[i]`` that survive two-view geometric verification.

    As in COLMAP's two-view geometry (``EstimateUncalibratedTwoViewGeometry``), a fundamental matrix and
    a homography are both fitted with RANSAC, and the pair keeps the larger inlier set: F's, or H's when
    it has at least as many (COLMAP's ``max_H_inlier_ratio`` only labels the pair planar). Matches on an
    object that moves over a static background fit F and not the background's homography, so they
    count. Needs at least 8 matches (the caller enforces it).

    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0, 100, (20, 2)).astype(np.float32)
    >>> p2 = p1 + (3.0, 1.0)  # one rigid shift: every match verifies
    >>> verified_ratio(p1, p2, 2.0)
    1.0
    >>> p2[:4] = rng.uniform(0, 100, (4, 2))  # four matches point anywhere
    >>> verified_ratio(p1, p2, 2.0)  # H keeps 16; F, under-determined by a shift, absorbs two more
    0.9
    """
    f, mask_f = cv2.findFundamentalMat(p1, p2, cv2.FM_RANSAC, ransac_px, 0.999)
    h, mask_h = cv2.findHomography(p1, p2, cv2.RANSAC, ransac_px)
    # Where RANSAC finds no model OpenCV returns the mask unwritten, holding whatever that memory held
    # before (values up to 255, other each time): no model, no inliers.
    n_f = 0 if f is None or mask_f is None else int(np.count_nonzero(mask_f))
    n_h = 0 if h is None or mask_h is None else int(np.count_nonzero(mask_h))
    return max(n_f, n_h) / len(p1)


def default_intervals(n_frames: int) -> tuple[int, ...]:
    """Powers of two below the clip length: 1, 2, 4, ..., largest < ``n_frames``.

    >>> default_intervals(9), default_intervals(1)
    ((1, 2, 4, 8), ())
    """
    out, k = [], 1
    while k < n_frames:
        out.append(k)
        k *= 2
    return tuple(out)


def _starts(n_frames: int, interval: int, count: int) -> list[int]:
    last = n_frames - 1 - interval
    return sorted({int(round(x)) for x in np.linspace(0, last, min(count, last + 1))})


def _detector(detector: str, n_features: int) -> cv2.Feature2D:
    """A new ORB or SIFT detector (a seam for tests that count detections)."""
    return cv2.ORB.create(n_features) if detector == "orb" else cv2.SIFT.create(n_features)


class _Features:
    """Each frame's features, detected when a pair first reads the frame.

    Only the frames of the sampled pairs are read: on long clips a third of them or fewer (112 of 300
    frames with the default intervals), and detection is most of the metric's time. A frame's features
    do not depend on the other frames, so the values are those of detecting every frame.
    """

    def __init__(self, gray: np.ndarray, detector: str, n_features: int) -> None:
        self.gray = gray
        self.det = _detector(detector, n_features)
        self.points: dict[int, np.ndarray] = {}
        self.descriptors: dict[int, np.ndarray | None] = {}

    def __getitem__(self, t: int) -> tuple[np.ndarray, np.ndarray | None]:
        if t not in self.points:
            if min(self.gray[t].shape[:2]) < 2:  # OpenCV's detector pyramids fail on one pixel: no features
                self.points[t], self.descriptors[t] = np.zeros((0, 2), np.float32), None
            else:
                kps, d = self.det.detectAndCompute(self.gray[t], None)
                self.points[t] = np.array([k.pt for k in kps], np.float32).reshape(-1, 2)
                self.descriptors[t] = d
        return self.points[t], self.descriptors[t]


def _pair_ratio(i: int, j: int, feats: _Features, detector: str, ratio: float, ransac_px: float,
                min_matches: int) -> float:
    (p_i, d1), (p_j, d2) = feats[i], feats[j]
    if d1 is None or d2 is None or len(d1) < 2 or len(d2) < 2:
        return 0.0
    norm = cv2.NORM_HAMMING if detector == "orb" else cv2.NORM_L2
    knn = cv2.BFMatcher(norm).knnMatch(d1, d2, k=2)
    good = [m[0] for m in knn if len(m) == 2 and m[0].distance < ratio * m[1].distance]
    if len(good) < min_matches:
        return 0.0
    p1 = p_i[[m.queryIdx for m in good]]
    p2 = p_j[[m.trainIdx for m in good]]
    return verified_ratio(p1, p2, ransac_px)


class Stability(NamedTuple):
    """:func:`sustained_stability`'s value, its per-interval means and the mean feature count of the
    frames it matched."""

    value: float
    per_interval: dict[int, float]
    mean_features: float


def sustained_stability(
    gray: np.ndarray,
    *,
    detector: Literal["orb", "sift"] = "orb",
    n_features: int = 1000,
    ratio: float = 0.8,
    ransac_px: float = 2.0,
    min_matches: int = 8,
    intervals: tuple[int, ...] | None = None,
    pairs_per_interval: int = 8,
) -> Stability:
    """Sustained Stability (RoboPhys-3D App. B.2.1): the keep-ratio of correct matches over growing
    frame intervals, in [0, 1].

    For each interval ``k`` (default :func:`default_intervals`; those not below the clip length are
    dropped) up to ``pairs_per_interval`` frame pairs ``(t, t + k)`` with evenly spread ``t`` are
    matched: ``n_features`` ORB (or SIFT) features per frame, brute-force matching with Lowe's ratio
    test (``ratio``); a pair's keep-ratio is verified / tentative matches (:func:`verified_ratio`,
    ``ransac_px``), 0 with fewer than ``min_matches`` tentative matches. The value is the mean over
    intervals of the per-interval mean.

    >>> blank = np.zeros((3, 32, 32), np.uint8)  # no features: every pair keeps 0
    >>> sustained_stability(blank)
    Stability(value=0.0, per_interval={1: 0.0, 2: 0.0}, mean_features=0.0)

    Raises:
        Unmeasurable: (a ``ValueError``) when no interval fits the clip.
    """
    n = len(gray)
    fits = tuple(k for k in (intervals or default_intervals(n)) if 0 < k < n)
    if not fits:
        raise Unmeasurable(f"no frame interval in {intervals} fits a clip of {n} frames", frames=n)
    feats = _Features(gray, detector, n_features)
    per_interval = {
        k: float(np.mean([_pair_ratio(t, t + k, feats, detector, ratio, ransac_px, min_matches)
                          for t in _starts(n, k, pairs_per_interval)]))
        for k in fits
    }
    return Stability(float(np.mean(list(per_interval.values()))), per_interval,
                     float(np.mean([len(p) for p in feats.points.values()])))
