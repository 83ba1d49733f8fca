"""The frames a judge sees: RoboJudge's protocol (4 fps, at most 32 uniform frames) by default."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.judges._backend import Frames
from robojudge.judges._cache import ResponseCache
from robojudge.judges._config import short_hash
from robojudge.video import sample_frames


@dataclass(frozen=True)
class FrameSpec:
    """How frames are sampled for a judge.

    Attributes:
        fps: Sampling rate (RoboJudge: 4).
        max_frames: Frame cap, spread uniformly (RoboJudge: 32).
        size: Longer side in pixels, ``(width, height)``, or ``None`` for the native size.
    """

    fps: float | None = 4.0
    max_frames: int | None = 32
    size: int | tuple[int, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"fps": self.fps, "max_frames": self.max_frames, "size": self.size}


def frame_hash(frame: np.ndarray) -> str:
    """Content hash of one frame (shape and pixels)."""
    h = hashlib.blake2b(digest_size=12)
    h.update(repr(frame.shape).encode())
    h.update(np.ascontiguousarray(frame).data)
    return h.hexdigest()


def _file_key(path: Path, spec: FrameSpec) -> str:
    """Identity of a video file (or frame folder) as it is now, plus the sampling settings.

    One ``stat`` call (no path resolution): the absolute path with the device and inode numbers
    name the file; size and modification time say whether it changed.
    """
    st = os.stat(path)
    parts: list[Any] = [os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    if stat.S_ISDIR(st.st_mode):
        with os.scandir(path) as it:
            parts += sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in it if e.is_file())
    return short_hash([parts, spec.as_dict()])


def decode_frames(path: str | Path, spec: FrameSpec) -> Frames:
    """Sample and hash the frames of one video (blocking; runs in a worker thread)."""
    sampled = sample_frames(path, fps=spec.fps, max_frames=spec.max_frames, size=spec.size)
    arrays = sampled.frames
    if arrays.ndim == 3:  # a grayscale source: judges expect RGB
        arrays = np.repeat(arrays[..., None], 3, axis=-1)
    step = 1.0 / sampled.source_fps if sampled.source_fps > 0 else 0.0
    seconds = float(sampled.timestamps[-1]) + step if len(sampled) else 0.0
    return Frames(
        arrays=arrays,
        timestamps=sampled.timestamps,
        hashes=[frame_hash(f) for f in arrays],
        video_seconds=seconds,
    )


class ItemFrames:
    """An item's frames, decoded only when a request actually has to be sent.

    On a warm cache the frame hashes come from the cache (keyed by file identity), so a fully
    cached item is judged without decoding its video.
    """

    def __init__(self, path: str | Path, spec: FrameSpec, cache: ResponseCache) -> None:
        self.path = Path(path)
        self.spec = spec
        self._cache = cache
        self._frames: Frames | None = None
        self._lock = asyncio.Lock()
        self.hashes: list[str] = []
        self.video_seconds = 0.0
        self._key: str | None = None

    async def prepare(self) -> None:
        """Fill :attr:`hashes` and :attr:`video_seconds`, from the cache when it knows this file."""
        try:
            self._key = _file_key(self.path, self.spec)
        except OSError:
            self._key = None
        known = self._cache.get_frames(self._key) if self._key else None
        if known is not None:
            self.hashes = [str(h) for h in known["hashes"]]
            self.video_seconds = float(known["video_seconds"])
            return
        await self.load()

    async def load(self) -> Frames:
        """The decoded frames (decoded once, in a worker thread)."""
        async with self._lock:
            if self._frames is None:
                self._frames = await asyncio.to_thread(decode_frames, self.path, self.spec)
                self.hashes = self._frames.hashes
                self.video_seconds = self._frames.video_seconds
                if self._key:
                    self._cache.put_frames(
                        self._key, {"hashes": self.hashes, "video_seconds": self.video_seconds}
                    )
            return self._frames

    def release(self) -> None:
        """Drop decoded pixels once the item is done."""
        self._frames = None
