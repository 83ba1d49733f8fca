"""Frame times a sampler can rely on, and whether a file holds the frames it declares.

Containers are not always honest about time. An mp4 whose media header has a time scale of 0 gets
time stamps thousands of seconds apart; a raw H.264 stream (even one named ``.mp4``) has no time
stamps at all, so the demuxer invents them at an assumed 25 fps; a GIF stores delays in whole
centiseconds, so an 8 fps GIF alternates 12 and 13 cs. This module turns presentation time stamps
into frame times and says, per video, what it had to assume:

* **Unreliable time stamps** (no time base, a frame without a time stamp, repeated or decreasing
  stamps, a raw elementary stream whose stamps the demuxer made up, stamps implying a rate outside
  :data:`MIN_FPS`-:data:`MAX_FPS`, or stamps spanning far more than the container's duration):
  frame ``i`` is placed at ``i / rate``. The rate is the first sane one of: the rate written in the
  codec bitstream (e.g. H.264 timing info), frame count over the container's duration, the
  stream's nominal rate, else :data:`ASSUMED_FPS`. Each case adds a warning.
* **Declared rates the stamps contradict** (:func:`stamped_rate`): an AVI header counting ticks of a
  fraction of a frame, a nominal rate (a Matroska/WebM default frame duration, an FLV header's rate,
  FFmpeg's guess for MPEG-TS, NUT, ASF or GIF) that the stamps do not keep (a stall, a browser
  recording declaring 24 fps). The stamps' rate is used, with a warning (none for a GIF, which
  declares no rate).
* **Jitter.** Time stamps rounded to a coarse time base scatter around an even grid. The rate step
  counts a frame as "at" a target when it is at most that scatter late (see
  :func:`jitter_tolerance`), so the 8 fps GIF sampled at 8 fps keeps all its frames.
* **Truncation.** A file that ends before the frames (or duration) its header declares is an error
  when less than :data:`MIN_COMPLETE` of it is there, and a warning when at least
  :data:`SHORT_FRAMES` frames are missing. Without a declared frame count, the frames' span (the last
  lasting the usual step between frames) is held against the declared duration, counted from the first
  frame (:mod:`robojudge.video._decode` takes the start off the containers that give an end time). A
  trimmed MP4/MOV (an edit list hides frames the track still holds) declares every frame of the track,
  so it is held against its edited duration. Frames missing because the decoder rejected their packets
  inside the stream are held to the same rule, but called ``damaged``, not ``truncated``: the file is
  whole, its data is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from robojudge.video._select import time_tolerance
from robojudge.video._types import VideoError

if TYPE_CHECKING:  # only for annotations: _decode uses nominal_rate from here
    from robojudge.video._decode import StreamMeta

__all__ = [
    "ASSUMED_FPS",
    "MAX_FPS",
    "MIN_COMPLETE",
    "MIN_FPS",
    "SHORT_FRAMES",
    "FrameTimes",
    "check_complete",
    "declares_nominal_rate",
    "fallback_rate",
    "frame_times",
    "implausible_stamps",
    "jitter_tolerance",
    "nominal_rate",
    "sane_fps",
    "stamped_length",
    "stamped_rate",
    "tick_factor",
]

ASSUMED_FPS = 30.0
"""Rate assumed when a file gives none that can be used (the same default as frame folders)."""
MIN_FPS = 1.0 / 60.0
"""Slowest believable rate: one frame a minute. Slower time stamps are taken as broken."""
MAX_FPS = 1000.0
"""Fastest believable rate."""
MIN_COMPLETE = 0.5
"""A file holding less than this share of its declared frames (or duration) is an error."""
SHORT_FRAMES = 2
"""A file missing at least this many declared frames (but not too many) gets a warning."""
_JITTER_LIMIT = 0.5  # scatter of at least half a frame interval is variable frame rate, not jitter


def sane_fps(fps: float | None) -> bool:
    """True for a finite rate within :data:`MIN_FPS`-:data:`MAX_FPS`."""
    return fps is not None and math.isfinite(fps) and MIN_FPS <= fps <= MAX_FPS


@dataclass(frozen=True)
class FrameTimes:
    """Frame times of a video and how far to trust them.

    Attributes:
        times: seconds from the first frame, one per frame in presentation order.
        fps: the nominal rate reported as ``SampledFrames.source_fps``.
        tolerance: how late (seconds) a frame may be and still count as at a target time.
        warnings: what had to be assumed, in words.
        by_order: the time stamps could not be used: frames are placed by their order at ``fps``.
    """

    times: list[float]
    fps: float
    tolerance: float
    warnings: tuple[str, ...] = ()
    by_order: bool = False


def jitter_tolerance(times: Sequence[float]) -> float:
    """How far the time stamps scatter around an even grid through the first and last frame.

    Zero for fewer than three frames, and for a scatter of half a frame interval or more: such a
    stream has a genuinely variable rate, and a frame late by that much is a later frame.
    """
    n = len(times)
    if n < 3:
        return 0.0
    t = np.asarray(times, dtype=np.float64)
    step = (t[-1] - t[0]) / (n - 1)
    if not step > 0:
        return 0.0
    off = t - t[0] - step * np.arange(n)
    scatter = float(off.max() - off.min())
    return scatter if scatter < _JITTER_LIMIT * step else 0.0


def fallback_rate(meta: StreamMeta, frames: int) -> tuple[float, str]:
    """The rate to place frames by when their time stamps cannot be used, and where it came from."""
    if sane_fps(meta.codec_fps):
        assert meta.codec_fps is not None
        return meta.codec_fps, "rate from the codec bitstream"
    if not meta.raw:
        cd = meta.container_duration
        if cd is not None and cd > 0 and frames > 1 and sane_fps(frames / cd):
            return frames / cd, "rate from the container's duration"
        if sane_fps(meta.fps):
            assert meta.fps is not None
            return meta.fps, "the stream's nominal rate"
    return ASSUMED_FPS, "assumed: the file gives no usable rate"


def nominal_rate(meta: StreamMeta) -> tuple[float, tuple[str, ...]]:
    """A stream's rate from its metadata alone (for probing), with a warning when it is not its own."""
    if not meta.raw and meta.fps is not None and sane_fps(meta.fps):
        return meta.fps, ()
    if meta.raw:
        why = f"no container time stamps ({meta.format} stream)"
    elif meta.fps is None:
        why = "the stream gives no rate"
    else:
        why = f"the stream's rate {meta.fps:.3g} fps is unusable"
    rate, source = fallback_rate(meta, meta.frame_count or 0)
    return rate, (f"{why}; rate {rate:.4g} fps ({source})",)


def implausible_stamps(pts: Sequence[int | None], meta: StreamMeta) -> str | None:
    """Why these time stamps make no sense in themselves, or None when they do.

    Unlike :func:`frame_times` this does not hold them against the container's duration: frames an
    MP4 edit list hides may lie far outside the edited clip and still be stamped correctly.
    """
    if meta.raw:
        return f"no container time stamps ({meta.format} stream)"
    if meta.time_base is None or meta.time_base <= 0:
        return "no time base"
    if any(p is None for p in pts):
        return "frames without time stamps"
    stamps = [int(p) for p in pts if p is not None]
    if any(b <= a for a, b in zip(stamps, stamps[1:], strict=False)):
        return "repeated or decreasing time stamps"
    if len(stamps) < 2:
        return None  # one stamp implies no rate
    span = float((stamps[-1] - stamps[0]) * meta.time_base)
    implied = (len(stamps) - 1) / span
    if not sane_fps(implied):
        return f"time stamps imply {implied:.3g} fps (time base {meta.time_base})"
    return None


def _unreliable(pts: Sequence[int | None], meta: StreamMeta) -> str | None:
    """Why these time stamps cannot be used as frame times, or None when they can."""
    reason = implausible_stamps(pts, meta)
    if reason is not None:
        return reason
    assert meta.time_base is not None
    stamps = [int(p) for p in pts if p is not None]
    span = float((stamps[-1] - stamps[0]) * meta.time_base)
    cd = meta.container_duration
    if cd is not None and cd > 0 and span > 2 * cd + 1:
        return f"time stamps span {span:.1f} s but the container lasts {cd:.1f} s"
    return None


def tick_factor(meta: StreamMeta, rate: float | None) -> int:
    """How many ticks of its declared rate an AVI stream counts per frame of ``rate``: ffmpeg's AVI muxer,
    copying H.264 (from MP4, say), writes a time base of half a frame, so a 30 fps clip declares
    "60 fps" and twice its frames (the other half are empty chunks). 2 (or another whole number) when the
    declared rate is that multiple of ``rate``; 1 for any other stream or container: elsewhere the
    declared rate is FFmpeg's average (frames over duration), which a clip that stalls keeps far from
    its usual step without anything being wrong."""
    if "avi" not in meta.format.split(",") or not sane_fps(meta.fps) or rate is None or not rate > 0:
        return 1
    assert meta.fps is not None
    ratio = meta.fps / rate
    k = round(ratio)
    return k if k >= 2 and abs(ratio - k) <= 0.02 * k else 1


#: Containers whose declared rate FFmpeg gives as their average, frames over the track's duration: MP4 and
#: MOV. (AVI's is its header's tick rate, which :func:`tick_factor` checks.) Every other container's rate
#: is nominal: a Matroska/WebM track's default frame duration (``DefaultDuration``), an FLV header's
#: ``framerate``, or FFmpeg's guess from the first packets (MPEG-TS, NUT, ASF, GIF), which the time
#: stamps may contradict.
_AVERAGE_RATE_FORMATS = frozenset({"mov", "mp4", "avi"})
#: Containers that declare no rate at all: FFmpeg's rate is its guess, so the stamps' average replaces
#: it without a warning.
_UNDECLARED_RATE_FORMATS = frozenset({"gif"})
_FORMAT_NAMES = {"matroska": "Matroska/WebM", "webm": "Matroska/WebM", "flv": "FLV", "mpegts": "MPEG-TS",
                 "nut": "NUT", "asf": "ASF", "mpeg": "MPEG-PS", "gif": "GIF"}


def declares_nominal_rate(meta: StreamMeta) -> bool:
    """Whether the stream's declared rate is nominal (every container but MP4, MOV and AVI, and bare
    elementary streams, whose stamps are made up), not its average: its time stamps are what say the
    average (:func:`stamped_rate`)."""
    formats = meta.format.split(",")
    return bool(meta.format) and not meta.raw and not any(f in _AVERAGE_RATE_FORMATS for f in formats)


def _usual_step(stamps: Sequence[int]) -> Fraction:
    """The median step between sorted stamps, in time-base ticks: a stamp a tick off moves nothing."""
    return Fraction(float(np.median(np.diff(stamps)))).limit_denominator()


def stamped_length(pts: Sequence[int | None], meta: StreamMeta) -> float | None:
    """How long frames with these time stamps last (seconds): from the first to the last, plus the usual
    step for the last frame. None for fewer than two frames or stamps that make no sense."""
    stamps = sorted(int(p) for p in pts if p is not None)
    if len(stamps) < 2 or len(stamps) < len(pts) or implausible_stamps(stamps, meta) is not None:
        return None
    assert meta.time_base is not None
    return float((stamps[-1] - stamps[0] + _usual_step(stamps)) * meta.time_base)


def stamped_rate(pts: Sequence[int | None], meta: StreamMeta) -> tuple[float, tuple[str, ...]] | None:
    """The rate of these time stamps where the stream declares another, with a warning; None where the
    declared rate stands (and for MP4 and MOV, whose rate is the average), or the stamps are too few.

    * **AVI** whose header counts several ticks per frame (:func:`tick_factor`): the rate of the usual
      step between consecutive stamps (their median, so a stamp a tick off moves nothing).
    * **Every other container** (:func:`declares_nominal_rate`: Matroska/WebM, FLV, MPEG-TS, NUT, ASF,
      GIF, ...): the declared rate is nominal (a Matroska track's default frame duration, an FLV header's
      rate, FFmpeg's guess from the first packets). Where that many frames would last longer or shorter
      than the stamps say (:func:`stamped_length`, beyond their rounding to the time base), their
      average rate is used, frames over that length: what MP4 and MOV declare, so the same frames and
      stamps give the same rate in each (a clip that stalls gets its average, as there). A GIF declares
      no rate, so its average replaces FFmpeg's guess without a warning.

    ``pts`` may be in decode order: they are sorted.
    """
    stamps = sorted(int(p) for p in pts if p is not None)
    if len(stamps) < 3 or meta.time_base is None or meta.time_base <= 0:
        return None
    steps = np.diff(stamps)
    if not (steps > 0).all():
        return None
    if declares_nominal_rate(meta):
        return _average_rate(stamps, meta)
    own = float(1 / (_usual_step(stamps) * meta.time_base))
    k = tick_factor(meta, own)
    if k == 1 or not sane_fps(own):
        return None
    return own, (f"the AVI header counts {k} ticks per frame: it declares {meta.fps:.4g} fps for a clip "
                 f"whose time stamps give {own:.4g} fps; the time stamps' rate is used",)


def _average_rate(stamps: list[int], meta: StreamMeta) -> tuple[float, tuple[str, ...]] | None:
    """:func:`stamped_rate` of a stream whose declared rate is nominal (sorted, increasing ``stamps``)."""
    length = stamped_length(stamps, meta)
    if length is None or not sane_fps(meta.fps) or meta.time_base is None:
        return None
    assert meta.fps is not None
    n = len(stamps)
    if abs(n / meta.fps - length) <= 2 * float(meta.time_base):  # the stamps' rounding to whole ticks
        return None
    own = n / length
    if not sane_fps(own):
        return None
    formats = meta.format.split(",")
    if any(f in _UNDECLARED_RATE_FORMATS for f in formats):
        return own, ()
    last = n / meta.fps
    if any(f in ("matroska", "webm") for f in formats):
        return own, (f"the Matroska/WebM track declares {meta.fps:.4g} fps (its default frame duration), at "
                     f"which its {n} frames would last {last:.3f} s, but their time stamps give "
                     f"{length:.3f} s: their average rate, {own:.5g} fps, is used",)
    name = next((_FORMAT_NAMES[f] for f in formats if f in _FORMAT_NAMES), formats[0])
    return own, (f"the {name} stream declares {meta.fps:.4g} fps (its nominal rate), at which its {n} frames "
                 f"would last {last:.3f} s, but their time stamps give {length:.3f} s: their average rate, "
                 f"{own:.5g} fps, is used",)


def frame_times(pts: Sequence[int | None], meta: StreamMeta) -> FrameTimes:
    """Frame times from presentation time stamps given in presentation order.

    Falls back to frame order when the stamps cannot be trusted (see the module notes).
    """
    n = len(pts)
    if n == 0:
        return FrameTimes([], meta.fps if meta.fps is not None and sane_fps(meta.fps) else ASSUMED_FPS, 0.0)
    reason = _unreliable(pts, meta) if n > 1 else None
    if reason is None and n > 1:
        assert meta.time_base is not None
        first = pts[0]
        assert first is not None
        times = [float((int(p) - first) * meta.time_base) for p in pts if p is not None]
        fps = meta.fps
        warnings: tuple[str, ...] = ()
        if fps is None or not sane_fps(fps):
            fps = (n - 1) / times[-1]
        else:
            own = stamped_rate(pts, meta)
            if own is not None:
                fps, warnings = own
        tol = max(time_tolerance(float(meta.time_base)), jitter_tolerance(times))
        return FrameTimes(times, fps, tol, warnings)
    if reason is None:  # one frame: its time is 0 whatever the stamps say
        rate = meta.fps if sane_fps(meta.fps) else fallback_rate(meta, n)[0]
        assert rate is not None
        return FrameTimes([0.0], rate, time_tolerance(None))
    rate, source = fallback_rate(meta, n)
    warning = f"{reason}; frames placed by order at {rate:.4g} fps ({source})"
    return FrameTimes([i / rate for i in range(n)], rate, time_tolerance(None), (warning,), by_order=True)


def _seconds(x: float) -> str:
    return f"{x:.1f} s"


GIF_TRAILER = b";"
"""The byte that ends every complete GIF file (the GIF89a trailer, 0x3B)."""


def gif_cut_short(path: Path) -> str | None:
    """A warning when ``path`` is a GIF without its trailer: a GIF declares neither frame count nor
    duration, so a file cut short decodes as a shorter clip with no other sign."""
    if Path(path).suffix.lower() != ".gif" or not Path(path).is_file():
        return None
    try:
        with open(path, "rb") as f:
            f.seek(-1, 2)
            last = f.read(1)
    except OSError:
        return None
    if last == GIF_TRAILER:
        return None
    return "truncated: the GIF ends without its trailer byte, so frames after the cut are missing"


def check_complete(
    path: Path,
    frames: int,
    timing: FrameTimes,
    meta: StreamMeta,
    edited: bool = False,
    skipped: int = 0,
    lead: int = 0,
) -> tuple[str, ...]:
    """Compare what a file holds with what its header declares.

    Args:
        path: the file (for the error).
        frames: frames present (decoded, or intact packets before decoding).
        timing: their times.
        meta: what the container declares.
        edited: an MP4/MOV edit list leaves out frames of the track (a trimmed clip). The declared
            frame count still includes them, so only the stream's duration, which is the edited
            one, says how much of the clip there should be.
        skipped: packets inside the stream that the decoder rejected. When they account for the
            frames missing, the file is called ``damaged``, not ``truncated``.
        lead: frames shown before the first decoded one, which the decoder dropped without an error (the
            stream starts before its first keyframe). When they account for the frames missing, the
            file is called ``damaged`` and the warning says where they are: at the head, not the tail.

    Returns:
        A warning when at least :data:`SHORT_FRAMES` frames are missing, else nothing.

    Raises:
        VideoError: ``"truncated: ..."`` (or ``"damaged: ..."``) when less than :data:`MIN_COMPLETE` of
            it is there.
    """
    if frames == 0:
        return ()  # nothing to sample: the caller reports "zero frames decoded"
    cut = gif_cut_short(path)
    if cut:
        return (cut,)  # a GIF declares no length: its missing trailer is all that tells
    fps = timing.fps
    declared = None if edited else meta.frame_count
    if declared:
        declared = max(1, round(declared / tick_factor(meta, fps)))  # an AVI counting ticks: frames
        if frames >= declared:
            return ()
        word = "damaged" if skipped and frames + skipped >= declared else "truncated"
        text = (
            f"{word}: decoded {frames} of {declared} declared frames "
            f"({_seconds(frames / fps)} of {_seconds(declared / fps)})"
        )
        if lead and frames + skipped + lead >= declared:
            text = _headless(lead, text)
        if frames < MIN_COMPLETE * declared:
            raise VideoError(path, text)
        return (text,) if declared - frames >= SHORT_FRAMES else ()
    # No frame count: compare the span covered with the declared duration. A container's duration
    # only speaks for the video when the video is its only stream (an audio track may run longer).
    duration = meta.stream_duration
    if duration is None and meta.only_stream and not meta.raw:
        duration = meta.container_duration
    if not duration or duration <= 0 or not timing.times or timing.by_order:
        return ()
    # The last frame lasts the usual step between frames (as in stamped_length), not 1 / fps: a clip that
    # stalls has an average rate far below its frames' own, and the muxer counted the real step.
    gaps = np.diff(np.asarray(timing.times, dtype=np.float64))
    step = float(np.median(gaps)) if gaps.size and float(np.median(gaps)) > 0 else 1.0 / fps
    covered = timing.times[-1] + step
    if covered >= duration:
        return ()
    word = "damaged" if skipped else "truncated"
    shown, said = _two_lengths(covered, duration)
    text = f"{word}: decoded {frames} frames covering {shown} of {said} declared"
    if lead and duration - covered < (lead + SHORT_FRAMES) * step:
        text = _headless(lead, text)
    if covered < MIN_COMPLETE * duration:
        raise VideoError(path, text)
    return (text,) if duration - covered >= SHORT_FRAMES * step else ()


def _headless(lead: int, text: str) -> str:
    """``text`` (``truncated: decoded ...``) said of a stream whose first ``lead`` frames come before its
    first keyframe: they are missing at its head, not its tail."""
    plural = "s" * (lead != 1)
    return (f"damaged: the stream starts {lead} frame{plural} before its first keyframe; those frames cannot "
            f"be decoded ({text.split(': ', 1)[1]})")


def _two_lengths(a: float, b: float) -> tuple[str, str]:
    """Two lengths in seconds with as many decimals (one to three) as it takes to tell them apart."""
    for digits in (1, 2):
        x, y = f"{a:.{digits}f} s", f"{b:.{digits}f} s"
        if x != y:
            return x, y
    return f"{a:.3f} s", f"{b:.3f} s"
