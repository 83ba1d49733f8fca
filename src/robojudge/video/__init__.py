"""Decoding, sampling and writing of videos and frame folders.

Public API:

* :func:`sample_frames` -- frames as a RoboJudge judge sees them (4 fps, at most 32 frames).
* :func:`probe_video` -- size, rate, length, rotation and codec of a video or frame folder.
* :func:`stream_format` -- container, codec and pixel aspect of a video file (:class:`StreamFormat`).
* :func:`measured_duration` -- a video file's length from its packets' time stamps, when its header
  gives none (a WebM recorded live).
* :func:`frame_cache` -- share decoded frames between the metrics and judges reading the same video.
* :func:`cached_frames` -- what the open frame cache holds for a file and sampling (never decodes).
* :func:`prefetch_frames` -- several samplings of one file decoded in one pass into the open cache.
* :func:`video_warnings` -- collect what had to be assumed about the videos read inside a block.
* :func:`report_warnings` -- add warnings about a video to the open :func:`video_warnings` blocks.
* :func:`frame_sizes` -- collect the size of the frames sampled inside a block, per video.
* :func:`read_cell`, :class:`Cell` -- read one cell of a video whose frames are a grid of views.
* :func:`write_video` -- write RGB frames to mp4/webm/avi/mkv/gif or a PNG frame folder.
* :func:`prepare_frames` -- sampled frames with content hashes and JPEGs computed (what a judge sends).
* :class:`DecoderPool`, :func:`shared_decoder` -- decode in worker processes, off the caller's GIL.
* :class:`SampledFrames` -- the one type for a sampled video (frames, time stamps, source indices,
  the input's :class:`FileFingerprint`; content hashes and JPEGs on demand).
* :class:`VideoError`, :class:`VideoInfo`, :func:`frame_digest`, :func:`encode_jpeg`.
* :data:`RESAMPLES` -- how :func:`sample_frames` may shrink frames (``resample``).
* :data:`IMAGE_SUFFIXES` -- the image files a frame folder is read from.
* :func:`is_animated_webp` -- whether a file is an animated WebP (read with Pillow: FFmpeg decodes
  still WebP only).
* :func:`frame_budget`, :func:`set_frame_memory_share`, :func:`frame_memory_share` -- how many bytes
  of decoded frames one read of a video may hold; a read that would hold more is refused before
  decoding (``video/_memory.py``).
* :data:`READER_VERSION` -- which frames this reader gives for a file, recorded with every scored row.
"""


from robojudge.video._animated import is_animated_webp
from robojudge.video._cache import FrameCache, frame_cache, frame_sizes, report_warnings, video_warnings
from robojudge.video._cell import Cell, cell_of, read_cell
from robojudge.video._demux import StreamFormat, measured_duration, stream_format
from robojudge.video._encode import prepare_frames
from robojudge.video._folder import IMAGE_SUFFIXES
from robojudge.video._memory import (
    frame_budget,
    frame_memory_share,
    native_read_warning,
    set_frame_memory_share,
)
from robojudge.video._pool import DecoderPool, default_decode_workers, shared_decoder
from robojudge.video._post import RESAMPLES
from robojudge.video._sample import cached_frames, prefetch_frames, probe_video, sample_frames
from robojudge.video._types import (
    FileFingerprint,
    SampledFrames,
    VideoError,
    VideoInfo,
    encode_jpeg,
    frame_digest,
    jpeg_data_url,
)
from robojudge.video._write import whole_milliseconds, write_video

READER_VERSION = "6"
"""Changes when the frames read from some file change (as a decoder library's release would): stored
with each scored row among its libraries (``details["libraries"]``, ``robojudge-video 6``), so
``robojudge results status`` counts older rows under *other libraries* and ``robojudge score
--rescore-libraries`` recomputes them.

* 2 (2026-12-06): B-frames in AVI and ASF in display order (they came in decode order); the rate step
  applied up to the densest rate of a variable-rate video, not its average (a stall or a held last
  frame kept every frame); a Matroska or WebM file whose stamps start late is not called truncated.
* 3 (2026-12-06): an AVI header counting ticks of a fraction of a frame (ffmpeg's AVI muxer copying
  H.264 declares 60 fps, and twice the frames, for a 30 fps clip) gives way to the stamps' rate, so
  ``source_fps`` and what metrics scale by it (motion per second, jerk) are the video's; such a
  file is no longer called truncated. Animated WebP is read (it was refused).
* 4 (2026-12-06): a display matrix that mirrors the picture is applied as FFmpeg's autorotate applies
  it (a left-right mirror came out upside down, a quarter turn with a flip unmirrored). A Matroska/WebM
  track whose stamps contradict its declared rate (its default frame duration) is read at their average
  rate, as MP4 is, so ``source_fps``, the probed rate and what metrics scale by them (the dynamic-degree
  stride, the rate a video and its reference are paired at) agree across containers; its probed
  duration is the video track's, not the container's with a longer audio track.
* 5 (2026-12-06): a cover picture (a stream FFmpeg marks ``attached_pic``: an MP4/M4V ``covr`` tag, a
  Matroska image attachment) is never read as the video: a file listing its cover first was read as that
  one still image. Nor does a cover count as another stream when a Matroska file's length is judged.
  YUV of more than 8 bits with subsampled chroma (10-bit HEVC, AV1 and H.264, ProRes 422) is converted
  to RGB through 8-bit YUV, so it reads as the same picture in 8 bits does (it came out about 1.6 levels
  darker, its chroma filtered otherwise); 16-bit RGB and gray video keeps each sample's high byte, as a
  frame folder of the same 16-bit PNGs is read (it rounded up).
* 6 (2026-12-07): a stream whose time stamps contradict its nominal rate is read at their average rate in
  every container but MP4, MOV and AVI (whose rate is already the average, or a tick count checked
  apart), not only in Matroska/WebM: FLV, MPEG-TS, NUT, ASF, MPEG-PS and GIF gave the header's rate or
  FFmpeg's guess as ``source_fps``, so a clip that stalls got another dynamic-degree stride there.
  An ASF or NUT file whose stamps start late is read (it was refused as truncated: their duration is
  the end time of the last frame), and an FLV with B-frames is no longer called truncated.
"""

__all__ = [
    "READER_VERSION",
    "Cell",
    "DecoderPool",
    "FileFingerprint",
    "FrameCache",
    "IMAGE_SUFFIXES",
    "RESAMPLES",
    "SampledFrames",
    "StreamFormat",
    "VideoError",
    "VideoInfo",
    "cached_frames",
    "cell_of",
    "default_decode_workers",
    "encode_jpeg",
    "frame_cache",
    "frame_budget",
    "frame_memory_share",
    "frame_digest",
    "frame_sizes",
    "is_animated_webp",
    "jpeg_data_url",
    "measured_duration",
    "native_read_warning",
    "prefetch_frames",
    "prepare_frames",
    "probe_video",
    "read_cell",
    "report_warnings",
    "sample_frames",
    "set_frame_memory_share",
    "shared_decoder",
    "stream_format",
    "video_warnings",
    "whole_milliseconds",
    "write_video",
]
