"""What metrics derive from an item's shared frames, computed once while those frames exist.

Inside the runner's frame cache (:func:`robojudge.video.frame_cache`) every metric of an item that
samples the video the same way gets the same read-only frame array. Several of them then derive the
same things from it: gray frames, and the block means behind the content checks of
:mod:`robojudge.metrics._content` (50-175 ms each on a 720p clip of 10 s, once per metric before). Here
the first metric computes such a value and the others reuse it.

An entry belongs to its array: it is dropped when the array is garbage collected (``weakref.finalize``),
so the memo holds memory exactly as long as the frame cache holds the frames (one item), and an id that
Python reuses for a later array never finds a stale entry. What it holds is not counted in the frame
cache's byte budget: the gray copy of a native RGB clip adds a third of its bytes while the item is
scored (before, each metric made that copy itself and dropped it when done).

Only arrays that cannot change are memoized: not writeable, and not a view into a writeable array.
Anything else is computed on every call, so a metric called outside a frame cache (its frames freshly
decoded and writeable) behaves as before.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

#: ``id(array) -> {key: value}`` for the live read-only arrays something was derived from.
_MEMO: dict[int, dict[Hashable, Any]] = {}
_LOCK = threading.Lock()
_MISSING = object()


def frozen(frames: np.ndarray) -> bool:
    """Whether no one can change ``frames``' values: it and every array it views into are read-only."""
    base: object = frames
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return base is None or isinstance(base, bytes)


def derived(frames: np.ndarray, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, remembered under ``key`` for as long as ``frames`` lives when it is :func:`frozen`.

    ``compute`` must depend on nothing but ``frames`` and ``key``. A value that is itself an array
    should be made read-only by ``compute``: every caller gets the same object.
    """
    if not frozen(frames):
        return compute()
    ident = id(frames)
    with _LOCK:
        hit = _MEMO.get(ident, {}).get(key, _MISSING)
    if hit is not _MISSING:
        return hit  # type: ignore[no-any-return]
    value = compute()  # outside the lock: two threads may both compute, and either result is right
    with _LOCK:
        entry = _MEMO.get(ident)
        if entry is None:
            entry = {}
            _MEMO[ident] = entry
            weakref.finalize(frames, _forget, ident).atexit = False
        entry[key] = value
    return value


def _forget(ident: int) -> None:
    # No lock: the collector may run this inside derived()'s locked block, on the same thread. One
    # dict.pop is atomic, and it never touches the entry derived() is working on (that array is alive).
    _MEMO.pop(ident, None)
