"""The frames a judge sees: RoboJudge's protocol (4 fps, at most 32 uniform frames) by default."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robojudge.judges._backend import Frames
from robojudge.judges._cache import ResponseCache
from robojudge.judges._config import short_hash
from robojudge.video import DecoderPool, PreparedFrames, prepare_frames


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


def _as_frames(prepared: PreparedFrames) -> Frames:
    return Frames(
        arrays=prepared.arrays,
        timestamps=prepared.timestamps,
        hashes=prepared.hashes,
        video_seconds=prepared.video_seconds,
        encoded={f"jpeg:{q}": urls for q, urls in prepared.jpeg.items()},
    )


def decode_frames(path: str | Path, spec: FrameSpec, jpeg_quality: int | None = None) -> Frames:
    """Sample and hash the frames of one video in this process (blocking).

    Args:
        path: Video file or frame folder.
        spec: Frame sampling.
        jpeg_quality: Also encode the frames as JPEG data URLs at this quality.
    """
    return _as_frames(prepare_frames(path, spec.fps, spec.max_frames, spec.size, jpeg_quality))


_FALLBACK: ThreadPoolExecutor | None = None
_FALLBACK_LOCK = threading.Lock()


def _fallback_thread() -> ThreadPoolExecutor:
    global _FALLBACK
    with _FALLBACK_LOCK:
        if _FALLBACK is None:
            _FALLBACK = ThreadPoolExecutor(1, thread_name_prefix="robojudge-decode")
        return _FALLBACK


def _decode_unless_ready(
    decoder: DecoderPool, path: Path, spec: FrameSpec, jpeg_quality: int | None
) -> Frames | None:
    """Decode here, unless the pool came up while this call waited its turn (then ``None``)."""
    return None if decoder.ready else decode_frames(path, spec, jpeg_quality)


class ItemFrames:
    """An item's frames, decoded only when a request actually has to be sent.

    On a warm cache the frame hashes come from the cache (keyed by file identity), so a fully
    cached item is judged without decoding its video.

    Args:
        path: The item's video.
        spec: Frame sampling.
        cache: The response cache (it remembers each file's frame hashes).
        decoder: Worker processes to decode in (started on the first video to decode; until its
            first process is up, videos are decoded in a thread here); ``None``: always a thread.
        jpeg_quality: The backend sends JPEGs at this quality (its ``frame_jpeg_quality``): they
            are encoded while decoding, and with a ``decoder`` the pixels are then not kept.
        before_decode: Called (on the event loop) before this item's video is decoded; the runner
            uses it to start the backend on the first cache miss, before decoding threads compete
            with its imports for the GIL.
    """

    def __init__(
        self,
        path: str | Path,
        spec: FrameSpec,
        cache: ResponseCache,
        *,
        decoder: DecoderPool | None = None,
        jpeg_quality: int | None = None,
        before_decode: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.spec = spec
        self._cache = cache
        self._decoder = decoder
        self._jpeg_quality = jpeg_quality
        self._before_decode = before_decode
        self._frames: Frames | None = None
        self._lock = asyncio.Lock()
        self.hashes: list[str] = []
        self.video_seconds = 0.0
        self.from_cache = False
        """The hashes came from the cache, so the video was not decoded (its replies are likely cached)."""
        self._key: str | None = None
        self._hashes_json: tuple[list[str], str] | None = None

    def known(self) -> bool:
        """Whether the cache knows this file's frame hashes, so :meth:`prepare` would not decode."""
        try:
            key = _file_key(self.path, self.spec)
        except OSError:
            return False
        return self._cache.get_frames(key) is not None

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
            self.from_cache = True
            return
        await self.load()

    async def load(self) -> Frames:
        """The decoded frames (decoded once, in a decoder process or a worker thread)."""
        async with self._lock:
            if self._frames is None:
                if self._before_decode is not None:
                    self._before_decode()
                self._frames = await self._decode()
                self.hashes = self._frames.hashes
                self.video_seconds = self._frames.video_seconds
                if self._key:
                    self._cache.put_frames(
                        self._key, {"hashes": self.hashes, "video_seconds": self.video_seconds}
                    )
            return self._frames

    async def _decode(self) -> Frames:
        spec, q = self.spec, self._jpeg_quality
        if self._decoder is None:
            return await asyncio.to_thread(decode_frames, self.path, spec, q)
        self._decoder.start()  # no-op once started
        if not self._decoder.ready:
            # Its first process takes about a second to start: decode here meanwhile, one video at
            # a time (more threads would only fight the event loop for the GIL).
            loop = asyncio.get_running_loop()
            args = (self._decoder, self.path, spec, q)
            frames = await loop.run_in_executor(_fallback_thread(), _decode_unless_ready, *args)
            if frames is not None:
                return frames
        prepared = await self._decoder.prepare(
            self.path, spec.fps, spec.max_frames, spec.size, q, keep_arrays=q is None
        )
        return _as_frames(prepared)

    def hashes_json(self) -> str:
        """:attr:`hashes` as compact JSON (for cache keys; written once per item)."""
        if self._hashes_json is None or self._hashes_json[0] is not self.hashes:
            self._hashes_json = (self.hashes, json.dumps(self.hashes, separators=(",", ":")))
        return self._hashes_json[1]

    def release(self) -> None:
        """Drop decoded pixels once the item is done."""
        self._frames = None
