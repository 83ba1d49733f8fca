"""The one frame cache: metrics and judges that sample the same video the same way share one decode.

Inside ``with frame_cache():`` every call to :func:`robojudge.video.sample_frames` with the same
file (the same :class:`FileFingerprint`: path, device, inode, size and modification time) and the
same sampling arguments returns the same :class:`SampledFrames`, decoded once, with its hashes and
JPEG encodings computed once for every judge rubric that sends it. The metric runner opens one cache
per item, so memory holds the frames of one video at a time and never outlives the item; a judge
run inside an open cache decodes through it too (see :class:`robojudge.judges.FrameLoader`).
Cached frame arrays are read-only: a metric that wants to change pixels must copy them first.

Inside ``with video_warnings() as found:`` every sampling and probe (fresh or served from the cache)
adds its warnings to ``found`` as ``"<path>: <message>"``, each once. The runner opens one block per
metric, so a result row lists exactly the warnings about the videos that metric looked at.

Inside ``with frame_sizes() as sizes:`` every sampling with pixels (fresh or from the cache) adds the
size of its frames to ``sizes[path]`` as ``"WxH"``, each size once per path. The runner records the
sizes at which a metric read the item's main video in its row (``details["frame_size"]``), so values
computed at different resolutions can be told apart.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from robojudge.video._types import FileFingerprint, SampledFrames, VideoInfo

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "FrameCache",
    "cached",
    "cached_probe",
    "frame_cache",
    "frame_sizes",
    "peek",
    "report_warnings",
    "video_warnings",
]

DEFAULT_CACHE_BYTES = 1 << 30  # 1 GiB: dozens of samplings of a typical rollout


@dataclass
class FrameCache:
    """A byte-bounded LRU of sampled videos; ``hits`` and ``misses`` count lookups.

    Keys are ``(FileFingerprint, sampling arguments)``. The budget counts pixels; hashes and JPEG
    encodings computed later on a cached object are not counted (a few percent of its pixels).
    """

    max_bytes: int = DEFAULT_CACHE_BYTES
    hits: int = 0
    misses: int = 0
    _entries: OrderedDict[Hashable, SampledFrames] = field(default_factory=OrderedDict)
    _bytes: int = 0
    # Probes (a header read and one decoded frame each) of the files seen: every metric with a
    # ``max_side`` probes the item's video, and one probe per file is enough while it is unchanged.
    _probes: OrderedDict[FileFingerprint, VideoInfo] = field(default_factory=OrderedDict)
    # A judge run decodes in several threads at once; decoding itself happens outside the lock.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get_or_compute(self, key: Hashable, compute: Callable[[], SampledFrames]) -> SampledFrames:
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            self.misses += 1
        value = compute()
        if value.has_pixels:
            value.frames.flags.writeable = False
        size = value.nbytes
        with self._lock:
            raced = self._entries.get(key)
            if raced is not None:  # another thread decoded it meanwhile: everyone shares its copy
                return raced
            if size <= self.max_bytes:
                self._entries[key] = value
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _, old = self._entries.popitem(last=False)
                    self._bytes -= old.nbytes
        return value

    def get(self, key: Hashable) -> SampledFrames | None:
        """The cached entry for ``key`` without decoding anything (counted as a hit when found)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self.hits += 1
                self._entries.move_to_end(key)
        return found

    def holds(self, key: Hashable) -> bool:
        """Whether ``key`` is cached (not counted as a lookup)."""
        with self._lock:
            return key in self._entries

    def probe(self, fingerprint: FileFingerprint, compute: Callable[[], VideoInfo]) -> VideoInfo:
        """``compute()`` once per fingerprint (a changed file has a new fingerprint)."""
        with self._lock:
            found = self._probes.get(fingerprint)
            if found is not None:
                self._probes.move_to_end(fingerprint)
                return found
        info = compute()
        with self._lock:
            self._probes[fingerprint] = info
            while len(self._probes) > MAX_PROBES:
                self._probes.popitem(last=False)
        return info


MAX_PROBES = 4096

_ACTIVE: contextvars.ContextVar[FrameCache | None] = contextvars.ContextVar("frame_cache", default=None)


@contextmanager
def frame_cache(max_bytes: int = DEFAULT_CACHE_BYTES) -> Iterator[FrameCache]:
    """Memoize :func:`sample_frames` calls made inside the block."""
    cache = FrameCache(max_bytes=max_bytes)
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)


def active_cache() -> FrameCache | None:
    """The frame cache open in this context, if any."""
    return _ACTIVE.get()


def cached(path: Path, args: tuple[object, ...], compute: Callable[[], SampledFrames]) -> SampledFrames:
    """``compute()``, through the active cache if there is one; its warnings go to open collectors.

    The result carries the fingerprint of ``path`` taken before decoding (a file that changes while
    it is decoded is then seen as changed on the next lookup, never the other way round).
    """
    try:
        fingerprint: FileFingerprint | None = FileFingerprint.of(path)
    except OSError:
        fingerprint = None  # let the decoder report the missing file

    def fresh() -> SampledFrames:
        value = compute()
        value.fingerprint = fingerprint
        return value

    cache = _ACTIVE.get()
    if cache is None or fingerprint is None:
        value = fresh()
    else:
        value = cache.get_or_compute((fingerprint, args), fresh)
    report_warnings(value.path, value.warnings)
    report_size(value)
    return value


def cached_probe(path: Path, compute: Callable[[], VideoInfo]) -> VideoInfo:
    """``compute()`` (a probe of ``path``), memoized by the active cache while the file is unchanged."""
    cache = _ACTIVE.get()
    if cache is None:
        return compute()
    try:
        fingerprint = FileFingerprint.of(path)
    except OSError:
        return compute()  # let the prober report the missing file
    return cache.probe(fingerprint, compute)


def peek(fingerprint: FileFingerprint, args: tuple[object, ...]) -> SampledFrames | None:
    """What the active cache holds for this file and sampling, without decoding; ``None`` when no
    cache is open or it has no such entry. Its warnings go to open collectors, as a hit's would."""
    cache = _ACTIVE.get()
    value = None if cache is None else cache.get((fingerprint, args))
    if value is not None:
        report_warnings(value.path, value.warnings)
        report_size(value)
    return value


_SINKS: contextvars.ContextVar[tuple[list[str], ...]] = contextvars.ContextVar("video_warnings", default=())


@contextmanager
def video_warnings() -> Iterator[list[str]]:
    """Collect the warnings of the samplings and probes made inside the block.

    Yields a list that fills as videos are read: ``"<path>: <message>"``, each once, in the order
    met. Blocks nest; every open block collects. Warnings are per context (thread or task); frames
    decoded in a worker process (:class:`robojudge.video.DecoderPool`) carry theirs in
    :attr:`SampledFrames.warnings`, and the pool hands them to the caller's blocks when they arrive.
    """
    found: list[str] = []
    token = _SINKS.set((*_SINKS.get(), found))
    try:
        yield found
    finally:
        _SINKS.reset(token)


def report_warnings(path: Path, warnings: Iterable[str]) -> None:
    """Hand warnings about ``path`` to every open :func:`video_warnings` block."""
    sinks = _SINKS.get()
    if not sinks:
        return
    for message in warnings:
        line = f"{path}: {message}"
        for sink in sinks:
            if line not in sink:
                sink.append(line)


_SIZES: contextvars.ContextVar[tuple[dict[str, list[str]], ...]] = contextvars.ContextVar(
    "frame_sizes", default=()
)


@contextmanager
def frame_sizes() -> Iterator[dict[str, list[str]]]:
    """Collect the size of the frames sampled inside the block, per path (see the module docstring).

    Yields a dict that fills as videos are sampled: ``str(path)`` -> ``["WxH", ...]`` in the order
    met. Blocks nest; every open block collects.
    """
    found: dict[str, list[str]] = {}
    token = _SIZES.set((*_SIZES.get(), found))
    try:
        yield found
    finally:
        _SIZES.reset(token)


def report_size(value: SampledFrames) -> None:
    """Hand the frame size of ``value`` to every open :func:`frame_sizes` block."""
    sinks = _SIZES.get()
    if not sinks or not value.has_pixels or value.frames.ndim < 3:
        return
    height, width = value.frames.shape[1:3]
    size = f"{width}x{height}"
    for sink in sinks:
        seen = sink.setdefault(str(value.path), [])
        if size not in seen:
            seen.append(size)
