"""Frames ready to send: sampled, content-hashed and, when asked, JPEG-encoded as data URLs.

:func:`prepare_frames` is what a judge needs from one video. It is a plain top-level function with
picklable arguments and result, so :class:`robojudge.video.DecoderPool` can run it in worker
processes: decoding and encoding then use other cores instead of competing with the caller's
event loop for the GIL (PyAV's decoding mostly holds it).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from robojudge.video._sample import sample_frames


def frame_digest(frame: np.ndarray) -> str:
    """Content hash of one frame: BLAKE2b (12 bytes) over its shape and pixels, as hex.

    Response caches are keyed by these, so the definition must not change.
    """
    h = hashlib.blake2b(digest_size=12)
    h.update(repr(frame.shape).encode())
    h.update(np.ascontiguousarray(frame).data)
    return h.hexdigest()


def encode_jpeg_data_urls(arrays: np.ndarray, quality: int) -> list[str]:
    """Each ``(H, W, 3)`` RGB frame as a ``data:image/jpeg;base64,...`` URL (OpenCV's encoder)."""
    out = []
    for rgb in arrays:
        ok, buf = cv2.imencode(
            ".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality]
        )
        if not ok:  # pragma: no cover - OpenCV only fails on invalid arrays
            raise ValueError("JPEG encoding failed")
        out.append("data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii"))
    return out


@dataclass
class PreparedFrames:
    """One video's sampled frames, prepared for a judge.

    Attributes:
        arrays: ``(N, H, W, 3)`` uint8 RGB, or ``None`` when they were dropped after encoding.
        timestamps: Seconds from the start of the video, one per frame.
        hashes: :func:`frame_digest` of each frame.
        video_seconds: Length of the sampled span plus one source frame, in seconds.
        jpeg: JPEG data URLs by quality.
        warnings: What had to be assumed about the video (an assumed rate, unusable time stamps,
            missing frames), as ``"<path>: <message>"``; empty for a well-formed video. They travel
            with the frames because a worker process's warnings cannot reach the caller's
            :func:`robojudge.video.video_warnings` block.
    """

    arrays: np.ndarray | None
    timestamps: np.ndarray
    hashes: list[str]
    video_seconds: float
    jpeg: dict[int, list[str]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def prepare_frames(
    path: str | Path,
    fps: float | None,
    max_frames: int | None,
    size: int | tuple[int, int] | None,
    jpeg_quality: int | None = None,
    keep_arrays: bool = True,
) -> PreparedFrames:
    """Sample (see :func:`sample_frames`), hash and optionally JPEG-encode one video.

    Args:
        path: Video file or frame folder.
        fps: Sampling rate.
        max_frames: Frame cap.
        size: Output size (see :func:`sample_frames`).
        jpeg_quality: Also encode every frame as a JPEG data URL at this quality.
        keep_arrays: Return the pixels too; with ``False`` (only allowed with ``jpeg_quality``)
            they are dropped, which keeps what crosses a process boundary small.

    Raises:
        VideoError: The video cannot be decoded.
        ValueError: ``keep_arrays=False`` without ``jpeg_quality``.
    """
    if not keep_arrays and jpeg_quality is None:
        raise ValueError("keep_arrays=False needs jpeg_quality: the frames would be lost")
    sampled = sample_frames(path, fps=fps, max_frames=max_frames, size=size)
    arrays = sampled.frames
    if arrays.ndim == 3:  # a grayscale source: judges expect RGB
        arrays = np.repeat(arrays[..., None], 3, axis=-1)
    step = 1.0 / sampled.source_fps if sampled.source_fps > 0 else 0.0
    seconds = float(sampled.timestamps[-1]) + step if len(sampled) else 0.0
    jpeg = {jpeg_quality: encode_jpeg_data_urls(arrays, jpeg_quality)} if jpeg_quality is not None else {}
    return PreparedFrames(
        arrays=arrays if keep_arrays else None,
        timestamps=sampled.timestamps,
        hashes=[frame_digest(f) for f in arrays],
        video_seconds=seconds,
        jpeg=jpeg,
        warnings=tuple(f"{sampled.path}: {w}" for w in sampled.warnings),
    )
