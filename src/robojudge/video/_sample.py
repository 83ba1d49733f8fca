"""Public entry points: :func:`sample_frames` and :func:`probe_video`.

Video files are handled by :mod:`robojudge.video._filesample`, frame folders by
:mod:`robojudge.video._folder`; the selection arithmetic lives in :mod:`robojudge.video._select`.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.video._animated import is_animated_webp, probe_animated, sample_animated
from robojudge.video._cache import active_cache, cached, cached_probe, peek, report_warnings
from robojudge.video._cell import Cell, cell_of
from robojudge.video._decode import probe_file
from robojudge.video._filesample import AlphaCheck, Sampling, sample_file, sample_file_many
from robojudge.video._folder import (
    folder_rate,
    list_images,
    numbering_gaps,
    probe_folder,
    read_frame,
)
from robojudge.video._memory import check_frame_memory
from robojudge.video._post import RESAMPLES, PostProcess
from robojudge.video._select import SPREADS, pick_indices, thin_positions
from robojudge.video._types import FileFingerprint, SampledFrames, VideoError, VideoInfo

__all__ = ["cached_frames", "prefetch_frames", "probe_video", "sample_frames"]


def probe_video(path: str | Path) -> VideoInfo:
    """Describe a video file or frame folder.

    Width and height are as displayed, i.e. after the display matrix has been applied: the rotation in
    ``VideoInfo.rotation`` (counter-clockwise degrees), after a left-right mirror when
    ``VideoInfo.mirrored``.

    ``VideoInfo.warnings`` says when the rate is not the file's own (see :func:`sample_frames`).
    Inside :func:`~robojudge.video.frame_cache` a file is probed once while it is unchanged. Inside a
    :func:`~robojudge.video.read_cell` block for ``path``, width and height are the cell's.

    Raises:
        VideoError: if the path is missing or cannot be read as video.
    """
    path = Path(path)
    info = _whole(path)
    report_warnings(path, info.warnings)
    cell = cell_of(path)
    if cell is None:
        return info
    width, height = cell.size(info.width, info.height)
    return dataclasses.replace(info, width=width, height=height)


def _whole(path: Path) -> VideoInfo:
    """The probe of ``path``'s whole frame, whatever cell of it is read."""
    return cached_probe(path, lambda: _prober(path)(path))


def _prober(path: Path) -> Callable[[Path], VideoInfo]:
    """How ``path`` is described: as a frame folder, an animated WebP (FFmpeg reads still WebP only),
    or a video file."""
    return probe_folder if path.is_dir() else probe_animated if is_animated_webp(path) else probe_file


def sample_frames(
    path: str | Path,
    fps: float | None = 4.0,
    max_frames: int | None = 32,
    size: int | tuple[int, int] | None = None,
    gray: bool = False,
    spread: str = "uniform",
    resample: str = "area",
    cell: Cell | None = None,
) -> SampledFrames:
    """Sample frames the way RoboJudge judges see a video (4 fps, at most 32 frames).

    Args:
        path: a video file (any container FFmpeg reads, and animated WebP, read with Pillow: see
            :mod:`robojudge.video._animated`) or a frame folder (see :mod:`robojudge.video._folder`).
        fps: target sampling rate. For each target time ``k / fps`` the latest frame shown at or
            before it is taken, never the same frame twice. ``None``, or a rate at or above the
            source's, keeps every frame.
        max_frames: if the rate step picked more frames than this, keep this many, placed by
            ``spread``. ``None`` means no limit.
        size: ``int`` scales so the longer side has that many pixels (aspect ratio kept);
            ``(width, height)`` resizes to exactly that; ``None`` keeps the native size.
        gray: return ``(N, H, W)`` luma (ITU-R BT.601 weights, computed exactly as
            ``cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)`` on the decoded RGB) instead of RGB.
        spread: where the ``max_frames`` kept frames sit among the picked ones: ``"uniform"`` (an
            even grid, first and last included) or ``"middle"`` (the middle of each of
            ``max_frames`` equal spans, VBench's rule) or ``"head"`` (the first ``max_frames``: the
            start of the video at the picked rate, so consecutive frames stay consecutive). Only the
            kept frames are converted, so a long video costs the memory of ``max_frames`` frames
            either way; with ``"head"`` a file is decoded no further than its last kept frame.
        resample: how a frame is shrunk to ``size``: ``"area"`` (``INTER_AREA``) or ``"fast"``
            (bilinear when each side shrinks by at most half, ``INTER_AREA`` beyond; the fast
            profile's choice, :class:`~robojudge.video._post.PostProcess`). Enlarging is bilinear
            either way.
        cell: read only this cell of a video whose frames are a grid of views, cut from the upright
            frame before it is resized (``size`` is then the cell's); ``None`` reads the cell of an
            open :func:`~robojudge.video.read_cell` block for ``path``, else the whole frame.

    Returns:
        C-contiguous uint8 frames with their presentation times (seconds from the first frame),
        their indices among all decoded frames, and the source's average frame rate (frames over the
        time they cover, in every container). The display matrix is applied as
        ``ffmpeg`` applies it (rotations and mirrors), so phone videos come out as players show them.

    Damaged input: a file that ends before the frames its header declares is an error when fewer
    than half of them are there (``VideoError("truncated: decoded 5 of 33 declared frames (0.6 s
    of 4.1 s)")``); with a smaller shortfall (two frames or more) the decodable prefix comes back
    with a warning in ``SampledFrames.warnings``. Undecodable packets inside a file are skipped, and
    frames the decoder could only conceal are kept; either adds ``"damaged: N packets undecodable, M of
    K frames decoded with errors (concealed)"`` to the warnings (a shortfall they cause says
    ``damaged``, not ``truncated``).
    Input with no decodable frame raises ``VideoError("zero frames decoded")``. A trimmed MP4/MOV
    (an edit list hides frames the file still holds) gives only the frames it shows, as FFmpeg
    plays it, and its shortfall is measured against its edited duration.

    Time stamps that cannot be used (none, repeated, an absurd time base, a raw elementary stream
    whose stamps the demuxer invents) are replaced by frame order at the rate the file gives in its
    bitstream or header, else 30 fps; ``SampledFrames.warnings`` says so. Time stamps rounded to a
    coarse time base (e.g. GIF delays in centiseconds) count as on time when within their scatter.

    Raises:
        VideoError: missing, empty, unreadable or frameless input (never a raw PyAV/OpenCV error); a
            ``cell`` of a grid the frame does not divide into.
        ValueError: invalid ``fps``, ``max_frames`` or ``size``.
    """
    path = Path(path)
    cell = cell if cell is not None else cell_of(path)
    key, s = _checked(fps, max_frames, size, gray, spread, resample, cell)
    if cell is not None:
        info = _whole(path)
        problem = cell.problem(info.width, info.height)
        if problem is not None:
            raise VideoError(path, problem)
    sampler = _sample_folder if path.is_dir() else sample_animated if is_animated_webp(path) else sample_file
    return cached(path, key, lambda: sampler(path, s.fps, s.max_frames, s.post, s.spread))


def _checked(
    fps: float | None, max_frames: int | None, size: int | tuple[int, int] | None, gray: bool, spread: str,
    resample: str, cell: Cell | None = None,
) -> tuple[tuple[object, ...], Sampling]:
    """The cache key and the sampling that :func:`sample_frames` arguments ask for, checked.

    Raises:
        ValueError: an argument :func:`sample_frames` does not accept.
    """
    _check_args(fps, max_frames, size)
    if spread not in SPREADS:
        raise ValueError(f"spread must be one of {SPREADS}, got {spread!r}")
    if resample not in RESAMPLES:
        raise ValueError(f"resample must be one of {RESAMPLES}, got {resample!r}")
    key = _sampling_key(fps, max_frames, size, gray, spread, resample, cell)
    return key, Sampling(fps, max_frames, PostProcess(size, gray, resample, cell), spread)


def cached_frames(
    fingerprint: FileFingerprint,
    fps: float | None = 4.0,
    max_frames: int | None = 32,
    size: int | tuple[int, int] | None = None,
    gray: bool = False,
    spread: str = "uniform",
    resample: str = "area",
    cell: Cell | None = None,
) -> SampledFrames | None:
    """What :func:`sample_frames` with these arguments would return from the open
    :func:`~robojudge.video.frame_cache` for the file ``fingerprint`` names, or ``None`` (no cache
    open, or nothing cached for it yet). Never decodes."""
    return peek(fingerprint, _sampling_key(fps, max_frames, size, gray, spread, resample, cell))


def prefetch_frames(path: str | Path, samplings: Sequence[Mapping[str, Any]]) -> int:
    """Decode several samplings of one video file in one pass into the open frame cache.

    ``samplings`` are keyword arguments of :func:`sample_frames` (defaults as there). Those the open
    :func:`~robojudge.video.frame_cache` does not hold yet are decoded together (one demux, one decode,
    each picked frame converted to RGB once) and cached, so the later :func:`sample_frames` calls with
    the same arguments are hits and return exactly what they would have decoded alone. Returns how many
    samplings were decoded.

    Nothing is decoded (0) without an open cache, for a frame folder, when fewer than two samplings
    are missing (a single one costs the same decoded later), when their frames would not fit in the
    cache together (estimated from the probe; they would be decoded again on eviction), or when the
    file cannot be read: errors are never raised here, each :func:`sample_frames` call meets them.

    Raises:
        ValueError: a sampling with invalid arguments (as :func:`sample_frames` would raise).
    """
    path = Path(path)
    todo: dict[tuple[object, ...], Sampling] = {}
    for given in samplings:
        kw = {**_DEFAULTS, **given}
        unknown = set(kw) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"not arguments of sample_frames: {', '.join(sorted(unknown))}")
        key, sampling = _checked(**kw)
        todo.setdefault(key, sampling)
    cache = active_cache()
    if cache is None or path.is_dir() or is_animated_webp(path):
        return 0
    try:
        fingerprint = FileFingerprint.of(path)
        info = _whole(path)  # a sampling's cell is cut from the whole frame (see _estimated_bytes)
    except (OSError, VideoError):
        return 0
    if any(s.post.cell is not None and s.post.cell.problem(info.width, info.height) for s in todo.values()):
        return 0  # each sample_frames call refuses it
    todo = {k: s for k, s in todo.items() if not cache.holds((fingerprint, k))}
    if len(todo) < 2 or _estimated_bytes(info, todo.values()) > cache.max_bytes:
        return 0
    try:
        results = sample_file_many(path, list(todo.values()))
    except VideoError:
        return 0
    for key, value in zip(todo, results, strict=True):
        value.fingerprint = fingerprint
        cache.get_or_compute((fingerprint, key), _returning(value))
    return len(todo)


#: :func:`sample_frames`' sampling arguments and their defaults, read from its signature.
_DEFAULTS: dict[str, Any] = {
    name: p.default for name, p in inspect.signature(sample_frames).parameters.items() if name != "path"}


def _returning(value: SampledFrames) -> Callable[[], SampledFrames]:
    return lambda: value


def _estimated_bytes(info: VideoInfo, samplings: Iterable[Sampling]) -> float:
    """Pixels the samplings would hold, from the probe (infinite when it gives no length)."""
    total = info.frames
    if not total:
        return math.inf
    out = 0.0
    for s in samplings:
        n = float(total)
        if s.fps is not None and info.fps and s.fps < info.fps:
            n = math.ceil(n * s.fps / info.fps) + 1
        if s.max_frames is not None:
            n = min(n, s.max_frames)
        w, h = s.post.output_size(info.width, info.height)
        out += n * w * h * (1 if s.post.gray else 3)
    return out


def _sampling_key(
    fps: float | None, max_frames: int | None, size: int | tuple[int, int] | None, gray: bool, spread: str,
    resample: str = "area", cell: Cell | None = None,
) -> tuple[object, ...]:
    key: tuple[object, ...] = (fps, max_frames, size, gray)
    if spread != "uniform":
        key += (spread,)
    if resample != "area" and size is not None:  # without a size nothing is resized
        key += ("resample", resample)
    if cell is not None:  # the whole frame's key is as it was
        key += ("cell", cell.rows, cell.cols, cell.row, cell.col)
    return key


def _check_args(fps: float | None, max_frames: int | None, size: int | tuple[int, int] | None) -> None:
    if fps is not None and not fps > 0:
        raise ValueError(f"fps must be positive or None, got {fps}")
    if max_frames is not None and max_frames < 1:
        raise ValueError(f"max_frames must be >= 1 or None, got {max_frames}")
    if isinstance(size, tuple):
        if len(size) != 2 or min(size) < 1:
            raise ValueError(f"size must be (width, height) with positive entries, got {size}")
    elif size is not None and size < 1:
        raise ValueError(f"size must be positive, got {size}")


def _result(
    path: Path,
    arrays: list[np.ndarray],
    times: list[float],
    indices: list[int],
    source_fps: float,
    warnings: tuple[str, ...],
    picked: int,
) -> SampledFrames:
    return SampledFrames(
        frames=np.ascontiguousarray(np.stack(arrays)),
        timestamps=np.asarray(times, dtype=np.float64),
        indices=np.asarray(indices, dtype=np.int64),
        source_fps=float(source_fps),
        path=path,
        warnings=warnings,
        picked=picked,
    )


def _sample_folder(
    path: Path, fps: float | None, max_frames: int | None, post: PostProcess, spread: str = "uniform"
) -> SampledFrames:
    listed: list[str] = []
    images = list_images(path, listed)
    rate, warnings = folder_rate(path)
    warnings += numbering_gaps(images) + tuple(listed)
    times = [i / rate for i in range(len(images))]
    effective = None if fps is None or fps >= rate else fps
    picks = pick_indices(times, effective)
    chosen = [picks[p] for p in thin_positions(len(picks), max_frames, spread)]
    arrays: list[np.ndarray] = []
    alpha = AlphaCheck()  # the video files' transparency warning
    for i in chosen:
        image, lowest = read_frame(path, images[i])
        if not arrays:  # the folder's frames share the first one's size: refused before reading more
            check_frame_memory(path, [(len(chosen), post)], image.shape[1], image.shape[0])
        if lowest is not None:
            alpha.see_lowest(lowest)
        arrays.append(post(image))
    warnings += alpha.warnings()
    return _result(path, arrays, [times[i] for i in chosen], chosen, rate, warnings, len(picks))
