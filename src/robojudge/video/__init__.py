"""Decoding, sampling and writing of videos and frame folders.

Public API:

* :func:`sample_frames` -- frames as a RoboJudge judge sees them (4 fps, at most 32 frames).
* :func:`probe_video` -- size, rate, length, rotation and codec of a video or frame folder.
* :func:`frame_cache` -- share decoded frames between metrics scoring the same video.
* :func:`write_video` -- write RGB frames to mp4/webm/avi/mkv/gif or a PNG frame folder.
* :class:`VideoError`, :class:`VideoInfo`, :class:`SampledFrames`.
"""

from robojudge.video._cache import FrameCache, frame_cache
from robojudge.video._sample import probe_video, sample_frames
from robojudge.video._types import SampledFrames, VideoError, VideoInfo
from robojudge.video._write import write_video

__all__ = [
    "FrameCache",
    "SampledFrames",
    "VideoError",
    "VideoInfo",
    "frame_cache",
    "probe_video",
    "sample_frames",
    "write_video",
]
