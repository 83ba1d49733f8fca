"""The tracker interface and its registry: built-ins, ``robojudge.trackers`` entry points, decorators.

A learned tracker (CoTracker, SAM 2, a detector plus association) plugs in by exposing a factory
``(**options) -> Tracker`` either under the ``robojudge.trackers`` entry-point group of its package
(``name = "package.module:factory"``) or by calling :func:`register_tracker` at import time. Entries
are ``"module:attr"`` strings imported only when the tracker is first asked for, so heavy frameworks
stay unloaded until used.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from robojudge.metrics.tracking._types import Tracks, TrackSeed


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

_BUILTIN: dict[str, str] = {"lk_flow": "robojudge.metrics.tracking._flow:FlowTracker"}
_REGISTERED: dict[str, TrackerFactory | str] = {}


def register_tracker(name: str) -> Callable[[TrackerFactory], TrackerFactory]:
    """Decorator registering a tracker factory (a class or a function returning a :class:`Tracker`).

    Raises:
        ValueError: When ``name`` is already taken.
    """

    def deco(factory: TrackerFactory) -> TrackerFactory:
        if name in _known():
            raise ValueError(f"tracker {name!r} is already registered")
        _REGISTERED[name] = factory
        return factory

    return deco


def _known() -> dict[str, TrackerFactory | str]:
    known: dict[str, TrackerFactory | str] = dict(_BUILTIN)
    known.update({ep.name: ep.value for ep in entry_points(group="robojudge.trackers")})
    known.update(_REGISTERED)
    return known


def list_trackers() -> list[str]:
    """Names of the trackers available here, sorted."""
    return sorted(_known())


def _resolve(name: str, entry: TrackerFactory | str) -> TrackerFactory:
    if not isinstance(entry, str):
        return entry
    module, _, attr = entry.partition(":")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"tracker {name!r}: cannot load {entry!r}: {exc}") from exc
    factory: TrackerFactory = obj
    return factory


def get_tracker(name: str = "lk_flow", **options: Any) -> Tracker:
    """Build the tracker registered as ``name`` with ``options``.

    Raises:
        KeyError: For an unknown name; the message suggests close ones.
    """
    known = _known()
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise KeyError(f"unknown tracker {name!r}.{hint} Known: {', '.join(sorted(known))}")
    tracker = _resolve(name, known[name])(**options)
    if not isinstance(tracker, Tracker):
        raise TypeError(f"tracker {name!r} does not have a track(frames, seed) method")
    return tracker
