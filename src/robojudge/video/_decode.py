"""Opening video files with PyAV and walking their frames without leaking FFmpeg errors.

Every failure is turned into :class:`VideoError`. Damage inside a file is tolerated: a packet the
decoder rejects is skipped, and a demuxer error (typically a truncated file) ends the stream after
the decoder has been flushed, so whatever could be decoded is still returned. Only a file from
which no frame at all can be decoded is an error (``"zero frames decoded"``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.container
import av.video.stream

from robojudge.video._types import VideoError, VideoInfo

__all__ = [
    "FrameClock",
    "StreamMeta",
    "decoded_frames",
    "frame_rotation",
    "open_video",
    "probe_file",
    "stream_meta",
]

# Anything PyAV may raise while reading a damaged or unexpected file.
_AV_ERRORS: tuple[type[BaseException], ...] = (av.error.FFmpegError, EOFError, ValueError, OSError)


@dataclass(frozen=True)
class StreamMeta:
    """Container-level facts about the video stream, read without decoding."""

    time_base: Fraction | None
    fps: float | None
    frame_count: int | None
    duration: float | None
    codec: str


def _check_file(path: Path) -> None:
    if not path.exists():
        raise VideoError(path, "file not found")
    if not path.is_file():
        raise VideoError(path, "not a regular file")
    if path.stat().st_size == 0:
        raise VideoError(path, "empty file (0 bytes)")


@contextmanager
def open_video(path: Path) -> Iterator[tuple[av.container.InputContainer, av.video.stream.VideoStream]]:
    """Open ``path`` and yield its container and first video stream; closes on exit."""
    _check_file(path)
    try:
        container = av.open(str(path), mode="r", metadata_errors="ignore")
    except av.error.InvalidDataError as exc:
        raise VideoError(path, "not a video file (unrecognised, damaged or truncated container)") from exc
    except _AV_ERRORS as exc:
        raise VideoError(path, f"cannot open: {exc}") from exc
    try:
        if not container.streams.video:
            raise VideoError(path, "no video stream")
        stream = container.streams.video[0]
        if stream.codec_context is None or stream.codec_context.codec is None:
            raise VideoError(path, "no decoder for the video stream")
        yield container, stream
    finally:
        container.close()


def stream_meta(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> StreamMeta:
    """Read rate, length and codec of ``stream`` from container metadata."""
    time_base = Fraction(stream.time_base) if stream.time_base else None
    rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    fps = float(rate) if rate else None
    if fps is not None and not 0 < fps < 10_000:
        fps = None
    duration: float | None = None
    if stream.duration is not None and time_base is not None:
        duration = float(stream.duration * time_base)
    elif container.duration is not None:
        duration = container.duration / av.time_base
    frames = int(stream.frames) if stream.frames else None
    return StreamMeta(time_base, fps, frames, duration, stream.codec_context.name)


def frame_rotation(frame: av.VideoFrame, stream: av.video.stream.VideoStream) -> int:
    """Counter-clockwise display rotation of ``frame`` in degrees, one of 0, 90, 180, 270.

    Uses the display matrix (``frame.rotation``, PyAV >= 14). Older PyAV falls back to the legacy
    ``rotate`` stream tag, which counts clockwise.
    """
    angle: float = 0.0
    rotation = getattr(frame, "rotation", None)
    if rotation is not None:
        angle = float(rotation)
    else:
        tag = stream.metadata.get("rotate")
        try:
            angle = -float(tag) if tag is not None else 0.0
        except ValueError:
            angle = 0.0
    return int(round(angle / 90.0)) % 4 * 90


class FrameClock:
    """Presentation time of decoded frames in seconds, relative to the first decoded frame.

    Frames without a timestamp are placed one nominal frame interval after their predecessor.
    """

    def __init__(self, time_base: Fraction | None, fps: float | None) -> None:
        self._tb = time_base
        self._step = 1.0 / fps if fps else 1.0 / 30.0
        self._first_pts: int | None = None
        self._last: float | None = None

    def time(self, frame: av.VideoFrame) -> float:
        """Time of ``frame`` (frames must be passed in decoding output order)."""
        pts = frame.pts
        tb = self._tb or (Fraction(frame.time_base) if frame.time_base else None)
        if pts is None or tb is None:
            t = 0.0 if self._last is None else self._last + self._step
        else:
            if self._first_pts is None:
                self._first_pts = pts
                if self._last is not None:  # earlier frames had no pts: keep counting from them
                    self._first_pts -= round(Fraction(self._last + self._step) / tb)
            t = float((pts - self._first_pts) * tb)
        self._last = t
        return t


def decoded_frames(
    container: av.container.InputContainer, stream: av.video.stream.VideoStream
) -> Generator[av.VideoFrame, None, None]:
    """Decode every frame of ``stream`` in presentation order, skipping undecodable packets."""
    packets = container.demux(stream)
    while True:
        try:
            packet = next(packets)
        except StopIteration:
            break
        except _AV_ERRORS:
            break  # damaged or truncated container: stop reading, keep what was decoded
        try:
            frames = packet.decode()
        except _AV_ERRORS:
            continue
        yield from frames
    try:
        rest = stream.codec_context.decode(None)
    except _AV_ERRORS:
        rest = []
    yield from rest


def probe_file(path: Path) -> VideoInfo:
    """Describe a video file; decodes only its first frame (for the rotation)."""
    with open_video(path) as (container, stream):
        meta = stream_meta(container, stream)
        frames = decoded_frames(container, stream)
        first = next(frames, None)
        frames.close()
        if first is None:
            raise VideoError(path, "zero frames decoded")
        rotation = frame_rotation(first, stream)
        width, height = first.width, first.height
    if rotation in (90, 270):
        width, height = height, width
    return VideoInfo(
        path=path,
        width=width,
        height=height,
        fps=meta.fps or 0.0,
        frame_count=meta.frame_count,
        duration=meta.duration,
        rotation=rotation,
        codec=meta.codec,
    )
