"""What a clip's frames can support: enough of them, something that moves, frames that see each other.

Metrics check these before measuring, so a clip that gives them nothing to measure (one frame, a
still video, frames that show nothing of each other) is left unscored with a reason (raising
:class:`~robojudge.metrics.Unmeasurable`) instead of getting whatever an empty measurement happens to
give: a frame difference of 0, a similarity of 1, a drift of 0 are the best values of their metrics.

All checks look at frames averaged over 8 x 8 pixel blocks. Lossy codecs move single pixels of an
unchanged frame by up to ~16 levels (libx264 between an I and a P frame), but block means by at most
~3, while anything visible that moves (a 6 px object) changes a block by tens of levels.

Both checks read the same block means (:func:`content_facts`), computed once per frame array for
every check and metric that asks (:mod:`robojudge.metrics._derived`).
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from robojudge.metrics._derived import derived
from robojudge.metrics._errors import Unmeasurable
from robojudge.video import SampledFrames

#: Side of the pixel blocks whose means the checks compare.
BLOCK = 8
#: A clip is still when no block mean of any frame differs from the first frame's by more than this
#: (levels of 255): three times the codec noise measured on libx264 clips of unchanged frames.
STILL_LEVELS = 8.0
#: Consecutive frames correspond when their block means correlate at least this much (Pearson);
#: independent frames give about 0, the same scene a few pixels later well above 0.9.
MIN_CORRELATION = 0.5


def block_means(frames: np.ndarray) -> np.ndarray:
    """``(T, H, W[, C])`` uint8 frames as float32 means of ``BLOCK x BLOCK`` blocks, ``(T, h, w[, C])``.

    The last ``H % BLOCK`` rows and ``W % BLOCK`` columns (a strip narrower than a block) are left out,
    so every mean is of one whole block, rounded to a level as OpenCV's area resizing rounds it; a frame
    smaller than a block in a direction is one block that way. Resizing by a whole factor takes
    OpenCV's fast path: at 640x354 (the fast profile's size of a 752x416 clip) a resize to 80x44 blocks
    costs about a third of one from all 354 rows, whose 8.05-row cells take the general path
    (``benchmarks/bench_content_checks.py --block-crop``).
    """
    h, w = frames.shape[1:3]
    bh, bw = max(1, h // BLOCK), max(1, w // BLOCK)
    rows, cols = min(h, bh * BLOCK), min(w, bw * BLOCK)
    return np.stack([cv2.resize(f[:rows, :cols], (bw, bh), interpolation=cv2.INTER_AREA)
                     for f in frames]).astype(np.float32)


class ContentFacts(NamedTuple):
    """What the checks read from a clip's block means."""

    largest_change: float  # largest difference of a block mean from the first frame's, levels of 255
    step_correlations: np.ndarray  # (T - 1,) read-only; see :func:`step_correlations`


def content_facts(frames: np.ndarray) -> ContentFacts:
    """:class:`ContentFacts` of ``frames``, from one pass of :func:`block_means`.

    Remembered while a read-only ``frames`` array lives (:func:`robojudge.metrics._derived.derived`):
    the metrics of one item share their frame arrays through the frame cache, and each used to compute
    the same block means again (``cc_photometric`` twice).
    """
    return derived(frames, "content_facts", lambda: _facts(block_means(frames)))


def _facts(blocks: np.ndarray) -> ContentFacts:
    change = float(np.abs(blocks - blocks[0]).max())
    flat = blocks.reshape(len(blocks), -1).astype(np.float64)
    centred = flat - flat.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(centred, axis=1)
    dots = np.einsum("td,td->t", centred[:-1], centred[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        corr: np.ndarray = np.where((norms[:-1] > 1e-6) & (norms[1:] > 1e-6), dots / (norms[:-1] * norms[1:]),
                                    np.nan)
    corr.flags.writeable = False  # shared by every caller
    return ContentFacts(change, corr)


def largest_change(frames: np.ndarray) -> float:
    """The largest difference of a block mean from the first frame's, in levels of 255."""
    return content_facts(frames).largest_change


def step_correlations(frames: np.ndarray) -> np.ndarray:
    """Pearson correlation of the block means of frames t and t + 1, ``(T - 1,)``; NaN at a flat frame.

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


def require_motion(frames: np.ndarray, what: str = "the video") -> float:
    """The clip's largest block change (:func:`largest_change`); raise :class:`Unmeasurable` when it is still.

    A still clip (every frame the first one, up to codec noise) has no motion whose consistency,
    smoothness or quality could be measured, and would otherwise get the metric's best value.
    """
    require_frames(frames, 2, what)
    change = largest_change(frames)
    if change <= STILL_LEVELS:
        raise Unmeasurable(
            f"{what} is still: no {BLOCK}x{BLOCK} block of any of its {len(frames)} frames differs from the "
            f"first frame by more than {STILL_LEVELS:g} levels (largest {change:.1f}); nothing moves, so "
            "there is nothing to measure", frames=len(frames), largest_change=change)
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


def require_correspondence(frames: np.ndarray, what: str = "the video") -> int:
    """How many consecutive frame pairs do not correspond; raise :class:`Unmeasurable` for more than half.

    A pair corresponds when its block means correlate at least :data:`MIN_CORRELATION`. Optical flow
    between frames that show nothing of each other (a scene replaced by noise, a cut) is not motion,
    and its magnitude or forward-backward agreement means nothing.
    """
    require_frames(frames, 2, what)
    corr = step_correlations(frames)
    lost = int((corr < MIN_CORRELATION).sum())  # NaN (a flat frame) compares False: not counted
    if 2 * lost > len(corr):
        raise Unmeasurable(
            f"tracking lost: {lost} of the {len(corr)} consecutive frame pairs of {what} show nothing of "
            f"each other (block correlation below {MIN_CORRELATION:g}), so optical flow between them "
            "measures no motion", frames=len(frames), steps_without_correspondence=lost)
    return lost
