"""KIVA on multi-view items: each calibrated view read by the reader, triangulated, rigidity in 3D.

An item qualifies when it has two or more ``views`` and a ``calibration`` that names at least two of
them (docs/manifest.md). Each such view is read by the reader (five candidates, as the main view), the
readings are triangulated (:func:`triangulate`, a DLT with a reprojection-error check), and each
segment's rigidity is the largest coefficient of variation of a rigid link's length in metres. Whatever
stops that (one view, no calibration, views out of step or framed otherwise than calibrated, a reader
without a 3D threshold) is said in a reason, and the 2D measure of the main view stands. A grid video's
cells are not triangulated here: of a grid item with a ``main_view``, KIVA reads that view's cell, as every
metric that reads one video does, and measures in 2D (without a ``main_view`` it skips the item).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robojudge.kiva._score import SegmentVerdict, Thresholds, Tracks, frozen_span, judge_segments
from robojudge.kiva._triangulate import (
    MAX_ERROR,
    MIN_LINK_M,
    Triangulated,
    cameras_for_views,
    projection_matrix,
    segment_rigidity_3d,
    triangulate,
)
from robojudge.suite import Item

__all__ = [
    "MAX_ERROR",
    "MIN_LINK_M",
    "Triangulated",
    "ViewOffCalibration",
    "ViewReadings",
    "ViewsOutOfStep",
    "apply_3d",
    "calibrated_views",
    "projection_matrix",
    "read_views",
    "segment_rigidity_3d",
    "segment_values_3d",
    "triangulate",
]

Read = Callable[[np.ndarray, float], Tracks]
"""A reader run on ``(T, H, W, 3)`` frames at a frame rate (``robojudge.kiva.read_frames`` bound to one)."""


@dataclass
class ViewReadings:
    """Every calibrated view of an item read by a reader, ready to triangulate."""

    names: list[str]
    positions: np.ndarray  # (T, V, K, 2) pixels of each view's own frames
    visible: np.ndarray  # (T, V, K)
    projections: np.ndarray  # (V, 3, 4) in those pixels
    diagonal: float  # mean image diagonal of the views, pixels
    # (T, V) frames that repeat the view's previous frame (held_frames); None: not known. A span frozen in
    # any view (frozen_span) gives no 3D value: that view's reading there is one stale picture.
    held: np.ndarray | None = None


def calibrated_views(item: Item) -> tuple[dict[str, Any], str | None]:
    """The item's views that its calibration describes (name -> Camera), or a reason there are not two."""
    views = item.views or {}
    if item.grid is not None:
        return {}, ("the item's views are cells of one grid video, which are not triangulated: rigidity is "
                    "measured in 2D on its main view's cell")
    if len(views) < 2:
        return {}, "the item has one view: rigidity is measured in 2D"
    if not item.calibration:
        return {}, "the item's views have no calibration: rigidity is measured in 2D"
    from robojudge.robots import load_calibration

    try:
        cams = load_calibration(item.calibration)
    except ValueError as exc:
        return {}, f"its calibration cannot be read ({exc}): rigidity is measured in 2D"
    usable = {v: cams[v] for v in views if v in cams}
    if len(usable) < 2:
        return {}, f"the calibration describes {len(usable)} of the item's views: rigidity is measured in 2D"
    return usable, None


class ViewsOutOfStep(ValueError):
    """The calibrated views of an item are not one frame per instant each (frame counts or frame rates
    differ): frame t of one is not frame t of another, so they cannot be triangulated frame by frame. The
    message names the views; the metrics measure rigidity in 2D and say so."""


class ViewOffCalibration(ValueError):
    """A calibrated view whose frames have another aspect ratio than its calibration's ``size`` (a crop
    or padding): its readings cannot be placed on the calibrated rays. The message names the view and
    both sizes; the metrics measure rigidity in 2D and say so."""


def read_views(read: Read, item: Item, cameras: dict[str, Any],
               main: tuple[str, Tracks] | None = None) -> ViewReadings:
    """Read each calibrated view of ``item`` with ``read`` (``main``: a view already read, reused).

    Raises:
        ViewsOutOfStep: A view's frame count or frame rate differs from the first view's (``main``'s
            when given; :func:`robojudge.suite.views_out_of_step`, as the RIGIS metrics and ``suite
            validate`` compare them).
        ViewOffCalibration: A view's frames have another aspect ratio than its calibration's ``size``
            (:func:`robojudge.robots.size_mismatch`).

        Both are checked as each view is decoded, before the reader reads it.
    """
    from robojudge.robots import size_mismatch
    from robojudge.suite import views_out_of_step
    from robojudge.video import sample_frames

    def framed(name: str, width: int, height: int) -> None:
        why = size_mismatch(cameras[name], width, height, name)
        if why is not None:
            raise ViewOffCalibration(f"field calibration: {item.calibration}: {why}")

    names = list(cameras)
    tracks: dict[str, Tracks] = {}
    ref = (main[0], len(main[1].positions), float(main[1].fps)) if main is not None else None
    if main is not None and main[0] in cameras:
        framed(main[0], main[1].width, main[1].height)
    for name in names:
        if main is not None and name == main[0]:
            tracks[name] = main[1]
            continue
        assert item.views is not None  # calibrated_views found two
        clip = sample_frames(item.views[name], fps=None, max_frames=None)
        framed(name, int(clip.frames.shape[2]), int(clip.frames.shape[1]))
        fps = float(clip.source_fps)
        if ref is None:
            ref = (name, len(clip.frames), fps)
        else:
            why = views_out_of_step({ref[0]: ref[1], name: len(clip.frames)}, {ref[0]: ref[2], name: fps})
            if why is not None:
                raise ViewsOutOfStep(why)
        tracks[name] = read(clip.frames, fps)
    n = min(len(t.positions) for t in tracks.values())  # equal: every view was checked against the first
    pos = np.stack([tracks[v].positions[:n] for v in names], axis=1)
    vis = np.stack([tracks[v].visible[:n] for v in names], axis=1)
    sizes = {v: (tracks[v].width, tracks[v].height) for v in names}
    diag = float(np.mean([tracks[v].diagonal for v in names]))
    held = None
    if all(tracks[v].held is not None for v in names):
        held = np.stack([np.asarray(tracks[v].held, dtype=bool)[:n] for v in names], axis=1)
    return ViewReadings(names, pos, vis, cameras_for_views(cameras, names, sizes), diag, held)


def segment_values_3d(
    readings: ViewReadings,
    links: Sequence[tuple[int, int]],
    spans: Sequence[tuple[int, int]],
    *,
    max_error: float = MAX_ERROR,
    min_link: float = MIN_LINK_M,
) -> list[tuple[float, int]]:
    """3D rigidity ``(value, links measured)`` per span, the readings triangulated with a reprojection
    error of at most ``max_error`` of the views' diagonal. A span frozen in any view (``readings.held``)
    is ``(nan, 0)``: unmeasured, as a frozen segment is in 2D, and never a reference for the 3D threshold."""
    tri = triangulate(readings.positions, readings.visible, readings.projections,
                      max_error=max_error * readings.diagonal)
    out = segment_rigidity_3d(tri.points, tri.ok, links, spans, min_link)
    if readings.held is None:
        return out
    views = range(readings.held.shape[1])
    return [(math.nan, 0) if any(frozen_span(readings.held[:, v], a, b) for v in views) else value
            for value, (a, b) in zip(out, spans, strict=True)]


def apply_3d(
    verdicts: Sequence[SegmentVerdict],
    values_3d: Sequence[tuple[float, int]],
    cuts: Thresholds,
    cut_3d: float,
) -> tuple[list[SegmentVerdict], list[str]]:
    """Verdicts with the 3D rigidity (judged against ``cut_3d``) wherever a segment has one, and which
    measure each segment's rigidity is (``3d`` or ``2d``). A frozen segment (:attr:`SegmentValues.frozen`)
    stays unmeasured whatever the other views give."""
    cuts_3d = dataclasses.replace(cuts, rigidity=cut_3d)
    out, measures = [], []
    for v, (r3, _) in zip(verdicts, values_3d, strict=True):
        if math.isnan(r3) or v.values.frozen:
            out.append(v)
            measures.append("2d")
            continue
        out.append(judge_segments([dataclasses.replace(v.values, rigidity=r3)], cuts_3d)[0])
        measures.append("3d")
    return out, measures
