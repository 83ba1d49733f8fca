"""Optical flow of an item's frames, computed once for every metric that reads it.

Five weights-free metrics read optical flow between consecutive frames: ``flow_warp_error`` and
``flow_motion_magnitude_farneback`` (Farneback) on the 8 fps 256x256 gray sampling, and
``mq_dynamic_degree``, ``mq_flow_score`` and ``cc_photometric`` (DIS by default) on the native gray
frames (dynamic degree after its ~8 fps stride). Inside the runner's frame cache the metrics that read
the same frames get the same read-only array (:mod:`robojudge.metrics._derived`), so an array and the
estimator with its settings identify a flow.
Flow is most of these metrics' cost (about 0.24 s per pair of 720p frames on one core), and each of
them used to compute its own, ``cc_photometric`` in both directions.

What is kept is not the flow fields but what the metrics read from them, per step
(:class:`~robojudge.metrics.functional.FlowSteps`: mean and top-5% magnitude, warp residual,
forward-backward end-point error): the fields of a 10 s 720p clip would take 2.2 GB per direction, the
steps a few kilobytes. So a request must say up front what it may need. A metric that needs no backward
flow but reads the native frames ``cc_photometric`` reads (``share_backward``) has the backward flow and
its end-point errors computed too, at ``cc_photometric``'s default crop, when the frames are shared:
in a run of all flow metrics the native flows are then computed once per direction (two Farneback
calls per pair instead of four), at the price of a second call per pair for ``mq_flow_score`` or
``mq_dynamic_degree`` scored alone. The runner says which metrics a task computes
(:func:`flow_readers`): when none of them reads the backward flow, none is computed ahead, so
``mq_flow_score`` scored without ``cc_photometric`` costs one Farneback call per pair. Frames that are
not shared (a metric called outside a frame cache) get only what the request needs.

Entries live as long as the frame array (:func:`robojudge.metrics._derived.derived`): one item.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from robojudge.metrics import functional as F
from robojudge.metrics._derived import derived, frozen

#: ``cc_photometric``'s default crop, the one computed ahead for it when a request shares its frames.
SHARED_CROP = 30
#: The top fraction ``cc_photometric``'s soft motion reads: only an entry with it can serve that metric.
PHOTOMETRIC_TOP = 0.05


#: Metrics that read the backward flow of the native frames, the one computed ahead for them.
BACKWARD_READERS = frozenset({"cc_photometric"})
# Whether a reader of the backward flow may come in the current block; True where nobody said (a
# frame cache opened by user code), so a later cc_photometric still finds its flow.
_BACKWARD_EXPECTED: ContextVar[bool] = ContextVar("flow_backward_expected", default=True)


@contextmanager
def flow_readers(metric_ids: Iterable[str]) -> Iterator[None]:
    """Inside the block, compute the backward flow ahead only if one of ``metric_ids`` reads it."""
    token = _BACKWARD_EXPECTED.set(not BACKWARD_READERS.isdisjoint(metric_ids))
    try:
        yield
    finally:
        _BACKWARD_EXPECTED.reset(token)


class _Steps:
    """The :class:`~robojudge.metrics.functional.FlowSteps` computed so far for one array and settings."""

    def __init__(self) -> None:
        self.entries: list[F.FlowSteps] = []
        self.lock = threading.Lock()

    def find(self, top_fraction: float, crop: int | None, warp: bool) -> F.FlowSteps | None:
        with self.lock:
            for e in self.entries:
                if (e.top_fraction == top_fraction and (crop is None or e.crop == crop)
                        and (not warp or e.warp_residual is not None)):
                    return e
        return None

    def add(self, steps: F.FlowSteps) -> None:
        with self.lock:
            self.entries.append(steps)


def _settings_key(s: F.FarnebackSettings, shape: tuple[int, ...]) -> tuple[object, ...]:
    """What identifies a flow: DIS and its preset for these frames, or Farneback and its six settings (and
    the precision of the magnitudes the cached steps hold)."""
    estimator, preset = F.estimator_of(s)
    magnitude = getattr(s, "magnitude_dtype", "float64")  # the steps hold magnitudes of that precision
    if estimator == "dis":
        return ("dis", F.dis_preset_for(shape[-2], shape[-1], preset), magnitude)
    return ("farneback", float(s.pyr_scale), int(s.levels), int(s.winsize), int(s.iterations), int(s.poly_n),
            float(s.poly_sigma), magnitude)


def flow_steps(gray: np.ndarray, settings: F.FarnebackSettings = F.FARNEBACK, *, top_fraction: float = 0.05,
               crop: int | None = None, share_backward: bool = False, warp: bool = False,
               pair_step: int = 1) -> F.FlowSteps:
    """:func:`robojudge.metrics.functional.flow_steps` of ``gray``, computed once per array and request.

    A cached entry serves a request with the same settings and ``top_fraction`` whose ``crop`` it has
    (any entry when ``crop`` is None) and, with ``warp``, the warp residuals (the two RoboJudge flow
    metrics both ask for them, so they share one entry; the native-size trio reads none).
    ``share_backward``: see the module docstring. Other settings or
    parameters compute their own flows; values never depend on what was cached, only time does.
    ``pair_step`` (the fast profile's every other pair) is part of what identifies the flows.
    """
    store = derived(gray, ("flow_steps", _settings_key(settings, gray.shape), pair_step), _Steps)
    hit = store.find(top_fraction, crop, warp)
    if hit is not None:
        return hit
    if (crop is None and share_backward and _BACKWARD_EXPECTED.get() and top_fraction == PHOTOMETRIC_TOP
            and frozen(gray) and min(gray.shape[1:3]) > SHARED_CROP):
        crop = SHARED_CROP
    steps = F.flow_steps(gray, settings, top_fraction=top_fraction, crop=crop, warp=warp, pair_step=pair_step)
    store.add(steps)
    return steps
