"""What a video file says without its frames being decoded: how it is stored (:func:`stream_format`)
and how long its video lasts by its packets' time stamps (:func:`measured_duration`).

Neither decodes a frame. The length is for files whose header gives none (a WebM recorded live, as a
browser's MediaRecorder writes it, has no Duration element): it costs one read of the file's packets.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from robojudge.video._decode import intact_packets, open_video, stream_meta
from robojudge.video._timing import frame_times
from robojudge.video._types import VideoError

__all__ = ["StreamFormat", "measured_duration", "stream_format"]


@dataclass(frozen=True)
class StreamFormat:
    """How a file's video stream (the first that is not a cover picture) is stored.

    Attributes:
        container: FFmpeg's demuxer name, e.g. ``"mov,mp4,m4a,3gp,3g2,mj2"`` or ``"matroska,webm"``.
        codec: the codec's name whichever decoder reads it (``"av1"``, not ``"libdav1d"``).
        sample_aspect: pixel width / height when the pixels are not square (anamorphic video), else None.
    """

    container: str
    codec: str
    sample_aspect: Fraction | None


def stream_format(path: str | Path) -> StreamFormat:
    """The container, codec and pixel aspect of a video file's video stream; nothing is decoded.

    Raises:
        VideoError: the file is missing, not a video, or has no video stream.
    """
    with open_video(Path(path)) as (container, stream):
        meta = stream_meta(container, stream)
        return StreamFormat(meta.format, stream.codec_context.codec.canonical_name, meta.sample_aspect)


def measured_duration(path: str | Path) -> float:
    """How long a video file's video lasts by its packets' time stamps, read by demuxing alone: the last
    frame's time plus one frame step, for a file whose header gives no length (where it gives one,
    :func:`~robojudge.video.probe_video` reads it for less).

    Frames are timed as :func:`~robojudge.video.sample_frames` times them, so this is its
    ``video_seconds`` for every frame, except that the last step is counted in whole ticks of the
    stream's time base, as a muxer counts a duration: 60 frames at 30 fps stamped in milliseconds last
    1.967 + 0.033 = 2 s, not 2.0003 s, which would reach into a third 1-second segment.

    Raises:
        VideoError: the file cannot be read as video, or holds no video packet.
    """
    path = Path(path)
    with open_video(path) as (container, stream):
        meta = stream_meta(container, stream)
        # packets an MP4 edit list hides ("discard") are not frames of the clip, as when sampling
        pts = [p.pts for p in intact_packets(container, stream) if not getattr(p, "is_discard", False)]
    if not pts:
        raise VideoError(path, "zero frames (no video packets)")
    stamps = sorted(p for p in pts if p is not None)
    timing = frame_times(stamps if len(stamps) == len(pts) else pts, meta)
    step = Fraction(1 / timing.fps)
    tick = meta.time_base
    if tick is not None and tick > 0:
        step = max(1, round(step / tick)) * tick
    return timing.times[-1] + float(step)
