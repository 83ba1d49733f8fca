"""The frames a judge sees: RoboJudge's protocol (4 fps, at most 32 uniform frames) by default.

A judge reads a video as one :class:`robojudge.video.SampledFrames`, sampled through the one frame
cache (:func:`robojudge.video.frame_cache`): in a process that also runs metrics on the same
sampling, the video is decoded once for both. The response cache remembers each video's frame
hashes and warnings under the same identity the frame cache uses (the file's
:class:`~robojudge.video.FileFingerprint` and the sampling), so a warm rerun needs no decoding.

Frames of a video with non-square pixels are stretched to the picture's display aspect before they are
hashed and encoded (:func:`as_displayed`): a judge rates the geometry people see, as the annotation app
shows it. Their hashes, and so the request cache keys, change for such videos only.

An item whose ``video`` stitches several views in a ``grid`` is judged on its main view's cell by default
(:attr:`FrameSpec.grid_view`, :func:`judged_input`): the rubrics ask about one video from one camera, and
the rollouts a grid item is compared with are single views. ``grid_view="whole"`` sends the stitched
frame, as robojudge did before 2026-12-07.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np

from robojudge.judges._cache import ResponseCache
from robojudge.judges._config import short_hash
from robojudge.suite import Item, main_view_name, tiling_in
from robojudge.video import (
    DecoderPool,
    FileFingerprint,
    SampledFrames,
    VideoError,
    cached_frames,
    probe_video,
    report_warnings,
    sample_frames,
    stream_format,
)

_NON_SQUARE = "non-square pixels"
"""How :mod:`robojudge.video` begins its warning about a video whose pixels are not square."""


@dataclass(frozen=True)
class FrameSpec:
    """How frames are sampled for a judge.

    Attributes:
        fps: Sampling rate (RoboJudge: 4).
        max_frames: Frame cap, spread uniformly (RoboJudge: 32).
        size: Longer side in pixels, ``(width, height)``, or ``None`` for the native size. For a grid
            item's main-view cell, the cell's.
        grid_view: What a judge is sent of an item whose video is a ``grid`` of views: ``"main"`` its
            main view's cell, ``"whole"`` the stitched frame. Items without a grid are sent their video
            either way.
    """

    fps: float | None = 4.0
    max_frames: int | None = 32
    size: int | tuple[int, int] | None = None
    grid_view: Literal["main", "whole"] = "main"

    def __post_init__(self) -> None:
        if self.grid_view not in GRID_VIEWS:
            raise ValueError(f"grid_view must be one of {', '.join(GRID_VIEWS)}, got {self.grid_view!r}")

    def as_dict(self) -> dict[str, Any]:
        # grid_view only when it is not the default: the stored configs (and remembered frame hashes)
        # of every judge run before it was added keep their hash.
        out: dict[str, Any] = {"fps": self.fps, "max_frames": self.max_frames, "size": self.size}
        if self.grid_view != "main":
            out["grid_view"] = self.grid_view
        return out


GRID_VIEWS = ("main", "whole")
"""The values of :attr:`FrameSpec.grid_view` (``robojudge judge --grid-view``)."""


@dataclass(frozen=True)
class GridCell:
    """One cell of a grid video: the grid's ``rows x cols`` and the cell's ``(row, col)``."""

    rows: int
    cols: int
    row: int
    col: int

    def cut(self, frames: SampledFrames, size: int | tuple[int, int] | None) -> SampledFrames:
        """The cell of ``frames`` (sampled at the native size), resized to ``size`` as
        :func:`robojudge.video.sample_frames` would resize a video of the cell's size.

        Raises:
            VideoError: The frames do not divide evenly into the grid's cells.
        """
        pixels = frames.frames
        h, w = int(pixels.shape[1]), int(pixels.shape[2])
        if w % self.cols or h % self.rows:
            raise VideoError(frames.path, f"a {w}x{h} video does not split into the item's "
                             f"{self.rows}x{self.cols} grid (its width must divide by the columns, its "
                             "height by the rows)")
        cw, ch = w // self.cols, h // self.rows
        cell = pixels[:, self.row * ch:(self.row + 1) * ch, self.col * cw:(self.col + 1) * cw]
        # A video with non-square pixels is resized by as_displayed, to its display aspect, in one step.
        stretched = isinstance(size, int) and any(x.startswith(_NON_SQUARE) for x in frames.warnings)
        if size is not None and not stretched:
            out = size if isinstance(size, tuple) else _longer_side(cw, ch, size)
            if out != (cw, ch):
                interp = cv2.INTER_AREA if out[0] * out[1] < cw * ch else cv2.INTER_LINEAR
                cell = np.stack([cv2.resize(f, out, interpolation=interp) for f in cell])
        return SampledFrames(np.ascontiguousarray(cell), frames.timestamps, frames.indices, frames.source_fps,
                             frames.path, frames.warnings, frames.fingerprint, frames.picked,
                             frames.tolerance)

    def as_list(self) -> list[int]:
        return [self.row, self.col]


def _longer_side(width: int, height: int, size: int) -> tuple[int, int]:
    scale = size / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


@dataclass(frozen=True)
class JudgedInput:
    """What a judge is sent of one item: a video file, or one cell of it when it is a grid of views.

    Attributes:
        path: The video file (the item's ``video``).
        cell: The grid cell sent (the main view's), or ``None`` for the whole frame.
        view: The view the frames show (the grid cell's name, or the ``views`` entry that is the file);
            ``None`` for the whole frame of a grid, or an item without views.
        main_view: The item's main view (:func:`robojudge.suite.main_view_name`), ``None`` without views.
        grid: The item's grid layout as the manifest gives it (``rows``, ``cols``, ``views``), if any.
    """

    path: str
    cell: GridCell | None = None
    view: str | None = None
    main_view: str | None = None
    grid: dict[str, Any] | None = None

    def details(self) -> dict[str, Any]:
        """The row's ``details["judged"]``: the file, the view shown and the main view, and for a grid
        item its layout and the cell sent (``[row, col]``; absent when the whole frame was sent)."""
        out: dict[str, Any] = {"file": self.path, "view": self.view, "main_view": self.main_view}
        if self.grid is not None:
            out["grid"] = self.grid
        if self.cell is not None:
            out["cell"] = self.cell.as_list()
        return out


def judged_input(item: Item, spec: FrameSpec) -> JudgedInput:
    """What a judge sampling by ``spec`` is sent of ``item`` (see :attr:`FrameSpec.grid_view`)."""
    main = main_view_name(item)
    if item.grid is not None:
        layout = item.grid.model_dump()
        if spec.grid_view == "whole" or main is None:
            return JudgedInput(item.video, None, None, main, layout)
        row, col = item.grid.cells()[main]
        return JudgedInput(item.video, GridCell(item.grid.rows, item.grid.cols, row, col), main, main, layout)
    shown = next((name for name, path in (item.views or {}).items() if path == item.video), None)
    return JudgedInput(item.video, None, shown, main)


def remembered_key(fingerprint: FileFingerprint, spec: FrameSpec, cell: GridCell | None = None) -> str:
    """The response cache's key for a video's frame hashes: the frame cache's key, hashed (with the
    grid cell sent, for one).

    Stored caches hold these keys; a change of its form (the change time joined the fingerprint on
    2026-12-05) only means each video is decoded once more, its replies are still found by frame hash.
    """
    if cell is None:
        return short_hash([fingerprint.parts(), spec.as_dict()])
    where = [cell.rows, cell.cols, *cell.as_list()]
    return short_hash([fingerprint.parts(), spec.as_dict(), {"cell": where}])


def decode_frames(
    path: str | Path, spec: FrameSpec, jpeg_quality: int | None = None, keep_pixels: bool = True,
    cell: GridCell | None = None,
) -> SampledFrames:
    """Sample (through the open frame cache), stretch to the display aspect (:func:`as_displayed`) and
    hash the frames of one video, in this thread or a decoder process.

    Args:
        path: Video file or frame folder.
        spec: Frame sampling.
        jpeg_quality: Also encode the frames as JPEGs at this quality.
        keep_pixels: Return the pixels too; ``False`` (with ``jpeg_quality``) drops them, which keeps
            what a decoder process sends back small.
        cell: Send only this cell of a grid video (sampled at the native size, cut, then resized to
            ``spec.size``).
    """
    if cell is None:
        frames = sample_frames(path, fps=spec.fps, max_frames=spec.max_frames, size=spec.size)
    else:
        frames = cell.cut(sample_frames(path, fps=spec.fps, max_frames=spec.max_frames, size=None), spec.size)
    return _finish(frames, spec, jpeg_quality, keep_pixels)


def _finish(
    frames: SampledFrames, spec: FrameSpec, jpeg_quality: int | None, keep_pixels: bool = True
) -> SampledFrames:
    """The frames as a judge is sent them: at the display aspect, hashed and (when asked) encoded."""
    frames = as_displayed(frames, spec.size)
    frames.hashes  # noqa: B018 - computed here, off the event loop
    if jpeg_quality is not None:
        frames.data_urls(jpeg_quality)
    return frames if keep_pixels or jpeg_quality is None else frames.without_pixels()


def as_displayed(frames: SampledFrames, size: int | tuple[int, int] | None) -> SampledFrames:
    """``frames`` of a video with non-square pixels stretched to the picture's display aspect (along
    the side its pixels are long, so no stored detail is lost; with ``size``, the longer side is then
    ``size``), with a warning that says what the judge is sent; any other frames as they are.

    Only a video whose sampling warned of non-square pixels is probed, so others cost nothing. A
    ``(width, height)`` size is kept as asked.
    """
    at = next((i for i, w in enumerate(frames.warnings) if w.startswith(_NON_SQUARE)), None)
    if at is None or isinstance(size, tuple) or not frames.has_pixels or not len(frames):
        return frames
    try:
        sar = stream_format(frames.path).sample_aspect
        turned = probe_video(frames.path).rotation in (90, 270)
    except VideoError:
        return frames
    if sar is None:
        return frames
    along = 1 / sar if turned else sar  # a stored row is a shown column after a quarter turn
    pixels = frames.frames
    h, w = pixels.shape[1:3]
    width, height = (w * along, float(h)) if along > 1 else (float(w), h / along)
    if size is not None:
        scale = size / max(width, height)
        width, height = width * scale, height * scale
    out = max(1, round(width)), max(1, round(height))
    interp = cv2.INTER_AREA if out[0] * out[1] < w * h else cv2.INTER_LINEAR
    stretched = np.stack([cv2.resize(f, out, interpolation=interp) for f in pixels])
    said = (f"{_NON_SQUARE} (sample aspect ratio {sar.numerator}:{sar.denominator}): the judge is sent the "
            f"frames stretched to the display aspect, {out[0]}x{out[1]} (read as stored: {w}x{h})")
    warnings = (*frames.warnings[:at], said, *frames.warnings[at + 1:])
    return SampledFrames(stretched, frames.timestamps, frames.indices, frames.source_fps, frames.path,
                         warnings, frames.fingerprint, frames.picked, frames.tolerance)


_FALLBACK: ThreadPoolExecutor | None = None
_FALLBACK_LOCK = threading.Lock()


def _fallback_thread() -> ThreadPoolExecutor:
    global _FALLBACK
    with _FALLBACK_LOCK:
        if _FALLBACK is None:
            _FALLBACK = ThreadPoolExecutor(1, thread_name_prefix="robojudge-decode")
        return _FALLBACK


Decoded = tuple[SampledFrames, str | None]
"""What a judge's decode gives: the frames, and the warning that the video looks tiled (or ``None``)."""


def _decode_for_judge(
    path: str | Path, spec: FrameSpec, jpeg_quality: int | None, keep_pixels: bool, cell: GridCell | None
) -> Decoded:
    """:func:`decode_frames`, and, when the whole frame is sent, whether it looks like several views
    tiled in one frame, judged on the frames sampled (:func:`robojudge.suite.tiling_in`): no frame is
    read for it beyond them."""
    if cell is not None:
        return decode_frames(path, spec, jpeg_quality, keep_pixels, cell), None
    frames = sample_frames(path, fps=spec.fps, max_frames=spec.max_frames, size=spec.size)
    return _finish(frames, spec, jpeg_quality, keep_pixels), _tiling_of(frames)


def _tiling_of(frames: SampledFrames) -> str | None:
    """The warning that ``frames`` (of a whole video, sampled at any size) look like tiled views."""
    if not frames.has_pixels:
        return None
    try:
        info = probe_video(frames.path)
    except VideoError:
        return None
    found = tiling_in(frames.frames, info.width, info.height)
    return None if found is None else found.message()


def _decode_unless_ready(
    decoder: DecoderPool, path: Path, spec: FrameSpec, jpeg_quality: int | None, cell: GridCell | None
) -> Decoded | None:
    """Decode here, unless the pool came up while this call waited its turn (then ``None``)."""
    return None if decoder.ready else _decode_for_judge(path, spec, jpeg_quality, True, cell)


class FrameLoader:
    """One item's video for a judge: its frames, decoded only when a request actually has to be sent.

    On a warm response cache the frame hashes come from the cache (keyed by the file's fingerprint
    and the sampling), so a fully cached item is judged without decoding its video. The rubrics of
    an item share one loader, so its video is decoded once for all of them.

    Args:
        path: The item's video.
        spec: Frame sampling.
        cache: The response cache (it remembers each file's frame hashes).
        decoder: Worker processes to decode in (started on the first video to decode; until its
            first process is up, videos are decoded in a thread here); ``None``: always a thread.
            Frames already in the open frame cache are taken from it instead.
        jpeg_quality: The backend sends JPEGs at this quality (its ``frame_jpeg_quality``): they
            are encoded while decoding, and with a ``decoder`` the pixels are then not kept.
        before_decode: Called (on the event loop) before this item's video is decoded; the runner
            uses it to start the backend on the first cache miss, before decoding threads compete
            with its imports for the GIL.
        in_process: Entered around a decode in a thread of this process (where a crash in the
            decoder would end the process); the runner notes the item in its store there.
        apart: Decode in this pool's process only, never here: an earlier run ended while decoding
            this video in its own process. A crash then costs this item only (a video error). Where
            processes cannot start at all, the video is decoded here after all.
        cell: Send only this cell of the video (a grid item's main view, :func:`judged_input`).
    """

    def __init__(
        self,
        path: str | Path,
        spec: FrameSpec,
        cache: ResponseCache,
        *,
        decoder: DecoderPool | None = None,
        jpeg_quality: int | None = None,
        before_decode: Callable[[], None] | None = None,
        in_process: Callable[[], AbstractContextManager[object]] | None = None,
        apart: DecoderPool | None = None,
        cell: GridCell | None = None,
    ) -> None:
        self.path = Path(path)
        self.spec = spec
        self.cell = cell
        self._cache = cache
        self._decoder = decoder
        self._jpeg_quality = jpeg_quality
        self._before_decode = before_decode
        self._in_process = in_process or contextlib.nullcontext
        self._apart = apart
        self._frames: SampledFrames | None = None
        self._remembered: tuple[list[str], float, tuple[str, ...]] | None = None
        self._lock = asyncio.Lock()
        self.from_cache = False
        """The hashes came from the cache, so the video was not decoded (its replies are likely cached)."""
        self.tiling: str | None = None
        """Known with the hashes when the whole frame is sent: the warning that the video looks like
        several views tiled in one frame (:func:`robojudge.suite.tiling_in`), else ``None``."""
        self._fingerprint: FileFingerprint | None = None
        self._key: str | None = None
        self._hashes_json: tuple[list[str], str] | None = None

    @property
    def hashes(self) -> list[str]:
        """The frames' content hashes: the decoded frames', else the remembered ones, else none yet."""
        if self._frames is not None:
            return self._frames.hashes
        return self._remembered[0] if self._remembered is not None else []

    @property
    def video_seconds(self) -> float:
        """:attr:`SampledFrames.video_seconds` of the frames (or as remembered with their hashes)."""
        if self._frames is not None:
            return self._frames.video_seconds
        return self._remembered[1] if self._remembered is not None else 0.0

    @property
    def warnings(self) -> tuple[str, ...]:
        """:attr:`SampledFrames.warnings` of the frames (or as remembered with their hashes)."""
        if self._frames is not None:
            return self._frames.warnings
        return self._remembered[2] if self._remembered is not None else ()

    def _identify(self) -> str | None:
        """The remembered-hashes key of the file as it is now (``None`` when it cannot be stat'ed)."""
        try:
            self._fingerprint = FileFingerprint.of(self.path)
        except OSError:
            self._fingerprint, self._key = None, None
        else:
            self._key = remembered_key(self._fingerprint, self.spec, self.cell)
        return self._key

    def _entry(self, key: str | None) -> dict[str, Any] | None:
        """What the cache remembers of this file, unless it was remembered without its warnings (before
        2026-12-06, when also the hashes of frames with non-square pixels were of the frames as
        stored): such a video is decoded once more. A video remembered as looking tiled has a
        ``tiling`` entry (none is written otherwise, so the entries of others are as they were)."""
        known = self._cache.get_frames(key) if key else None
        return known if known is not None and "warnings" in known else None

    def known(self) -> bool:
        """Whether the cache knows this file's frame hashes, so :meth:`prepare` would not decode."""
        return self._entry(self._identify()) is not None

    async def prepare(self) -> None:
        """Make :attr:`hashes`, :attr:`video_seconds` and :attr:`warnings` known, from the cache when it
        knows this file."""
        known = self._entry(self._identify())
        if known is not None:
            said = tuple(str(w) for w in known["warnings"])
            self._remembered = ([str(h) for h in known["hashes"]], float(known["video_seconds"]), said)
            self.tiling = str(known["tiling"]) if known.get("tiling") else None
            self.from_cache = True
            return
        await self.load()

    async def load(self) -> SampledFrames:
        """The frames with their hashes (decoded once: from the frame cache, a decoder process or a
        worker thread)."""
        async with self._lock:
            if self._frames is None:
                if self._before_decode is not None:
                    self._before_decode()
                frames, self.tiling = await self._decode()
                self._frames = frames
                if self._key:
                    found = {"tiling": self.tiling} if self.tiling is not None else {}
                    self._cache.put_frames(self._key, {"hashes": frames.hashes,
                                                       "video_seconds": frames.video_seconds,
                                                       "warnings": list(frames.warnings), **found})
            return self._frames

    async def _decode(self) -> Decoded:
        spec, q, cell = self.spec, self._jpeg_quality, self.cell
        if self._fingerprint is not None:
            size = spec.size if cell is None else None  # a cell is cut from the native frames
            shared = cached_frames(self._fingerprint, spec.fps, spec.max_frames, size)
            if shared is not None:  # a metric (or another judge) of this process sampled it already
                if cell is not None:
                    shared = await asyncio.to_thread(cell.cut, shared, spec.size)
                tiled = None if cell is not None else await asyncio.to_thread(_tiling_of, shared)
                return await asyncio.to_thread(_finish, shared, spec, q), tiled
        if self._apart is not None:
            self._apart.start()
            if self._apart.unavailable is None:
                return await self._in_pool(self._apart)
        if self._decoder is None:
            with self._in_process():
                return await asyncio.to_thread(_decode_for_judge, self.path, spec, q, True, cell)
        self._decoder.start()  # no-op once started
        if not self._decoder.ready:
            # Its first process takes about a second to start: decode here meanwhile, one video at
            # a time (more threads would only fight the event loop for the GIL). The copied
            # context carries the open frame cache and warning blocks into that thread.
            loop = asyncio.get_running_loop()
            run = contextvars.copy_context().run
            args = (self._decoder, self.path, spec, q, cell)
            with self._in_process():
                done = await loop.run_in_executor(_fallback_thread(), run, _decode_unless_ready, *args)
            if done is not None:
                return done
        return await self._in_pool(self._decoder)

    async def _in_pool(self, pool: DecoderPool) -> Decoded:
        """:func:`decode_frames` in a decoder process; the pixels come back only when no JPEGs are sent."""
        q = self._jpeg_quality
        frames, tiled = await pool.run(_decode_for_judge, str(self.path), self.spec, q, q is None, self.cell,
                                       what=self.path)
        report_warnings(frames.path, frames.warnings)
        return frames, tiled

    def hashes_json(self) -> str:
        """:attr:`hashes` as compact JSON (for cache keys; written once per item)."""
        hashes = self.hashes
        if self._hashes_json is None or self._hashes_json[0] is not hashes:
            self._hashes_json = (hashes, json.dumps(hashes, separators=(",", ":")))
        return self._hashes_json[1]

    def release(self) -> None:
        """Drop the decoded frames once the item is done (what :attr:`hashes` needs is kept)."""
        if self._frames is not None:
            self._remembered = (self._frames.hashes, self._frames.video_seconds, self._frames.warnings)
            self._frames = None
