"""Per-frame post-processing: display rotation, resizing and grayscale conversion."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

__all__ = ["RESAMPLES", "PostProcess"]

#: How frames are shrunk (:class:`PostProcess`): ``area`` (the default) or ``fast``.
RESAMPLES = ("area", "fast")

_ROTATE_CODES = {90: cv2.ROTATE_90_COUNTERCLOCKWISE, 180: cv2.ROTATE_180, 270: cv2.ROTATE_90_CLOCKWISE}


@dataclass
class PostProcess:
    """Rotation, resizing and grayscale conversion of one picked RGB frame.

    Rotation (counter-clockwise degrees) is applied first, so ``size`` refers to the upright frame.
    ``INTER_AREA`` is used when the output has fewer pixels than the input, ``INTER_LINEAR``
    otherwise. With ``resample="fast"`` a frame shrunk by at most half on each side is resized
    bilinearly as well (``INTER_LINEAR``: a few times less time than ``INTER_AREA`` at a scale that is
    not a whole fraction, e.g. 752x416 to 640x354; at such scales output pixels are at most two source
    pixels apart, so every source pixel still enters the result and aliasing stays small); a larger
    shrink keeps ``INTER_AREA``. Every output gets
    the size of the first one, so a stream that changes resolution midway still stacks into one array.
    """

    size: int | tuple[int, int] | None
    gray: bool
    resample: str = "area"
    _shape: tuple[int, int] | None = field(default=None, init=False)  # (w, h) of the first output

    def output_size(self, width: int, height: int) -> tuple[int, int]:
        """``(w, h)`` of the output for an upright ``width`` x ``height`` frame (nothing remembered)."""
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

    def __call__(self, rgb: np.ndarray, rotation: int = 0) -> np.ndarray:
        if rotation:
            rgb = cv2.rotate(rgb, _ROTATE_CODES[rotation])
        height, width = rgb.shape[:2]
        tw, th = self._target(width, height)
        if (tw, th) != (width, height):
            area = tw * th < width * height and not (
                self.resample == "fast" and 2 * tw >= width and 2 * th >= height)
            interp = cv2.INTER_AREA if area else cv2.INTER_LINEAR
            rgb = cv2.resize(rgb, (tw, th), interpolation=interp)
        if self.gray:
            rgb = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        return np.ascontiguousarray(rgb, dtype=np.uint8)
