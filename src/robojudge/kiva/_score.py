"""KIVA's measurements on keypoint tracks: link rigidity and jerk per 16-frame segment (numpy only).

Tracks are ``(T, K, 2)`` pixel positions with a ``(T, K)`` visibility mask. Both measures are 2D: the
reader predicts image positions only, so a rigid link's projected length also changes when the link
turns towards or away from the camera. That foreshortening is what the reference videos' calibration
absorbs: a threshold is a high percentile of the values real (reference) motion produces.

* **rigidity** of a segment: for every rigid link whose two ends are visible on at least
  :data:`MIN_FRAMES` of its frames and whose median length is at least ``min_link`` of the image
  diagonal, the coefficient of variation of its length (standard deviation over median); the
  segment's value is the largest over its links. Short links are left out because a pixel of reader
  noise is a large share of their length.
* **jerk** of a segment: the third finite difference of every keypoint's track over four consecutive
  frames where it is visible, times ``fps**3``, divided by the image diagonal (diagonals per second
  cubed); the value of a window is the mean over its keypoints, and the segment's value is the
  largest over the windows that end in it (a window may start in the previous segment, so a jump
  across a segment boundary is not lost).

A segment is invalid when either value is above its calibrated threshold; a video's KIVA is the
percentage of its measured segments that are invalid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SEGMENT = 16
"""Frames per segment, as the paper's human labels."""
MIN_SEGMENT = 8
"""A trailing segment shorter than this is not measured."""
MIN_FRAMES = 4
"""Frames a link needs in a segment to have a rigidity value."""
MIN_LINK = 0.03
"""Default shortest link measured, as a share of the image diagonal."""


def segments(n_frames: int, length: int = SEGMENT, min_length: int = MIN_SEGMENT) -> list[tuple[int, int]]:
    """``[start, stop)`` frame spans of consecutive segments; a short tail below ``min_length`` is dropped."""
    out = []
    for start in range(0, n_frames, length):
        stop = min(start + length, n_frames)
        if stop - start >= min_length:
            out.append((start, stop))
    return out


def link_lengths(tracks: np.ndarray, visible: np.ndarray, links: Sequence[tuple[int, int]]) -> np.ndarray:
    """``(T, L)`` pixel length of each link per frame, NaN where either end is not visible."""
    if not links:
        return np.zeros((len(tracks), 0))
    a = np.array([i for i, _ in links])
    b = np.array([j for _, j in links])
    lengths: np.ndarray = np.linalg.norm(tracks[:, a] - tracks[:, b], axis=-1).astype(np.float64)
    lengths[~(visible[:, a] & visible[:, b])] = np.nan
    return lengths


def rigidity(lengths: np.ndarray, diagonal: float, min_link: float = MIN_LINK) -> float:
    """Largest coefficient of variation of a measurable link's length over a segment; NaN if none is."""
    worst = math.nan
    for col in lengths.T:
        ok = col[~np.isnan(col)]
        if len(ok) < MIN_FRAMES:
            continue
        med = float(np.median(ok))
        if med < min_link * diagonal:
            continue
        cv = float(np.std(ok) / med)
        worst = cv if math.isnan(worst) else max(worst, cv)
    return worst


def window_jerk(tracks: np.ndarray, visible: np.ndarray, fps: float, diagonal: float) -> np.ndarray:
    """``(T,)`` jerk of the window ending at each frame (NaN for the first three and where no keypoint
    is visible on all four frames): mean over keypoints of ``|third difference| * fps**3 / diagonal``."""
    n = len(tracks)
    out = np.full(n, np.nan)
    if n < 4:
        return out
    d3 = tracks[3:] - 3 * tracks[2:-1] + 3 * tracks[1:-2] - tracks[:-3]
    ok = visible[3:] & visible[2:-1] & visible[1:-2] & visible[:-3]
    mag = np.linalg.norm(d3, axis=-1) * fps**3 / diagonal
    counts = ok.sum(axis=1)
    sums = np.where(ok, mag, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[3:] = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return out


def _nanmax(values: np.ndarray) -> float:
    ok = values[~np.isnan(values)]
    return float(ok.max()) if len(ok) else math.nan


@dataclass
class Tracks:
    """A video read by a reader: positions in the video's own pixels, visibility, and frame facts."""

    positions: np.ndarray  # (T, K, 2)
    visible: np.ndarray  # (T, K) bool
    probability: np.ndarray  # (T, K)
    fps: float
    width: int
    height: int

    @property
    def diagonal(self) -> float:
        return math.hypot(self.width, self.height)


@dataclass(frozen=True)
class SegmentValues:
    """The raw measures of one segment (NaN where the segment gives that measure nothing)."""

    start: int
    stop: int
    rigidity: float
    jerk: float
    visible: float  # share of (frame, keypoint) pairs the reader sees in the segment


def segment_values(
    tracks: np.ndarray,
    visible: np.ndarray,
    links: Sequence[tuple[int, int]],
    fps: float,
    diagonal: float,
    *,
    length: int = SEGMENT,
    min_length: int = MIN_SEGMENT,
    min_link: float = MIN_LINK,
) -> list[SegmentValues]:
    """Rigidity and jerk of every segment of a track (see the module doc)."""
    tracks = np.asarray(tracks, dtype=np.float64)
    visible = np.asarray(visible, dtype=bool)
    if tracks.ndim != 3 or tracks.shape[-1] != 2 or visible.shape != tracks.shape[:2]:
        raise ValueError(f"tracks must be (T, K, 2) with a (T, K) mask: {tracks.shape} and {visible.shape}")
    lengths = link_lengths(tracks, visible, links)
    jerk = window_jerk(tracks, visible, fps, diagonal)
    out = []
    for start, stop in segments(len(tracks), length, min_length):
        out.append(
            SegmentValues(
                start=start,
                stop=stop,
                rigidity=rigidity(lengths[start:stop], diagonal, min_link),
                jerk=_nanmax(jerk[start:stop]),
                visible=float(visible[start:stop].mean()) if visible.size else 0.0,
            )
        )
    return out


@dataclass(frozen=True)
class Thresholds:
    """Calibrated cuts: a segment is invalid above either. NaN: the reference videos never measured that
    part (no rigid link long enough in view, say), so it is not judged."""

    rigidity: float
    jerk: float


@dataclass
class SegmentVerdict:
    """One segment's values, verdicts and continuous score (the larger value-to-threshold ratio)."""

    values: SegmentValues
    rigid_bad: bool
    jerk_bad: bool
    score: float
    rigid_judged: bool = True
    jerk_judged: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return not math.isnan(self.score)

    @property
    def invalid(self) -> bool:
        return self.rigid_bad or self.jerk_bad

    def to_dict(self) -> dict[str, Any]:
        v = self.values

        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        return {
            "start": v.start,
            "stop": v.stop,
            "rigidity": num(v.rigidity),
            "jerk": num(v.jerk),
            "score": num(self.score),
            "invalid": self.invalid if self.measured else None,
            "rigidity_invalid": self.rigid_bad if self.rigid_judged else None,
            "jerk_invalid": self.jerk_bad if self.jerk_judged else None,
            "visible": round(v.visible, 4),
        }


def judge_segments(values: Sequence[SegmentValues], thresholds: Thresholds) -> list[SegmentVerdict]:
    """Each segment against the thresholds; a NaN measure, or a part without a threshold, neither passes
    nor fails that part."""
    out = []
    for v in values:
        rig_ok = not math.isnan(v.rigidity) and not math.isnan(thresholds.rigidity)
        jerk_ok = not math.isnan(v.jerk) and not math.isnan(thresholds.jerk)
        ratios = [x / t for x, t, ok in ((v.rigidity, thresholds.rigidity, rig_ok),
                                         (v.jerk, thresholds.jerk, jerk_ok)) if ok]
        out.append(
            SegmentVerdict(
                values=v,
                rigid_bad=bool(rig_ok and v.rigidity > thresholds.rigidity),
                jerk_bad=bool(jerk_ok and v.jerk > thresholds.jerk),
                score=max(ratios) if ratios else math.nan,
                rigid_judged=rig_ok,
                jerk_judged=jerk_ok,
            )
        )
    return out


def invalid_percentage(verdicts: Sequence[SegmentVerdict], part: str = "kiva") -> tuple[float, int]:
    """Percentage of measured segments that are invalid (``part``: ``kiva``, ``rigidity`` or ``jerk``)
    and how many segments were measured for it; NaN when none was."""
    if part == "kiva":
        measured = [v for v in verdicts if v.measured]
        bad = sum(v.invalid for v in measured)
    elif part == "rigidity":
        measured = [v for v in verdicts if v.rigid_judged]
        bad = sum(v.rigid_bad for v in measured)
    elif part == "jerk":
        measured = [v for v in verdicts if v.jerk_judged]
        bad = sum(v.jerk_bad for v in measured)
    else:
        raise ValueError(f"unknown KIVA part {part!r}; expected kiva, rigidity or jerk")
    if not measured:
        return math.nan, 0
    return 100.0 * bad / len(measured), len(measured)


def percentile_thresholds(values: Sequence[SegmentValues], percentile: float) -> Thresholds:
    """Thresholds at ``percentile`` of the reference segments' rigidity and jerk (NaNs left out); NaN for
    a part no reference segment measures.

    Raises:
        ValueError: No reference segment measures either part.
    """
    if not 0 < percentile <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {percentile}")
    rig = np.array([v.rigidity for v in values], dtype=np.float64)
    jerk = np.array([v.jerk for v in values], dtype=np.float64)
    rig, jerk = rig[~np.isnan(rig)], jerk[~np.isnan(jerk)]
    if not len(rig) and not len(jerk):
        raise ValueError(
            f"the reference videos give {len(rig)} segments with a rigidity value and {len(jerk)} with a "
            "jerk value; calibration needs one or the other (more reference videos, or ones where the "
            "robot is in view)"
        )

    def cut(x: np.ndarray) -> float:
        return float(np.percentile(x, percentile)) if len(x) else math.nan

    return Thresholds(cut(rig), cut(jerk))


def _or_none(x: float) -> float | None:
    return None if math.isnan(x) else x


@dataclass
class KivaResult:
    """A read video judged segment by segment; ``reason`` says why nothing could be measured."""

    verdicts: list[SegmentVerdict]
    thresholds: Thresholds
    frames: int
    visible: float
    reason: str | None = None

    def value(self, part: str = "kiva") -> tuple[float, int]:
        """:func:`invalid_percentage` of ``part`` and its measured segment count."""
        return invalid_percentage(self.verdicts, part)

    def details(self) -> dict[str, Any]:
        return {
            "frames": self.frames,
            "segments": [v.to_dict() for v in self.verdicts],
            "thresholds": {
                "rigidity": _or_none(self.thresholds.rigidity),
                "jerk": _or_none(self.thresholds.jerk),
            },
            "keypoints_visible": round(self.visible, 4),
        }


def judge_tracks(
    tracks: Tracks,
    links: Sequence[tuple[int, int]],
    thresholds: Thresholds,
    *,
    length: int = SEGMENT,
    min_length: int = MIN_SEGMENT,
    min_link: float = MIN_LINK,
) -> KivaResult:
    """Segments of a read video, measured and judged; a result with a ``reason`` when it has no
    full segment, the reader sees no keypoint, or no segment gives a rigidity or jerk value."""
    n = len(tracks.positions)
    seen = float(tracks.visible.mean()) if tracks.visible.size else 0.0
    reason: str | None = None
    if n < length:
        reason = f"the video has {n} frames; KIVA judges segments of {length} frames"
        return KivaResult([], thresholds, n, seen, reason)
    if not tracks.visible.any():
        reason = "the reader sees none of the robot's keypoints in any frame"
        return KivaResult([], thresholds, n, seen, reason)
    values = segment_values(tracks.positions, tracks.visible, links, tracks.fps, tracks.diagonal,
                            length=length, min_length=min_length, min_link=min_link)
    verdicts = judge_segments(values, thresholds)
    if not any(v.measured for v in verdicts):
        reason = "no segment has a rigid link long enough to measure nor a keypoint seen on 4 frames in a row"
    return KivaResult(verdicts, thresholds, n, seen, reason)
