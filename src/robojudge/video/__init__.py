"""Decoding, sampling and writing of videos and frame folders.

Public API:

* :func:`sample_frames` -- frames as a RoboJudge judge sees them (4 fps, at most 32 frames).
* :func:`probe_video` -- size, rate, length, rotation and codec of a video or frame folder.
* :func:`frame_cache` -- share decoded frames between metrics scoring the same video.
* :func:`video_warnings` -- collect what had to be assumed about the videos read inside a block.
* :func:`write_video` -- write RGB frames to mp4/webm/avi/mkv/gif or a PNG frame folder.
* :func:`prepare_frames` -- sampled frames with content hashes and JPEG data URLs (what a judge sends).
* :class:`DecoderPool`, :func:`shared_decoder` -- decode in worker processes, off the caller's GIL.
* :class:`VideoError`, :class:`VideoInfo`, :class:`SampledFrames`.
"""

from robojudge.video._cache import FrameCache, frame_cache, video_warnings
from robojudge.video._encode import PreparedFrames, encode_jpeg_data_urls, frame_digest, prepare_frames
from robojudge.video._pool import DecoderPool, default_decode_workers, shared_decoder
from robojudge.video._sample import probe_video, sample_frames
from robojudge.video._types import SampledFrames, VideoError, VideoInfo
from robojudge.video._write import write_video

__all__ = [
    "DecoderPool",
    "FrameCache",
    "PreparedFrames",
    "SampledFrames",
    "VideoError",
    "VideoInfo",
    "default_decode_workers",
    "encode_jpeg_data_urls",
    "frame_cache",
    "frame_digest",
    "prepare_frames",
    "probe_video",
    "sample_frames",
    "shared_decoder",
    "video_warnings",
    "write_video",
]
