"""Whether a video looks like several views tiled in one frame, a grid no manifest declares.

A model that writes its cameras side by side or 2x2 gives one video whose every frame is a mosaic.
Declared as a ``grid`` (docs/manifest.md, "Grid videos"), its cells are read as views; undeclared, every
single-view metric and judge reads the mosaic as one camera's picture, and a failure in one cell (a
drifting camera) can hide behind the steady others. :func:`find_tiling` looks for the two marks such a
mosaic leaves, on a few frames read small:

* **seams**: the line between two cells, at ``W/k`` or ``H/k`` (``k`` = 2, 3 or 4), where the picture
  jumps from one view to another. Along most of the line the jump across it is much larger than the
  change between the columns (rows) on either side, and it does so in every frame read: a boundary that
  stays put. A layout is found when every line between its cells is such a seam; or when each is one in
  the median frame and more of them stay put in every frame than not (two cells whose edges happen to
  match in one frame leave their line without a jump there: a 2x3 mosaic is still read as 2x3 with one
  of its lines unsteady). A fuller layout of lines that jump in the median frame but not in every frame
  is named as possible beside the one found.
* **a blank cell**: a cell that is one flat colour in every frame (a padding tile, a view that failed)
  while the rest of the frame is not, and whose sides inside the frame are seams.

A seam must also stand alone: the lines 2 pixels beside it, and 8, 16 and 32 pixels of the video away,
do not jump as often (a fine texture, a codec's blocks or a test pattern of blocks jump alike on many
lines), and two cells at least must show a picture.

Both marks are what tiling leaves and a camera's picture almost never shows: an edge of the scene that
runs the whole height of the frame exactly at its middle, in frame after frame. A fixed camera can show
just that (a door jamb at ``x = W/2``, a table edge at ``y = H/2``, to within a few pixels), and then
every clip it records looks like a 1x2 or 2x1 grid: the warning for a two-cell layout found by its one
seam alone (with no fuller layout possible) says so, and that a single camera's video should not be
declared a grid. Views that meet without
a visible seam (the same flat background at every edge) and have no blank cell are not found.
:func:`tiling_warning` says it in words, once per file while the file is unchanged; ``suite validate``
reports it on the item's ``video``, and a score or judge run adds it to the rows of what reads the video
as one camera's (``details.video_warnings``).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Tiling", "find_tiling", "look_for_tiling", "read_size", "tiling_in", "tiling_known", "tiling_sampling",
    "tiling_warning",
]

CELLS = (2, 3, 4)
"""Cells per row or column looked for."""

SIDE = 192
"""Longer side of the frames read (at most: a smaller video is read at its own size)."""

FRAMES = 6
RATE = 2.0
"""The frames read: up to :data:`FRAMES` from the start, :data:`RATE` per second."""

SEAM_SHARE = 0.3
"""Share of a line's length that must jump across it, in the median frame, for a seam."""

STEADY_SHARE = 0.2
"""Share that must jump in every frame read: a seam stays put."""

STEADY = "steady"
MEDIAN = "median"
"""How a line is a seam (:func:`_seams`): in every frame read, or in the median frame only."""

ALONE = 2.0
"""How many times the share of the lines near it (:data:`NEAR`, :data:`BLOCKS`) a seam's share must be:
a fine texture jumps on line after line, the edges of a codec's blocks (or of a pattern of blocks) alike
every 4, 8, 16 or 32 pixels."""

NEAR = (2,)
"""Distances (in the pixels read) of lines a seam is compared with."""

BLOCKS = (8, 16, 32)
"""Distances (in the video's pixels) of lines a seam is compared with."""

JUMP = 2.0
JUMP_MARGIN = 3.0
"""A stretch of a line jumps when the change across it exceeds ``JUMP`` times the larger change between
the two pixel columns (rows) beside it, plus ``JUMP_MARGIN`` grey levels (codec noise)."""

FLAT_STD = 3.0
"""Largest standard deviation (grey levels, per colour channel) of a flat cell: a cell of a frame whose
pixels have at most this one shows no picture; a blank cell is flat over every frame read at once."""

BLANK_SIDE_SHARE = 0.6
"""Share of each inner side of a blank cell that must jump across it."""


@dataclass(frozen=True)
class Tiling:
    """A layout the frames look tiled in.

    Attributes:
        rows, cols: The grid found.
        width, height: The video's size.
        seams: The lines found to be seams that stay put, as ``"x=320"`` or ``"y=240"`` (in the video's
            pixels).
        blank: ``(row, col)`` of each blank cell (counted from 0).
        frames: How many frames were read.
        unsteady: The lines of the layout that are seams in the median frame but not in every frame read.
        possibly: A fuller layout ``(rows, cols)`` whose further lines (``possibly_seams``) are seams in the
            median frame but not in every frame read, or ``None``.
    """

    rows: int
    cols: int
    width: int
    height: int
    seams: tuple[str, ...]
    blank: tuple[tuple[int, int], ...]
    frames: int
    unsteady: tuple[str, ...] = ()
    possibly: tuple[int, int] | None = None
    possibly_seams: tuple[str, ...] = ()

    def message(self) -> str:
        """The warning ``suite validate`` and the score and judge runs give."""
        return (f"{self.finding()}: "
                "metrics that read one camera's video, and judges, take the whole mosaic for one picture; "
                "if it holds several views, declare them as the item's grid with its main view (\"grid\": "
                f"{{\"rows\": {self.rows}, \"cols\": {self.cols}, \"views\": [...]}}, \"main_view\": ...; "
                f"robojudge suite scan --grid {self.rows}x{self.cols} --grid-views ... --main-view ...): "
                "single-view metrics and judges then read the main view's cell, multi-view metrics every "
                "cell; declared without a main_view, single-view metrics skip the item (docs/manifest.md, "
                "\"Grid videos\")")

    def reference_message(self) -> str:
        """The warning a score run gives when an item's ``reference_video`` looks tiled: the metrics that
        compare the video with it take the mosaic for the one camera the video shows."""
        return (f"the reference video: {self.finding()}: metrics that compare the item's video with its "
                "reference take the whole mosaic for the camera the video shows (a single view scaled to "
                "the mosaic's size and compared with all of it); if it holds several views, give the item "
                "a reference of the one view its video shows")

    def finding(self) -> str:
        """What was found: the grid and the marks of it."""
        marks = []
        if self.seams:
            marks.append(f"straight seams at {', '.join(self.seams)} that stay put over the {self.frames} "
                         f"frame{'s' if self.frames != 1 else ''} read")
        if self.unsteady:
            marks.append(f"at {', '.join(self.unsteady)} in half of them or more (not in every one: two "
                         "cells' edges can match in a frame)")
        if self.blank:
            cells = ", ".join(f"row {r + 1} column {c + 1}" for r, c in self.blank)
            marks.append(f"a blank cell ({cells})")
        more = ""
        if self.possibly is not None:
            rows, cols = self.possibly
            lines = ", ".join(self.possibly_seams)
            verb = "is a seam" if len(self.possibly_seams) == 1 else "are seams"
            more = (f"; possibly a {rows}x{cols} grid: {lines} {verb} in half the frames read or more, not "
                    "in every one")
        # Two cells met at one line, with no blank cell and no sign of more: a scene edge on the centre line
        # leaves that too.
        edge = ("; a straight edge of the scene on the frame's centre line (a door frame, a table edge) "
                "looks the same: ignore this for a single camera"
                if self.rows * self.cols == 2 and not self.blank and self.possibly is None else "")
        return (f"its frames look like a {self.rows}x{self.cols} grid of views ({' and '.join(marks)}){more}"
                f"{edge}")


def read_size(width: int, height: int) -> tuple[int, int]:
    """The size a ``width x height`` video is read at: the longer side at most :data:`SIDE`, each side a
    multiple of every count of :data:`CELLS` it divides by, so each line between cells falls between two
    pixels of the smaller frame as it does in the video."""
    scale = min(1.0, SIDE / max(width, height))
    if scale >= 1.0:
        return width, height

    def side(n: int) -> int:
        step = math.lcm(*[k for k in CELLS if n % k == 0] or [1])
        return max(step, round(n * scale / step) * step)

    return side(width), side(height)


def _shares(frames: np.ndarray) -> np.ndarray:
    """``(T, w)``: per frame, the share of each vertical line (between columns ``x - 1`` and ``x``) that
    jumps across it (see :data:`JUMP`), measured on bands of a few rows; 0 for the lines next to the
    frame's edges, which have no column beside them on one side."""
    n, h, w = frames.shape[:3]
    across = np.zeros((n, h, w), np.int16)
    across[:, :, 1:] = np.abs(np.diff(frames, axis=2)).max(-1)
    beside = np.maximum(across[:, :, 1:-2], across[:, :, 3:])  # the lines of columns 2 .. w-2
    band = max(1, h // 24)
    bands = h // band
    out = np.zeros((n, w))
    if bands == 0 or w < 5:
        return out
    mean_across = across[:, :bands * band, 2:-1].reshape(n, bands, band, w - 3).mean(2)
    mean_beside = beside[:, :bands * band].reshape(n, bands, band, w - 3).mean(2)
    out[:, 2:-1] = (mean_across > JUMP * mean_beside + JUMP_MARGIN).mean(1)
    return out


def _seams(shares: np.ndarray, lines: list[int], scale: float) -> dict[int, str | None]:
    """Which of ``lines`` are seams: they jump along :data:`SEAM_SHARE` of their length in the median
    frame, and :data:`ALONE` times as much as the lines :data:`NEAR` pixels read, and :data:`BLOCKS` pixels
    of the video (``scale`` read pixels each), away on either side. :data:`STEADY` when they also jump along
    :data:`STEADY_SHARE` in every frame, else :data:`MEDIAN`; ``None`` for a line that is no seam."""
    typical = np.median(shares, axis=0)
    w = shares.shape[1]
    steps = sorted({*NEAR, *(max(2, round(d * scale)) for d in BLOCKS)})
    out: dict[int, str | None] = {}
    for at in lines:
        near = [typical[at + sign * d] for d in steps for sign in (-1, 1) if 0 <= at + sign * d < w]
        alone = typical[at] >= ALONE * max(near, default=0.0)
        if typical[at] >= SEAM_SHARE and alone:
            out[at] = STEADY if shares[:, at].min() >= STEADY_SHARE else MEDIAN
        else:
            out[at] = None
    return out


def find_tiling(frames: np.ndarray, width: int, height: int) -> Tiling | None:
    """The grid ``frames`` look tiled in, or ``None``.

    A grid of views shows a picture in two cells at least: a picture beside flat bands is a padded frame
    (or a test pattern), and a mosaic of flat blocks is no views either.

    Args:
        frames: ``(T, h, w, 3)`` (or ``(T, h, w)``) frames of the video read at :func:`read_size`.
        width, height: The video's own size: only counts of cells it divides into are looked for.
    """
    pixels = frames.astype(np.int16)
    if pixels.ndim == 3:
        pixels = pixels[..., None]
    n, h, w = pixels.shape[:3]
    if n == 0 or min(h, w) < 8:
        return None
    turned = pixels.transpose(0, 2, 1, 3)  # rows as columns: horizontal lines are read as vertical ones
    cells = _Cells(pixels)

    def lines(k: int, size: int) -> list[int]:
        return [j * size // k for j in range(1, k)]

    cols = [k for k in CELLS if width % k == 0 and w % k == 0]
    rows = [k for k in CELLS if height % k == 0 and h % k == 0]
    seam_x = _seams(_shares(pixels), sorted({at for k in cols for at in lines(k, w)}), w / width)
    seam_y = _seams(_shares(turned), sorted({at for k in rows for at in lines(k, h)}), h / height)

    def marks(r: int, c: int) -> list[tuple[str, str | None]]:
        """The lines of an ``r x c`` layout, named in the video's pixels, and how each is a seam."""
        return ([(f"x={width * at // w}", seam_x[at]) for at in lines(c, w)]
                + [(f"y={height * at // h}", seam_y[at]) for at in lines(r, h)])

    # Layouts whose every line is a seam in the median frame at least, the fullest first.
    seamed = sorted(((r, c) for r in [1, *rows] for c in [1, *cols] if r * c > 1
                     and all(how is not None for _, how in marks(r, c))), key=lambda rc: -rc[0] * rc[1])
    # The fullest of them whose lines stay put more often than not (every one, or all but fewer).
    found = next(((r, c) for r, c in seamed
                  if 2 * sum(how == STEADY for _, how in marks(r, c)) > len(marks(r, c))), None)
    if found is not None and cells.pictures(*found) >= 2:
        r, c = found
        steady = tuple(at for at, how in marks(r, c) if how == STEADY)
        unsteady = tuple(at for at, how in marks(r, c) if how != STEADY)
        # The fullest layout of seams holding it, named when it has more cells (its further lines unsteady).
        fuller = next((rc for rc in seamed if rc[0] % r == 0 and rc[1] % c == 0 and rc != found
                       and cells.pictures(*rc) >= 2), None)
        more = () if fuller is None else tuple(at for at, _ in marks(*fuller) if at not in steady + unsteady)
        blank = _blank_cells(pixels, turned, cells, r, c)
        return Tiling(r, c, width, height, steady, tuple(blank), n, unsteady, fuller, more)
    # No layout of seams: a blank cell whose inner sides are seams, in the layout with the fewest cells.
    # (of two cells, a blank one leaves a single picture)
    layouts = sorted(((r, c) for r in [1, *rows] for c in [1, *cols] if r * c > 2),
                     key=lambda rc: rc[0] * rc[1])
    for r, c in layouts:
        blank = _blank_cells(pixels, turned, cells, r, c)
        if blank and cells.pictures(r, c) >= 2:
            return Tiling(r, c, width, height, (), tuple(blank), n)
    return None


class _Cells:
    """The spread of the pixels of any rectangle of the frames (standard deviation, per colour channel,
    the largest), per frame and over every frame, from sums kept as integral images: a cell costs a few
    looks whatever its size."""

    def __init__(self, pixels: np.ndarray) -> None:
        values = pixels.astype(np.float64)
        self.sums = [np.pad(part.cumsum(1).cumsum(2), ((0, 0), (1, 0), (1, 0), (0, 0)))
                     for part in (values, values * values)]
        self.height, self.width = pixels.shape[1:3]

    def per_frame(self, y0: int, y1: int, x0: int, x1: int) -> np.ndarray:
        """``(T,)``: the spread of the rectangle ``[y0, y1) x [x0, x1)`` in each frame."""
        return self._spread(*self._sums(y0, y1, x0, x1), (y1 - y0) * (x1 - x0))

    def overall(self, y0: int, y1: int, x0: int, x1: int) -> float:
        """The spread of the rectangle over every frame at once (what a cell flat in all of them has)."""
        s1, s2 = self._sums(y0, y1, x0, x1)
        n = (y1 - y0) * (x1 - x0) * s1.shape[0]
        return float(self._spread(s1.sum(0, keepdims=True), s2.sum(0, keepdims=True), n)[0])

    def _sums(self, y0: int, y1: int, x0: int, x1: int) -> tuple[np.ndarray, np.ndarray]:
        s1, s2 = (t[:, y1, x1] - t[:, y0, x1] - t[:, y1, x0] + t[:, y0, x0] for t in self.sums)
        return s1, s2  # (T, C): the sum and the sum of squares per frame and channel

    @staticmethod
    def _spread(s1: np.ndarray, s2: np.ndarray, n: int) -> np.ndarray:
        spread: np.ndarray = np.sqrt(np.maximum(s2 / n - (s1 / n) ** 2, 0.0)).max(-1)
        return spread

    def pictures(self, rows: int, cols: int) -> int:
        """How many cells of a ``rows x cols`` layout show a picture (are not flat) in the median frame."""
        ch, cw = self.height // rows, self.width // cols
        return sum(float(np.median(self.per_frame(r * ch, (r + 1) * ch, c * cw, (c + 1) * cw))) > FLAT_STD
                   for r in range(rows) for c in range(cols))


def _blank_cells(
    pixels: np.ndarray, turned: np.ndarray, cells: _Cells, rows: int, cols: int
) -> list[tuple[int, int]]:
    """The cells of a ``rows x cols`` layout that are one flat colour in every frame, while the frame is
    not, and whose sides inside the frame are seams along the cell."""
    h, w = pixels.shape[1:3]
    if cells.overall(0, h, 0, w) <= FLAT_STD:
        return []
    ch, cw = h // rows, w // cols
    out = []
    for r in range(rows):
        for c in range(cols):
            y0, y1, x0, x1 = r * ch, (r + 1) * ch, c * cw, (c + 1) * cw
            if cells.overall(y0, y1, x0, x1) > FLAT_STD:
                continue
            sides = [float(np.median(_shares(pixels[:, y0:y1])[:, x])) for x in (x0, x1) if 2 <= x <= w - 2]
            sides += [float(np.median(_shares(turned[:, x0:x1])[:, y])) for y in (y0, y1) if 2 <= y <= h - 2]
            if sides and min(sides) >= BLANK_SIDE_SHARE:
                out.append((r, c))
    return out


def tiling_sampling(path: str | Path) -> dict[str, Any]:
    """The frames the check reads of the video at ``path``: keyword arguments of
    :func:`robojudge.video.sample_frames` (:data:`FRAMES` frames from its start, :data:`RATE` per second,
    at :func:`read_size`). A score run reads them in the pass that reads the video for its metrics.

    Raises:
        VideoError: The video cannot be probed.
    """
    from robojudge.video import probe_video

    info = probe_video(path)
    return {"fps": RATE, "max_frames": FRAMES, "size": read_size(info.width, info.height), "spread": "head"}


def look_for_tiling(path: str | Path) -> Tiling | None:
    """Read a few frames of the video at ``path`` small (:func:`tiling_sampling`, through the open frame
    cache) and look for tiling (:func:`find_tiling`); ``None`` also when the video cannot be read (what
    is wrong with it is reported elsewhere)."""
    from robojudge.video import VideoError, probe_video, sample_frames

    try:
        info = probe_video(path)
        frames = sample_frames(path, **tiling_sampling(path)).frames
    except (VideoError, ValueError, OSError):  # reported by the media check, or by what reads the video
        return None
    return find_tiling(frames, info.width, info.height)


def tiling_in(frames: np.ndarray, width: int, height: int) -> Tiling | None:
    """:func:`find_tiling` on frames read another way (a judge's: spread over the whole video, at its
    size or at the judge's): :data:`FRAMES` of them, evenly spread, resized to :func:`read_size` of the
    video's ``width x height``."""
    import cv2

    if len(frames) == 0:
        return None
    picked = sorted(set(np.linspace(0, len(frames) - 1, min(FRAMES, len(frames))).round().astype(int)))
    size = read_size(width, height)
    shrink = size[0] * size[1] < frames.shape[1] * frames.shape[2]
    interp = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
    return find_tiling(np.stack([cv2.resize(frames[i], size, interpolation=interp) for i in picked]),
                       width, height)


_SEEN: OrderedDict[object, Tiling | None] = OrderedDict()
_SEEN_LOCK = threading.Lock()
_SEEN_MAX = 1024


def _key(path: str | Path) -> object | None:
    from robojudge.video import FileFingerprint

    try:
        return FileFingerprint.of(Path(path))
    except OSError:
        return None


def tiling_known(path: str | Path) -> bool:
    """Whether :func:`tiling_warning` knows ``path`` as it is now (and would read nothing)."""
    key = _key(path)
    with _SEEN_LOCK:
        return key is not None and key in _SEEN


def tiling_warning(path: str | Path, reference: bool = False) -> str | None:
    """The warning of :func:`look_for_tiling` for ``path`` (``None`` when it finds nothing), looked for once
    per file while its size and modification time are unchanged: every metric of a run asks.
    ``reference``: ``path`` is an item's reference video (:meth:`Tiling.reference_message`)."""
    key = _key(path)
    if key is None:
        return None
    with _SEEN_LOCK:
        known = key in _SEEN
        if known:
            _SEEN.move_to_end(key)
            found = _SEEN[key]
    if not known:
        found = look_for_tiling(path)
        with _SEEN_LOCK:
            _SEEN[key] = found
            while len(_SEEN) > _SEEN_MAX:
                _SEEN.popitem(last=False)
    if found is None:
        return None
    return found.reference_message() if reference else found.message()
