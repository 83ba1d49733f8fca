"""Sampling from video files with as little work per unneeded frame as possible.

Every frame of an inter-coded stream has to be decoded, but only the frames that end up in the
result are converted to RGB, rotated and resized. Two strategies:

**Planned (normal case).** All packets are demuxed first (no decoding, a few milliseconds) and kept
in memory up to :data:`PACKET_BUFFER_BYTES`. Their presentation timestamps are the frame times, so
the whole selection (rate step and thinning) is known before decoding starts. The buffered packets
are then decoded and frames are matched to the selection by timestamp. For H.264/HEVC in
MP4/MOV/Matroska, packets of unselected frames are decoded with ``skip_frame = NONREF``: the decoder
drops them only if no other frame references them, so every selected frame still decodes exactly.
The result is checked: every decoded frame's timestamp must be one of the packet timestamps and
every selected timestamp must have been decoded.

**Two-pass fallback.** If packets lack timestamps, repeat timestamps, or the check fails, the file
is decoded once recording frame times (no conversion), the selection is made on those times, and a
second decode converts the selected frames by decode index.

In both strategies a frame's index is its rank in presentation order, frame times come from
:func:`robojudge.video._timing.frame_times` (which falls back to frame order when the time stamps
cannot be trusted), and a file holding far fewer frames than it declares is an error
(:func:`robojudge.video._timing.check_complete`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import av
import numpy as np
from av.container import InputContainer
from av.video.stream import VideoStream

from robojudge.video._decode import (
    SWS_MATRICES,
    DecodeDamage,
    StreamMeta,
    aspect_warnings,
    colour_warnings,
    decode_packets,
    decoded_frames,
    intact_packets,
    open_video,
    stream_meta,
    yuv_matrix,
)
from robojudge.video._memory import check_frame_memory
from robojudge.video._orient import frame_orientation
from robojudge.video._post import PostProcess
from robojudge.video._select import pick_indices, thin_positions
from robojudge.video._timing import FrameTimes, check_complete, frame_times, implausible_stamps
from robojudge.video._types import SampledFrames, VideoError

__all__ = ["PACKET_BUFFER_BYTES", "Sampling", "sample_file", "sample_file_many"]

if TYPE_CHECKING:
    _Packet = av.Packet[VideoStream]

PACKET_BUFFER_BYTES = 512 * 1024 * 1024
_NO_EDITS = {"ignore_editlist": "1"}
_AV_ERRORS: tuple[type[BaseException], ...] = (av.error.FFmpegError, EOFError, ValueError, OSError)
# Passing an explicit swscale thread count makes PyAV (18) convert about 3x faster than the
# default call with identical output; one thread leaves the cores to the frame-threaded decoder.
_SWS_THREADS = 1
_SKIP_CODECS = frozenset({"h264", "hevc"})
_codec_threads = 0  # 0: FFmpeg picks (frame and slice threads over all cores)


def set_codec_threads(n: int) -> None:
    """Decoder threads per video in this process: 0 lets FFmpeg choose, 1 decodes single-threaded.

    Decoder worker processes use 1: they already run one video per core, and on short clips
    FFmpeg's frame threads cost about a third more CPU than they save in wall time.
    """
    global _codec_threads
    if n < 0:
        raise ValueError(f"codec threads must be >= 0, got {n}")
    _codec_threads = n


def _set_threads(stream: VideoStream) -> None:
    stream.thread_type = "AUTO"
    if _codec_threads:
        stream.thread_count = _codec_threads
_SKIP_FORMATS = ("mov", "mp4", "matroska", "webm")


def sample_file(
    path: Path, fps: float | None, max_frames: int | None, post: PostProcess, spread: str = "uniform"
) -> SampledFrames:
    """Sample a video file; see :func:`robojudge.video.sample_frames` for the arguments."""
    return sample_file_many(path, [Sampling(fps, max_frames, post, spread)])[0]


@dataclass(frozen=True)
class Sampling:
    """One sampling of a file: the arguments of :func:`sample_file`."""

    fps: float | None
    max_frames: int | None
    post: PostProcess
    spread: str = "uniform"


def sample_file_many(path: Path, samplings: Sequence[Sampling]) -> list[SampledFrames]:
    """Several samplings of one video file from one demux and one decode, in the order given.

    Every frame that any sampling picks is decoded and converted to RGB once and handed to each
    sampling that picked it; each result is what :func:`sample_file` returns for that sampling alone
    (the same frames, bit for bit). When packet time stamps cannot identify the frames, each sampling
    takes the two-pass fallback on its own.
    """
    if not samplings:
        return []
    options: dict[str, str] | None = None
    for attempt in (None, _NO_EDITS):
        options = attempt
        with open_video(path, options) as (container, stream):
            meta = stream_meta(container, stream)
            _set_threads(stream)
            demuxed = _read_packets(container, stream)
            if options is None and _broken_edits(demuxed, meta):
                continue  # read again with the edit list ignored
            edited = options is None and _edits_hide(path, demuxed, meta)
            skip = meta.codec in _SKIP_CODECS and any(f in container.format.name for f in _SKIP_FORMATS)
            # Either every plan is made or none is: a plan needs only the packets' time stamps.
            plans = [_Plan.make(path, demuxed.pts, demuxed.shown, meta, s.fps, s.max_frames, s.spread, edited)
                     for s in samplings]
            planned = [p for p in plans if p is not None]
            jobs, which = _distinct(list(zip(planned, (s.post for s in samplings), strict=False)))
            if len(planned) == len(plans):  # refused before decoding when the frames would not fit
                picked = [(len(p.chosen), post) for p, post in jobs]
                check_frame_memory(path, picked, stream.width, stream.height)
            results = None
            if len(planned) == len(plans) and demuxed.packets is not None:
                results = _run_plans(jobs, path, stream, demuxed.packets, skip, meta)
        break
    if results is None and len(planned) == len(plans) and demuxed.packets is None:
        with open_video(path, options) as (container, stream):  # packets did not fit in memory: read again
            _set_threads(stream)
            results = _run_plans(jobs, path, stream, intact_packets(container, stream), skip, meta)
    if results is not None:
        return [results[j] for j in which]
    return [_two_pass(path, meta, s.fps, s.max_frames, s.post, s.spread, options, edited) for s in samplings]


def _effective(fps: float | None, timing: FrameTimes) -> float | None:
    """The rate step's rate, or None when every frame is kept: no rate, or one at least the video's
    densest (the rate of its closest two frames, not its average: a clip that stalls, or a GIF that
    holds its last frame, has a low average and dense frames elsewhere, which the step must thin)."""
    if fps is None:
        return None
    gaps = np.diff(np.asarray(timing.times, dtype=np.float64))
    gaps = gaps[gaps > 0]
    # (a gap shortened by the time base's rounding, 33 ms for 29.97 fps in Matroska's 1 ms stamps, is
    # not a denser frame: 30 fps asked of that video keeps every frame)
    densest = 1.0 / (float(gaps.min()) + timing.tolerance) if gaps.size else timing.fps
    if fps >= densest * (1 - 1e-9):
        return None
    return fps


@dataclass
class _Demuxed:
    """Every packet of the video stream, read without decoding.

    Attributes:
        packets: the packets, or None when they exceed :data:`PACKET_BUFFER_BYTES`.
        pts: time stamps of the shown frames (None if one has none).
        shown: how many packets are shown frames.
        all_pts: time stamps of all packets, shown or not (None where missing).
    """

    packets: list[_Packet] | None
    pts: list[int] | None
    shown: int
    all_pts: list[int | None]


def _read_packets(container: InputContainer, stream: VideoStream) -> _Demuxed:
    """Demux everything."""
    packets: list[_Packet] | None = []
    pts: list[int] | None = []
    all_pts: list[int | None] = []
    shown = 0
    size = 0
    for packet in intact_packets(container, stream):
        all_pts.append(packet.pts)
        # Packets flagged "discard" (e.g. cut by an MP4 edit list) are decoded for reference but
        # never shown, so they are not frames of the video.
        if not getattr(packet, "is_discard", False):
            shown += 1
            if pts is not None:
                if packet.pts is None:
                    pts = None
                else:
                    pts.append(packet.pts)
        if packets is not None:
            packets.append(packet)
            size += packet.size
            if size > PACKET_BUFFER_BYTES:
                packets = None
    return _Demuxed(packets, pts, shown, all_pts)


def _broken_edits(demuxed: _Demuxed, meta: StreamMeta) -> bool:
    """True when an MP4/MOV edit list hides frames on the strength of unusable time stamps.

    FFmpeg applies an edit list by flagging packets outside it "discard". With a broken time base
    (a media time scale of 0 becomes 1 s) nearly every packet lands outside the edit, so a 24-frame
    clip shows one frame. Legitimate edit lists (B-frame delay, trimmed phone videos) sit on time
    stamps that make sense, and are kept.
    """
    if "mov" not in meta.format or demuxed.shown == len(demuxed.all_pts):
        return False
    # Only time stamps absurd in themselves count: the hidden frames of a trimmed clip may span far
    # more than the edited clip lasts, and are stamped correctly all the same.
    everything = sorted(demuxed.all_pts, key=lambda p: -1 if p is None else p)
    return implausible_stamps(everything, meta) is not None


def _edits_hide(path: Path, demuxed: _Demuxed, meta: StreamMeta) -> bool:
    """True when an MP4/MOV edit list leaves out frames that the track holds (a trimmed clip).

    FFmpeg flags the hidden frames it still needs as references "discard", and drops those before
    the last keyframe ahead of the cut altogether; a cut on a keyframe flags nothing. The frames
    dropped show only as a shortfall against the declared count, which a truncated file also has, so
    then the packets are counted once more with the edit list ignored (demuxing only, no decoding).
    """
    if "mov" not in meta.format:
        return False
    if demuxed.shown < len(demuxed.all_pts):
        return True
    if not meta.frame_count or demuxed.shown >= meta.frame_count:
        return False
    with open_video(path, _NO_EDITS) as (container, stream):
        return sum(1 for _ in intact_packets(container, stream)) > demuxed.shown


class _Plan:
    """Selection computed from packet timestamps, and the decode that fills it in."""

    def __init__(
        self,
        sorted_pts: list[int],
        timing: FrameTimes,
        warnings: tuple[str, ...],
        fps: float | None,
        max_frames: int | None,
        spread: str,
    ) -> None:
        self.pts = sorted_pts
        self.times = timing.times
        picks = pick_indices(self.times, _effective(fps, timing), timing.tolerance)
        self.chosen = [picks[int(p)] for p in thin_positions(len(picks), max_frames, spread)]
        self.picked = len(picks)
        self.source_fps = timing.fps
        self.tolerance = timing.tolerance
        self.warnings = warnings

    @classmethod
    def make(
        cls,
        path: Path,
        pts: list[int] | None,
        intact: int,
        meta: StreamMeta,
        fps: float | None,
        max_frames: int | None,
        spread: str = "uniform",
        edited: bool = False,
    ) -> _Plan | None:
        """A plan, or None when packet timestamps cannot identify the frames.

        Raises:
            VideoError: the file holds far fewer frames than it declares.
        """
        if not pts or len(set(pts)) != len(pts):
            return None
        ordered = sorted(pts)
        timing = frame_times(ordered, meta)
        warnings = timing.warnings + check_complete(path, intact, timing, meta, edited)
        return cls(ordered, timing, warnings, fps, max_frames, spread)

    def result(self, path: Path, frames: np.ndarray, warnings: tuple[str, ...] = ()) -> SampledFrames:
        """The selection filled in with ``frames``; ``warnings`` about them follow the plan's own."""
        return SampledFrames(
            frames=frames,
            timestamps=np.asarray([self.times[i] for i in self.chosen], dtype=np.float64),
            indices=np.asarray(self.chosen, dtype=np.int64),
            source_fps=float(self.source_fps),
            path=path,
            warnings=self.warnings + warnings,
            picked=self.picked,
            tolerance=self.tolerance,
        )

    @staticmethod
    def _decode(
        ctx: av.VideoCodecContext,
        packets: Iterable[_Packet],
        wanted: set[int] | None,
        damage: DecodeDamage | None = None,
    ) -> Iterator[av.VideoFrame]:
        """The frames of ``packets``; with ``wanted``, frames at other time stamps that nothing refers to
        are skipped. Packets the decoder rejects, and frames it decodes with errors, count in ``damage``."""
        if wanted is not None:
            packets = _skipping(ctx, packets, wanted)
        return decode_packets(packets, ctx, damage)


def _skipping(ctx: av.VideoCodecContext, packets: Iterable[_Packet], wanted: set[int]) -> Iterator[_Packet]:
    """``packets``, each with the decoder told first whether its frame is wanted (``skip_frame``); the
    decoder is back to decoding every frame before it is flushed."""
    for packet in packets:
        ctx.skip_frame = "DEFAULT" if packet.pts in wanted else "NONREF"
        yield packet
    ctx.skip_frame = "DEFAULT"


def _distinct(jobs: list[tuple[_Plan, PostProcess]]) -> tuple[list[tuple[_Plan, PostProcess]], list[int]]:
    """The jobs that give different frames, and for each job given, which of them gives its frames.

    Two samplings that pick the same frames and process them alike (a rate at or above the source's
    picks every frame, as no rate does) fill the same array: it is made once and both get it.
    """
    distinct: list[tuple[_Plan, PostProcess]] = []
    seen: dict[tuple[object, ...], int] = {}
    which: list[int] = []
    for plan, post in jobs:
        key = (tuple(plan.chosen), post.size, post.gray, post.resample, post.cell)
        if key not in seen:
            seen[key] = len(distinct)
            distinct.append((plan, post))
        which.append(seen[key])
    return distinct, which


def _run_plans(
    jobs: Sequence[tuple[_Plan, PostProcess]],
    path: Path,
    stream: VideoStream,
    packets: Iterable[_Packet],
    skip: bool,
    meta: StreamMeta,
) -> list[SampledFrames] | None:
    """Decode ``packets`` once for every plan of ``jobs`` (made from the same packets, so the same time
    stamps) and fill each plan's selection through its post-processing; None if frames and packet
    time stamps disagree. ``meta`` says whether the pixels are square (:func:`aspect_warnings`, worded
    for the display turn the frames are read with)."""
    # Each converted frame goes straight to its place(s) in one array made for the whole selection:
    # no list of frames kept alive to be stacked (at 720p that was a second copy of the clip, its
    # memory touched fresh: about 7% of the weights-free set's CPU time on an 81-frame clip).
    slots: dict[int, list[tuple[int, int]]] = {}  # time stamp -> (job, position in its selection)
    for j, (plan, _) in enumerate(jobs):
        for position, i in enumerate(plan.chosen):
            slots.setdefault(plan.pts[i], []).append((j, position))
    known = set(jobs[0][0].pts)
    done: set[int] = set()
    outs: list[np.ndarray | None] = [None] * len(jobs)
    # one per job: a sampling's warning counts the frames it picked, as it would alone (the lowest alpha of
    # a frame is read once, for every job that picked it)
    alphas = [AlphaCheck(stream) for _ in jobs]
    turned: dict[str, None] = {}  # warnings about the display matrix and colour tags, in the order met
    ctx = stream.codec_context
    last = None
    damage = DecodeDamage()  # of the frames decoded: those after the last one picked never are
    for frame in _Plan._decode(ctx, packets, set(slots) if skip else None, damage):
        if frame.pts not in known:
            return None
        if last is not None and frame.pts <= last:
            # The decoder gives frames in display order; stamps that fall back mean the container filled
            # them in decode order (B-frames in AVI or ASF), so a stamp's rank is no frame's place.
            return None
        last = frame.pts
        if frame.pts in slots and frame.pts not in done:
            rgb, shown = to_rgb(frame, path), frame_orientation(frame, stream)
            lowest = AlphaCheck.lowest_alpha(frame)
            if lowest is not None:
                for j in {j for j, _ in slots[frame.pts]}:
                    alphas[j].see_lowest(lowest)
            turned.update(dict.fromkeys(aspect_warnings(meta, stream.width, stream.height, shown.rotation)
                                        + shown.warnings() + colour_warnings(frame, stream)))
            images: dict[int, np.ndarray] = {}
            for j, position in slots[frame.pts]:
                image = images.get(j)
                if image is None:
                    index = jobs[j][0].chosen[position]
                    image = images[j] = jobs[j][1](rgb, shown.rotation, index, shown.mirror)
                out = outs[j]
                if out is None:
                    out = outs[j] = np.empty((len(jobs[j][0].chosen), *image.shape), image.dtype)
                out[position] = image
            done.add(frame.pts)
            if len(done) == len(slots):
                break  # the rest of the stream is not needed
    if len(done) != len(slots) or any(out is None for out in outs):
        return None
    said = damage.warnings()
    return [plan.result(path, out, tuple(turned) + post.size_warnings() + alpha.warnings() + said)
            for (plan, post), out, alpha in zip(jobs, outs, alphas, strict=True) if out is not None]


def _two_pass(
    path: Path,
    meta: StreamMeta,
    fps: float | None,
    max_frames: int | None,
    post: PostProcess,
    spread: str = "uniform",
    options: dict[str, str] | None = None,
    edited: bool = False,
) -> SampledFrames:
    """Fallback: decode once for the frame times, then again to convert the chosen frames."""
    damage = DecodeDamage()  # counted in the first pass, which decodes every frame
    with open_video(path, options) as (container, stream):
        _set_threads(stream)
        pts = [_frame_pts(frame, meta) for frame in decoded_frames(container, stream, damage)]
    if not pts:
        raise VideoError(path, "zero frames decoded")
    timing = frame_times(pts, meta)
    warnings = timing.warnings + check_complete(path, len(pts), timing, meta, edited, damage.undecodable,
                                                damage.lead)
    picks = pick_indices(timing.times, _effective(fps, timing), timing.tolerance)
    chosen = [picks[int(p)] for p in thin_positions(len(picks), max_frames, spread)]
    wanted = set(chosen)
    got: dict[int, np.ndarray] = {}
    with open_video(path, options) as (container, stream):
        check_frame_memory(path, [(len(chosen), post)], stream.width, stream.height)
        _set_threads(stream)
        alpha = AlphaCheck(stream)
        turned: dict[str, None] = {}
        for index, frame in enumerate(decoded_frames(container, stream)):
            if index in wanted:
                shown = frame_orientation(frame, stream)
                got[index] = post(to_rgb(frame, path), shown.rotation, index, shown.mirror)
                alpha.see(frame)
                turned.update(dict.fromkeys(aspect_warnings(meta, stream.width, stream.height, shown.rotation)
                                            + shown.warnings() + colour_warnings(frame, stream)))
                if len(got) == len(wanted):
                    break
    if len(got) != len(wanted):
        raise VideoError(path, "decoding is not repeatable (frame count changed between passes)")
    warnings += tuple(turned) + post.size_warnings() + alpha.warnings() + damage.warnings()
    return SampledFrames(
        frames=np.ascontiguousarray(np.stack([got[i] for i in chosen])),
        timestamps=np.asarray([timing.times[i] for i in chosen], dtype=np.float64),
        indices=np.asarray(chosen, dtype=np.int64),
        source_fps=float(timing.fps),
        path=path,
        warnings=warnings,
        picked=len(picks),
        tolerance=timing.tolerance,
    )


def _frame_pts(frame: av.VideoFrame, meta: StreamMeta) -> int | None:
    """A decoded frame's time stamp in the stream's time base (None when it has none)."""
    if frame.pts is None:
        return None
    if meta.time_base is None or not frame.time_base or Fraction(frame.time_base) == meta.time_base:
        return int(frame.pts)
    return round(Fraction(frame.pts) * Fraction(frame.time_base) / meta.time_base)


def to_rgb(frame: av.VideoFrame, path: Path) -> np.ndarray:
    """One decoded frame as ``(H, W, 3)`` uint8 RGB, as stored (before its display turn).

    The same picture gives the same RGB whatever its bit depth and whichever PyAV is installed:

    * YUV of more than 8 bits with subsampled chroma (10-bit HEVC/AV1/H.264, ProRes 422) is first reduced
      to 8-bit YUV of the same subsampling. swscale converts it to RGB by another path than 8-bit YUV (it
      filters the chroma, and rounds about 1.6 levels darker), so the same YUV stored in 10 bits read
      38.8 dB from its 8-bit self; through 8 bits it reads the same, bit for bit.
    * 16-bit RGB and gray (PNG-in-MOV ``rgb48``, FFV1 ``gray16``) keep the high byte of each sample, as
      OpenCV reads a 16-bit PNG of a frame folder (swscale rounded up by half a level on average).
    * A YUV frame's matrix and range are handed to swscale from its tags (:func:`_yuv_colour`): PyAV
      14.2, the lowest allowed, took BT.601 and limited range unless told (BT.709 red 255 read 233,
      full-range 10-bit read as limited); 18 reads the tags itself, and gives the same frames either way.
      A matrix swscale has no coefficients for (YCgCo, ICtCp, ...) is refused, not read as another.
    """
    try:
        sixteen = _sixteen_bit(frame)
        if sixteen is not None:
            return sixteen
        colour = _yuv_colour(frame, path)
        eight = _eight_bit_yuv(frame.format)
        if eight is not None:  # the depth alone (no range conversion); ``colour`` keeps the source's tags
            frame = _swscale(frame.reformat, format=eight, src_color_range="MPEG", dst_color_range="MPEG")
        return np.asarray(_swscale(frame.to_ndarray, format="rgb24", **colour))
    except _AV_ERRORS as exc:
        raise VideoError(path, f"cannot convert frame: {exc}") from exc


def _swscale(convert: Callable[..., Any], **options: Any) -> Any:
    """``convert`` (a frame's ``reformat`` or ``to_ndarray``) with :data:`_SWS_THREADS` threads."""
    try:
        return convert(threads=_SWS_THREADS, **options)
    except TypeError:  # PyAV without the ``threads`` option
        return convert(**options)


# 8-bit planar YUV formats by their chroma subsampling (luma samples per chroma sample across, down).
_EIGHT_BIT_YUV = {(2, 2): "yuv420p", (2, 1): "yuv422p", (1, 2): "yuv440p", (4, 1): "yuv411p",
                  (4, 4): "yuv410p"}


def _eight_bit_yuv(fmt: av.VideoFormat) -> str | None:
    """The 8-bit planar YUV format with ``fmt``'s chroma subsampling, for a YUV format of more than 8 bits
    whose chroma is subsampled; None for any other format (8-bit, 4:4:4, RGB, gray)."""
    components = fmt.components
    if fmt.is_rgb or len(components) < 3 or max(c.bits for c in components) <= 8:
        return None
    luma, chroma = components[0], components[1]
    if not (luma.is_luma and chroma.width and chroma.height):
        return None
    return _EIGHT_BIT_YUV.get((round(luma.width / chroma.width), round(luma.height / chroma.height)))


def _sixteen_bit(frame: av.VideoFrame) -> np.ndarray | None:
    """A frame of 16-bit RGB or gray as 8-bit RGB, each sample's high byte (OpenCV's reading of a 16-bit
    PNG); None for any other format."""
    fmt = frame.format
    colour = [c for c in fmt.components if not c.is_alpha]
    if not colour or any(c.bits != 16 for c in colour):
        return None
    if fmt.is_rgb and len(colour) == 3:
        wide = np.asarray(frame.to_ndarray(format="rgb48le"), dtype=np.uint16)
    elif len(colour) == 1 and colour[0].is_luma:
        gray = np.asarray(frame.to_ndarray(format="gray16le"), dtype=np.uint16)
        wide = np.repeat(gray[..., None], 3, axis=2)
    else:
        return None
    return np.ascontiguousarray((wide >> 8).astype(np.uint8))


# What PyAV's ``src_colorspace`` takes for a tag that names no matrix (FFmpeg reads such a stream as
# BT.601), and the output's matrix: one no source maps to (RGB output has none). The tags and the
# coefficient sets they map to are :data:`~robojudge.video._decode.SWS_MATRICES`.
_SWS_BT601 = 5
_SWS_UNSET = 2


def _yuv_colour(frame: av.VideoFrame, path: Path) -> dict[str, object]:
    """The source matrix and range of a YUV frame, for swscale; nothing for RGB and gray frames.

    The output's matrix is set apart from the source's so that PyAV 14 always hands the source's to
    swscale (it skips that step when source and output match in both), and RGB output is full range.

    Raises:
        VideoError: the frame is tagged with a matrix swscale has no coefficients for (:func:`yuv_matrix`).
    """
    matrix = yuv_matrix(frame, path)
    if matrix is None:
        return {}
    tagged = int(frame.color_range)
    full = tagged == 2 or (tagged != 1 and frame.format.name.startswith("yuvj"))  # AVCOL_RANGE_JPEG / _MPEG
    return {"src_colorspace": SWS_MATRICES.get(matrix, _SWS_BT601),
            "src_color_range": "JPEG" if full else "MPEG", "dst_colorspace": _SWS_UNSET,
            "dst_color_range": "JPEG"}


class AlphaCheck:
    """Whether the frames read carry transparency, which reading them as RGB (:func:`to_rgb`) drops.

    Each frame read in a pixel format with an alpha channel (PNG or QuickTime RGBA, ProRes 4444, GIF's
    BGRA) is converted once more to read its alpha; a frame with any alpha below 255 is transparent.
    A WebM stream whose alpha sits beside the colour (``alpha_mode`` 1) decodes without it in FFmpeg's
    own VP8/VP9 decoders, so only the tag can say it is there.
    """

    def __init__(self, stream: VideoStream | None = None) -> None:
        self.declared = stream is not None and str(stream.metadata.get("alpha_mode", "")) == "1"
        # FFmpeg's GIF decoder gives a transparent pixel white (alpha 0), whatever colour the palette
        # holds for it: there the colour read is the decoder's, not the file's.
        self.gif = stream is not None and stream.codec_context.name == "gif"
        self.read = 0  # frames read with an alpha channel
        self.transparent = 0  # of them, frames with alpha below 255 somewhere
        self.lowest = 255

    def see(self, frame: av.VideoFrame) -> None:
        """Look at the alpha of one frame that was read."""
        lowest = self.lowest_alpha(frame)
        if lowest is not None:
            self.see_lowest(lowest)

    @staticmethod
    def lowest_alpha(frame: av.VideoFrame) -> int | None:
        """The lowest alpha (0-255) of a frame in a pixel format with an alpha channel; None for another
        format (or one that cannot be converted)."""
        if not any(getattr(c, "is_alpha", False) for c in frame.format.components):
            return None
        try:
            return int(frame.to_ndarray(format="rgba")[..., 3].min())
        except _AV_ERRORS:
            return None

    def see_lowest(self, lowest: int) -> None:
        """Count one frame read with an alpha channel whose lowest alpha is ``lowest`` (0-255)."""
        self.read += 1
        if lowest < 255:
            self.transparent += 1
            self.lowest = min(self.lowest, lowest)

    def warnings(self) -> tuple[str, ...]:
        """A warning when a frame read was transparent somewhere, or the stream declares an alpha channel
        that was not decoded; nothing for fully opaque frames."""
        if self.transparent:
            read_as = ("transparent pixels are read as white, whatever colour the palette holds for them"
                       if self.gif else "frames are read as their stored colours, as if opaque")
            return (f"alpha channel ignored: {self.transparent} of the {self.read} frames read have "
                    f"transparent pixels (lowest alpha {self.lowest} of 255); {read_as}, not composited "
                    "onto a background",)
        if self.declared and not self.read:
            return ("alpha channel ignored: the stream declares one (WebM alpha_mode 1) that FFmpeg's "
                    "decoder does not read; frames are read as their stored colours, as if opaque",)
        return ()
