"""Opening video files with PyAV and walking their frames without leaking FFmpeg errors.

Every failure is turned into :class:`VideoError`. Damage inside a file is tolerated here: a packet
the decoder rejects is skipped, a last packet cut short by the end of a truncated file is dropped,
and a demuxer error ends the stream after the decoder has been flushed, so whatever could be decoded
is still returned. Whether that is enough of the file is decided by the sampler
(:mod:`robojudge.video._timing`); here only a file from which no frame at all can be decoded is an
error (``"zero frames decoded"``). What was skipped, and which frames the decoder flagged as decoded
with errors (damage it concealed), is counted in a :class:`DecodeDamage` when the caller passes one,
so that a damaged file is read with a warning, not in silence.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import av
import av.container
import av.video.stream

from robojudge.video._orient import frame_orientation
from robojudge.video._timing import (
    declares_nominal_rate,
    gif_cut_short,
    nominal_rate,
    stamped_length,
    stamped_rate,
    tick_factor,
)
from robojudge.video._types import VideoError, VideoInfo

__all__ = [
    "SWS_MATRICES",
    "DecodeDamage",
    "StreamMeta",
    "colour_warnings",
    "decoded_frames",
    "intact_packets",
    "is_cover",
    "open_video",
    "probe_file",
    "stream_meta",
    "yuv_matrix",
]

if TYPE_CHECKING:
    _Packet = av.Packet[av.video.stream.VideoStream]

# Anything PyAV may raise while reading a damaged or unexpected file.
_AV_ERRORS: tuple[type[BaseException], ...] = (av.error.FFmpegError, EOFError, ValueError, OSError)


# Demuxers of bare elementary streams: they hold no time stamps, so FFmpeg makes them up from an
# assumed rate (25 fps for H.264). Image pipes (``png_pipe``, ``webp_pipe``, ...) are alike.
_RAW_FORMATS = frozenset(
    {"h264", "hevc", "vvc", "m4v", "mpegvideo", "mjpeg", "h263", "h261", "vc1", "obu", "cavsvideo", "dirac",
     "avs2", "avs3", "rawvideo"}
)  # fmt: skip


@dataclass(frozen=True)
class StreamMeta:
    """Container-level facts about the video stream, read without decoding.

    Attributes:
        time_base: the stream's time base, or None when it has none (or a zero one).
        fps: the stream's nominal rate, when within (0, 10000).
        frame_count: frames the container declares, or None.
        duration: the stream's duration, else (a Matroska/WebM file with other streams) the track's
            ``DURATION`` tag, else the container's unless that counts other tracks (seconds), or None.
        codec: decoder name.
        codec_fps: rate written in the codec bitstream (e.g. H.264 timing info), or None.
        stream_duration: the stream's own duration in seconds (a Matroska/WebM track's ``DURATION`` tag
            when the file has other streams), or None.
        container_duration: the container's duration in seconds (all streams), or None.
        format: demuxer name.
        raw: the file is a bare elementary stream without time stamps of its own.
        only_stream: the video is the container's only stream (cover pictures aside, see :func:`is_cover`).
    """

    time_base: Fraction | None
    fps: float | None
    frame_count: int | None
    duration: float | None
    codec: str
    codec_fps: float | None = None
    stream_duration: float | None = None
    container_duration: float | None = None
    format: str = ""
    raw: bool = False
    only_stream: bool = True
    sample_aspect: Fraction | None = None  # pixel width / height when not 1 (anamorphic video)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise VideoError(path, "file not found")
    if not path.is_file():
        raise VideoError(path, "not a regular file")
    if path.stat().st_size == 0:
        raise VideoError(path, "empty file (0 bytes)")


def is_cover(stream: av.stream.Stream) -> bool:
    """Whether ``stream`` is a still picture attached to the file (cover art: FFmpeg's ``attached_pic``
    disposition), not a track to be played. FFmpeg lists such a picture as a video stream of one frame:
    an MP4/M4V's ``covr`` tag, a Matroska attachment of an image type, an MP3's or FLAC's picture. Its
    place among the streams is where the file's header names it, which may be before the video."""
    return bool(stream.disposition & av.stream.Disposition.attached_pic)


def _open_input(path: Path, options: dict[str, str]) -> av.container.InputContainer:
    """``av.open`` for reading, so that metadata which is not UTF-8 (a tag written in Latin-1) opens.

    PyAV before 19 decodes metadata strictly unless ``metadata_errors="ignore"`` says otherwise; PyAV 19
    dropped that keyword (passing it is a ``TypeError`` before anything is opened) and decodes with
    ``surrogateescape``, which never fails. Whether the keyword is taken is found out by passing it.
    """
    try:
        return av.open(str(path), mode="r", metadata_errors="ignore", options=options)
    except TypeError as exc:
        if "metadata_errors" not in str(exc):
            raise
    return av.open(str(path), mode="r", options=options)


_NO_MOOV = ("no streams: an MP4/MOV missing its header (moov), as a recording stopped before it was "
            "finalised or a partial download leaves it; the frames cannot be located")


def _mp4_without_moov(path: Path) -> bool:
    """Whether ``path`` is an MP4/MOV (its first box ``ftyp``) whose top-level boxes hold no whole
    ``moov``: the header naming its tracks, which a recorder writes when it stops (at the end of the file
    unless moved to the front), so a recording cut short or a partial download holds frame data that
    nothing locates."""
    try:
        with open(path, "rb") as f:
            end = f.seek(0, 2)
            at, first = 0, True
            while at + 8 <= end:
                f.seek(at)
                head = f.read(16)
                size, kind = int.from_bytes(head[:4], "big"), head[4:8]
                if first and kind != b"ftyp":
                    return False
                if size == 1 and len(head) == 16:
                    size = int.from_bytes(head[8:16], "big")
                if kind == b"moov":
                    return size == 0 or at + size > end  # a header cut short is missing too
                if size < 8:  # 0: the box runs to the end of the file (or a broken size)
                    break
                at, first = at + size, False
    except OSError:
        return False
    return not first


@contextmanager
def open_video(
    path: Path, options: dict[str, str] | None = None
) -> Iterator[tuple[av.container.InputContainer, av.video.stream.VideoStream]]:
    """Open ``path`` and yield its container and first video stream that is not a cover picture
    (:func:`is_cover`); closes on exit.

    ``options`` go to the demuxer (e.g. ``{"ignore_editlist": "1"}`` for MP4/MOV).
    """
    _check_file(path)
    try:
        container = _open_input(path, options or {})
    except av.error.InvalidDataError as exc:
        if _mp4_without_moov(path):
            raise VideoError(path, _NO_MOOV) from exc
        raise VideoError(path, "not a video file (unrecognised, damaged or truncated container)") from exc
    except _AV_ERRORS as exc:
        raise VideoError(path, f"cannot open: {exc}") from exc
    try:
        stream = next((s for s in container.streams.video if not is_cover(s)), None)
        if stream is None and not len(container.streams):
            raise VideoError(path, _NO_MOOV if _mp4_without_moov(path) else "no streams: the container "
                             "lists neither video nor audio")
        if stream is None:
            covers = len(container.streams.video)
            plural = "s" * (covers > 1)
            raise VideoError(path, f"no video stream (only {covers} attached cover picture{plural})"
                             if covers else "no video stream")
        if stream.codec_context is None or stream.codec_context.codec is None:
            raise VideoError(path, "no decoder for the video stream")
        yield container, stream
    finally:
        container.close()


#: Containers whose duration FFmpeg reports as the end time of the last frame, not the span from the
#: first: Matroska and WebM (their ``Duration``), ASF (its play duration, the stream's too), NUT (the last
#: frame's stamp) and FLV (its ``duration``, counted from the first decode stamp, which is 0 unless the
#: file starts late). Found by making files whose stamps start at 5 s; MP4, MOV and MPEG-TS give the span.
_END_TIME_FORMATS = frozenset({"matroska", "webm", "asf", "nut", "flv"})
_MATROSKA = frozenset({"matroska", "webm"})


def _less_start(length: float | None, start: float) -> float | None:
    """An end time ``length`` less the first frame's ``start``; unchanged when that leaves nothing (an FLV
    that starts late counts its duration from its first decode stamp, nearly the span already)."""
    if length is None or not start > 0 or not length - start > 0:
        return length
    return length - start


def stream_meta(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> StreamMeta:
    """Read rate, length and codec of ``stream`` from container metadata."""
    time_base = Fraction(stream.time_base) if stream.time_base else None
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    fps = float(rate) if rate else None
    if fps is not None and not 0 < fps < 10_000:
        fps = None
    fmt = container.format.name
    end_time = any(f in _END_TIME_FORMATS for f in fmt.split(","))
    own: float | None = None
    if stream.duration is not None and time_base is not None:
        own = float(stream.duration * time_base)
        if end_time and stream.start_time is not None:
            own = _less_start(own, float(stream.start_time * time_base))
    whole = container.duration / av.time_base if container.duration is not None else None
    frames = int(stream.frames) if stream.frames else None
    framerate = stream.codec_context.framerate
    codec_fps = float(framerate) if framerate else None
    start = container.start_time / av.time_base if container.start_time is not None else 0.0
    if end_time:
        # These formats give the end time of the last frame as the duration: a file whose stamps start
        # later (a segment of a split recording, an offset, an FLV's B-frame delay) would look short by
        # its start.
        less = _less_start(whole, start)
        if less == whole and whole is not None and start > 0 and fmt == "flv" and fps:
            # An FLV that starts late counts its duration from its first decode stamp, which comes before
            # the first frame's by the decoder's reorder delay (B-frames): that many frames at ``fps``.
            # (PyAV before 15 does not give the delay: the duration is then taken as it is)
            delay = int(getattr(stream.codec_context, "reorder_depth", 0) or 0) / fps
            less = whole - delay if whole - delay > 0 else whole
        whole = less
    # a cover picture has no length: it neither makes the container's duration nor takes the video's
    only = all(s.index == stream.index or is_cover(s) for s in container.streams)
    matroska = any(f in _MATROSKA for f in fmt.split(","))
    if matroska and not only:
        # A Matroska track has no duration element: FFmpeg leaves it unset or fills in the container's,
        # which counts the other tracks too (an audio track that runs longer than the video, say).
        own = _track_length(stream, time_base)
    return StreamMeta(
        time_base=time_base,
        fps=fps,
        frame_count=frames,
        duration=own if own is not None else whole if only or not matroska else None,
        codec=stream.codec_context.name,
        codec_fps=codec_fps,
        stream_duration=own,
        container_duration=whole,
        format=fmt,
        raw=fmt in _RAW_FORMATS or fmt.endswith("_pipe"),
        only_stream=only,
        sample_aspect=_sample_aspect(stream),
    )


def _track_length(stream: av.video.stream.VideoStream, time_base: Fraction | None) -> float | None:
    """A Matroska/WebM track's length from its ``DURATION`` tag (FFmpeg's muxer writes the end time of
    the track's last frame), less its first time stamp; None without a readable tag."""
    tag = next((str(v) for k, v in stream.metadata.items() if k.upper() == "DURATION"), "")
    parts = tag.strip().split(":")
    try:
        end = sum(float(x) * 60**i for i, x in enumerate(reversed(parts))) if len(parts) == 3 else None
    except ValueError:
        end = None
    if end is None or not math.isfinite(end):
        return None
    if stream.start_time is not None and time_base is not None:
        end -= max(0.0, float(stream.start_time * time_base))
    return end if end > 0 else None


def _sample_aspect(stream: av.video.stream.VideoStream) -> Fraction | None:
    """The stream's pixel aspect (sample aspect ratio) when its pixels are not square, else None."""
    for source in (stream, stream.codec_context):
        sar = getattr(source, "sample_aspect_ratio", None)
        if sar:  # None, or 0 (unknown), means square
            value = Fraction(sar)
            return value if value > 0 and value != 1 else None
    return None


def aspect_warnings(meta: StreamMeta, width: int, height: int, rotation: int = 0) -> tuple[str, ...]:
    """A warning when the video's pixels are not square: robojudge reads frames as stored, so sizes,
    flow and geometry are in stored pixels, not in the displayed picture's.

    ``width`` x ``height`` is the stored size; ``rotation`` the display turn (degrees) the frames are read
    with: after a quarter turn they are read as ``height`` x ``width``, and shown with their (new)
    height stretched.
    """
    sar = meta.sample_aspect
    if sar is None or width <= 0 or height <= 0:
        return ()
    shown = round(width * sar)
    if rotation % 180 == 90:
        read, displayed = f"{height}x{width} (turned upright)", f"{height}x{shown}"
    else:
        read, displayed = f"{width}x{height}", f"{shown}x{height}"
    return (f"non-square pixels (sample aspect ratio {sar.numerator}:{sar.denominator}): frames are read as "
            f"stored, {read}, not as displayed, {displayed}; sizes, flow and geometry are in stored pixels",)


# Colour tags (FFmpeg's AVColorTransferCharacteristic and AVColorPrimaries) whose pictures robojudge
# reads as SDR BT.709 / BT.601 all the same: it converts YUV to RGB with the matrix alone.
_HDR_TRANSFERS = {16: "PQ (SMPTE ST 2084)", 18: "HLG (ARIB STD-B67)"}
_WIDE_PRIMARIES = {9: "BT.2020"}


def colour_warnings(frame: av.VideoFrame, stream: av.video.stream.VideoStream) -> tuple[str, ...]:
    """A warning when ``frame`` is tagged with an HDR transfer (PQ, HLG) or wide-gamut primaries
    (BT.2020): its pixels are read as SDR, not tone-mapped, so they do not compare with SDR videos.

    The tags are the frame's; a PyAV that does not give them (14.2 does not) has the decoder's.
    """
    source = frame if hasattr(frame, "color_trc") else stream.codec_context
    transfer = _HDR_TRANSFERS.get(int(getattr(source, "color_trc", 0) or 0))
    gamut = _WIDE_PRIMARIES.get(int(getattr(source, "color_primaries", 0) or 0))
    if transfer is None and gamut is None:
        return ()
    named = (f"the {transfer} transfer" if transfer else "", f"{gamut} primaries" if gamut else "")
    tags = " and ".join(t for t in named if t)
    if transfer is not None:
        return (f"HDR video read as SDR, without tone mapping: the stream is tagged with {tags}, and frames "
                "are converted with its YUV matrix alone, so their brightness and colours do not compare "
                "with SDR videos' (whites come out gray, colours washed out)",)
    return (f"wide-gamut video read as SDR: the stream is tagged with {tags}, which are not converted to "
            "BT.709, so colours come out less saturated than they are",)


# FFmpeg's colour matrices (AVColorSpace) as the swscale coefficient sets PyAV's ``src_colorspace`` takes
# (SWS_CS_*): BT.709, FCC, BT.601 (two tags), SMPTE 240M, BT.2020 (constant luminance read as the
# non-constant one, which it is close to). The tags that name no matrix (0, the RGB tag on a YUV frame;
# 2, unspecified; 3, reserved) are read as BT.601, as FFmpeg reads an untagged stream.
SWS_MATRICES = {1: 1, 4: 4, 5: 5, 6: 5, 7: 7, 9: 9, 10: 9}
_SWS_UNTAGGED = frozenset({0, 2, 3})
# The matrices swscale cannot apply, by name. Reading one as BT.601 would give wrong colours with no sign
# of it (YCgCo's green reads purple), so a frame tagged with one is refused, as PyAV 18 refuses it when
# left to read the tag itself.
_UNSUPPORTED_MATRICES = {8: "YCgCo", 11: "SMPTE ST 2085 (Y'D'zD'x)",
                         12: "chroma-derived non-constant luminance", 13: "chroma-derived constant luminance",
                         14: "ICtCp", 15: "IPT-C2", 16: "YCgCo-R (even)", 17: "YCgCo-R (odd)"}


def yuv_matrix(frame: av.VideoFrame, path: Path) -> int | None:
    """The colour matrix tag (AVColorSpace) of a YUV frame, which converts it to RGB; None for RGB and
    gray frames, which need none.

    Checked on every frame converted (:func:`robojudge.video._filesample.to_rgb`) and on the first frame
    of a probe (:func:`probe_file`), so a video that cannot be read is refused as soon as it is probed
    (``robojudge suite validate``, a run's look at an item's sizes), not only once its frames are read.

    Raises:
        VideoError: the frame is tagged with a matrix swscale has no coefficients for (YCgCo, ICtCp, ...),
            named with its tag.
    """
    fmt = frame.format
    if fmt.is_rgb or len([c for c in fmt.components if not c.is_alpha]) < 3:
        return None
    matrix = int(frame.colorspace)
    if matrix not in SWS_MATRICES and matrix not in _SWS_UNTAGGED:
        known = _UNSUPPORTED_MATRICES.get(matrix)
        named = f"{known} (AVColorSpace {matrix})" if known else f"AVColorSpace {matrix}"
        raise VideoError(path, f"unsupported colour matrix {named}: only BT.601, BT.709, FCC, SMPTE 240M and "
                               "BT.2020 YUV can be converted to RGB")
    return matrix


def intact_packets(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream
) -> Generator[_Packet, None, None]:
    """The packets of ``stream`` that hold data, in file order.

    A demuxer error (a damaged or truncated container) ends the stream quietly. The last packet is
    dropped when the demuxer flags it corrupt: the file ended inside it. Feeding such a stub to a
    frame-threaded decoder can cost the frames still in flight, and what it decodes to is a partial
    picture, not a frame of the video.
    """
    packets = container.demux(stream)
    held: _Packet | None = None
    while True:
        try:
            packet = next(packets)
        except StopIteration:
            break
        except _AV_ERRORS:
            break
        if not packet.size:
            continue  # the demuxer's end-of-stream marker; decoders are flushed by the caller
        if held is not None:
            yield held
        held = packet
    if held is not None and not getattr(held, "is_corrupt", False):
        yield held


@dataclass
class DecodeDamage:
    """What the decoder reported about one file while decoding it.

    Counted from what the decoder hands back, not from FFmpeg's log: a packet whose decoding raised
    (skipped), and a frame it flags as decoded with errors (``Frame.is_corrupt``: FFmpeg's
    ``decode_error_flags``, set where error concealment filled in damaged blocks from their
    neighbours, or ``AV_FRAME_FLAG_CORRUPT``). The flag travels with the frame, so the count is the
    file's own however many threads decode it or other files at the same time; FFmpeg's log goes to
    one callback for the whole process, from the decoder's own threads, and drops repeated lines. A
    PyAV without ``Frame.is_corrupt`` counts skipped packets only.

    Attributes:
        undecodable: packets the decoder rejected (and the flush, when it failed), skipped.
        concealed: frames decoded with errors.
        frames: frames decoded (whether flagged or not).
    """

    undecodable: int = 0
    concealed: int = 0
    frames: int = 0
    lead: int = 0
    """Frames shown before the first one decoded (packets stamped earlier): a stream that starts before
    its first keyframe (a capture begun mid-GOP, a cut off the keyframes), whose decoder drops them
    without an error. Counted once every packet was decoded."""
    _stamps: list[int] = field(default_factory=list, repr=False)  # packets' time stamps
    _first: int | None = field(default=None, repr=False)  # the earliest decoded frame's

    def see(self, frame: av.VideoFrame) -> None:
        """Count one decoded frame."""
        self.frames += 1
        if getattr(frame, "is_corrupt", False):
            self.concealed += 1
        if frame.pts is not None and (self._first is None or frame.pts < self._first):
            self._first = int(frame.pts)

    def feed(self, packet: _Packet) -> None:
        """Note one packet handed to the decoder (a shown frame's, not one an edit list discards)."""
        if packet.pts is not None and not getattr(packet, "is_discard", False):
            self._stamps.append(int(packet.pts))

    def done(self) -> None:
        """Every packet was decoded: count the frames shown before the first decoded one."""
        first = self._first
        self.lead = sum(1 for t in self._stamps if first is not None and t < first)

    def warnings(self) -> tuple[str, ...]:
        """``damaged: ...`` when a packet was skipped or a frame flagged; nothing for a clean decode."""
        if not (self.undecodable or self.concealed):
            return ()
        packets = f"{self.undecodable} packet{'s' * (self.undecodable != 1)} undecodable"
        frames = f"{self.concealed} of {self.frames} frames decoded with errors (concealed)"
        return (f"damaged: {packets}, {frames}",)


def decode_packets(
    packets: Iterable[_Packet], ctx: av.VideoCodecContext, damage: DecodeDamage | None = None
) -> Iterator[av.VideoFrame]:
    """Decode ``packets`` with ``ctx`` and flush it, skipping (and counting in ``damage``) the packets the
    decoder rejects."""
    for packet in packets:
        if damage is not None:
            damage.feed(packet)
        try:
            frames = packet.decode()
        except _AV_ERRORS:
            if damage is not None:
                damage.undecodable += 1
            continue
        for frame in frames:
            if damage is not None:
                damage.see(frame)
            yield frame
    try:
        rest = ctx.decode(None)
    except _AV_ERRORS:
        if damage is not None:
            damage.undecodable += 1
        rest = []
    for frame in rest:
        if damage is not None:
            damage.see(frame)
        yield frame
    if damage is not None:
        damage.done()


def decoded_frames(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    damage: DecodeDamage | None = None,
) -> Generator[av.VideoFrame, None, None]:
    """Decode every frame of ``stream`` in presentation order, skipping undecodable packets; what was
    skipped or decoded with errors is counted in ``damage`` when given."""
    yield from decode_packets(intact_packets(container, stream), stream.codec_context, damage)


_RATE_PACKETS = 17  # packets whose time stamps a probe checks the declared rate against


def probe_file(path: Path) -> VideoInfo:
    """Describe a video file; decodes only its first frame (for its display matrix, and its colour matrix:
    one that cannot be converted to RGB is refused here as sampling refuses it, :func:`yuv_matrix`).

    The rate is the stream's own when it is believable, else the one sampling would fall back to
    (see :func:`robojudge.video._timing.nominal_rate`), with a warning. A declared rate that the time
    stamps contradict gives way to theirs, with a warning (:func:`robojudge.video._timing.stamped_rate`):
    an AVI header counting several ticks per frame, checked against the first packets, has its frame
    count divided by the ticks per frame; a nominal rate (every container but MP4, MOV and AVI: a
    Matroska/WebM track's default frame duration, an FLV header's rate, FFmpeg's guess for MPEG-TS, NUT,
    ASF or GIF) is checked against the stamps of every packet (a demux, no decoding), which also give
    its duration: from the first frame to the last, plus the usual step (the container's would count an
    audio track too).
    """
    with open_video(path) as (container, stream):
        meta = stream_meta(container, stream)
        frames = decoded_frames(container, stream)
        first = next(frames, None)
        frames.close()
        if first is None:
            raise VideoError(path, "zero frames decoded")
        yuv_matrix(first, path)  # a matrix no frame could be converted with: refused now, as sampling would
        shown = frame_orientation(first, stream)
        width, height = first.width, first.height
    if shown.rotation in (90, 270):
        width, height = height, width
    fps, warnings = nominal_rate(meta)
    frame_count, duration = meta.frame_count, meta.duration
    if not warnings:  # a declared rate its time stamps contradict (see stamped_rate)
        every = declares_nominal_rate(meta)  # its average needs every stamp
        with open_video(path) as (container, stream):
            packets = intact_packets(container, stream)
            pts = [p.pts for p in (packets if every else itertools.islice(packets, _RATE_PACKETS))]
        own = stamped_rate(pts, meta)
        if own is not None:  # the count was of the declared rate's ticks
            (fps, warnings) = own
            frame_count = round(meta.frame_count / tick_factor(meta, fps)) if meta.frame_count else None
        if every:  # the track's own length, as the average rate counts it
            duration = stamped_length(pts, meta) or duration
    warnings = (tuple(warnings) + shown.warnings()
                + aspect_warnings(meta, first.width, first.height, shown.rotation)
                + colour_warnings(first, stream))
    cut = gif_cut_short(path)
    if cut:
        warnings += (cut,)
    return VideoInfo(
        path=path,
        width=width,
        height=height,
        fps=fps,
        frame_count=frame_count,
        duration=duration,
        rotation=shown.rotation,
        codec=meta.codec,
        warnings=warnings,
        mirrored=shown.mirror,
        sample_aspect=meta.sample_aspect,
    )
