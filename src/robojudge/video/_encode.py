"""Frames ready to send: sampled, content-hashed and, when asked, JPEG-encoded.

:func:`prepare_frames` is what a judge needs from one video. It is a plain top-level function with
picklable arguments and result, so :class:`robojudge.video.DecoderPool` can run it in worker
processes: decoding and encoding then use other cores instead of competing with the caller's
event loop for the GIL (PyAV's decoding mostly holds it).
"""

from __future__ import annotations

from pathlib import Path

from robojudge.video._sample import sample_frames
from robojudge.video._types import SampledFrames


def prepare_frames(
    path: str | Path,
    fps: float | None,
    max_frames: int | None,
    size: int | tuple[int, int] | None,
    jpeg_quality: int | None = None,
    keep_pixels: bool = True,
) -> SampledFrames:
    """:func:`sample_frames` (RGB, through the open frame cache), with :attr:`SampledFrames.hashes`
    computed and, with ``jpeg_quality``, the JPEGs encoded (:meth:`SampledFrames.data_urls`).

    Args:
        path: Video file or frame folder.
        fps: Sampling rate.
        max_frames: Frame cap.
        size: Output size (see :func:`sample_frames`).
        jpeg_quality: Also encode every frame as JPEG at this quality.
        keep_pixels: Return the pixels too; with ``False`` (only allowed with ``jpeg_quality``)
            they are dropped (:meth:`SampledFrames.without_pixels`), which keeps what crosses a
            process boundary small.

    Raises:
        VideoError: The video cannot be decoded.
        ValueError: ``keep_pixels=False`` without ``jpeg_quality``.
    """
    if not keep_pixels and jpeg_quality is None:
        raise ValueError("keep_pixels=False needs jpeg_quality: the frames would be lost")
    sampled = sample_frames(path, fps=fps, max_frames=max_frames, size=size)
    sampled.hashes  # noqa: B018 - computed here, where the caller wants the work done
    if jpeg_quality is not None:
        sampled.data_urls(jpeg_quality)
    return sampled if keep_pixels else sampled.without_pixels()
