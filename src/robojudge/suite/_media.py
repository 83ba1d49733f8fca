"""Looking inside the videos a manifest names, before a run finds out the hard way.

Two depths: ``open`` opens each video and decodes its first frame (a few milliseconds; it catches
files that are not video, or that no decoder here reads, such as animated WebP), and ``deep``
decodes every frame exactly as scoring samples it (catching truncated files, and damage further in:
packets the decoder rejects and frames it conceals are a ``damaged: ...`` warning, as in a run).
Both pass on what sampling would have to assume about a video (an assumed frame rate, unusable
time stamps) as warnings, and warn when an item's ``video`` looks like several views tiled in one frame
while the item declares no ``grid`` (:mod:`robojudge.suite._tiling`: a few frames read small). Each
distinct file is looked at once, however many items share it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING

from robojudge._machine import usable_cpus
from robojudge.suite._schema import Item

if TYPE_CHECKING:
    from robojudge.video import VideoInfo

__all__ = ["MEDIA_MODES", "check_media", "inspect_video", "npz_problem", "video_fields"]

MEDIA_MODES = ("none", "open", "deep")
"""How hard :func:`robojudge.suite.validate_manifest` looks at videos (see :mod:`robojudge.suite._media`)."""

# Deep checks decode every frame but keep only a thumbnail of each: the verdict is the same as at
# full size, the memory is not.
_THUMB = (16, 16)

Finding = tuple[str, str, str]  # (dotted field, message, severity)


def npz_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the file at ``path`` is not an npz archive of named arrays (a state file's format, see
    docs/sim_suite.md), from its first bytes; ``None`` when it starts like one. ``np.load`` itself
    reads a file of another kind as a pickle and says so ("allow_pickle"), or runs out of bytes:
    neither names what is wrong."""
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except OSError as exc:
        return str(exc)
    if not magic:
        return "the file is empty (0 bytes)"
    if magic == b"\x93NUMPY":
        return "it is a single .npy array, not an npz archive of named arrays"
    if magic.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return None
    return "not an npz archive (a zip of .npy arrays, see docs/sim_suite.md)"


def state_problems(item: Item) -> list[tuple[str, str]]:
    """The problem of an item's state file that is not an npz archive, as ``(field, message)``; a
    state folder is not opened."""
    if not item.state or os.path.isdir(item.state):
        return []
    why = npz_problem(item.state)
    return [] if why is None else [("state", f"cannot read state file {item.state}: {why}")]


def video_fields(item: Item) -> list[tuple[str, str]]:
    """``(dotted field, path)`` of an item's videos; a path listed twice is kept under its first field."""
    pairs = [("video", item.video)]
    if item.reference_video:
        pairs.append(("reference_video", item.reference_video))
    pairs += [(f"views.{name}", p) for name, p in (item.views or {}).items()]
    seen: set[str] = set()
    out = []
    for field, path in pairs:
        if path not in seen:
            seen.add(path)
            out.append((field, path))
    return out


def inspect_video(
    path: str, *, deep: bool, probes: dict[str, VideoInfo] | None = None,
) -> list[tuple[str, str]]:
    """``(message, severity)`` for what is wrong with one video (file or frame folder), if anything; its
    probe is kept in ``probes`` (by path) when given and the video opens."""
    # Imported here: the video stack (PyAV, OpenCV) more than triples the import time of the suite
    # package, and loading a manifest without looking at its media needs none of it.
    from robojudge.video import VideoError, native_read_warning, probe_video, sample_frames

    decoded: int | None = None
    try:
        if deep:
            sampled = sample_frames(path, fps=None, max_frames=None, size=_THUMB)
            warnings, decoded = list(sampled.warnings), len(sampled)
            info = probe_video(path)
        else:
            info = probe_video(path)
            warnings = list(info.warnings)
    except VideoError as exc:
        return [(f"cannot be decoded: {exc.reason}", "error" if deep else "warning")]
    if probes is not None:
        probes[path] = info
    if decoded is not None and decoded < 2:
        # Every metric of motion or consistency compares frames: they leave such a clip unscored.
        warnings.append(f"decodes to {decoded} frame{'s' if decoded != 1 else ''}; the metrics that compare "
                        "frames (motion, consistency, flicker) leave it unscored")
    too_large = native_read_warning(info.frames, info.width, info.height)
    return [(w, "warning") for w in (*warnings, *([too_large] if too_large else []))]


def check_media(
    items: Sequence[Item | None],
    *,
    deep: bool,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    probes: dict[str, VideoInfo] | None = None,
) -> list[list[Finding]]:
    """What is wrong with the videos of each item (``None`` entries are skipped), in item order: the
    problems of each video, and a warning on the ``video`` of an item without a ``grid`` whose frames look
    tiled (:func:`robojudge.suite._tiling.tiling_warning`). ``probes``, when given, receives each video's
    probe by path, for the checks that follow to reuse."""
    from robojudge.suite._tiling import tiling_warning

    fields = [video_fields(it) if it is not None else [] for it in items]
    paths = list(dict.fromkeys(p for pairs in fields for _, p in pairs))
    # Only a video read as one camera's can hide views: not a declared grid, not a reference or a view.
    single = {it.video for it in items if it is not None and it.grid is None}

    def look(path: str) -> tuple[list[tuple[str, str]], str | None]:
        return inspect_video(path, deep=deep, probes=probes), tiling_warning(path) if path in single else None

    verdicts: dict[str, list[tuple[str, str]]] = {}
    tiled: dict[str, str | None] = {}
    if paths:
        n = workers or min(8, usable_cpus())
        with ThreadPoolExecutor(max_workers=max(1, n)) as pool:
            futures = {pool.submit(look, p): p for p in paths}
            for done, future in enumerate(as_completed(futures), start=1):
                verdicts[futures[future]], tiled[futures[future]] = future.result()
                if progress is not None:
                    progress(done, len(paths))
    out = []
    for it, pairs in zip(items, fields, strict=True):
        found = [(f, m, sev) for f, p in pairs for m, sev in verdicts[p]]
        said = tiled.get(it.video) if it is not None and it.grid is None else None
        if said is not None:
            found.append(("video", said, "warning"))
        out.append(found)
    return out
