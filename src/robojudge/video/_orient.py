"""How a decoded frame is shown: the display matrix's turn and flip, applied as ``ffmpeg`` applies it."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import av
import av.video.stream
from av.sidedata.sidedata import SideDataContainer

__all__ = ["Orientation", "display_orientation", "frame_orientation"]


@dataclass(frozen=True)
class Orientation:
    """How a decoded frame is turned to be shown: mirrored left to right first, then rotated.

    Attributes:
        rotation: counter-clockwise degrees, one of 0, 90, 180, 270.
        mirror: the display matrix flips the picture (its determinant is negative).
        odd_angle: the display matrix's counter-clockwise angle when it is no quarter turn; the nearest
            quarter turn is applied.
    """

    rotation: int = 0
    mirror: bool = False
    odd_angle: float | None = None

    def warnings(self) -> tuple[str, ...]:
        """A warning when the display matrix's angle is not a multiple of 90 degrees, else nothing."""
        if self.odd_angle is None:
            return ()
        return (f"the display matrix turns the picture {self.odd_angle:.4g} degrees counter-clockwise, not a "
                f"multiple of 90: frames are read turned by the nearest quarter turn, {self.rotation} "
                "degrees",)


def _round(x: float) -> float:
    return math.copysign(math.floor(abs(x) + 0.5), x)  # C's round(): halves away from zero


def display_orientation(a: float, b: float, c: float, d: float) -> Orientation:
    """The turn and flip of a display matrix ``[[a, b], [c, d]]``, chosen as FFmpeg's autorotate does.

    ``ffmpeg`` reads the angle (``av_display_rotation_get``, whole degrees) and, for a quarter turn,
    adds ``hflip``, ``vflip`` or a ``transpose`` that flips where the matrix's signs say it mirrors. That
    is the picture players show; the angle alone reads a mirrored picture as turned (a left-right
    mirror as upside down). Any other angle is rounded to a quarter turn (FFmpeg rotates by the angle).

    >>> display_orientation(-1, 0, 0, 1)  # mirrored left to right
    Orientation(rotation=0, mirror=True, odd_angle=None)
    >>> display_orientation(0, -1, -1, 0)  # a quarter turn with a flip: the other diagonal
    Orientation(rotation=270, mirror=True, odd_angle=None)
    """
    s0, s1 = math.hypot(a, c), math.hypot(b, d)
    if s0 == 0 or s1 == 0:
        return Orientation()
    ccw = -math.degrees(math.atan2(b / s1, a / s0))
    cw = -_round(ccw)
    cw -= 360 * math.floor(cw / 360 + 0.9 / 360)  # into [0, 360)
    if cw == 90:  # transpose=cclock_flip is a mirror then a turn counter-clockwise; clock, 90 clockwise
        return Orientation(90, True) if c > 0 else Orientation(270)
    if cw == 180:
        if a < 0 and d < 0:
            return Orientation(180)
        return Orientation(0, True) if a < 0 else Orientation(180, True) if d < 0 else Orientation()
    if cw == 270:  # transpose=clock_flip is a mirror then a turn clockwise
        return Orientation(270, True) if c < 0 else Orientation(90)
    if cw == 0:
        return Orientation(180, True) if d < 0 else Orientation()  # vflip: a mirror turned upside down
    return Orientation(round(ccw / 90) % 4 * 90, odd_angle=ccw)


def _display_matrix(frame: av.VideoFrame) -> tuple[float, float, float, float] | None:
    """``(a, b, c, d)`` of the frame's display matrix (16.16 fixed point), or None when it has none."""
    # Not frame.side_data: the frame keeps that container, which refers back to it, so every frame read
    # would wait for the garbage collector (a clip's decoded frames held at once).
    # Looked up by the type's name, which every PyAV since 14 answers: iterating the container gives
    # its entries before PyAV 19 but their types from 19 on (a Mapping's keys).
    data = SideDataContainer(frame).get("DISPLAYMATRIX")  # type: ignore[call-arg]  # (no __init__ stub)
    if data is None:
        return None
    raw = bytes(data)
    if len(raw) < 36:
        return None
    m = struct.unpack("=9i", raw[:36])
    return m[0] / 65536, m[1] / 65536, m[3] / 65536, m[4] / 65536


def frame_orientation(frame: av.VideoFrame, stream: av.video.stream.VideoStream) -> Orientation:
    """How ``frame`` is shown: by its display matrix (:func:`display_orientation`), as stored without one.
    PyAV older than 14 (no ``VideoFrame.rotation``) falls back to the legacy ``rotate`` stream tag, which
    counts clockwise."""
    matrix = _display_matrix(frame)
    if matrix is not None:
        return display_orientation(*matrix)
    if hasattr(frame, "rotation"):
        return Orientation()
    tag = stream.metadata.get("rotate")
    try:
        angle = -float(tag) if tag is not None else 0.0
    except ValueError:
        angle = 0.0
    return Orientation(round(angle / 90.0) % 4 * 90)
