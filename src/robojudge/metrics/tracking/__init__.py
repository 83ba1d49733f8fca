"""Tracks of objects and the end effector from a (generated) video, for trajectory and localization metrics.

Public API: :class:`Tracker` (the interface learned trackers implement), :func:`get_tracker`,
:func:`register_tracker`, :func:`list_trackers` (over :data:`TRACKERS`, a
:class:`robojudge.registry.Registry`); :class:`Target`, :class:`TrackSeed`, :class:`Tracks`;
:func:`seed_from_state` and :func:`true_tracks` (first-frame seeds and ground-truth tracks from a sim
suite state file). The default tracker ``lk_flow`` needs no weights (:mod:`._flow`). See docs/tracks.md.
"""

from robojudge.metrics.tracking._registry import (
    TRACKERS,
    Tracker,
    get_tracker,
    list_trackers,
    register_tracker,
)
from robojudge.metrics.tracking._sim import SimState, seed_from_state, true_tracks
from robojudge.metrics.tracking._types import Target, Tracks, TrackSeed

__all__ = [
    "TRACKERS",
    "SimState",
    "Target",
    "TrackSeed",
    "Tracker",
    "Tracks",
    "get_tracker",
    "list_trackers",
    "register_tracker",
    "seed_from_state",
    "true_tracks",
]
