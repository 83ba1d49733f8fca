"""KIVA's measurements on keypoint tracks: link rigidity and jerk per 16-frame segment (numpy only).

Tracks are ``(T, K, 2)`` pixel positions with a ``(T, K)`` visibility mask. Both measures are 2D: the
reader predicts image positions only, so a rigid link's projected length also changes when the link
turns towards or away from the camera. That foreshortening is what the reference videos' calibration
absorbs: a threshold is a high percentile of the values real (reference) motion produces.

* **rigidity** of a segment: for every rigid link whose two ends are visible on at least
  :data:`MIN_FRAMES` of its frames and whose median length is at least ``min_link`` of the image
  diagonal, the coefficient of variation of its length (standard deviation over median); the
  segment's value is the largest over its links. Short links are left out because a pixel of reader
  noise is a large share of their length. Since measure version 6 the lengths are relative
  (:func:`relative_lengths`: each link over the frame's scale, read from the robot's other links), so a
  robot that comes towards the camera, or a zoom, no longer looks like every link stretching; and a link
  is judged short by its median over the whole video, so one that shrinks in a segment stays measured.
* **jerk** of a segment: the third finite difference of every keypoint's track over four consecutive
  frames where it is visible, times ``fps**3``, divided by the image diagonal (diagonals per second
  cubed); the value of a window is the mean over its keypoints, and the segment's value is the
  largest over its windows (:func:`jerk_window_span`; since measure version 7, ``lead``: the windows
  whose frames lie in the segment, and the one that reaches back a single frame into the segment before,
  never forward into the next). A jump between the last frame of one segment and the first of the next
  counts in the next one, where the robot lands; a failure that ends before a boundary does not flag the
  segment after it unless it ends exactly there.
  Frames that repeat the previous one (:func:`held_frames`: a slowed replay, a frame-rate conversion)
  are left out of the jerk: the robot did not move between them, and keeping them makes a jerk of
  twice the robot's speed out of a benign hitch. A segment whose every frame repeats the one before
  (a frozen picture) gives no value at all (:attr:`SegmentValues.frozen`): links that hold their
  lengths in a still picture say nothing about the robot's kinematics.
* **finger crossing** of a segment (robojudge's addition; the paper's KIVA is rigidity and jerk; only
  for robots with finger pairs): two fingers that close towards each other keep their sides of the
  hand's axis; :func:`finger_crossing` is how far a pair is on the wrong side, as a share of the
  diagonal, and the segment's value is the largest over its frames and pairs.
* **finger gap** of a segment (measure version 5, robojudge's addition with the crossing): the smallest
  2D distance between the two fingers of a pair over its frames and pairs, as a share of the diagonal
  (:func:`finger_gaps`). A pass of one finger through the other goes through a gap of nothing, and a
  reader that reads the fingers coming together often does not read them crossed; the segment is invalid
  when the gap is below the references' low percentile (the complement of the other parts' percentile).

A segment is invalid when any value is above its calibrated threshold (the finger gap: below); a video's
KIVA is the percentage of its measured segments that are invalid.

Per-part scales (measure version 4, :func:`part_scales`, :func:`apply_scales`): each link's coefficient of
variation and each keypoint's window jerk are first divided by that part's own spread over the reference
segments, so a link that foreshortens in every reference or a keypoint the reader reads noisily no longer
sets the cut for the stiff and quiet ones; the thresholds are then drawn from the scaled values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SEGMENT = 16
"""Frames per segment, as the paper's human labels."""
MIN_SEGMENT = 8
"""A trailing segment shorter than this is not measured."""
MIN_FRAMES = 4
"""Frames a link needs in a segment to have a rigidity value."""
STILL_MOTION = 0.01
"""A video whose robot moves less than this share of the image diagonal (:func:`robot_motion`) is not
judged: a robot that stands still has no kinematics to get wrong. Measured (docs/kiva.md, "Frozen and still
videos"): readers read a still picture with noise added to within 0.14% of the diagonal; the robots of
the simulator suites move at least 7.5% of it in every reference and rollout."""
CONFIDENCE_RATIO = 0.5
"""A video is not judged when the reader's confidence in it (:func:`reader_confidence`) is below this share
of its confidence on the references it was calibrated on: the reader does not recognise its robot there (a
video of another robot, of no robot, or one it cannot follow), and its reads would be guesses. Measured
(docs/kiva.md, "A robot the reader does not recognise"): each simulated robot's 128 px reader keeps at
least 0.79 of its references' confidence on every rollout (planted failures included, softened too), and
falls to 0.06-0.44 of it on the other robots (but one pair: ALOHA's reader on the Panda, 0.56-0.69),
uniform noise and a textured pan."""
MIN_LINK = 0.03
"""Default shortest link measured, as a share of the image diagonal."""
MIN_FINGER = 0.002
"""Lowest finger threshold, as a share of the image diagonal: references whose fingers never cross give a
percentile of exactly 0, and any sub-pixel wobble would then flag a segment."""

FingerPair = tuple[int, int, int]
"""Keypoint indices ``(finger a, finger b, hand)``: the hand's axis runs from the hand keypoint to the
midpoint of the two fingers."""
GAP_FLOOR = 1e-3
"""Smallest finger gap a ratio is taken against, as a share of the diagonal (a fifth of a pixel at
128 x 128): fingers read at the very same point give a large ratio, not an infinite one."""


def segments(n_frames: int, length: int = SEGMENT, min_length: int = MIN_SEGMENT) -> list[tuple[int, int]]:
    """``[start, stop)`` frame spans of consecutive segments of ``length`` frames; after them a shorter tail
    is kept when it has at least ``min_length`` frames. A clip shorter than ``length`` has no segment (KIVA
    judges a video only from its first whole segment on, :func:`judge_tracks`).

    Raises:
        ValueError: ``min_length`` above ``length`` (no tail could be kept) or below 1.
    """
    if not 1 <= min_length <= length:
        raise ValueError(f"min_segment ({min_length}) must be at least 1 and at most segment ({length})")
    if n_frames < length:
        return []
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


MIN_SCALE_LINKS = 2
"""Other links a frame needs seen to give a link's relative length (:func:`relative_lengths`)."""


def typical_lengths(lengths: np.ndarray) -> np.ndarray:
    """``(L,)`` each link's median pixel length over the frames it is seen in; NaN for one never seen."""
    out = np.full(lengths.shape[1], np.nan)
    for j, col in enumerate(lengths.T):
        ok = col[~np.isnan(col)]
        if len(ok):
            out[j] = float(np.median(ok))
    return out


def relative_lengths(lengths: np.ndarray, min_links: int = MIN_SCALE_LINKS,
                     typical: np.ndarray | None = None) -> np.ndarray:
    """``(T, L)`` each link's length divided by the frame's scale (measure version 6).

    A link's scale in a frame is read from the *other* links seen in that frame: the sum of their lengths
    over the sum of their typical lengths (:func:`typical_lengths`), i.e. how much longer than usual they
    are together, each weighted by its length (a long link is read to a smaller share of its length than
    a short one). A robot that moves towards or away from the camera, or a camera that zooms, scales every
    link alike: a link's ratio to that scale stays put, while a link that stretches or shrinks on its own
    still changes it. Leaving the link itself out keeps a stretch from hiding in its own scale. Where fewer
    than ``min_links`` other links are seen the pixel length is kept (a robot with one or two links in
    view is measured as before); NaN stays NaN. The values stay in pixels of the typical scale, so
    :func:`link_cvs` treats them as lengths. ``typical``: the links' typical lengths when already at hand
    (else taken from ``lengths``).
    """
    lengths = np.asarray(lengths, dtype=np.float64)
    n_links = lengths.shape[1]
    if n_links < min_links + 1:
        return lengths.copy()
    if typical is None:
        typical = typical_lengths(lengths)
    seen = ~np.isnan(lengths) & (typical > 0)[None, :]
    now = np.where(seen, lengths, 0.0)
    usual = np.where(seen, typical[None, :], 0.0)
    count, now_sum, usual_sum = seen.sum(axis=1), now.sum(axis=1), usual.sum(axis=1)
    out = lengths.copy()
    for j in range(n_links):
        # The other links' sums: this link's own share taken out where it is seen.
        others = count - seen[:, j]
        enough = others >= min_links
        scale = (now_sum - now[:, j])[enough] / (usual_sum - usual[:, j])[enough]
        out[enough, j] = lengths[enough, j] / scale
    return out


def link_cvs(lengths: np.ndarray, diagonal: float, min_link: float = MIN_LINK,
             typical: np.ndarray | None = None) -> np.ndarray:
    """``(L,)`` coefficient of variation of each link's length over a segment; NaN for a link seen on
    fewer than :data:`MIN_FRAMES` frames or shorter than ``min_link`` of the diagonal: its median in the
    segment, or with ``typical`` (``(L,)``, :func:`typical_lengths` of the whole video; version 6) its
    typical length, so a link that shrinks within the segment is still measured."""
    out = np.full(lengths.shape[1], np.nan)
    for j, col in enumerate(lengths.T):
        ok = col[~np.isnan(col)]
        if len(ok) < MIN_FRAMES:
            continue
        med = float(np.median(ok))
        gate = med if typical is None or np.isnan(typical[j]) else float(typical[j])
        if gate < min_link * diagonal:
            continue
        # (a link read at no length on most of the segment's frames is measured against its typical one)
        out[j] = float(np.std(ok) / (med if med > 0 else gate))
    return out


def rigidity(lengths: np.ndarray, diagonal: float, min_link: float = MIN_LINK) -> float:
    """Largest coefficient of variation of a measurable link's length over a segment; NaN if none is."""
    return _nanmax(link_cvs(lengths, diagonal, min_link))


JERK_REDUCES = ("mean", "max")
"""How a jerk window's keypoints make its value (see :func:`window_jerk`)."""


def window_jerk(tracks: np.ndarray, visible: np.ndarray, fps: float, diagonal: float,
                reduce: str = "mean") -> np.ndarray:
    """``(T,)`` jerk of the window ending at each frame (NaN for the first three and where no keypoint
    is visible on all four frames): mean (``reduce="max"``: largest) over keypoints of
    ``|third difference| * fps**3 / diagonal``."""
    return _reduce_keypoints(keypoint_window_jerk(tracks, visible, fps, diagonal), reduce)


def _reduce_keypoints(per: np.ndarray, reduce: str) -> np.ndarray:
    """``(T,)`` mean (or largest) over the keypoints measured in each window of a ``(T, K)`` jerk."""
    if reduce not in JERK_REDUCES:
        raise ValueError(f"unknown jerk reduce {reduce!r}; expected one of {', '.join(JERK_REDUCES)}")
    ok = ~np.isnan(per)
    counts = ok.sum(axis=1)
    if reduce == "max":
        best = np.where(ok, per, -np.inf).max(axis=1, initial=-np.inf)
        return np.where(counts > 0, best, np.nan)
    sums = np.where(ok, per, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def keypoint_window_jerk(tracks: np.ndarray, visible: np.ndarray, fps: float, diagonal: float) -> np.ndarray:
    """``(T, K)`` ``|third difference| * fps**3 / diagonal`` of each keypoint over the window ending at
    each frame; NaN for the first three frames and where the keypoint is not visible on all four."""
    n, k = tracks.shape[:2]
    out = np.full((n, k), np.nan)
    if n < 4:
        return out
    d3 = tracks[3:] - 3 * tracks[2:-1] + 3 * tracks[1:-2] - tracks[:-3]
    ok = visible[3:] & visible[2:-1] & visible[1:-2] & visible[:-3]
    mag = np.linalg.norm(d3, axis=-1) * fps**3 / diagonal
    out[3:] = np.where(ok, mag, np.nan)
    return out


def keypoint_jerk(tracks: np.ndarray, visible: np.ndarray, fps: float, diagonal: float,
                  held: np.ndarray | None = None) -> np.ndarray:
    """:func:`keypoint_window_jerk` with the ``held`` frames (:func:`held_frames`) left out: ``(T, K)``, NaN
    on held frames. Held frames are dropped, not zeroed: the frames on either side are one step of the
    motion apart."""
    tracks = np.asarray(tracks, dtype=np.float64)
    keep = np.arange(len(tracks))
    if held is not None:
        if np.shape(held) != (len(tracks),):
            raise ValueError(f"held must be ({len(tracks)},) like the tracks' frames, got {np.shape(held)}")
        keep = np.flatnonzero(~np.asarray(held, dtype=bool))
    out = np.full(tracks.shape[:2], np.nan)
    out[keep] = keypoint_window_jerk(tracks[keep], np.asarray(visible, dtype=bool)[keep], fps, diagonal)
    return out


JERK_WINDOWS = ("lead", "centre", "end")
"""Rules that give each 4-frame jerk window to a segment (see :func:`jerk_window_span`)."""

JERK_WINDOW = "lead"
"""The rule of the current measure (version 7); readers calibrated before it are judged with ``centre``."""

MEASURE_VERSION = 8
"""The measure's version: what a reader's calibration must have been drawn for to be judged as today."""


def calibration_version(cal: Mapping[str, Any] | None) -> int:
    """The measure version a reader's stored calibration (``reader.json``'s ``calibration``) was drawn
    for, told by the keys each version added: 0 for none; 3 (or earlier) without per-part ``scales``; 4
    without the ``finger_gap`` cut; 5 on pixel link lengths (no ``lengths: "relative"``); 6 with the
    centre jerk windows (no ``jerk_windows: "lead"``); 7 without the references' ``confidence``; else
    :data:`MEASURE_VERSION`."""
    if not cal:
        return 0
    if not cal.get("scales"):
        return 3
    if "finger_gap" not in cal:
        return 4
    if cal.get("lengths") != "relative":
        return 5
    if cal.get("jerk_windows") != JERK_WINDOW:
        return 6
    if cal.get("confidence") is None:
        return 7
    return MEASURE_VERSION


OLDER_RULES = {
    "scales": "no per-part scales",
    "finger_gap": "no finger-gap cut",
    "lengths": "pixel link lengths",
    "jerk_windows": "centre jerk windows",
    "confidence": "recognition not checked",
}
"""What a reader calibrated for an older measure is judged with in place of today's rule, by the
calibration key that rule added (:func:`calibration_version`)."""


def older_rules(cal: Mapping[str, Any] | None) -> list[str]:
    """The :data:`OLDER_RULES` a stored calibration is judged by until it is calibrated again (empty for
    a calibration of the current measure, and for none)."""
    if not cal:
        return []
    older = {
        "scales": not cal.get("scales"),
        "finger_gap": "finger_gap" not in cal,
        "lengths": cal.get("lengths") != "relative",
        "jerk_windows": cal.get("jerk_windows") != JERK_WINDOW,
        "confidence": cal.get("confidence") is None,
    }
    return [rule for key, rule in OLDER_RULES.items() if older[key]]


def recognition(cal: Mapping[str, Any] | None) -> tuple[float, str]:
    """``(floor, note)`` of a reader's stored calibration: below the floor, :data:`CONFIDENCE_RATIO` of the
    references' ``confidence`` (measure version 8), a video is not judged. The floor is NaN, and every video
    judged, when the calibration predates version 8 or when the reader's confidence on a robot-free clip
    read at calibration (``confidence_negatives``) is not below it: such a reader does not tell its robot
    from no robot. The note says ``checked`` or why not."""
    cal = cal or {}
    value = cal.get("confidence")
    if value is None:
        return math.nan, "not checked: the reader was calibrated before measure version 8"
    floor = CONFIDENCE_RATIO * float(value)
    negatives = cal.get("confidence_negatives") or {}
    worst = max(negatives.items(), key=lambda kv: kv[1], default=None)
    if worst is not None and worst[1] >= floor:
        return math.nan, (f"not checked: the reader's confidence on a {worst[0]} ({worst[1]:.3f}) is not "
                          f"below the floor {floor:.3f} ({CONFIDENCE_RATIO:g} of its references' median, "
                          f"{float(value):.3f}), so it does not tell its robot from no robot")
    return floor, "checked"


def jerk_window_span(start: int, stop: int, rule: str = JERK_WINDOW) -> tuple[int, int]:
    """End frames ``[lo, hi)`` of the jerk windows that count for segment ``[start, stop)``.

    A window is named by its last frame ``t`` and covers frames ``t-3 .. t``.

    * ``lead`` (the default, measure version 7): the windows that end in the segment with at most their
      first frame before it, ``t`` in ``start+2 .. stop-1``. A segment is judged on its own frames and the
      step into its first frame: a jump from the previous segment's last frame into this one's first
      counts here (the one window that holds it with three frames here), and nothing of the next segment
      counts. The two windows that straddle a boundary further (ending at ``stop`` and ``stop+1``) count
      for neither side. A failure that ends exactly at a boundary still shows in the next segment, by
      its step back.
    * ``centre`` (versions 3-6): the window's centre ``t - 1.5`` lies in the segment, so at least 3 of its
      4 frames do, and a window split 2 and 2 goes to the earlier segment; a jump at a boundary shows on
      both sides, so a failure that starts at a boundary also flags the clean segment before it.
    * ``end`` (up to version 2): the windows ending in the segment, up to 3 of whose frames lie in the
      previous one; a failure that ends just before a boundary then flags the clean segment after it.
    """
    if rule == "lead":
        return start + 2, stop
    if rule == "centre":
        return start + 2, stop + 2
    if rule == "end":
        return start, stop
    raise ValueError(f"unknown jerk window rule {rule!r}; expected one of {', '.join(JERK_WINDOWS)}")


HELD_TOL = 0.1
"""Mean absolute difference (0-255 grey levels) from the previous frame below which a frame repeats it."""
HELD_BLOCK = 8
"""Side of the pixel blocks whose means :func:`held_frames` compares for codec noise."""
HELD_LEVELS = 4.0
"""A frame that differs from the last new frame by codec noise only is held: no ``HELD_BLOCK`` block mean
has moved by more than this (levels of 255). libx264 and libvpx move block means of a re-encoded unchanged
frame by up to 3.2 levels on the clips measured (64-256 px), while a robot that moves changes some block by
tens of levels within a frame or two."""
HELD_NOISE = 1.0
"""...and the frame's mean absolute difference from the previous one is below this (levels of 255): codec
noise moves a pixel by 0.02-0.5 levels on average between frames (libx264, 64-256 px clips of rendered
scenes), independent noise of 2 levels on every pixel (a camera's own, on a still picture) by over 2."""


def frozen_span(held: np.ndarray | None, start: int, stop: int) -> bool:
    """Whether every frame of ``[start, stop)`` after its first repeats the one before (``held``, from
    :func:`held_frames`): a frozen stretch of picture, where nothing can be measured. ``False`` without
    ``held`` and for a span of one frame."""
    if held is None or stop - start <= 1:
        return False
    return bool(np.asarray(held, dtype=bool)[start + 1 : stop].all())


def _block_means(frame: np.ndarray) -> np.ndarray:
    """``(H, W[, C])`` frame as float32 means of ``HELD_BLOCK x HELD_BLOCK`` blocks (the last partial row
    and column of blocks left out; a frame smaller than a block is one block that way)."""
    h, w = frame.shape[:2]
    bh, bw = max(1, h // HELD_BLOCK), max(1, w // HELD_BLOCK)
    sh, sw = h // bh, w // bw
    cut = frame[: bh * sh, : bw * sw].astype(np.float32)
    means: np.ndarray = cut.reshape(bh, sh, bw, sw, *frame.shape[2:]).mean(axis=(1, 3))
    return means


def held_frames(frames: np.ndarray, tol: float = HELD_TOL, levels: float | None = HELD_LEVELS,
                noise: float = HELD_NOISE) -> np.ndarray:
    """``(T,)`` True where a frame repeats the previous one.

    A frame is held when its mean absolute difference from the previous frame is below ``tol``, or when it
    differs from it by codec noise only: that difference below ``noise``, and no block mean
    (:data:`HELD_BLOCK`) more than ``levels`` away from the last frame that was not held (the last new
    picture; ``levels=None`` turns this second test off), in a run of two or more such frames. Comparing
    with the last new picture, not the previous frame, keeps slow motion from hiding as a run of small
    steps: it adds up, and a frame that has moved beyond the noise is new; a single quiet frame between two
    that move is a robot slowing down. A lossy codec re-draws an unchanged picture with noise (libx264
    moves a 64 px clip's pixels by 0.2-0.5 levels on average), which the mean test alone took for motion,
    so a frozen stretch of an mp4 was judged where the same frames as PNG were not.

    A held frame is a playback artefact (a frame-rate conversion, a slowed replay, a generator that
    pauses a frame), not a motion of the robot: the jerk is measured as if it were not there.
    """
    frames = np.asarray(frames)
    out = np.zeros(len(frames), bool)
    if not len(frames):
        return out
    quiet = np.zeros(len(frames), bool)  # within codec noise of the last new picture
    anchor = _block_means(frames[0]) if levels is not None else None
    for t in range(1, len(frames)):
        step = float(np.abs(frames[t].astype(np.float32) - frames[t - 1].astype(np.float32)).mean())
        if step < tol:
            out[t] = True
        elif anchor is not None and levels is not None:
            blocks = _block_means(frames[t])
            quiet[t] = step < noise and float(np.abs(blocks - anchor).max()) <= levels
            if not quiet[t]:
                anchor = blocks
    # A quiet frame between two new ones is a slow step of the robot, not a repeat: only a run of two or
    # more counts (with the new picture before it, three frames that show the same thing).
    run = quiet | out
    lone = quiet & ~np.r_[False, run[:-1]] & ~np.r_[run[1:], False]
    held: np.ndarray = out | (quiet & ~lone)
    return held


def finger_sides(tracks: np.ndarray, visible: np.ndarray, fingers: Sequence[FingerPair]) -> np.ndarray:
    """``(T, P)`` signed pixel offset of finger b from finger a across the hand's axis (2D cross product
    with the axis' unit vector); NaN where one of the three keypoints is unseen or the axis has no length.
    """
    out = np.full((len(tracks), len(fingers)), np.nan)
    for j, (a, b, h) in enumerate(fingers):
        axis = (tracks[:, a] + tracks[:, b]) / 2 - tracks[:, h]
        norm = np.linalg.norm(axis, axis=-1)
        d = tracks[:, b] - tracks[:, a]
        with np.errstate(invalid="ignore", divide="ignore"):
            side = (axis[:, 0] * d[:, 1] - axis[:, 1] * d[:, 0]) / norm
        ok = visible[:, a] & visible[:, b] & visible[:, h] & (norm > 1e-9)
        out[ok, j] = side[ok]
    return out


def finger_crossing(tracks: np.ndarray, visible: np.ndarray, fingers: Sequence[FingerPair],
                    diagonal: float) -> np.ndarray:
    """``(T, P)`` how far each finger pair is on the wrong side of each other, as a share of the diagonal.

    A pair's usual side is the sign of the median of :func:`finger_sides` over the whole track (fingers
    spend most of a video where they belong); a frame where the signed offset has the other sign is a
    pass of one finger through the other, by that offset. 0 on the usual side, NaN where unseen.
    """
    sides = finger_sides(tracks, visible, fingers)
    out = np.full(sides.shape, np.nan)
    for j in range(sides.shape[1]):
        col = sides[:, j]
        ok = ~np.isnan(col)
        if not ok.any():
            continue
        usual = 1.0 if float(np.median(col[ok])) >= 0 else -1.0
        out[ok, j] = np.maximum(0.0, -usual * col[ok]) / diagonal
    return out


def finger_gaps(tracks: np.ndarray, visible: np.ndarray, fingers: Sequence[FingerPair],
                diagonal: float) -> np.ndarray:
    """``(T, P)`` distance between the two fingers of each pair, as a share of the diagonal; NaN where
    either finger is unseen."""
    tracks = np.asarray(tracks, dtype=np.float64)
    out = np.full((len(tracks), len(fingers)), np.nan)
    for j, (a, b, _hand) in enumerate(fingers):
        ok = visible[:, a] & visible[:, b]
        out[ok, j] = np.linalg.norm(tracks[ok, a] - tracks[ok, b], axis=-1) / diagonal
    return out


def _nanmin(values: np.ndarray) -> float:
    ok = values[~np.isnan(values)]
    return float(ok.min()) if ok.size else math.nan


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
    held: np.ndarray | None = None  # (T,) frames that repeat the previous one (held_frames); None: none
    # (T, K) each keypoint's heatmap mass near its peak (robojudge.kiva._net.peak_mass); None: not read
    confidence: np.ndarray | None = None

    @property
    def diagonal(self) -> float:
        return math.hypot(self.width, self.height)


def reader_confidence(tracks: Tracks) -> float:
    """How sure the reader is of where the robot's keypoints are in a read video: the median over every
    frame and keypoint of :attr:`Tracks.confidence` (NaN when the reads carry none). A reader that
    recognises its robot concentrates each heatmap round one point; on a picture without its robot the
    heatmaps spread out (see :data:`CONFIDENCE_RATIO`)."""
    if tracks.confidence is None or not np.size(tracks.confidence):
        return math.nan
    return float(np.median(tracks.confidence))


@dataclass(frozen=True)
class SegmentValues:
    """The raw measures of one segment (NaN where the segment gives that measure nothing)."""

    start: int
    stop: int
    rigidity: float
    jerk: float
    visible: float  # share of (frame, keypoint) pairs the reader sees in the segment
    finger: float = math.nan  # deepest finger crossing (share of the diagonal); NaN: no finger pair seen
    finger_gap: float = math.nan  # smallest gap between paired fingers (share of the diagonal); NaN: unseen
    # Each link's coefficient of variation and each keypoint's largest window jerk in the segment (NaN where
    # unmeasured): what per-part scales (:class:`Scales`) divide. Empty when not measured part by part.
    link_cv: tuple[float, ...] = ()
    keypoint_jerk: tuple[float, ...] = ()
    # Every frame after the segment's first repeats the one before (held_frames): nothing is measured.
    frozen: bool = False


def robot_motion(tracks: np.ndarray, visible: np.ndarray, diagonal: float, min_frames: int = 2 * MIN_FRAMES
                 ) -> float:
    """How far the robot moves in a track, as a share of the image ``diagonal``: for each keypoint seen on
    at least ``min_frames`` frames, the 95th percentile of its distance from its median position; the
    largest over the keypoints. NaN when no keypoint is seen that often."""
    tracks = np.asarray(tracks, dtype=np.float64)
    visible = np.asarray(visible, dtype=bool)
    best = math.nan
    for k in range(tracks.shape[1]):
        seen = tracks[visible[:, k], k]
        if len(seen) < min_frames:
            continue
        away = np.linalg.norm(seen - np.median(seen, axis=0), axis=-1)
        moved = float(np.percentile(away, 95)) / diagonal
        best = moved if math.isnan(best) else max(best, moved)
    return best


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
    window: str = JERK_WINDOW,
    fingers: Sequence[FingerPair] = (),
    held: np.ndarray | None = None,
    jerk_reduce: str = "mean",
    relative: bool = True,
) -> list[SegmentValues]:
    """Rigidity, jerk and (with ``fingers``) finger crossing and gap of every segment of a track (module doc).

    ``held``: ``(T,)`` frames that repeat the previous one (:func:`held_frames`), left out of the jerk.
    ``relative``: rigidity on relative link lengths, links gated by their typical length (measure
    version 6, :func:`relative_lengths`); ``False`` measures pixel lengths as versions 1-5 did.
    ``window``: which jerk windows count for a segment (:func:`jerk_window_span`; ``centre`` for versions
    3-6). A segment whose frames after its first are all ``held`` is ``frozen`` and gives no value.
    """
    tracks = np.asarray(tracks, dtype=np.float64)
    visible = np.asarray(visible, dtype=bool)
    if tracks.ndim != 3 or tracks.shape[-1] != 2 or visible.shape != tracks.shape[:2]:
        raise ValueError(f"tracks must be (T, K, 2) with a (T, K) mask: {tracks.shape} and {visible.shape}")
    lengths = link_lengths(tracks, visible, links)
    typical = None
    if relative:
        typical = typical_lengths(lengths)
        lengths = relative_lengths(lengths, typical=typical)
    per_keypoint = keypoint_jerk(tracks, visible, fps, diagonal, held)
    jerk = _reduce_keypoints(per_keypoint, jerk_reduce)
    crossing = finger_crossing(tracks, visible, fingers, diagonal)
    gaps = finger_gaps(tracks, visible, fingers, diagonal)
    out = []
    for start, stop in segments(len(tracks), length, min_length):
        seen = float(visible[start:stop].mean()) if visible.size else 0.0
        if frozen_span(held, start, stop):
            out.append(SegmentValues(start=start, stop=stop, rigidity=math.nan, jerk=math.nan, visible=seen,
                                     link_cv=(math.nan,) * len(links),
                                     keypoint_jerk=(math.nan,) * tracks.shape[1], frozen=True))
            continue
        cvs = link_cvs(lengths[start:stop], diagonal, min_link, typical)
        windows = slice(*jerk_window_span(start, stop, window))
        out.append(
            SegmentValues(
                start=start,
                stop=stop,
                rigidity=_nanmax(cvs),
                jerk=_nanmax(jerk[windows]),
                visible=seen,
                finger=_nanmax(crossing[start:stop].ravel()),
                finger_gap=_nanmin(gaps[start:stop].ravel()),
                link_cv=tuple(float(x) for x in cvs),
                keypoint_jerk=tuple(_nanmax(col) for col in per_keypoint[windows].T),
            )
        )
    return out


SCALE_FLOOR = 0.5
"""Smallest part scale, as a share of the median scale of its kind: a link or keypoint that barely moves in
the references (a base, a wrist hidden most of the time) would otherwise turn a pixel of reader noise into
a large ratio."""


@dataclass(frozen=True)
class Scales:
    """Each rigid link's and each keypoint's own reference spread (KIVA's measure version 4).

    ``links[j]``: a high percentile of link ``j``'s coefficient of variation over the reference segments;
    ``keypoints[k]``: the same of keypoint ``k``'s largest window jerk. NaN where the references never
    measured that link or keypoint: it is then not judged. Each is at least :data:`SCALE_FLOOR` times the
    median of its kind.
    """

    links: tuple[float, ...]
    keypoints: tuple[float, ...]
    percentile: float = 95.0
    floor: float = SCALE_FLOOR

    def to_dict(self) -> dict[str, Any]:
        return {"links": [_or_none(x) for x in self.links],
                "keypoints": [_or_none(x) for x in self.keypoints],
                "percentile": self.percentile, "floor": self.floor}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scales:
        def num(xs: Sequence[Any]) -> tuple[float, ...]:
            return tuple(math.nan if x is None else float(x) for x in xs)

        return cls(num(d["links"]), num(d["keypoints"]), float(d.get("percentile", 95.0)),
                   float(d.get("floor", SCALE_FLOOR)))


def _column_scales(rows: list[tuple[float, ...]], width: int, percentile: float, floor: float
                   ) -> tuple[float, ...]:
    cols = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"segment {i} has {len(r)} parts where the others have {width}")
        cols[i] = r
    out = np.full(width, np.nan)
    for j in range(width):
        ok = cols[:, j][~np.isnan(cols[:, j])]
        if len(ok):
            out[j] = float(np.percentile(ok, percentile))
    measured = out[~np.isnan(out)]
    if len(measured):
        out = np.where(np.isnan(out), np.nan, np.maximum(out, floor * float(np.median(measured))))
    return tuple(float(x) for x in out)


def part_scales(values: Sequence[SegmentValues], percentile: float = 95.0, floor: float = SCALE_FLOOR
                ) -> Scales:
    """Per-link and per-keypoint scales (:class:`Scales`) from reference segments measured part by part.

    Raises:
        ValueError: A segment was measured without its parts, or with another number of them.
    """
    if not 0 < percentile <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {percentile}")
    if not values:
        raise ValueError("part scales need at least one reference segment")
    links = [v.link_cv for v in values]
    keypoints = [v.keypoint_jerk for v in values]
    if not keypoints[0]:
        raise ValueError("the reference segments carry no per-keypoint jerk (segment_values measures it)")
    return Scales(_column_scales(links, len(links[0]), percentile, floor),
                  _column_scales(keypoints, len(keypoints[0]), percentile, floor), percentile, floor)


def reference_cuts(values: Sequence[SegmentValues], percentile: float = 95.0) -> tuple[Scales, Thresholds]:
    """Measure version 4's calibration from reference segments: the per-part scales, then the thresholds at
    the same percentile of the scaled values (what :func:`judge_tracks` takes as ``scales`` and cuts)."""
    scales = part_scales(values, percentile)
    return scales, percentile_thresholds(apply_scales(values, scales), percentile)


def _scaled_max(parts: tuple[float, ...], scales: tuple[float, ...], what: str) -> float:
    if len(parts) != len(scales):
        raise ValueError(f"the segment has {len(parts)} {what} where the scales have {len(scales)} (a reader "
                         "calibrated for another robot?)")
    j = worst_part(parts, scales)
    return math.nan if j is None else _ratio(parts[j], scales[j])


def worst_part(parts: tuple[float, ...], scales: tuple[float, ...]) -> int | None:
    """Index of the link or keypoint with the largest ratio to its scale (None when none is measured)."""
    best, at = -math.inf, None
    for j, (x, s) in enumerate(zip(parts, scales, strict=True)):
        if not (math.isnan(x) or math.isnan(s)) and _ratio(x, s) > best:
            best, at = _ratio(x, s), j
    return at


def apply_scales(values: Sequence[SegmentValues], scales: Scales) -> list[SegmentValues]:
    """Segments whose rigidity is the largest ratio of a link's coefficient of variation to that link's
    scale, and whose jerk the largest ratio of a keypoint's window jerk to that keypoint's scale (unitless;
    the finger crossing stays as it is). A link or keypoint without a scale is left out."""
    from dataclasses import replace

    return [replace(v, rigidity=_scaled_max(v.link_cv, scales.links, "links"),
                    jerk=_scaled_max(v.keypoint_jerk, scales.keypoints, "keypoints")) for v in values]


@dataclass(frozen=True)
class Thresholds:
    """Calibrated cuts: a segment is invalid above any (below, for the finger gap). NaN: the reference
    videos never measured that part (no rigid link long enough in view, say), or the reader was calibrated
    before it existed (the finger gap before measure version 5), so it is not judged."""

    rigidity: float
    jerk: float
    finger: float = math.nan
    finger_gap: float = math.nan


@dataclass
class SegmentVerdict:
    """One segment's values, verdicts and continuous score (the larger value-to-threshold ratio)."""

    values: SegmentValues
    rigid_bad: bool
    jerk_bad: bool
    score: float
    rigid_judged: bool = True
    jerk_judged: bool = True
    finger_bad: bool = False
    finger_judged: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return not math.isnan(self.score)

    @property
    def invalid(self) -> bool:
        return self.rigid_bad or self.jerk_bad or self.finger_bad

    def to_dict(self) -> dict[str, Any]:
        v = self.values

        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        out: dict[str, Any] = {
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
        if v.frozen:
            out["frozen"] = True
        if self.finger_judged or not math.isnan(v.finger) or not math.isnan(v.finger_gap):
            out["finger"] = num(v.finger)
            out["finger_gap"] = num(v.finger_gap)
            out["finger_invalid"] = self.finger_bad if self.finger_judged else None
        return out


def _ratio(value: float, cut: float) -> float:
    # References that never move give a cut of 0: any value above it is infinitely far over.
    if cut > 0:
        return value / cut
    return math.inf if value > cut else 0.0


def gap_ratio(gap: float, cut: float, floor: float = GAP_FLOOR) -> float:
    """How far a finger gap is below its cut, as a ratio above 1 when it is (``cut / gap``, the gap taken
    at least ``floor``); 0 for a cut of 0 (references whose fingers touch: nothing is closer)."""
    if cut <= 0:
        return 0.0
    return cut / max(gap, floor)


def judge_segments(values: Sequence[SegmentValues], thresholds: Thresholds) -> list[SegmentVerdict]:
    """Each segment against the thresholds; a NaN measure, or a part without a threshold, neither passes
    nor fails that part. The finger part is judged when its crossing or its gap is: it fails when the
    crossing is above its cut or the gap below its own."""
    out = []
    for v in values:
        rig_ok = not math.isnan(v.rigidity) and not math.isnan(thresholds.rigidity)
        jerk_ok = not math.isnan(v.jerk) and not math.isnan(thresholds.jerk)
        cross_ok = not math.isnan(v.finger) and not math.isnan(thresholds.finger)
        gap_ok = not math.isnan(v.finger_gap) and not math.isnan(thresholds.finger_gap)
        ratios = [_ratio(x, t) for x, t, ok in ((v.rigidity, thresholds.rigidity, rig_ok),
                                                (v.jerk, thresholds.jerk, jerk_ok),
                                                (v.finger, thresholds.finger, cross_ok)) if ok]
        if gap_ok:
            ratios.append(gap_ratio(v.finger_gap, thresholds.finger_gap))
        out.append(
            SegmentVerdict(
                values=v,
                rigid_bad=bool(rig_ok and v.rigidity > thresholds.rigidity),
                jerk_bad=bool(jerk_ok and v.jerk > thresholds.jerk),
                score=max(ratios) if ratios else math.nan,
                rigid_judged=rig_ok,
                jerk_judged=jerk_ok,
                finger_bad=bool((cross_ok and v.finger > thresholds.finger)
                                or (gap_ok and v.finger_gap < thresholds.finger_gap)),
                finger_judged=cross_ok or gap_ok,
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
    elif part == "finger":
        measured = [v for v in verdicts if v.finger_judged]
        bad = sum(v.finger_bad for v in measured)
    else:
        raise ValueError(f"unknown KIVA part {part!r}; expected kiva, rigidity, jerk or finger")
    if not measured:
        return math.nan, 0
    return 100.0 * bad / len(measured), len(measured)


def percentile_thresholds(values: Sequence[SegmentValues], percentile: float,
                          min_finger: float = MIN_FINGER) -> Thresholds:
    """Thresholds at ``percentile`` of the reference segments' rigidity, jerk and finger crossing (NaNs
    left out; the finger cut is at least ``min_finger``), and at ``100 - percentile`` of their finger gap
    (lower is worse there); NaN for a part no reference segment measures.

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

    finger = np.array([v.finger for v in values], dtype=np.float64)
    finger = finger[~np.isnan(finger)]
    gap = np.array([v.finger_gap for v in values], dtype=np.float64)
    gap = gap[~np.isnan(gap)]
    return Thresholds(cut(rig), cut(jerk), max(cut(finger), min_finger) if len(finger) else math.nan,
                      float(np.percentile(gap, 100.0 - percentile)) if len(gap) else math.nan)


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
    motion: float = math.nan  # robot_motion of the tracks (share of the diagonal); NaN: not measured
    confidence: float = math.nan  # reader_confidence of the tracks; NaN: the reads carry none
    min_confidence: float = math.nan  # below it the video is not judged; NaN: not checked

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
                **({} if math.isnan(self.thresholds.finger) else {"finger": self.thresholds.finger}),
                **({} if math.isnan(self.thresholds.finger_gap)
                   else {"finger_gap": self.thresholds.finger_gap}),
            },
            "keypoints_visible": round(self.visible, 4),
            "robot_motion": None if math.isnan(self.motion) else round(self.motion, 6),
            "frozen_segments": sum(v.values.frozen for v in self.verdicts),
            **self.confidence_facts(),
        }

    def confidence_facts(self) -> dict[str, Any]:
        """``reader_confidence`` and ``min_confidence`` (each left out when NaN)."""
        return {
            **({} if math.isnan(self.confidence) else {"reader_confidence": round(self.confidence, 4)}),
            **({} if math.isnan(self.min_confidence) else {"min_confidence": round(self.min_confidence, 4)}),
        }


def judge_tracks(
    tracks: Tracks,
    links: Sequence[tuple[int, int]],
    thresholds: Thresholds,
    *,
    length: int = SEGMENT,
    min_length: int = MIN_SEGMENT,
    min_link: float = MIN_LINK,
    window: str = JERK_WINDOW,
    fingers: Sequence[FingerPair] = (),
    scales: Scales | None = None,
    relative: bool = True,
    min_confidence: float = math.nan,
) -> KivaResult:
    """Segments of a read video, measured and judged; a result with a ``reason`` when it has no
    full segment, the reader sees no keypoint, its confidence (:func:`reader_confidence`) is below
    ``min_confidence`` (NaN: not checked), the picture never changes (every frame ``held``), the robot does
    not move (:func:`robot_motion` below :data:`STILL_MOTION`), or no segment gives a rigidity or jerk value.

    ``scales``: measure version 4, each link and keypoint against its own reference spread
    (:func:`apply_scales`; the thresholds must have been calibrated on scaled values); without, version 3.
    ``relative``: relative link lengths (version 6; ``False`` for thresholds calibrated on pixel lengths).
    ``window``: the jerk windows of a segment (:func:`jerk_window_span`; ``centre`` for thresholds drawn
    before version 7)."""
    n = len(tracks.positions)
    seen = float(tracks.visible.mean()) if tracks.visible.size else 0.0
    sure = {"confidence": reader_confidence(tracks), "min_confidence": min_confidence}
    reason: str | None = None
    if n < length:
        reason = f"the video has {n} frames; KIVA judges segments of {length} frames"
        return KivaResult([], thresholds, n, seen, reason, **sure)
    if not tracks.visible.any():
        reason = "the reader sees none of the robot's keypoints in any frame"
        return KivaResult([], thresholds, n, seen, reason, **sure)
    if sure["confidence"] < min_confidence:  # (False when either is NaN)
        reason = (f"the reader does not recognise its robot: its confidence here is "
                  f"{sure['confidence']:.3f}, below {min_confidence:.3f} ({CONFIDENCE_RATIO:g} of its "
                  "confidence on its reference videos); another robot, no robot, or a picture it cannot "
                  "follow")
        return KivaResult([], thresholds, n, seen, reason, **sure)
    if tracks.held is not None and bool(np.asarray(tracks.held, dtype=bool)[1:].all()):
        reason = "the picture never changes: every frame repeats the first (a frozen video)"
        return KivaResult([], thresholds, n, seen, reason, motion=0.0, **sure)
    motion = robot_motion(tracks.positions, tracks.visible, tracks.diagonal)
    if motion < STILL_MOTION:  # (NaN, no keypoint seen on enough frames to tell: left to the segments)
        reason = (f"the robot does not move: no keypoint strays more than {STILL_MOTION:.0%} of the image "
                  "diagonal from where it stands, and a still robot has no kinematics to judge")
        return KivaResult([], thresholds, n, seen, reason, motion=motion, **sure)
    values = segment_values(tracks.positions, tracks.visible, links, tracks.fps, tracks.diagonal,
                            length=length, min_length=min_length, min_link=min_link, window=window,
                            fingers=fingers, held=tracks.held, relative=relative)
    if scales is not None:
        values = apply_scales(values, scales)
    verdicts = judge_segments(values, thresholds)
    if not any(v.measured for v in verdicts):
        reason = "no segment has a rigid link long enough to measure nor a keypoint seen on 4 frames in a row"
    return KivaResult(verdicts, thresholds, n, seen, reason, motion=motion, **sure)
