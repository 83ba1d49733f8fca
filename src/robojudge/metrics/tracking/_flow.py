"""The weights-free default tracker: pyramidal Lucas-Kanade features plus appearance re-detection.

Region targets (objects, seeded by a first-frame mask) move by the median flow of their features,
then snap to the mode of a colour back-projection (mean shift); when the colour mass around them is
gone they are lost, and each later frame searches the whole image for a blob of the seed's colour and
size. Point targets (end effector, keypoints) move by the median flow of features picked on their
support (the robot) around them; features failing the forward-backward check or moving unlike the
rest are dropped, and when too few remain the target is re-detected by normalized cross-correlation
with its first-frame patch within a search window. See docs/tracks.md for the measured accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics.tracking._types import Target, Tracks, TrackSeed


class FlowTrackerConfig(BaseModel):
    """Settings of :class:`FlowTracker`; lengths as fractions of the frame's longer side."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lk_window: int = Field(default=15, ge=5, description="Lucas-Kanade window (pixels)")
    lk_levels: int = Field(default=3, ge=0, description="pyramid levels above the full image")
    fb_max: float = Field(default=1.0, gt=0, description="forward-backward error limit (pixels)")
    outlier_px: float = Field(default=2.0, gt=0, description="drop features moving this far from the median")
    max_features: int = Field(default=40, ge=3)
    min_features: int = Field(default=3, ge=1)
    point_radius: float = Field(default=0.05, gt=0, description="feature disk around a point target")
    hue_bins: int = Field(default=30, ge=4)
    sat_bins: int = Field(default=32, ge=4)
    min_mass: float = Field(default=0.3, gt=0, lt=1, description="colour mass (vs first frame) to be found")
    max_background: float = Field(
        default=0.5, gt=0, le=1,
        description="mean colour mass off the seed mask (vs in its box) from which a region is not tracked",
    )
    search: float = Field(default=0.15, gt=0, description="template search radius for a lost point")
    min_ncc: float = Field(default=0.6, gt=-1, lt=1, description="template correlation to re-detect a point")


@dataclass
class _State:
    target: Target
    point: np.ndarray  # (2,) float64, last known position
    feats: np.ndarray  # (K, 2) float32
    found: bool = True
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(2))
    box_wh: np.ndarray = field(default_factory=lambda: np.zeros(2))
    hist: np.ndarray | None = None  # region: object-vs-background colour ratio histogram
    seed_mass: float = 1.0
    patch: np.ndarray | None = None  # point: first-frame gray patch
    n_feats0: int = 1
    untracked: str | None = None  # why the target is not followed at all


class FlowTracker:
    """Weights-free tracker (registered as ``lk_flow``); options are :class:`FlowTrackerConfig` fields."""

    def __init__(self, **options: object) -> None:
        self.config = FlowTrackerConfig.model_validate(options)

    # -- setup -------------------------------------------------------------------------------
    def _radius(self, size: tuple[int, int]) -> int:
        return max(3, round(self.config.point_radius * max(size)))

    def _features(self, gray: np.ndarray, region: np.ndarray) -> np.ndarray:
        cfg = self.config
        pts = cv2.goodFeaturesToTrack(gray, cfg.max_features, 0.01, 2, mask=region.astype(np.uint8) * 255)
        found = np.zeros((0, 2), np.float32) if pts is None else pts.reshape(-1, 2).astype(np.float32)
        if len(found) >= cfg.min_features:
            return found
        ys, xs = np.nonzero(region)  # too little texture: a sparse grid over the region instead
        step = max(1, len(xs) // cfg.max_features)
        grid = np.stack([xs, ys], axis=1)[::step].astype(np.float32)
        return np.concatenate([found, grid])[: cfg.max_features]

    def _hist(self, hsv: np.ndarray, mask: np.ndarray) -> np.ndarray:
        cfg = self.config
        ranges = [0, 180, 0, 256]
        bins = [cfg.hue_bins, cfg.sat_bins]
        obj = _smooth(cv2.calcHist([hsv], [0, 1], mask.astype(np.uint8), bins, ranges))
        bg = _smooth(cv2.calcHist([hsv], [0, 1], (~mask).astype(np.uint8), bins, ranges))
        obj = obj / max(float(obj.sum()), 1e-12)
        bg = bg / max(float(bg.sum()), 1e-12)
        ratio = obj / (obj + bg + 1e-6)  # how much more typical of the object than of the rest
        out: np.ndarray = (255.0 * ratio).astype(np.float32)
        return out

    def _start(self, target: Target, gray: np.ndarray, hsv: np.ndarray) -> _State:
        h, w = gray.shape
        point = np.array(target.point, dtype=np.float64)
        if target.mask is not None:
            mask = target.mask.astype(bool)
            st = _State(
                target, point, self._features(gray, mask) if mask.any() else np.zeros((0, 2), np.float32)
            )
            if not mask.any():
                st.found = False
                return st
            ys, xs = np.nonzero(mask)
            st.box_wh = np.array([xs.max() - xs.min() + 1, ys.max() - ys.min() + 1], dtype=np.float64)
            st.hist = self._hist(hsv, mask)
            st.point = np.array([xs.mean() + 0.5, ys.mean() + 0.5])
            window = _window(st.point, st.box_wh, (w, h))
            bp = self._backproject(hsv, st.hist)
            st.seed_mass = max(1e-6, _blob(bp, window, st.box_wh)[1])
            rest = float(bp[~mask].mean()) if not mask.all() else 0.0
            if rest >= self.config.max_background * st.seed_mass:
                # The colour model cannot tell the target from the rest of the frame: the ratio histogram
                # is flat when mask and background show the same colours (a black frame: 0.5 everywhere),
                # so any window would pass as found at full confidence. Nothing to follow: lost. (A seed
                # mask on the object's pixels is well below: at most 0.03 on the demo suite's clips.)
                st.found, st.hist, st.feats = False, None, st.feats[:0]
                st.untracked = (
                    f"not tracked: on frame {target.start} the colours under its seed mask do not stand out "
                    f"from the rest of the frame (colour-model mass {rest:.2f} elsewhere, {st.seed_mass:.2f} "
                    "in the seed box)"
                )
                return st
        else:
            r = self._radius((w, h))
            disk = np.zeros((h, w), np.uint8)
            cv2.circle(disk, (int(point[0]), int(point[1])), r, 1, -1)
            region = disk.astype(bool) & (target.support if target.support is not None else True)
            st = _State(target, point, self._features(gray, region if region.any() else disk.astype(bool)))
            st.patch = _patch(gray, point, r)
        st.n_feats0 = max(1, len(st.feats))
        return st

    def _backproject(self, hsv: np.ndarray, hist: np.ndarray) -> np.ndarray:
        bp: np.ndarray = cv2.calcBackProject([hsv], [0, 1], hist, [0, 180, 0, 256], 1)
        return bp.astype(np.float32) / 255.0

    # -- per frame ---------------------------------------------------------------------------
    def track(self, frames: np.ndarray, seed: TrackSeed) -> Tracks:
        """Follow ``seed``'s targets through ``(T, H, W, 3)`` RGB ``frames`` (frame 0 is the seed's)."""
        if frames.ndim != 4 or frames.shape[-1] != 3:
            raise ValueError(f"frames must be (T, H, W, 3) RGB, got shape {frames.shape}")
        h, w = frames.shape[1:3]
        if (w, h) != seed.size:
            raise ValueError(f"seed is for {seed.size[0]}x{seed.size[1]} frames, video is {w}x{h}")
        n, length = len(seed.targets), len(frames)
        late = [t.name for t in seed.targets if not 0 <= t.start < length]
        if late:
            raise ValueError(f"targets {late} start after the video's {length} frames")
        points = np.full((length, n, 2), np.nan)
        boxes = np.full((length, n, 4), np.nan)
        conf = np.zeros((length, n))
        info = {"redetections": 0, "lost_frames": 0}
        untracked: dict[str, str] = {}
        states: list[_State | None] = [None] * n
        gray = cv2.cvtColor(frames[0], cv2.COLOR_RGB2GRAY)
        for t in range(length):
            nxt = gray if t == 0 else cv2.cvtColor(frames[t], cv2.COLOR_RGB2GRAY)
            hsv = cv2.cvtColor(frames[t], cv2.COLOR_RGB2HSV)
            live = [(i, st) for i, st in enumerate(states) if st is not None]  # started on earlier frames
            moved = self._flow(gray, nxt, [st for _, st in live]) if live else []
            for (i, st), (disp, good) in zip(live, moved, strict=True):
                was_found = st.found
                if st.target.is_region:
                    if st.hist is None:  # an empty seed mask: nothing to look for
                        continue
                    score = self._step_region(st, disp, self._backproject(hsv, st.hist), nxt)
                else:
                    score = self._step_point(st, disp, good, nxt)
                info["redetections"] += int(st.found and not was_found)
                info["lost_frames"] += int(not st.found)
                self._emit(st, t, i, points, boxes, conf, score)
            for i, target in enumerate(seed.targets):
                if target.start == t:
                    started = self._start(target, nxt, hsv)
                    states[i] = started
                    if started.untracked:
                        untracked[target.name] = started.untracked
                    self._emit(started, t, i, points, boxes, conf, 1.0)
            gray = nxt
        return Tracks(seed.names(), points, boxes, conf, (w, h), info, untracked)

    def _flow(
        self, prev: np.ndarray, nxt: np.ndarray, states: list[_State]
    ) -> list[tuple[np.ndarray | None, np.ndarray]]:
        """Median displacement and surviving features of each target (None: too few features)."""
        cfg = self.config
        counts = [len(s.feats) for s in states]
        out: list[tuple[np.ndarray | None, np.ndarray]] = [(None, s.feats[:0]) for s in states]
        if sum(counts) == 0:
            return out
        p0 = np.concatenate([s.feats for s in states]).reshape(-1, 1, 2)
        lk = {"winSize": (cfg.lk_window, cfg.lk_window), "maxLevel": cfg.lk_levels}
        p1, st1, _ = cv2.calcOpticalFlowPyrLK(prev, nxt, p0, None, **lk)  # type: ignore[call-overload]
        pb, st2, _ = cv2.calcOpticalFlowPyrLK(nxt, prev, p1, None, **lk)  # type: ignore[call-overload]
        fb = np.linalg.norm((pb - p0).reshape(-1, 2), axis=1)
        ok = (st1.ravel() == 1) & (st2.ravel() == 1) & (fb < cfg.fb_max)
        start = 0
        for i, c in enumerate(counts):
            sl = slice(start, start + c)
            start += c
            a, b, keep = p0[sl].reshape(-1, 2), p1[sl].reshape(-1, 2), ok[sl]
            if keep.sum() < cfg.min_features:
                continue
            d = b[keep] - a[keep]
            med = np.median(d, axis=0)
            inlier = np.linalg.norm(d - med, axis=1) <= cfg.outlier_px
            if inlier.sum() < cfg.min_features:
                continue
            out[i] = (np.median(d[inlier], axis=0).astype(np.float64), b[keep][inlier].astype(np.float32))
        return out

    def _step_region(self, st: _State, disp: np.ndarray | None, bp: np.ndarray, gray: np.ndarray) -> float:
        cfg = self.config
        h, w = bp.shape
        if st.found:
            pred = st.point + (disp if disp is not None else st.velocity)
            window = _window(pred, st.box_wh * 1.5, (w, h))
            criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 10, 0.5)
            _, shifted = cv2.meanShift(bp, window, criteria)
            window = (int(shifted[0]), int(shifted[1]), int(shifted[2]), int(shifted[3]))
            centre, mass = _blob(bp, window, st.box_wh)
            if centre is not None and mass >= cfg.min_mass * st.seed_mass:
                st.velocity = centre - st.point
                st.point = centre
                st.feats = self._features(gray, _box_mask(centre, st.box_wh, (w, h)))
                return min(1.0, mass / st.seed_mass)
            st.found = False
        centre, mass = _redetect(bp, st.box_wh, st.point, cfg.min_mass * st.seed_mass)
        if centre is None:
            return 0.0
        st.found, st.point, st.velocity = True, centre, np.zeros(2)
        st.feats = self._features(gray, _box_mask(centre, st.box_wh, (w, h)))
        return min(1.0, mass / st.seed_mass)

    def _step_point(self, st: _State, disp: np.ndarray | None, good: np.ndarray, gray: np.ndarray) -> float:
        h, w = gray.shape
        if st.found and disp is not None:
            st.point = st.point + disp
            st.feats = good
            return min(1.0, len(good) / st.n_feats0)
        st.found = False
        assert st.patch is not None
        r = self._radius((w, h))
        hit, ncc = _match(gray, st.patch, st.point, round(self.config.search * max(w, h)) + r)
        if hit is None or ncc < self.config.min_ncc:
            return 0.0
        disk = np.zeros((h, w), np.uint8)
        cv2.circle(disk, (int(hit[0]), int(hit[1])), r, 1, -1)
        feats = self._features(gray, disk.astype(bool))
        if len(feats) < self.config.min_features:
            return 0.0
        st.found, st.point, st.feats = True, hit, feats
        st.n_feats0 = max(st.n_feats0, len(feats))
        return float(ncc)

    def _emit(
        self,
        st: _State,
        t: int,
        i: int,
        points: np.ndarray,
        boxes: np.ndarray,
        conf: np.ndarray,
        score: float,
    ) -> None:
        if not st.found:
            return
        points[t, i] = st.point
        conf[t, i] = score
        if st.target.is_region:
            half = st.box_wh / 2.0
            boxes[t, i] = [*(st.point - half), *(st.point + half)]


def _smooth(hist: np.ndarray) -> np.ndarray:
    """Blur a hue x saturation histogram by about one bin, wrapping hue (red sits at both ends),
    so compression noise that moves a colour into a neighbouring bin does not lose the object."""
    padded = np.pad(hist.astype(np.float32), ((2, 2), (0, 0)), mode="wrap")
    blurred = cv2.GaussianBlur(padded, (5, 5), 1.0, borderType=cv2.BORDER_REPLICATE)
    return np.asarray(blurred[2:-2], dtype=np.float64)


def _patch(gray: np.ndarray, point: np.ndarray, r: int) -> np.ndarray:
    padded = cv2.copyMakeBorder(gray, r, r, r, r, cv2.BORDER_REPLICATE)
    x, y = int(round(point[0])), int(round(point[1]))
    x, y = min(max(x, 0), gray.shape[1] - 1), min(max(y, 0), gray.shape[0] - 1)
    return padded[y : y + 2 * r + 1, x : x + 2 * r + 1].copy()


def _match(
    gray: np.ndarray, patch: np.ndarray, near: np.ndarray, radius: int
) -> tuple[np.ndarray | None, float]:
    """Best normalized cross-correlation of ``patch`` with its centre within ``radius`` of ``near``."""
    r = patch.shape[0] // 2
    padded = cv2.copyMakeBorder(gray, r, r, r, r, cv2.BORDER_REPLICATE)
    h, w = gray.shape
    x0, y0 = max(0, int(near[0]) - radius), max(0, int(near[1]) - radius)
    x1, y1 = min(w - 1, int(near[0]) + radius), min(h - 1, int(near[1]) + radius)
    if x1 < x0 or y1 < y0:
        return None, -1.0
    area = padded[y0 : y1 + 2 * r + 1, x0 : x1 + 2 * r + 1]
    if float(patch.std()) == 0.0:
        return None, -1.0
    res = cv2.matchTemplate(area, patch, cv2.TM_CCOEFF_NORMED)
    _, best, _, loc = cv2.minMaxLoc(res)
    return np.array([x0 + loc[0], y0 + loc[1]], dtype=np.float64), float(best)


def _window(centre: np.ndarray, wh: np.ndarray, size: tuple[int, int]) -> tuple[int, int, int, int]:
    w, h = size
    bw, bh = max(2, int(round(wh[0]))), max(2, int(round(wh[1])))
    x = int(round(centre[0] - bw / 2))
    y = int(round(centre[1] - bh / 2))
    x, y = min(max(x, 0), max(0, w - bw)), min(max(y, 0), max(0, h - bh))
    return x, y, min(bw, w), min(bh, h)


def _box_mask(centre: np.ndarray, wh: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    x, y, bw, bh = _window(centre, wh, size)
    m = np.zeros((size[1], size[0]), bool)
    m[y : y + bh, x : x + bw] = True
    return m


def _blob(
    bp: np.ndarray, window: tuple[int, int, int, int], wh: np.ndarray
) -> tuple[np.ndarray | None, float]:
    """Weighted centroid and mean back-projection (per seed-box pixel) inside ``window``."""
    x, y, bw, bh = window
    sub = bp[y : y + bh, x : x + bw]
    total = float(sub.sum())
    if total <= 0:
        return None, 0.0
    ys, xs = np.mgrid[y : y + bh, x : x + bw]
    centre = np.array([(xs * sub).sum() / total + 0.5, (ys * sub).sum() / total + 0.5])
    return centre, total / max(1.0, float(wh[0] * wh[1]))


def _redetect(
    bp: np.ndarray, wh: np.ndarray, last: np.ndarray, min_mass: float
) -> tuple[np.ndarray | None, float]:
    """The seed-sized blob of the target's colour nearest to its last position, if any is strong enough."""
    kw, kh = max(1, int(round(wh[0]))), max(1, int(round(wh[1])))
    density = cv2.boxFilter(bp, -1, (kw, kh), normalize=True)  # mean back-projection per box position
    peaks = (density >= min_mass) & (density == cv2.dilate(density, np.ones((kw, kh), np.uint8)))
    ys, xs = np.nonzero(peaks)
    if len(xs) == 0:
        return None, 0.0
    d = np.hypot(xs + 0.5 - last[0], ys + 0.5 - last[1])
    k = int(np.argmin(d))
    window = _window(np.array([xs[k] + 0.5, ys[k] + 0.5]), wh, (bp.shape[1], bp.shape[0]))
    return _blob(bp, window, wh)
