"""An item's synchronised views and its rig calibration, as the multi-view metrics read them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics.tracking._sim import StateFileError, read_state
from robojudge.robots import Camera, load_calibration, size_mismatch
from robojudge.suite import Item
from robojudge.suite._views import GridError, cell_size, split_grid, view_sources, views_out_of_step
from robojudge.video import sample_frames


def view_frames(item: Item, instants: int) -> dict[str, np.ndarray]:
    """Each view's RGB frames at ``instants`` instants spread evenly over the rollout, by view name.

    Views given as separate videos are sampled alike (every frame, then ``instants`` of them spread
    evenly), so equal frame counts at one frame rate give the same instants. A grid video is sampled
    once and cut.

    Raises:
        Unmeasurable: the item has fewer than two views.
        MetricInputError: the views differ in frame count or frame rate (by more than
            :data:`robojudge.suite._views.FPS_TOLERANCE`, as ``suite validate`` checks;
            :func:`robojudge.suite.views_out_of_step`), or a grid does not divide the video.
    """
    sources = view_sources(item)
    if len(sources) < 2:
        raise Unmeasurable(f"RIGIS needs at least two views; the item has {len(sources)} (no `views` or "
                           "`grid` naming several)", views=len(sources))
    if item.grid is not None:
        sampled = sample_frames(item.video, fps=None, max_frames=instants)
        try:
            return split_grid(sampled.frames, item.grid)
        except GridError as e:
            raise MetricInputError(f"field grid: {e}") from None
    out: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    rates: dict[str, float] = {}
    for name, src in sources.items():
        s = sample_frames(src.path, fps=None, max_frames=instants)
        out[name] = s.frames
        # An even spread keeps the last frame, so its index tells the view's length.
        counts[name] = int(s.indices[-1]) + 1 if len(s.indices) else 0
        rates[name] = s.source_fps
    why = views_out_of_step(counts, rates)
    if why is not None:
        raise MetricInputError(why)
    return out


TIMING_SIDE = 64
"""Every frame of each view is read with its longer side at most this many pixels for the lag check."""

MOTION_SIDE = 128
"""... and at most this many for the moving-parts check (S_move): a moving arm must span a few pixels."""


def timing_frames(item: Item, side: int = TIMING_SIDE) -> dict[str, np.ndarray]:
    """Every frame of each view, gray and small (longer side at most ``side``: :data:`TIMING_SIDE` for
    the lag check, :data:`MOTION_SIDE` for the moving parts)."""
    from robojudge.video import probe_video

    if item.grid is not None:
        info = probe_video(item.video)
        try:
            cw, ch = cell_size(item.grid, info.width, info.height)
        except GridError as e:
            raise MetricInputError(f"field grid: {e}") from None
        s = min(1.0, side / max(cw, ch))
        cw, ch = max(1, round(cw * s)), max(1, round(ch * s))
        frames = sample_frames(item.video, fps=None, max_frames=None, gray=True,
                               size=(cw * item.grid.cols, ch * item.grid.rows)).frames
        return split_grid(frames, item.grid)
    return {n: sample_frames(src.path, fps=None, max_frames=None, gray=True, size=side).frames
            for n, src in view_sources(item).items()}


def item_cameras(item: Item, names: list[str],
                 sizes: Mapping[str, tuple[int, int]] | None = None) -> dict[str, Camera]:
    """The calibrated camera of each named view: the item's ``calibration`` file, else its state file.

    A simulator state file (docs/sim_suite.md) holds ``K`` per view and ``R``, ``t`` per frame and view;
    the rig is taken as calibrated at frame 0, and the image size as twice the principal point (the
    simulator's cameras have it at the centre). Given ``sizes`` (each view's frames, ``(width, height)``),
    a camera must be for frames of that aspect ratio (:func:`robojudge.robots.size_mismatch`).

    Raises:
        Unmeasurable: the item has neither, or its state file holds no cameras.
        MetricInputError: the calibration cannot be read, lacks one of the views, or is for another
            aspect ratio than a view's frames (a cropped or padded view).
    """
    if item.calibration:
        try:
            cams = load_calibration(item.calibration)
        except ValueError as e:
            raise MetricInputError(f"field calibration: {e}") from None
        source = item.calibration
    elif item.state:
        cams = _state_cameras(Path(item.state))
        source = item.state
    else:
        raise Unmeasurable("no calibration: the item has neither a `calibration` file nor a simulator state "
                           "file with cameras; the weights-free RIGIS needs the rig's K, R, t")
    field = "calibration" if item.calibration else "state"
    missing = [n for n in names if n not in cams]
    if missing:
        raise MetricInputError(f"field {field}: {source}: no camera for view(s) {missing} "
                               f"(it has {sorted(cams)})")
    for n, (w, h) in (sizes or {}).items():
        why = size_mismatch(cams[n], w, h, n) if n in names else None
        if why is not None:
            raise MetricInputError(f"field {field}: {source}: {why}")
    return {n: cams[n] for n in names}


def _state_cameras(path: Path) -> dict[str, Camera]:
    try:
        arrays = read_state(path, ("K", "R", "t", "view_names"))
    except StateFileError as e:  # names the file and why it cannot be read (empty, not an npz ...)
        raise MetricInputError(str(e)) from None
    if len(arrays) < 4:
        raise Unmeasurable(f"no calibration: state file {path} has no cameras (arrays K, R, t, view_names)")
    k, r, t = arrays["K"], arrays["R"], arrays["t"]
    out: dict[str, Camera] = {}
    for i, name in enumerate(str(v) for v in arrays["view_names"]):
        size = (round(2 * float(k[i][0, 2])), round(2 * float(k[i][1, 2])))
        try:
            out[name] = Camera.model_validate(
                {"K": k[i].tolist(), "R": r[0, i].tolist(), "t": t[0, i].tolist(), "size": size}
            )
        except ValueError as e:
            raise MetricInputError(f"{path}: view {name!r}: {e}") from None
    return out
