"""Helpers that build small synthetic videos for the video-layer tests."""

from __future__ import annotations

import random
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np


def levels_clip(n: int, width: int = 64, height: int = 48, step: int = 3) -> np.ndarray:
    """``n`` flat gray frames whose level encodes the index: frame ``i`` is ``step * i``."""
    levels = (np.arange(n) * step).clip(0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.broadcast_to(levels[:, None, None, None], (n, height, width, 3)))


def textured_clip(n: int, width: int = 160, height: int = 96, seed: int = 0) -> np.ndarray:
    """Noise that pans across the frame, so inter-frame prediction (B/P frames) does real work."""
    rng = np.random.default_rng(seed)
    canvas = rng.integers(0, 256, (height + 2 * n, width + 3 * n, 3), dtype=np.uint8)
    return np.stack([canvas[2 * i : 2 * i + height, 3 * i : 3 * i + width] for i in range(n)])


def write_timed(
    path: Path,
    frames: np.ndarray,
    times_ms: Sequence[int],
    rotation: int | None = None,
) -> Path:
    """Encode with libx264 at explicit presentation times (milliseconds): variable frame rate."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        if rotation is not None:
            stream.set_display_rotation(rotation)
        _mux_at(container, stream, frames, times_ms)
    return path


def _mux_at(container: Any, stream: Any, frames: np.ndarray, times_ms: Sequence[int]) -> None:
    """Encode ``frames`` into ``stream`` at the presentation times ``times_ms`` (milliseconds)."""
    for rgb, t in zip(frames, times_ms, strict=True):
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
        frame.pts = t
        frame.time_base = Fraction(1, 1000)
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)


def naive_decode(path: Path) -> list[np.ndarray]:
    """Every frame as RGB, decoded the plain way (reference for content checks)."""
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def write_trimmed(
    path: Path, frames: np.ndarray, fps: int, hidden: int, keyint: int, faststart: bool = False
) -> Path:
    """An mp4 holding every frame but showing only those after the first ``hidden``, like a clip cut
    with ``ffmpeg -ss ... -c copy`` or trimmed on a phone.

    The first ``hidden`` frames get negative time stamps, so the muxer writes an edit list that
    starts the track at frame ``hidden``. With a keyframe every ``keyint`` frames, FFmpeg's demuxer
    keeps the hidden frames from the last keyframe before the cut (flagged "discard", decoded only
    as references) and drops the ones before it; a cut on a keyframe hides nothing by flag at all.
    """
    options = {"movflags": "+faststart"} if faststart else {}
    rate = Fraction(fps)
    with av.open(str(path), "w", options=options) as container:
        params = f"keyint={keyint}:min-keyint={keyint}:scenecut=0"
        stream = container.add_stream("libx264", rate=rate, options={"x264-params": params})
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        stream.codec_context.time_base = 1 / rate
        for i, rgb in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = i - hidden, 1 / rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


def write_live_webm(path: Path, frames: np.ndarray, times_ms: Sequence[int]) -> Path:
    """A VP9 WebM as a browser's MediaRecorder writes it: muxed live, so with no Duration element, and
    with no DefaultDuration (no nominal rate); only the blocks' time stamps (milliseconds) say how long."""
    with av.open(str(path), "w", format="webm", options={"live": "1"}) as container:
        stream = container.add_stream("libvpx-vp9")
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        stream.codec_context.framerate = Fraction(0, 1)  # no rate: the muxer writes no DefaultDuration
        _mux_at(container, stream, frames, times_ms)
    return path


def damage_packets(src: Path, dst: Path, seed: int = 7, every: int = 2) -> Path:
    """A copy of ``src`` (H.264 in MP4) damaged inside the stream, its container left whole: from the first
    quarter of the packets on, every ``every``-th packet that holds a reference frame other than a
    keyframe gets 16 random bytes (``seed``) written over the back half of its data, as a bad disk or a
    lossy copy would leave it.

    The bytes hit are picked from the packets' own positions, not from offsets into the file, so the
    damage lands in frame data (never in the index or a header) whatever encoder wrote the file. Only
    frames other frames refer to are hit: a decoder may skip the others (a sampling that does not need
    them), and never the frames later frames are predicted from.
    """
    with av.open(str(src)) as container:
        spans = [(p.pos, p.size) for p in container.demux(video=0)
                 if p.size and not p.is_keyframe and _referenced(bytes(p))]
    rng = random.Random(seed)
    data = bytearray(src.read_bytes())
    for pos, size in spans[len(spans) // 4 :: every]:
        start = pos + size // 2
        n = min(16, size - size // 2)
        data[start : start + n] = rng.randbytes(n)
    dst.write_bytes(bytes(data))
    return dst


def _referenced(packet: bytes) -> bool:
    """Whether an MP4 H.264 packet (NAL units behind 4-byte lengths) holds a slice other frames refer to
    (``nal_ref_idc`` above 0)."""
    at = 0
    while at + 5 <= len(packet):
        length = int.from_bytes(packet[at : at + 4], "big")
        header = packet[at + 4]
        if header & 0x1F in (1, 5) and header >> 5 & 3:
            return True
        at += 4 + length
    return False
