"""Share decoded frames between the metrics that score the same video.

Inside ``with frame_cache():`` every call to :func:`robojudge.video.sample_frames` with the same
file (same size and modification time) and the same sampling arguments returns the same
:class:`SampledFrames`, decoded once. The runner opens one cache per item, so memory holds the
frames of one video at a time and never outlives the item. Cached frame arrays are read-only: a
metric that wants to change pixels must copy them first.

Inside ``with video_warnings() as found:`` every sampling and probe (fresh or served from the cache)
adds its warnings to ``found`` as ``"<path>: <message>"``, each once. The runner opens one block per
metric, so a result row lists exactly the warnings about the videos that metric looked at.
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from robojudge.video._types import SampledFrames

__all__ = ["DEFAULT_CACHE_BYTES", "FrameCache", "cached", "frame_cache", "report_warnings", "video_warnings"]

DEFAULT_CACHE_BYTES = 1 << 30  # 1 GiB: dozens of samplings of a typical rollout


@dataclass
class FrameCache:
    """A byte-bounded LRU of sampled videos; ``hits`` and ``misses`` count lookups."""

    max_bytes: int = DEFAULT_CACHE_BYTES
    hits: int = 0
    misses: int = 0
    _entries: OrderedDict[Hashable, SampledFrames] = field(default_factory=OrderedDict)
    _bytes: int = 0

    def get_or_compute(self, key: Hashable, compute: Callable[[], SampledFrames]) -> SampledFrames:
        found = self._entries.get(key)
        if found is not None:
            self.hits += 1
            self._entries.move_to_end(key)
            return found
        self.misses += 1
        value = compute()
        value.frames.flags.writeable = False
        size = int(value.frames.nbytes)
        if size <= self.max_bytes:
            self._entries[key] = value
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, old = self._entries.popitem(last=False)
                self._bytes -= int(old.frames.nbytes)
        return value


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


def cached(path: Path, args: tuple[object, ...], compute: Callable[[], SampledFrames]) -> SampledFrames:
    """``compute()``, through the active cache if there is one; its warnings go to open collectors."""
    value = _lookup(path, args, compute)
    report_warnings(value.path, value.warnings)
    return value


def _lookup(path: Path, args: tuple[object, ...], compute: Callable[[], SampledFrames]) -> SampledFrames:
    cache = _ACTIVE.get()
    if cache is None:
        return compute()
    try:
        st = path.stat()
        stamp: tuple[object, ...] = (st.st_size, st.st_mtime_ns)
    except OSError:
        return compute()  # let the decoder report the missing file
    return cache.get_or_compute((str(path.resolve()), stamp, args), compute)


_SINKS: contextvars.ContextVar[tuple[list[str], ...]] = contextvars.ContextVar("video_warnings", default=())


@contextmanager
def video_warnings() -> Iterator[list[str]]:
    """Collect the warnings of the samplings and probes made inside the block.

    Yields a list that fills as videos are read: ``"<path>: <message>"``, each once, in the order
    met. Blocks nest; every open block collects. Warnings are per context (thread or task):
    frames prepared in worker processes carry theirs in :attr:`PreparedFrames.warnings` instead.
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
