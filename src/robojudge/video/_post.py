"""Per-frame post-processing: display rotation and mirroring, resizing and grayscale conversion."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from robojudge.video._cell import Cell

__all__ = ["RESAMPLES", "PostProcess"]

#: How frames are shrunk (:class:`PostProcess`): ``area`` (the default) or ``fast``.
RESAMPLES = ("area", "fast")

_ROTATE_CODES = {90: cv2.ROTATE_90_COUNTERCLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_CLOCKWISE}


@dataclass
class PostProcess:
    """Rotation, resizing and grayscale conversion of one picked RGB frame.

    The display turn is applied first (a left-right mirror when asked, then the counter-clockwise
    rotation), so ``size`` refers to the upright frame; with a ``cell``, that cell of a grid is then cut
    out of the upright frame, and ``size`` refers to the cell.
    ``INTER_AREA`` is used when the output has fewer pixels than the input, ``INTER_LINEAR``
    otherwise. With ``resample="fast"`` a frame shrunk by at most half on each side is resized
    bilinearly as well (``INTER_LINEAR``: a few times less time than ``INTER_AREA`` at a scale that is
    not a whole fraction, e.g. 752x416 to 640x354; at such scales output pixels are at most two source
    pixels apart, so every source pixel still enters the result and aliasing stays small); a larger
    shrink keeps ``INTER_AREA``. Every output gets
    the size of the first one, so a stream that changes resolution midway still stacks into one array;
    :meth:`size_warnings` then says so, naming the sizes and the first frame read at another size.
    """

    size: int | tuple[int, int] | None
    gray: bool
    resample: str = "area"
    cell: Cell | None = None
    _shape: tuple[int, int] | None = field(default=None, init=False)  # (w, h) of the first output
    _source: tuple[int, int] | None = field(default=None, init=False)  # (w, h) of the first input, upright
    # the first input of another size: (its frame index, or None when not given; its (w, h))
    _changed: tuple[int | None, tuple[int, int]] | None = field(default=None, init=False)

    def output_size(self, width: int, height: int) -> tuple[int, int]:
        """``(w, h)`` of the output for an upright ``width`` x ``height`` frame (nothing remembered)."""
        if self.cell is not None:
            width, height = self.cell.size(width, height)
        if isinstance(self.size, tuple):
            return int(self.size[0]), int(self.size[1])
        if self.size is None:
            return width, height
        scale = self.size / max(width, height)
        return max(1, round(width * scale)), max(1, round(height * scale))

    def _target(self, width: int, height: int) -> tuple[int, int]:
        if self._shape is None:  # keep every output the size of the first one
            self._shape = self.output_size(width, height)
        return self._shape

    def _note_size(self, width: int, height: int, index: int | None) -> None:
        if self._source is None:
            self._source = (width, height)
        elif (width, height) != self._source:
            first = self._changed
            if first is None or (index is not None and first[0] is not None and index < first[0]):
                self._changed = (index, (width, height))

    def size_warnings(self) -> tuple[str, ...]:
        """A warning when the frames given had different sizes, so the later ones were resized to the
        first one's output size (and stretched, if their aspect ratio differs); else nothing."""
        if self._changed is None or self._source is None or self._shape is None:
            return ()
        index, (width, height) = self._changed
        (w0, h0), (tw, th) = self._source, self._shape
        frame = f"frame {index}" if index is not None else "a later frame"
        stretched = abs(width * h0 - w0 * height) > 0.01 * w0 * height
        return (f"the frame size changes mid-stream: the first frame read is {w0}x{h0}, {frame} "
                f"{width}x{height} (the first read at another size, counting every frame from 0); all are "
                f"resized to {tw}x{th}, the first frame's output size"
                + (", which stretches the later ones (another aspect ratio)" if stretched else ""),)

    def __call__(
        self, rgb: np.ndarray, rotation: int = 0, index: int | None = None, mirror: bool = False
    ) -> np.ndarray:
        """The frame mirrored (``mirror``), rotated, resized and converted; ``index`` (its place among the
        video's frames) only names it in :meth:`size_warnings`."""
        if mirror:
            rgb = cv2.flip(rgb, 1)
        if rotation:
            rgb = cv2.rotate(rgb, _ROTATE_CODES[rotation])
        height, width = rgb.shape[:2]
        self._note_size(width, height, index)
        tw, th = self._target(width, height)
        if self.cell is not None:
            x0, y0, x1, y1 = self.cell.box(width, height)
            rgb = rgb[y0:y1, x0:x1]
            width, height = x1 - x0, y1 - y0
        if (tw, th) != (width, height):
            area = tw * th < width * height and not (
                self.resample == "fast" and 2 * tw >= width and 2 * th >= height)
            interp = cv2.INTER_AREA if area else cv2.INTER_LINEAR
            rgb = cv2.resize(rgb, (tw, th), interpolation=interp)
        if self.gray:
            rgb = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        return np.ascontiguousarray(rgb, dtype=np.uint8)
