"""Decoding and sampling of videos and frame folders."""

from robojudge.video._types import SampledFrames, VideoError, VideoInfo

__all__ = ["SampledFrames", "VideoError", "VideoInfo"]
