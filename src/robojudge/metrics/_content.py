"""What a clip's frames can support: enough of them, something that moves, frames that see each other.

Metrics check these before measuring, so a clip that gives them nothing to measure (one frame, a
still video, frames that show nothing of each other) is left unscored with a reason (raising
:class:`~robojudge.metrics.Unmeasurable`) instead of getting whatever an empty measurement happens to
give: a frame difference of 0, a similarity of 1, a drift of 0 are the best values of their metrics.

All checks look at frames averaged over 8 x 8 pixel blocks. Lossy codecs move single pixels of an
unchanged frame by up to ~16 levels (libx264 between an I and a P frame), but block means by at most
~3, while anything visible that moves (a 6 px object) changes a block by tens of levels.

The motion and correspondence checks read the same block means (:func:`content_facts`), computed once
per frame array for every check and metric that asks (:mod:`robojudge.metrics._derived`). The optical-flow
metrics also ask whether the frames have texture enough for flow to be read at all
(:func:`texture_shares`, from the spread of the pixels inside each block).

Consecutive frames are compared where they show the same place: as they are, and after the translation
that best aligns their block means (:func:`step_correlations`), so a camera pan is not taken for a cut.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import cv2
import numpy as np

from robojudge.metrics._derived import derived
from robojudge.metrics._errors import Unmeasurable
from robojudge.video import SampledFrames

#: Side of the pixel blocks whose means the checks compare.
BLOCK = 8
#: Frames with a shorter side than this (two blocks) are too small to measure: motion inside one block
#: leaves its mean unchanged (:func:`require_motion`), and metrics that scale frames up to a fixed size
#: first (the 256x256 flow pair, the reference comparisons) would score detail the video does not have
#: (:func:`require_side`).
MIN_SIDE = 2 * BLOCK
#: A clip is still when no block mean of any frame differs by more than this (levels of 255) from the
#: first frame's, once the brightness and contrast that best match the frame to the first are applied
#: (:func:`still_change`): three times the codec noise measured on libx264 clips of unchanged frames.
STILL_LEVELS = 8.0
#: ... or than this in a frame whose tone (brightness and contrast) has changed by more than
#: :data:`STILL_LEVELS` (:func:`still_change`): a codec encodes such a frame anew, and the block means of
#: two encodings of one textured picture differ by up to 13 levels (libx264 at its default quality, the
#: tests' 128x96 scene of per-pixel noise made 30% darker), while anything visible that moves changes a
#: block by tens.
RETONED_LEVELS = 2 * STILL_LEVELS
#: Consecutive frames correspond when their block means correlate at least this much (Pearson), as they
#: are or after the translation that aligns them best (:func:`step_correlations`); independent frames give
#: about 0 (99th percentile of pairs of noise frames at 128x96: 0.16-0.31 as they are, 0.28-0.53 aligned,
#: the more the coarser their grain), the same scene a few pixels later well above 0.9.
MIN_CORRELATION = 0.5
#: The translation between consecutive frames is looked for up to this share of each side, so the frames
#: it aligns still share at least 56% of their area (0.75 x 0.75).
MAX_SHIFT = 0.25
#: ... and only where the frames then still share at least this many blocks (an 80x80 frame, 10 x 10
#: blocks, just does; 96x72, 12 x 9, does not): over fewer, the best of the translations tried
#: correlates highly by chance.
MIN_SHIFT_OVERLAP = 64
#: A block shows texture when the standard deviation of its pixels exceeds this (levels of 255): twice
#: the spread libx264 leaves inside the blocks of a flat frame (at most 2.1 on a grey clip), far below
#: that of a block holding an edge or a pattern (tens of levels).
TEXTURE_LEVELS = 4.0
#: Optical flow can be read on a frame when at least this share of its blocks show texture. Flow is
#: measured only where there is texture; everywhere else the estimator fills it in from the nearest
#: measured motion (DIS spread a 2x2 speck's motion over 11% of a black frame). The demo suite's
#: frames all have 9.2% or more (4.2% upscaled to 1080 px), a 2x2 speck on black at 128x96 0.5-1%
#: (docs/metrics.md, "Too little texture for optical flow").
MIN_TEXTURED = 0.02


def block_means(frames: np.ndarray) -> np.ndarray:
    """``(T, H, W[, C])`` uint8 frames as float32 means of ``BLOCK x BLOCK`` blocks, ``(T, h, w[, C])``.

    The last ``H % BLOCK`` rows and ``W % BLOCK`` columns (a strip narrower than a block) are left out,
    so every mean is of one whole block, rounded to a level as OpenCV's area resizing rounds it; a frame
    smaller than a block in a direction is one block that way. Resizing by a whole factor takes
    OpenCV's fast path: at 640x354 (the fast profile's size of a 752x416 clip) a resize to 80x44 blocks
    costs about a third of one from all 354 rows, whose 8.05-row cells take the general path
    (``benchmarks/bench_content_checks.py --block-crop``).
    """
    return np.stack([_block_means_of(f) for f in frames]).astype(np.float32)


def _block_means_of(frame: np.ndarray) -> np.ndarray:
    """One ``(H, W[, C])`` frame's block means as :func:`block_means` takes them, uint8."""
    h, w = frame.shape[:2]
    bh, bw = max(1, h // BLOCK), max(1, w // BLOCK)
    rows, cols = min(h, bh * BLOCK), min(w, bw * BLOCK)
    out: np.ndarray = cv2.resize(frame[:rows, :cols], (bw, bh), interpolation=cv2.INTER_AREA)
    return out


class ContentFacts(NamedTuple):
    """What the checks read from a clip's block means."""

    largest_change: float  # largest block-mean change from the first frame past brightness, levels of 255
    still: bool  # no frame changes past brightness beyond its limit (:func:`still_change`)
    raw_change: float  # largest difference of a block mean from the first frame's as it is, levels of 255
    step_correlations: np.ndarray  # (T - 1,) read-only; see :func:`step_correlations`


def content_facts(frames: np.ndarray) -> ContentFacts:
    """:class:`ContentFacts` of ``frames``, from one pass of :func:`block_means`.

    Remembered while a read-only ``frames`` array lives (:func:`robojudge.metrics._derived.derived`):
    the metrics of one item share their frame arrays through the frame cache, and each used to compute
    the same block means again (``cc_photometric`` twice).
    """
    return derived(frames, "content_facts", lambda: _facts(frames, block_means(frames)))


def _facts(frames: np.ndarray, blocks: np.ndarray) -> ContentFacts:
    change = float(np.abs(blocks - blocks[0]).max())
    past_brightness, still = still_change(frames, blocks)
    flat = blocks.reshape(len(blocks), -1).astype(np.float64)
    centred = flat - flat.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(centred, axis=1)
    dots = np.einsum("td,td->t", centred[:-1], centred[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        corr: np.ndarray = np.where((norms[:-1] > 1e-6) & (norms[1:] > 1e-6), dots / (norms[:-1] * norms[1:]),
                                    np.nan)
    apart = np.flatnonzero(corr < MIN_CORRELATION)  # NaN (a flat frame) compares False
    if len(apart):
        corr[apart] = np.fmax(corr[apart], _aligned_correlations(blocks, apart))
    corr.flags.writeable = False  # shared by every caller
    return ContentFacts(past_brightness, still, change, corr)


def change_past_brightness(frames: np.ndarray, blocks: np.ndarray | None = None) -> float:
    """How far a clip's frames change from its first frame past a change of the whole frame's brightness
    and contrast, in levels of 255 (:func:`still_change`, its first half).

    >>> first = np.tile(np.arange(0, 240, 5, dtype=np.uint8), (48, 1))  # 48x48, a left-to-right ramp
    >>> fade = np.stack([first, (0.8 * first + 12).astype(np.uint8)])  # darker, flatter, lifted blacks
    >>> change_past_brightness(fade) <= 1
    True
    >>> moved = np.stack([first, first])
    >>> moved[1, :8, :8] = 200  # a bright 8x8 object appears in a corner
    >>> round(change_past_brightness(moved), 1)
    166.1
    """
    return still_change(frames, blocks)[0]


def still_change(frames: np.ndarray, blocks: np.ndarray | None = None) -> tuple[float, bool]:
    """How far a clip's frames change from its first frame past a change of the whole frame's brightness
    and contrast, in levels of 255, and whether the clip is still: the largest difference of a block
    mean (:func:`block_means`) from the first frame's once the frame's tone is matched to the first
    frame's, and whether no frame's is above its limit.

    A frame's tone is matched per channel as ``clip(a * x + b)`` of the first frame's pixels ``x``
    (``a`` at least 0, clipped to 0-255 as an exposure change clips highlights), with ``a`` and ``b`` the
    least-squares fit of the frame's block means to the first frame's over the blocks that are not
    near black or white in either frame (all blocks where fewer than two are). Each frame's change is
    the smaller of its largest block difference as it is and after the match (no frame changes more
    than it does unmatched). A frozen picture whose exposure drifts (a fade, a flash, a white balance
    that creeps) therefore changes by about its codec noise, while something that moves in a part of
    the frame leaves its blocks far from any tone of the whole frame. Frames under two blocks on a
    side are not matched (their change is as it is): a brightness fitted to one block's mean a side
    would explain any change of it.

    A frame's limit is :data:`STILL_LEVELS`, or :data:`RETONED_LEVELS` where the mean or the standard
    deviation of its block means (of a channel) differs from the first frame's by more than
    :data:`STILL_LEVELS`: such a frame is encoded anew, not copied from the one before, and the codec's
    error of its own encoding adds to the first frame's.

    Frames are looked at from the one that changes most as it is, and only those that change by more
    than :data:`STILL_LEVELS` as they are are matched. The match is applied to the first frame's block
    means, and where the frame then still changes by more than its limit, to its pixels (which a
    brighter exposure clips one by one) before their block means are taken again. The first frame that
    changes by more than its limit even so is the answer: the clip moves, and that frame's change is
    returned (the largest of all frames is not looked for). A clip in which no frame does (a still one)
    returns the largest change of its frames.
    """
    if blocks is None:
        blocks = block_means(frames)
    flat = blocks.reshape(len(blocks), -1, blocks.shape[3] if blocks.ndim == 4 else 1).astype(np.float64)
    raw = np.abs(flat - flat[0]).reshape(len(flat), -1).max(axis=1)
    if min(blocks.shape[1:3]) < 2:
        # A frame of one block a side: any change of it fits some brightness.
        return float(raw.max()), bool(raw.max() <= STILL_LEVELS)
    largest = 0.0
    for t in np.argsort(-raw, kind="stable"):
        if raw[t] <= STILL_LEVELS:
            return max(largest, float(raw[t])), True  # this and the frames left change little unmatched
        fit = _tone_fit(flat[0], flat[t])
        matched = np.clip(fit[0] * flat[0] + fit[1], 0, 255)
        # A new tone: the frame's mean or spread of block means moved (a fit can also erase a speck).
        retoned = max(float(np.abs(flat[t].mean(axis=0) - flat[0].mean(axis=0)).max()),
                      float(np.abs(flat[t].std(axis=0) - flat[0].std(axis=0)).max())) > STILL_LEVELS
        limit = RETONED_LEVELS if retoned else STILL_LEVELS
        change = min(float(raw[t]), float(np.abs(flat[t] - matched).max()))
        if change > limit:  # clipped pixels inside a block may be why: match the pixels
            change = min(change, _matched_change(frames, blocks, int(t)))
        if change > limit:
            return change, False
        largest = max(largest, change)
    return largest, True


def _tone_fit(first: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """``(2, C)`` gain and offset per channel that map the first frame's values ``(n, C)`` (block means or
    pixels) to a frame's, fitted by least squares (gain at least 0; 0 where the first frame is flat).

    The fit reads the values within :data:`_TONE_RANGE` in both frames (all of them where fewer than two
    are), then again those the first fit maps within it from within it: chosen by the first frame's
    value alone, so that values the frame clipped do not bend the line (a choice by the frame's own
    values keeps only the noise that fell below white near it, and flattens the line)."""
    low, high = _TONE_RANGE
    out = np.empty((2, first.shape[1]))
    for c in range(first.shape[1]):
        x, y = first[:, c], frame[:, c]
        inside = (x >= low) & (x <= high)
        gain, offset = _line(x, y, inside & (y >= low) & (y <= high))
        mapped = gain * x + offset
        gain, offset = _line(x, y, inside & (mapped >= low) & (mapped <= high))
        out[:, c] = gain, offset
    return out


def _line(x: np.ndarray, y: np.ndarray, use: np.ndarray) -> tuple[float, float]:
    """Least-squares gain (at least 0) and offset from ``x`` to ``y`` over ``use`` (over all where it
    holds fewer than two values); gain 0 where those ``x`` are flat."""
    if use.sum() >= 2:
        x, y = x[use], y[use]
    xc = x - x.mean()
    spread = float((xc * xc).sum())  # sums, not BLAS dot products: a BLAS thread pool costs more here
    gain = max(0.0, float((xc * (y - y.mean())).sum()) / spread) if spread > 1e-6 else 0.0
    return gain, float(y.mean()) - gain * float(x.mean())


#: Values a tone fit reads (:func:`change_past_brightness`): nearer black or white, a pixel may be
#: clipped (a block's mean, some of its pixels), and an exposure change moves it less than the fit
#: would have it.
_TONE_RANGE = (16.0, 239.0)


def _matched_change(frames: np.ndarray, blocks: np.ndarray, t: int) -> float:
    """Largest block-mean difference of frame ``t`` from the first frame's pixels matched to its tone:
    per channel ``clip(a * x + b)`` (rounded to levels), ``a`` and ``b`` fitted as :func:`_tone_fit`
    fits block means, to the pixels of every other row and column instead; block means as
    :func:`block_means`."""
    first, frame = frames[0], frames[t]
    channels = first.shape[2] if first.ndim == 3 else 1
    fit = _tone_fit(first[::2, ::2].reshape(-1, channels).astype(np.float64),
                    frame[::2, ::2].reshape(-1, channels).astype(np.float64))
    levels = np.arange(256, dtype=np.float64)[:, None]
    table = np.clip(np.rint(fit[0][None, :] * levels + fit[1][None, :]), 0, 255).astype(np.uint8)
    mapped = cv2.LUT(first, table[:, 0]) if first.ndim == 2 else cv2.LUT(first, table[None])
    expected = _block_means_of(mapped).astype(np.float32)
    return float(np.abs(blocks[t] - expected).max())


def _aligned_correlations(blocks: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Pearson correlation of the block means of frames t and t + 1, for each t of ``steps``, after the
    translation that aligns them best; NaN where none is looked for (:data:`MIN_SHIFT_OVERLAP`).

    The translation is the peak of the phase correlation of the two block-mean images (mean removed,
    Hann window along each side searched, cross-power spectrum normalised to unit magnitude) within
    :data:`MAX_SHIFT` of each side, refined to a fraction of a block (within that reach) by the centroid
    of the peak and its two neighbours along each axis (negative values count 0). Frame t's block means
    are then moved by it (bilinear interpolation) and correlated with frame t + 1's where both exist.
    Deterministic: fixed operations, the first of equal peaks.
    """
    h, w = blocks.shape[1:3]
    reach_y, reach_x = int(MAX_SHIFT * h), int(MAX_SHIFT * w)
    out = np.full(len(steps), np.nan)
    if (h - reach_y) * (w - reach_x) < MIN_SHIFT_OVERLAP:
        return out
    window = np.outer(np.hanning(h) if reach_y else np.ones(h),
                      np.hanning(w) if reach_x else np.ones(w)).astype(np.float32)

    def spectrum(t: int) -> np.ndarray:
        gray = blocks[t].mean(axis=2) if blocks.ndim == 4 else blocks[t]
        return np.fft.rfft2((gray - gray.mean()) * window)

    after, last = None, -1  # the spectrum of the last step's second frame, which the next step may start on
    for i, t in enumerate(int(t) for t in steps):
        before = after if after is not None and last == t else spectrum(t)
        after, last = spectrum(t + 1), t + 1
        cross = after * np.conj(before)
        magnitude = np.abs(cross)
        if not magnitude.any():
            continue  # nothing left to align after the window
        # Frequencies a millionth as strong as the strongest are rounding noise: their phase says nothing.
        strong = magnitude > 1e-6 * magnitude.max()
        cross = np.divide(cross, magnitude, out=np.zeros_like(cross), where=strong)
        surface = np.fft.fftshift(np.fft.irfft2(cross, s=(h, w)))  # the zero shift at (h // 2, w // 2)
        near = surface[h // 2 - reach_y:h // 2 + reach_y + 1, w // 2 - reach_x:w // 2 + reach_x + 1]
        iy, ix = np.unravel_index(int(np.argmax(near)), near.shape)
        py, px = h // 2 - reach_y + int(iy), w // 2 - reach_x + int(ix)
        dy = py - h // 2 + _centroid(surface[[(py - 1) % h, py, (py + 1) % h], px])
        dx = px - w // 2 + _centroid(surface[py, [(px - 1) % w, px, (px + 1) % w]])
        dy, dx = min(max(dy, -reach_y), reach_y), min(max(dx, -reach_x), reach_x)  # no farther than searched
        out[i] = _pearson(*_aligned(blocks[t], blocks[t + 1], dy, dx))
    return out


def _centroid(three: np.ndarray) -> float:
    """Where the centroid of three neighbouring correlation values (their positive parts) lies, as an
    offset from the middle one."""
    weights = np.maximum(three.astype(np.float64), 0.0)
    total = float(weights.sum())
    return float(weights[2] - weights[0]) / total if total > 0 else 0.0


def _aligned(before: np.ndarray, after: np.ndarray, dy: float, dx: float) -> tuple[np.ndarray, np.ndarray]:
    """``before`` moved by ``(dy, dx)`` blocks (bilinear) and ``after``, where both exist."""
    def span(n: int, d: float) -> tuple[slice, slice, slice, float]:
        # after[y] is compared with before at y - d = (y - k) - f: rows y - k (weight 1 - f) and y - k - 1
        # (weight f), for the rows y where both exist.
        k = math.floor(d)
        f = d - k
        lo, hi = max(0, k + (f > 0)), min(n, n + k)
        return slice(lo, hi), slice(lo - k, hi - k), slice(lo - k - 1, hi - k - 1), f

    ys, y0, y1, fy = span(before.shape[0], dy)
    xs, x0, x1, fx = span(before.shape[1], dx)
    moved = (1 - fy) * (1 - fx) * before[y0, x0].astype(np.float64)
    for rows, cols, weight in ((y0, x1, (1 - fy) * fx), (y1, x0, fy * (1 - fx)), (y1, x1, fy * fx)):
        if weight > 0:
            moved += weight * before[rows, cols]
    return moved, after[ys, xs]


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two equal-shaped arrays; NaN when either is flat."""
    x = a - a.mean()
    y = b.astype(np.float64) - b.mean()
    xx, yy, xy = float((x * x).sum()), float((y * y).sum()), float((x * y).sum())
    return xy / math.sqrt(xx * yy) if xx > 1e-12 and yy > 1e-12 else math.nan


def _block_edges(n: int, offset: int = 0) -> np.ndarray:
    """Edges of the whole blocks along a side of ``n`` pixels, starting at ``offset``; a side too short
    for one block from there is one block of the whole side."""
    if n - offset < BLOCK:
        return np.array([0, n])
    return np.arange(offset, n - (n - offset) % BLOCK + 1, BLOCK)


def _textured(sums: np.ndarray, squares: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Which blocks between the edges ``ys`` and ``xs`` show texture, from integral images of a frame.

    ``n * sum(x^2) - sum(x)^2 = n^2 var`` per block and channel, exact in float64 (integers below 2^53);
    a block shows texture when any channel's standard deviation exceeds :data:`TEXTURE_LEVELS`.
    """
    def block_sums(integral: np.ndarray) -> np.ndarray:
        corners = integral[np.ix_(ys, xs)]
        out: np.ndarray = corners[1:, 1:] - corners[:-1, 1:] - corners[1:, :-1] + corners[:-1, :-1]
        return out

    s, q = block_sums(sums), block_sums(squares)
    n = np.outer(np.diff(ys), np.diff(xs)).astype(np.float64)
    if s.ndim == 3:
        n = n[..., None]
    spread: np.ndarray = n * q - s * s > (TEXTURE_LEVELS * n) ** 2
    return spread if spread.ndim == 2 else np.any(spread, axis=2)


def texture_share(frame: np.ndarray) -> float:
    """Share of the ``BLOCK x BLOCK`` blocks of one ``(H, W[, C])`` uint8 frame that show texture.

    A block shows texture when the standard deviation of its pixels (of any channel) exceeds
    :data:`TEXTURE_LEVELS`. Blocks are taken on the grid of :func:`block_means` and on the grid shifted by
    half a block each way, and the larger share counts, so an edge that runs along a block border (tiles
    of 8 px, aligned) is inside the blocks of the other grid. Flat frames give 0.

    >>> flat = np.full((32, 32), 90, np.uint8)
    >>> speck = flat.copy()
    >>> speck[5:7, 5:7] = 255  # in 1 of the 16 blocks, and of the 9 of the shifted grid
    >>> texture_share(flat), round(texture_share(speck), 3)
    (0.0, 0.111)
    """
    sums, squares = cv2.integral2(frame, sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)
    h, w = frame.shape[:2]
    shares = [float(_textured(sums, squares, _block_edges(h, o), _block_edges(w, o)).mean())
              for o in (0, BLOCK // 2)]
    return max(shares)


def texture_shares(frames: np.ndarray) -> np.ndarray:
    """:func:`texture_share` of every frame, ``(T,)`` read-only; remembered while a read-only ``frames``
    array lives, as :func:`content_facts` is."""
    def compute() -> np.ndarray:
        out = np.array([texture_share(f) for f in frames], dtype=np.float64)
        out.flags.writeable = False
        return out

    return derived(frames, "texture_shares", compute)


def largest_change(frames: np.ndarray) -> float:
    """The largest change of a block mean from the first frame's past a change of the whole frame's
    brightness and contrast (:func:`change_past_brightness`), in levels of 255."""
    return content_facts(frames).largest_change


def is_still(frames: np.ndarray) -> bool:
    """Whether nothing in the clip moves: no frame changes from the first past a change of the whole
    frame's brightness and contrast by more than codec noise (:func:`still_change`)."""
    return content_facts(frames).still


def step_correlations(frames: np.ndarray) -> np.ndarray:
    """Pearson correlation of the block means of frames t and t + 1, ``(T - 1,)``; NaN at a flat frame
    (no correlation is defined; :func:`require_texture` refuses such frames).

    Where the frames as they are correlate below :data:`MIN_CORRELATION`, the value is the higher of that
    and their correlation after the translation that aligns them best (up to :data:`MAX_SHIFT` of each
    side, to a fraction of a block), so a camera pan that moves the scene by more than its texture's
    grain still corresponds, while frames that show nothing of each other (a cut, a scene replaced by
    noise) do not. Frames that correspond as they are keep their unshifted correlation: it answers
    the check, and aligning every pair of every clip would cost more than the check itself.

    The array is read-only (it may be shared with other callers); copy it to change it.
    """
    return content_facts(frames).step_correlations


def require_frames(frames: np.ndarray, least: int = 2, what: str = "the video") -> None:
    """Raise :class:`Unmeasurable` when ``frames`` holds fewer than ``least`` frames."""
    require_count(len(frames), least, what)


def require_count(n: int, least: int = 2, what: str = "the video") -> None:
    """Raise :class:`Unmeasurable` when a clip of ``n`` frames has fewer than ``least``."""
    if n < least:
        raise Unmeasurable(f"{what} gave {n} frame{'s' if n != 1 else ''}; the metric "
                           f"needs at least {least} frames", frames=n)


def require_side(size: tuple[int, int], what: str = "the video", why: str = "") -> None:
    """Raise :class:`Unmeasurable` when ``size`` (``(width, height)``, the video's own, before any
    resizing) has a side under :data:`MIN_SIDE` px.

    Metrics that resize every video to one size (256x256 for the RoboJudge flow pair, the reference's
    size for PSNR and SSIM) would otherwise scale an 8x6 clip up and score it: 15 dB against its
    640x480 reference, more than a full-size video of another scene gets. ``why`` ends the reason (what
    the metric would have done with the frames).
    """
    w, h = size
    if min(w, h) < MIN_SIDE:
        raise Unmeasurable(f"frames of {w}x{h} are too small: {what} is under {MIN_SIDE} px on a side, too "
                           f"few pixels to measure{why}", video_size=f"{w}x{h}")


def require_motion(frames: np.ndarray, what: str = "the video") -> float:
    """The clip's largest block change (:func:`largest_change`); raise :class:`Unmeasurable` when it is still.

    A still clip (every frame the first one, up to codec noise and a change of the whole frame's
    brightness and contrast: a frozen picture that fades or flashes) has no motion whose consistency,
    smoothness or quality could be measured, and would otherwise get the metric's best value.

    Frames under two blocks on a side (an 8x8 clip) cannot be called still: motion that stays inside a
    block leaves its mean unchanged. Where their block means do not change, the reason names the size.
    """
    require_frames(frames, 2, what)
    facts = content_facts(frames)
    change = facts.largest_change
    if facts.still and min(frames.shape[1:3]) < MIN_SIDE:
        h, w = frames.shape[1:3]
        raise Unmeasurable(
            f"frames of {w}x{h} are too small to tell whether {what} moves: under {MIN_SIDE} px on a side, "
            f"motion along it stays inside one {BLOCK}x{BLOCK} block and leaves the block means unchanged "
            f"(largest change {change:.1f} levels)", frames=len(frames), frame_size=f"{w}x{h}",
            largest_change=change)
    if facts.still:
        raise Unmeasurable(
            f"{what} is still: no {BLOCK}x{BLOCK} block of any of its {len(frames)} frames differs from the "
            f"first frame by more than {STILL_LEVELS:g} levels ({RETONED_LEVELS:g} in a frame whose "
            f"brightness changed; largest {change:.1f}) once the frame's brightness and contrast are "
            "matched to the first; nothing moves, so there is nothing to measure",
            frames=len(frames), largest_change=change)
    return change


def span_seconds(sampled: SampledFrames) -> float:
    """How long the sampled frames cover: first to last time stamp, plus one source frame."""
    if len(sampled) == 0:
        return 0.0
    return float(sampled.timestamps[-1] - sampled.timestamps[0]) + 1.0 / sampled.source_fps


class Span(NamedTuple):
    """How many frames a sampling gave and how long they cover (:func:`span_seconds`)."""

    frames: int
    seconds: float

    @classmethod
    def of(cls, sampled: SampledFrames) -> Span:
        return cls(len(sampled), span_seconds(sampled))


def require_same_span(
    gen: SampledFrames | Span, ref: SampledFrames | Span, min_coverage: float
) -> dict[str, float]:
    """Coverage facts of a whole-video comparison; raise :class:`Unmeasurable` when either video spans
    less than ``min_coverage`` of the other (frames sampled over each video's own length would then
    pair different moments, and a video cut short would be compared as if it were complete).

    Either side may be given as its :class:`Span` (a cached reference's) instead of its frames.
    """
    g_span = gen if isinstance(gen, Span) else Span.of(gen)
    r_span = ref if isinstance(ref, Span) else Span.of(ref)
    require_count(g_span.frames, 2)
    require_count(r_span.frames, 2, "the reference video")
    g, r = g_span.seconds, r_span.seconds
    facts = {"seconds": round(g, 3), "reference_seconds": round(r, 3)}
    if g < min_coverage * r:
        raise Unmeasurable(f"the video lasts {g:.2f} s, less than {min_coverage:g} of the reference's "
                           f"{r:.2f} s: it ends early", **facts)
    if r < min_coverage * g:
        raise Unmeasurable(f"the reference lasts {r:.2f} s, less than {min_coverage:g} of the video's "
                           f"{g:.2f} s: no ground truth for the rest", **facts)
    return facts


def require_texture(frames: np.ndarray, what: str = "the video") -> int:
    """How many consecutive frame pairs have a frame with too little texture for optical flow; raise
    :class:`Unmeasurable` for more than half.

    A frame has texture enough when at least :data:`MIN_TEXTURED` of its blocks show texture
    (:func:`texture_share`). Flow is measured only where the frames have texture and filled in
    elsewhere, so on a flat frame (a fade, a flash) or one that is flat but for a speck, its magnitude
    and forward-backward agreement say what the estimator filled in, not how anything moved. A clip
    whose block means do not change at all (a frozen blank clip; brightness counts here, unlike in
    :func:`require_motion`) passes whatever its texture: nothing in it changes, so there is no motion for
    the estimator to fill in, and the motion metrics' 0 is what it shows (the consistency metrics refuse
    still clips with :func:`require_motion`).
    """
    require_frames(frames, 2, what)
    if content_facts(frames).raw_change <= STILL_LEVELS:
        return 0
    shares = texture_shares(frames)
    bare = shares < MIN_TEXTURED
    steps = len(frames) - 1
    without = int((bare[:-1] | bare[1:]).sum())
    if 2 * without > steps:
        least = float(shares.min())
        raise Unmeasurable(
            f"too little texture for optical flow: in {without} of the {steps} consecutive frame pairs of "
            f"{what} a frame has texture in fewer than {MIN_TEXTURED:.0%} of its {BLOCK}x{BLOCK} blocks "
            f"(pixel standard deviation above {TEXTURE_LEVELS:g} levels; least {least:.1%}), so the flow "
            "there is the estimator's fill-in, not measured motion",
            frames=len(frames), steps_without_texture=without, least_textured_share=round(least, 4))
    return without


def require_correspondence(frames: np.ndarray, what: str = "the video") -> int:
    """How many consecutive frame pairs do not correspond; raise :class:`Unmeasurable` for more than half
    of them, or when more than half lack texture (:func:`require_texture`, checked first).

    A pair corresponds when its block means correlate at least :data:`MIN_CORRELATION`, as they are or
    after the translation that aligns them best (:func:`step_correlations`: a camera pan corresponds, at
    whatever evaluation size). Optical flow between frames that show nothing of each other (a scene
    replaced by noise, a cut) is not motion, and its magnitude or forward-backward agreement means
    nothing. Every metric that reads optical flow as motion or as its consistency calls this check, so
    flow on frames without texture is refused with it.
    """
    require_texture(frames, what)
    corr = step_correlations(frames)
    lost = int((corr < MIN_CORRELATION).sum())  # NaN (a flat frame) compares False: the texture check's
    if 2 * lost > len(corr):
        raise Unmeasurable(
            f"tracking lost: {lost} of the {len(corr)} consecutive frame pairs of {what} show nothing of "
            f"each other (block correlation below {MIN_CORRELATION:g}, as they are and after the translation "
            "that aligns them best), so optical flow between them "
            "measures no motion", frames=len(frames), steps_without_correspondence=lost)
    return lost
