"""Frame-paired fidelity to the reference video: PSNR and SSIM (RoboPhys-3D App. B.1.1).

Both metrics read the generated video and ``Item.reference_video`` the same way (see
:func:`paired_frames`), so within one item the pair is decoded once and shared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics import functional as F
from robojudge.metrics._content import require_count, require_frames, require_motion, require_side
from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item
from robojudge.video import probe_video, report_warnings, sample_frames

#: Two framings are taken for one when their displayed aspect ratios (width / height) differ by at most
#: this share. Generators round a side to a multiple of 16 or 32 px: Wan's 832x480 for an 854x480
#: reference is 2.6% off, Cosmos's 1280x704 for 1280x720 2.3%, 640x352 for 640x360 2.3%; all are one
#: framing, resized faithfully. A 16:10 render of a 16:9 scene is 11% off, a 16:9 or square one of a 4:3
#: scene 25-33%. A crop or padding of under 5% of a side is therefore stretched and compared.
ASPECT_TOLERANCE = 0.05

#: A frame-paired comparison that resizes the generated video by more than this linear factor, up or down,
#: to the reference's size warns (:func:`resize_warning`). Up to 2x a resize is one generator's size
#: against another's (854x480 against 1280x720 is 1.5x); beyond it, a 256x144 clip against a 1920x1080
#: reference (7.5x) is compared on detail it never had, and a 4K video against a 480p reference on a
#: sixteenth of its pixels: the value says as much about the two resolutions as about the video.
RESIZE_WARN_FACTOR = 2.0

#: A configured pairing rate at most this share above a video's own rate is taken as that rate, neither
#: lowered nor warned about (:func:`pairing_rates`): a 30-fps MP4 whose time stamps count milliseconds
#: averages 29.9953 fps (frames over the time they cover), and ``fps: 30`` asked of it warned on every
#: row though the same frames were compared. It is the rounding of a time base, which
#: :func:`~robojudge.video.sample_frames` allows for too: asked for 30 fps of such a video, it keeps
#: every frame.
PAIRING_RATE_TOLERANCE = 0.005

#: A video is blank when no compared frame has a pixel standard deviation (of any RGB channel) above this,
#: in levels of 255: every frame one colour, up to codec noise (flat black, grey and white clips through
#: libx264 spread by 0), where a scene spreads by tens (the demo's Fetch reference, a plain table before
#: a plain wall, by 68-71). RIGIS calls a view blank at the same level, on gray.
BLANK_STD = 2.0

#: ``details.notice`` of a row scored at its worst because the generated video does not move and its
#: reference does (:func:`paired_motion`). One text for every such row, so ``robojudge score`` counts
#: them under it.
STILL_VIDEO_NOTICE = ("the generated video is still while its reference moves: scored at the metric's "
                      "worst, as missing frames are")

#: ``details.notice`` of a row compared against a reference that does not move (:func:`paired_motion`).
STILL_REFERENCE_NOTICE = ("the reference video is still: compared as it is, but a reference in which "
                          "nothing moves cannot tell a video that stops from one that acts; check that it "
                          "is the episode's video and not a frozen or mis-encoded copy")


class PairedConfig(BaseModel):
    """How generated and reference frames are paired."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float | None = Field(
        default=None,
        gt=0,
        description="common sampling rate; None, or above either video's own rate (by more than 0.5%): the "
        "lower of the two videos' own frame rates",
    )
    min_reference_coverage: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description="the reference must have at least this share of the generated video's frames; a "
        "shorter one leaves the item unscored",
    )

    def main_video_samplings(self, item: Item) -> list[dict[str, Any]]:
        """What :func:`paired_frames` reads of ``item``'s main video: every frame at the common rate, at
        the reference's size (``robojudge.metrics.prefetch_main_video``); nothing when it reads none, for
        want of a reference or because the framing check refuses the pair from the probes."""
        if not item.reference_video:
            return []
        try:
            require_paired_framing(item)
        except Unmeasurable:
            return []  # the metric refuses the pair before reading a frame: nothing to decode ahead
        return [paired_sampling(item, self.fps)]


class PairingRate(NamedTuple):
    """The common rate a video and its reference are sampled at, and what it was chosen from."""

    #: the rate both are sampled at: the configured ``fps`` or, above either video's own rate or unset,
    #: the lower of their own rates
    fps: float
    #: the ``fps`` setting (None: unset)
    configured: float | None
    #: each video's own frame rate, from its probe
    video_fps: float
    reference_fps: float

    @property
    def clamped(self) -> bool:
        """Whether the configured rate was above a video's own (by more than
        :data:`PAIRING_RATE_TOLERANCE`) and the lower own rate used instead."""
        return self.configured is not None and self.configured > self.fps * (1 + PAIRING_RATE_TOLERANCE)

    def details(self) -> dict[str, float | None]:
        """What a row records of the pairing: the rate compared at, the setting, both own rates."""
        return {"pairing_fps": self.fps, "fps_configured": self.configured, "video_fps": self.video_fps,
                "reference_fps": self.reference_fps}

    def note(self) -> str | None:
        """A warning when the configured rate was lowered (:attr:`clamped`); None otherwise."""
        if not self.clamped:
            return None
        slower = "video" if self.video_fps <= self.reference_fps else "reference"
        return (f"the pairing rate fps={self.configured:g} is above the {slower}'s own "
                f"{min(self.video_fps, self.reference_fps):g} fps, which cannot be sampled faster: both "
                f"videos are compared at {self.fps:g} fps (the video is {self.video_fps:g} fps, its "
                f"reference {self.reference_fps:g})")


class PairedFrames(NamedTuple):
    """Generated and reference frames paired in time, and what could not be paired.

    ``gen[i]`` pairs with ``ref[i]``; ``missing`` more reference frames follow (the generated video ended
    early), which have no generated counterpart and are counted, not read; ``unmatched`` generated
    frames beyond the reference's end were dropped.
    """

    gen: np.ndarray
    ref: np.ndarray
    missing: int
    unmatched: int
    #: the generated video's own ``(width, height)``, before it was resized to the reference's
    video_size: tuple[int, int]
    #: the reference's ``(width, height)``, the size the frames are compared at
    reference_size: tuple[int, int]
    #: the common rate the frames were sampled at
    rate: PairingRate

    def coverage(self) -> dict[str, int | str | float | None]:
        """Details every frame-paired metric reports: frames compared, expected, missing, unmatched, both
        videos' own sizes (``"WxH"``; the row's ``frame_size`` is the size compared at) and the rates
        (:meth:`PairingRate.details`)."""
        return {"frames": len(self.gen), "frames_expected": len(self.ref) + self.missing,
                "frames_missing": self.missing, "frames_unmatched": self.unmatched,
                "video_size": size_text(self.video_size), "reference_size": size_text(self.reference_size),
                **self.rate.details()}


def size_text(size: tuple[int, int]) -> str:
    """``"WxH"`` of a ``(width, height)``."""
    return f"{size[0]}x{size[1]}"


def pairing_rates(video: str, reference_video: str, fps: float | None) -> PairingRate:
    """The common rate of a video and its reference (:class:`PairingRate`), from their probes.

    :func:`~robojudge.video.sample_frames` cannot sample a video faster than its own rate: asked for
    more, it keeps every frame, at the video's own times. Two videos read so are no longer on one time
    grid, and pairing them frame by frame compared frame ``i`` of a 16-fps clip (``i / 16`` s) with frame
    ``i`` of a 30-fps reference (``i / 30`` s): a 16-fps copy of the reference at ``fps=30`` scored PSNR
    11 dB instead of 68. So ``fps`` is at most both videos' own rates.

    An ``fps`` within :data:`PAIRING_RATE_TOLERANCE` above the lower own rate is lowered too, without a
    warning (:attr:`PairingRate.clamped`): the difference is the rounding of a time base, not a rate the
    video lacks. (Kept as set, ``fps=30`` read a 29.97-fps clip at its own times against a 30-fps
    reference on a 30-fps grid, pairing frame ``k`` with ``k - 1`` after the first: 22.7 dB for 33.6.)
    """
    own, ref = probe_video(video).fps, probe_video(reference_video).fps
    lower = min(own, ref)
    return PairingRate(lower if fps is None else min(fps, lower), fps, own, ref)


def pairing_rate(video: str, reference_video: str, fps: float | None) -> float:
    """The rate a video and its reference are both sampled at: ``fps``, or the lower of their own rates
    when it is unset or above it (:func:`pairing_rates`)."""
    return pairing_rates(video, reference_video, fps).fps


def paired_sampling(item: Item, fps: float | None) -> dict[str, Any]:
    """The :func:`sample_frames` arguments :func:`paired_frames` reads ``item``'s main video with: every
    frame at the common rate (:func:`pairing_rate`), at the reference's size (its first frame's, upright:
    what :func:`sample_frames` gives of it), from the probes alone."""
    reference = str(item.reference_video)
    ref = probe_video(reference)
    rate = pairing_rate(item.video, reference, fps)
    return {"fps": rate, "max_frames": None, "size": (ref.width, ref.height)}


def aspect_mismatch(video: tuple[int, int], reference: tuple[int, int]) -> str | None:
    """Why a video of ``video`` size (``(width, height)``) cannot be paired pixel by pixel with a
    reference of ``reference`` size, or None when their aspect ratios agree within
    :data:`ASPECT_TOLERANCE` (one framing at another resolution: resizing is faithful).

    Another aspect ratio is another framing: a wider field of view, padding, a crop, or a picture
    squeezed by the generator. Stretching it to the reference's size puts the scene on other pixels, so
    a faithful 16:9 rollout of a 4:3 reference scored PSNR 14 dB, like a video of another scene. A
    landscape video against a portrait reference is named as such: almost always a rotation flag lost in
    a re-encode.

    >>> aspect_mismatch((832, 480), (640, 480))[:45]
    'the video is 832x480 (aspect 1.733), its refe'
    >>> aspect_mismatch((1280, 960), (640, 480)) is None, aspect_mismatch((641, 479), (640, 480)) is None
    (True, True)
    >>> aspect_mismatch((832, 480), (854, 480)) is None, aspect_mismatch((1280, 704), (1280, 720)) is None
    (True, True)
    >>> 'rotation flag' in aspect_mismatch((24, 40), (40, 24))
    True
    """
    (w, h), (rw, rh) = video, reference
    aspect, ref_aspect = w / h, rw / rh
    if abs(aspect / ref_aspect - 1) <= ASPECT_TOLERANCE:
        return None
    reason = (f"the video is {w}x{h} (aspect {aspect:.3f}), its reference {rw}x{rh} ({ref_aspect:.3f}): "
              f"aspect ratios more than {ASPECT_TOLERANCE:.0%} apart frame the scene differently (a wider "
              "or narrower view, padding, a crop), and stretching one to the other's size would compare "
              "pixels that show different things")
    if (w - h) * (rw - rh) < 0:
        shape, ref_shape = ("landscape", "portrait") if w > h else ("portrait", "landscape")
        reason += (f"; the video is {shape} and its reference {ref_shape}: a lost rotation flag (a re-encode "
                   "that dropped the display matrix) gives such a pair")
    return reason


def resize_warning(video: tuple[int, int], reference: tuple[int, int]) -> str | None:
    """A warning when a video of ``video`` size (``(width, height)``) is resized to its ``reference``'s by
    more than :data:`RESIZE_WARN_FACTOR` along a side, up or down; None otherwise. Values are unchanged:
    the warning says what they compare.

    >>> resize_warning((256, 144), (1920, 1080))[:68]
    'the video is scaled up 7.5x, from 256x144 to its reference size 1920'
    >>> resize_warning((1920, 1080), (640, 360))[:45], resize_warning((1280, 720), (640, 360))
    ('the video is scaled down 3.0x, from 1920x1080', None)
    """
    (w, h), (rw, rh) = video, reference
    up, down = max(rw / w, rh / h), max(w / rw, h / rh)
    if max(up, down) <= RESIZE_WARN_FACTOR:
        return None
    sizes = f"from {size_text(video)} to its reference size {size_text(reference)}"
    if up > down:
        return (f"the video is scaled up {up:.1f}x, {sizes}, to be compared: the reference's detail is "
                f"compared with detail the video does not have (more than {RESIZE_WARN_FACTOR:g}x; the value "
                "reflects the two resolutions as well as the video)")
    return (f"the video is scaled down {down:.1f}x, {sizes}, to be compared: its detail finer than the "
            f"reference's pixels is not compared (more than {RESIZE_WARN_FACTOR:g}x; the value reflects the "
            "two resolutions as well as the video)")


def require_same_framing(video: tuple[int, int], reference: tuple[int, int],
                         shown: tuple[tuple[int, int], tuple[int, int]] | None = None) -> None:
    """Raise :class:`Unmeasurable` when a video and its reference are of different framings
    (:func:`aspect_mismatch` of their displayed sizes ``shown``, :attr:`robojudge.video.VideoInfo.
    display_size`: a video of non-square pixels is compared by the picture it shows; the stored sizes
    when not given), or either is too small to compare (:func:`~robojudge.metrics._content.require_side`);
    the details name both stored sizes."""
    sizes = {"video_size": size_text(video), "reference_size": size_text(reference)}
    try:
        require_side(video, why=f" (they would be scaled up to the reference's {size_text(reference)})")
        require_side(reference, "the reference video")
    except Unmeasurable as exc:
        raise Unmeasurable(exc.reason, **sizes) from None
    mismatch = aspect_mismatch(*(shown or (video, reference)))
    if mismatch is not None:
        raise Unmeasurable(mismatch, **sizes)


def require_paired_framing(item: Item) -> tuple[tuple[int, int], tuple[int, int]]:
    """:func:`require_same_framing` of ``item``'s video and reference, from their probes alone (no frame
    is decoded); returns both stored sizes, ``(width, height)``, the video's first."""
    own, ref = probe_video(item.video), probe_video(str(item.reference_video))
    sizes = (own.width, own.height), (ref.width, ref.height)
    require_same_framing(*sizes, (own.display_size, ref.display_size))
    return sizes


def paired_frames(item: Item, fps: float | None, min_reference_coverage: float = 0.9) -> PairedFrames:
    """Generated and reference RGB frames paired in time, ``(N, H, W, 3)`` uint8 each.

    Both videos are sampled at one rate (``fps``, or the lower of their native rates, which keeps
    every frame when they agree; an ``fps`` above either native rate is lowered to it and warns,
    :func:`pairing_rates`), each from its own first frame: generated frame 0 pairs with reference
    frame 0, so the reference must start at the conditioning frame, and at each target time ``k / rate``
    each video gives the latest frame shown at or before it (:func:`~robojudge.video.sample_frames`),
    repeats allowed: a video that stalls holds its frame over the stall, as a player does
    (:meth:`~robojudge.video.SampledFrames.shown_at`); generated frames are resized to the reference's
    size. The reference sets the length: generated frames past
    its end are dropped, and a generated video that ends early leaves reference frames ``missing``,
    which the metrics count as the worst value rather than comparing only the common start (a one-frame
    video holding the conditioning frame scored a perfect 100 dB that way). Those missing frames are
    counted from the reference's time stamps, never decoded, so a short clip against a long reference
    holds only the frames it is compared with.

    Only one framing is compared: a video whose aspect ratio differs from the reference's (another
    field of view, padding, a crop, a lost rotation; :func:`aspect_mismatch`) is left unscored rather
    than stretched, and so is one under 16 px on a side, whose upscaled frames would be scored on detail
    it does not have. Both checks read the probes, before any frame is decoded.

    Raises:
        MetricInputError: When the item has no reference video.
        Unmeasurable: When either video gives fewer than 2 frames, the reference has fewer than
            ``min_reference_coverage`` of the generated video's frames (no ground truth for the rest),
            the two are of different framings, or either is too small (:func:`require_same_framing`).
    """
    if not item.reference_video:
        raise MetricInputError("item has no reference_video to compare against")
    video_size, reference_size = require_paired_framing(item)
    resized = resize_warning(video_size, reference_size)
    rates = pairing_rates(item.video, str(item.reference_video), fps)
    # into the row's details.video_warnings and the run's list of them
    report_warnings(Path(item.video), [w for w in (resized, rates.note()) if w is not None])
    sampling = paired_sampling(item, fps)
    rate = sampling["fps"]
    gen_read = sample_frames(item.video, **sampling)
    # The k-th pair is the frame each video shows at k / rate: a video that stalls, or runs at a variable
    # rate, holds a frame over several targets (the rate step picks it once). Pairing the picks by list
    # position instead put every pair after a 0.37-s stall 8 targets apart (7 dB where identical
    # content scores 100). Constant-rate video picks one frame per target, and pairs as before.
    gen_at = gen_read.shown_at(rate)
    # Only the reference frames that pair with a generated one are decoded: each pick is shown at one
    # target at least, so the first len(gen_at) picks cover every target the generated video reaches.
    # How many follow is counted from the time stamps (a 1-s clip against a 60-s reference decoded all
    # 1800 reference frames, 1.8 GB at 640x480, to compare 30 of them); a stall among those is counted
    # as one frame.
    read = sample_frames(item.reference_video, fps=rate, max_frames=max(len(gen_at), 1), spread="head")
    ref_at = read.shown_at(rate)
    total = len(ref_at) + read.picked - len(read)
    require_frames(gen_read.frames, 2)
    require_count(total, 2, "the reference video")
    if total < min_reference_coverage * len(gen_at):
        raise Unmeasurable(
            f"the reference video has {total} frames at {rate:g} fps, fewer than "
            f"{min_reference_coverage:g} of the generated video's {len(gen_at)}: no ground truth for the "
            "rest",
            frames=0, frames_expected=total, reference_frames=total, generated_frames=len(gen_at))
    n = min(total, len(gen_at))
    gen, ref = _held(gen_read.frames, gen_at[:n]), _held(read.frames, ref_at[:n])
    return PairedFrames(gen, ref, total - n, len(gen_at) - n, video_size, reference_size, rates)


def _held(frames: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``frames[at]``, or ``frames`` itself when ``at`` is ``0, 1, 2, ...`` over a prefix (no copy)."""
    if np.array_equal(at, np.arange(len(at))):
        return frames[: len(at)]
    return np.asarray(frames[at])


def with_missing(per_frame: np.ndarray, missing: int, worst: float) -> np.ndarray:
    """``per_frame`` followed by ``missing`` copies of the metric's ``worst`` value."""
    return np.concatenate([np.asarray(per_frame, dtype=np.float64), np.full(missing, float(worst))])


def is_blank(frames: np.ndarray) -> bool:
    """Whether every one of ``(T, H, W, C)`` frames is one colour: no channel's pixel standard deviation
    above :data:`BLANK_STD` (the first frame with a scene in it ends the look).

    >>> flat = np.full((3, 16, 16, 3), 200, np.uint8)
    >>> scene = flat.copy()
    >>> scene[2, :8] = 40  # a dark half in the last frame
    >>> is_blank(flat), is_blank(scene)
    (True, False)
    """
    return all(float(f.reshape(-1, f.shape[-1]).std(axis=0).max()) <= BLANK_STD for f in frames)


class PairMotion(NamedTuple):
    """Whether the compared frames of a video and its reference move (:func:`paired_motion`)."""

    #: the generated video is blank or still over the compared frames
    video_still: bool
    #: the reference is still over the compared frames (it is never blank: that is unscored)
    reference_still: bool
    #: why the video counts as still (None when it moves)
    video_reason: str | None

    @property
    def penalised(self) -> bool:
        """Whether the row is scored at the metric's worst: the video is still and its reference moves."""
        return self.video_still and not self.reference_still

    def details(self) -> dict[str, Any]:
        """What a row records of it: a ``notice`` when the video is penalised or the reference is still,
        and ``still_reason`` for a penalised video; nothing when both move (the row as before)."""
        if self.penalised:
            return {"notice": STILL_VIDEO_NOTICE, "still_reason": self.video_reason}
        if self.reference_still:
            return {"notice": STILL_REFERENCE_NOTICE}
        return {}


def _still(frames: np.ndarray, what: str) -> str | None:
    """Why ``frames`` count as still (:func:`~robojudge.metrics._content.require_motion`'s reason), or
    None when they move."""
    try:
        require_motion(frames, what)
    except Unmeasurable as exc:
        return exc.reason
    return None


def paired_motion(pair: PairedFrames, reference: str) -> PairMotion:
    """Whether the compared frames of ``pair`` move, read before any frame is compared.

    Over flat simulator scenes (a table, a wall) a blank or frozen video matches much of a moving
    reference: SSIM's stabilising constants make a flat frame agree with flat background, so on the
    demo's Fetch scene an all-white video scored SSIM 0.721 and the frozen first frame 0.883, above real
    rollouts. Such a video has failed to animate what its reference shows, so where the reference moves
    the frame-paired metrics score it at their worst, as they score reference frames the video does not
    reach (:attr:`PairMotion.penalised`). Still and moving are :func:`~robojudge.metrics._content.
    require_motion`'s, on the frames compared (the generated ones at the reference's size); a video of
    flat frames (:func:`is_blank`) is still whatever its brightness does. Against a still reference the
    two are compared as they are, with a notice.

    Raises:
        Unmeasurable: When the reference is blank (every compared frame one colour): there is no ground
            truth to compare with, and the generator would take the blame for it.
    """
    if is_blank(pair.ref):
        raise Unmeasurable(
            f"the reference video is blank: every compared frame of {reference} is one colour (no RGB "
            f"channel spreads by more than {BLANK_STD:g} levels), so it shows nothing to compare the video "
            "with; check the reference file", **pair.coverage())
    reference_still = _still(pair.ref, "the reference video") is not None
    video_reason = _still(pair.gen, "the generated video")
    if video_reason is None and is_blank(pair.gen):
        video_reason = (f"every compared frame of the generated video is one colour (no RGB channel "
                        f"spreads by more than {BLANK_STD:g} levels)")
    return PairMotion(video_reason is not None, reference_still, video_reason)


def worst_score(pair: PairedFrames, motion: PairMotion, worst: float) -> Score:
    """A penalised pair's row (:attr:`PairMotion.penalised`): every reference frame counted at the
    metric's ``worst``, as :func:`with_missing` counts the frames a video does not reach."""
    per_frame = with_missing(np.empty(0), len(pair.ref) + pair.missing, worst)
    return Score(value=float(per_frame.mean()), details={**pair.coverage(), **motion.details()})


class PsnrConfig(PairedConfig):
    """Pairing settings and the cap that stands in for the infinite PSNR of identical frames."""

    max_db: float = Field(default=100.0, gt=0, description="per-frame PSNR cap in dB (identical frames)")


@robophys_metric(
    "iq1_psnr",
    family=Family.reference,
    inputs={Input.video, Input.reference},
    description=(
        "Peak signal-to-noise ratio (data range 255, RGB) between each generated frame and the "
        "reference frame at the same time, averaged over frames; capped at 100 dB per frame."
    ),
    config=PsnrConfig,
    version="5",  # a blank or still video against a moving reference scores 0 dB, a blank reference is
    # unscored (v4: both compared);
    # v4: an fps above either video's own rate is lowered to it (v3: frames paired by index there);
    # v3: other framings and clips under 16 px unscored (v2: stretched or scaled up and scored)
)
def iq1_psnr(item: Item, config: PsnrConfig) -> Score:
    """Mean per-frame PSNR against the reference video (RoboPhys-3D App. B.1.1).

    Per-frame PSNR (:func:`robojudge.metrics.functional.psnr`) is averaged (not the PSNR of the pooled
    MSE), as the paper scores "each generated frame and its ground-truth counterpart". The cap only
    matters for (near-)identical frames; any value at or above 50 dB normalizes to 1 (App. B.5.3,
    eq. 6). A reference frame the generated video does not reach counts as 0 dB, the lowest PSNR two
    8-bit frames can have (MSE at most 255^2). A blank or still video against a moving reference
    scores 0 dB throughout, and a blank reference leaves the item unscored (:func:`paired_motion`).
    """
    pair = paired_frames(item, config.fps, config.min_reference_coverage)
    motion = paired_motion(pair, str(item.reference_video))
    if motion.penalised:
        return worst_score(pair, motion, 0.0)
    ref = pair.ref[: len(pair.gen)]
    compared = np.array([F.psnr(g, r, config.max_db) for g, r in zip(pair.gen, ref, strict=True)])
    per_frame = with_missing(compared, pair.missing, 0.0)
    return Score(
        value=float(per_frame.mean()),
        details={**pair.coverage(), "min_frame": float(compared.min()),
                 "capped_frames": int((compared >= config.max_db).sum()), **motion.details()},
    )


class SsimConfig(PairedConfig):
    """Pairing settings and the SSIM window (Wang et al. 2004 by default)."""

    gray: bool = Field(default=False, description="compare BT.601 luma instead of RGB channels")
    gaussian_weights: bool = Field(
        default=True, description="11x11 Gaussian window, sigma 1.5 (Wang et al.); False: 7x7 uniform"
    )


@robophys_metric(
    "iq1_ssim",
    family=Family.reference,
    inputs={Input.video, Input.reference},
    description=(
        "Structural similarity (Wang et al. 2004: Gaussian window sigma 1.5, RGB channels averaged) "
        "between each generated frame and the reference frame at the same time, averaged over frames; "
        "a frame below 0 (anti-correlated) and a reference frame the video does not reach count 0."
    ),
    config=SsimConfig,
    version="6",  # a blank or still video against a moving reference scores 0, a blank reference is
    # unscored (v5: both compared);
    # v5: an fps above either video's own rate is lowered to it (v4: frames paired by index there);
    # v4: other framings and clips under 16 px unscored (v3: stretched or scaled up and scored)
)
def iq1_ssim(item: Item, config: SsimConfig) -> Score:
    """Mean per-frame SSIM against the reference video (RoboPhys-3D App. B.1.1), each frame in [0, 1].

    Each frame pair is scored by :func:`robojudge.metrics.functional.ssim` (scikit-image's value, computed
    with OpenCV filters).

    Identical videos score exactly 1. A reference frame the generated video does not reach counts as 0,
    no structural similarity, the bottom of the paper's range [0, 1]. SSIM itself reaches down to -1
    for anti-correlated frames (a negative image); such a frame has no structural similarity either and
    counts 0 too, so a video that shows every frame never scores below one that stops early (with the
    raw value in the mean, 8 negative frames scored -0.97 and the same clip cut after 2 frames -0.24).
    Missing frames are not counted -1 instead: the taxonomy maps SSIM to the score by identity on
    [0, 1], so values below 0 would leave the normalized range. The raw lowest frame is kept in
    ``details["min_frame"]``, the number of frames below 0 in ``details["negative_frames"]``.

    A blank or still video against a moving reference scores 0 throughout (over flat backgrounds
    SSIM's constants gave it a typical rollout's value), and a blank reference leaves the item
    unscored (:func:`paired_motion`).
    """
    import cv2

    pair = paired_frames(item, config.fps, config.min_reference_coverage)
    motion = paired_motion(pair, str(item.reference_video))
    if motion.penalised:
        return worst_score(pair, motion, 0.0)
    gen, ref = pair.gen, pair.ref[: len(pair.gen)]
    if config.gray:
        gen = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in gen])
        ref = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in ref])
    # Frames smaller than the SSIM window raise Unmeasurable (unscored). Any other error, a library that
    # cannot import beside this NumPy among them, fails the row, which --retry-errors computes again.
    compared = np.array(
        [F.ssim(g, r, gaussian_weights=config.gaussian_weights) for g, r in zip(gen, ref, strict=True)]
    )
    per_frame = with_missing(np.maximum(compared, 0.0), pair.missing, 0.0)
    details = {**pair.coverage(), "min_frame": float(compared.min()),
               "negative_frames": int((compared < 0).sum()), **motion.details()}
    return Score(value=float(per_frame.mean()), details=details)
