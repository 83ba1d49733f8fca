"""Writing test videos with PyAV: frames muxed into a stream, then the encoder flushed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import av


def mux_frames(container: Any, stream: Any, frames: Iterable[av.VideoFrame]) -> None:
    """Encode ``frames`` into ``stream`` of ``container`` and flush the encoder."""
    for frame in frames:
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)
