"""An item's views: named view videos, or the cells of one stitched grid video, and whether they agree.

A multi-view item gives its views either as ``views`` (one video per view) or as ``grid`` (one
``video`` whose frames are ``rows x cols`` equal cells, named by ``grid.views``). Whoever reads views
asks :func:`view_sources` where each one is and cuts grid cells with :func:`split_grid`, so a metric
sees the same named views either way. :func:`check_views` is what ``suite validate`` reports about
them: views that disagree in frame count or timing, a grid that does not divide the video evenly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from robojudge.suite._schema import Grid, Item

__all__ = ["GridError", "ViewSource", "check_views", "split_grid", "view_sources", "views_out_of_step"]

Finding = tuple[str, str, str]  # (dotted field, message, severity)

FPS_TOLERANCE = 0.01
"""Relative difference of frame rates above which two views are not taken at the same times."""


class GridError(ValueError):
    """A grid video whose frames cannot be cut into the declared cells."""


@dataclass(frozen=True)
class ViewSource:
    """Where one view's frames come from: a video, and the grid cell ``(row, col)`` when stitched."""

    name: str
    path: str
    field: str  # the manifest field naming the video (``views.<name>``, or ``video`` for a grid)
    cell: tuple[int, int] | None = None
    grid: Grid | None = None


def view_sources(item: Item) -> dict[str, ViewSource]:
    """The item's views by name, in manifest order; empty for a single-view item."""
    if item.views is not None:
        return {n: ViewSource(n, p, f"views.{n}") for n, p in item.views.items()}
    if item.grid is not None:
        cells = item.grid.cells().items()
        return {n: ViewSource(n, item.video, "video", cell, item.grid) for n, cell in cells}
    return {}


def cell_size(grid: Grid, width: int, height: int) -> tuple[int, int]:
    """``(width, height)`` of one cell of a ``width x height`` grid video.

    Raises:
        GridError: the width does not divide by ``cols`` or the height by ``rows``.
    """
    bad = []
    if width % grid.cols:
        bad.append(f"width {width} by {grid.cols} columns (remainder {width % grid.cols} px)")
    if height % grid.rows:
        bad.append(f"height {height} by {grid.rows} rows (remainder {height % grid.rows} px)")
    if bad:
        raise GridError(f"a {width}x{height} video does not split into a {grid.rows}x{grid.cols} grid: "
                        f"{' and '.join(bad)} does not divide evenly")
    return width // grid.cols, height // grid.rows


def split_grid(frames: np.ndarray, grid: Grid) -> dict[str, np.ndarray]:
    """Cut ``(T, H, W[, C])`` frames of a grid video into its named views (views of the array, no copy).

    Raises:
        GridError: the frame size does not divide into the grid's cells.
    """
    h, w = int(frames.shape[1]), int(frames.shape[2])
    cw, ch = cell_size(grid, w, h)
    return {n: frames[:, r * ch:(r + 1) * ch, c * cw:(c + 1) * cw] for n, (r, c) in grid.cells().items()}


def views_out_of_step(counts: Mapping[str, int], rates: Mapping[str, float]) -> str | None:
    """Why views of these frame counts and frame rates (by view name; the first view's rate is the
    reference) are not one frame per instant each, or None when they are: frame t of every view is then
    the same instant, as reading them side by side assumes.

    >>> views_out_of_step({"a": 24, "b": 24}, {"a": 10.0, "b": 10.05}) is None
    True
    >>> views_out_of_step({"a": 24, "b": 24}, {"a": 10.0, "b": 20.0})[:64]
    "views are not synchronised: view 'b' runs at 20 fps, view 'a' at"
    """
    if len(set(counts.values())) > 1:
        return (f"views are not synchronised: frame counts {dict(counts)} (robojudge suite validate --deep "
                "names the view that disagrees)")
    if not rates:
        return None
    # Equal counts at different rates are different instants (a view re-encoded at twice the rate).
    ref, r = next(iter(rates.items()))
    for name, v in rates.items():
        if abs(v - r) > FPS_TOLERANCE * r:
            return (f"views are not synchronised: view {name!r} runs at {v:g} fps, view {ref!r} at {r:g} fps "
                    f"({100 * (v / r - 1):+.1f}%); frame t of each is not the same instant (robojudge suite "
                    "validate names every view that disagrees)")
    return None


@dataclass(frozen=True)
class _Timing:
    frames: int | None
    fps: float
    duration: float | None
    width: int
    height: int


def _timing(path: str, deep: bool) -> _Timing:
    from robojudge.video import probe_video, sample_frames

    info = probe_video(path)
    if not deep:
        return _Timing(info.frame_count, info.fps, info.duration, info.width, info.height)
    sampled = sample_frames(path, fps=None, max_frames=None, size=(16, 16))
    n = len(sampled.frames)
    span = float(sampled.timestamps[-1]) + 1.0 / sampled.source_fps if n else None
    return _Timing(n, sampled.source_fps, span, info.width, info.height)


def _disagreements(timings: dict[str, _Timing], fields: dict[str, str]) -> list[Finding]:
    """Findings for views whose frame count or rate differs from the first view's (the reference)."""
    out: list[Finding] = []
    names = list(timings)
    ref = names[0]
    r = timings[ref]
    for n in names[1:]:
        v = timings[n]
        if r.frames is not None and v.frames is not None and v.frames != r.frames:
            diff = v.frames - r.frames
            more = f"{abs(diff)} {'more' if diff > 0 else 'fewer'}"
            out.append((fields[n], f"view {n!r} has {v.frames} frames, view {ref!r} has {r.frames} ({more}); "
                        "synchronised views have one frame per instant each", "error"))
        if abs(v.fps - r.fps) > FPS_TOLERANCE * max(r.fps, 1e-9):
            pct = 100 * (v.fps / r.fps - 1)
            out.append((fields[n], f"view {n!r} runs at {v.fps:g} fps, view {ref!r} at {r.fps:g} fps "
                        f"({pct:+.1f}%); frame t of each is not the same instant", "error"))
            continue
        # Counts unknown (the container does not say): compare how long each lasts instead.
        unknown = r.frames is None or v.frames is None
        if unknown and r.duration is not None and v.duration is not None \
                and abs(v.duration - r.duration) > 1.0 / max(r.fps, 1e-9):
            out.append((fields[n], f"view {n!r} lasts {v.duration:.3f} s, view {ref!r} {r.duration:.3f} s "
                        f"({v.duration - r.duration:+.3f} s, more than one frame)", "error"))
    return out


def check_views(item: Item, *, deep: bool = False) -> list[Finding]:
    """What is wrong with how an item's views fit together, as ``(field, message, severity)``.

    A ``views`` item: every view must have the frame count and rate of the first view (with ``deep``
    the frames are counted by decoding, else read from the container; a container that does not say
    its frame count is compared by duration). A ``grid`` item: the video must divide into the cells.
    A video that cannot be read is left to the media check, which reports it.
    """
    from robojudge.video import VideoError

    if item.grid is not None:
        try:
            info = _timing(item.video, deep=False)
            cell_size(item.grid, info.width, info.height)
        except VideoError:
            return []
        except GridError as e:
            return [("grid", str(e), "error")]
        return []
    sources = view_sources(item)
    if len(sources) < 2:
        return []
    timings: dict[str, _Timing] = {}
    for name, src in sources.items():
        try:
            timings[name] = _timing(src.path, deep)
        except VideoError:
            continue
    return _disagreements(timings, {n: s.field for n, s in sources.items()})
