"""The tracker interface and its registry: built-ins, ``robojudge.trackers`` entry points, decorators.

A learned tracker (CoTracker, SAM 2, a detector plus association) plugs in by exposing a factory
``(**options) -> Tracker`` either under the ``robojudge.trackers`` entry-point group of its package
(``name = "package.module:factory"``) or by calling :func:`register_tracker` at import time. Entries
are ``"module:attr"`` strings imported only when the tracker is first asked for, so heavy frameworks
stay unloaded until used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from robojudge.metrics.tracking._types import Tracks, TrackSeed
from robojudge.registry import Registry


@runtime_checkable
class Tracker(Protocol):
    """Follows first-frame targets through a video.

    ``track(frames, seed)`` takes ``(T, H, W, 3)`` uint8 RGB frames whose first frame is the one the
    seed describes, and returns :class:`Tracks` with one row per frame and one column per target, in
    the seed's order, in pixels of the given frames. It must not look at anything but the frames and
    the seed (no simulator state after frame 0), so it works on generated videos.
    """

    def track(self, frames: np.ndarray, seed: TrackSeed) -> Tracks: ...


TrackerFactory = Callable[..., Tracker]

TRACKERS: Registry[TrackerFactory] = Registry("tracker", entry_point_group="robojudge.trackers")
"""Tracker factories by name; the built-in ``lk_flow`` is imported on first use."""
TRACKERS.add("lk_flow", "robojudge.metrics.tracking._flow:FlowTracker")


def register_tracker(name: str) -> Callable[[TrackerFactory], TrackerFactory]:
    """Decorator registering a tracker factory (a class or a function returning a :class:`Tracker`).

    Raises:
        ValueError: When ``name`` is already taken (built-ins and entry points included).
    """

    def deco(factory: TrackerFactory) -> TrackerFactory:
        TRACKERS.load()  # so a name taken by an entry point is refused, not silently shadowed
        TRACKERS.add(name, factory)
        return factory

    return deco


def list_trackers() -> list[str]:
    """Names of the trackers available here, sorted."""
    return TRACKERS.names()


def get_tracker(name: str = "lk_flow", **options: Any) -> Tracker:
    """Build the tracker registered as ``name`` with ``options``.

    Raises:
        KeyError: For an unknown name (:class:`robojudge.registry.UnknownNameError`); the message
            suggests close ones.
        ImportError: When a lazy entry cannot be imported.
    """
    tracker = TRACKERS.get(name)(**options)
    if not isinstance(tracker, Tracker):
        raise TypeError(f"tracker {name!r} does not have a track(frames, seed) method")
    return tracker
