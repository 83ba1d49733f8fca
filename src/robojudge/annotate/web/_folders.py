"""Videos made playable: a browser's video element plays H.264, VP8, VP9 and AV1 in MP4, MOV, WebM or
MKV, but a suite's video may be a folder of images, a GIF, an animated WebP, an AVI, FLV, WMV or MPEG,
or an MP4, MOV or MKV holding another codec (ProRes, PNG, QuickTime RLE, FFV1, MPEG-4 Part 2, HEVC).

A file is served as it is when its suffix, container and codec are a browser's. The container and codec
are read without decoding, once per file fingerprint (a changed file is looked at again), so a request
costs a ``stat``. Any other video is encoded once into a WebM (VP9, which browsers play at any frame
size) in the cache folder (``$ROBOJUDGE_CACHE_DIR/annotate-media``), named by a hash of the folder's
fingerprint (its path, inode, and every file's name, size and modification time) and of the video
reader's version, so a changed folder, or frames that a new reader gives otherwise (10-bit video since
reader version 5), are encoded again, and the file name says nothing about the item. Each frame keeps
its own presentation time, so a GIF's or an animated WebP's frames of unequal durations play as they
were made. Frames with non-square pixels (an anamorphic AVI or MPEG) are resized to the picture's
display aspect: a VP9 stream has no pixel aspect of its own, and PyAV cannot set the one Matroska keeps
beside it. Encoding happens on the first request for the folder; concurrent first requests each write
a private temporary file and the last rename wins (the files are equal).

Beside each encoding a small note (``<key>.<hash of the video's path>.json``) names the video it was made
from, so the cache can be kept small: a new encoding of a video removes the ones made of it before it
changed (edited in place, ``chmod``-ed, copied over), and :func:`media_cache` with ``clean`` removes every
encoding that no video gives any more (its video moved or deleted, or changed since), and the files that
encodes stopped half-way left (a server killed while encoding). The whole folder may be deleted while no
server encodes into it: each video is then encoded again on its first request.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robojudge import settings
from robojudge._files import replace_text
from robojudge.video import (
    READER_VERSION,
    FileFingerprint,
    VideoError,
    probe_video,
    sample_frames,
    stream_format,
    whole_milliseconds,
    write_video,
)

CACHE_SUBDIR = "annotate-media"
#: Part of each cached file's name: a new way of encoding makes new files (2: frames keep their own times;
#: 3: non-square pixels stretched to the display aspect).
ENCODING = 3
#: Suffixes of the files that may be served as they are, when their container and codec are a browser's.
BROWSER_SUFFIXES = frozenset({".mp4", ".m4v", ".webm", ".ogv", ".mov", ".mkv"})
#: Containers (FFmpeg's demuxer names) and codecs served as they are. Not Theora: Chrome dropped it in
#: version 123, Safari never had it.
BROWSER_CONTAINERS = frozenset({"mov", "mp4", "matroska", "webm", "ogg"})
BROWSER_CODECS = frozenset({"h264", "vp8", "vp9", "av1"})
#: A temporary file of the cache not written to for this long was left by an encode that was stopped (a
#: server killed while encoding; an encode writes its file as it goes): removed at the next encode, when
#: a server starts, and by :func:`media_cache` with ``clean``.
LEFT_BEHIND_S = 3600


def _own_times(timestamps: np.ndarray) -> np.ndarray | None:
    """Each frame at its own time (a GIF's or WebP's frames may last unequal times), or None (the
    average rate) when the times cannot be kept in whole milliseconds: frames under 1 ms apart (above
    1000 fps, a 0 ms frame)."""
    keep = len(timestamps) > 1 and whole_milliseconds(timestamps) is not None
    return timestamps if keep else None


@functools.lru_cache(maxsize=4096)
def _plays_as_is(path: str, fingerprint: tuple[object, ...]) -> bool:
    """Whether browsers play the file as it is (``fingerprint`` keys the answer to the file as it is now)."""
    found = stream_format(path)
    return bool(BROWSER_CONTAINERS & set(found.container.split(","))) and found.codec in BROWSER_CODECS


def _display_size(path: Path) -> tuple[int, int] | None:
    """The size to encode a video with non-square pixels at: its display aspect, reached by stretching
    the side its pixels are long along (no stored detail is lost). None for square pixels, and for what
    FFmpeg does not read as one video file (a frame folder, an animated WebP)."""
    if not path.is_file():
        return None
    try:
        sar = stream_format(path).sample_aspect
    except VideoError:
        return None
    if sar is None:
        return None
    info = probe_video(path)  # the size as shown, rotation applied
    if info.rotation in (90, 270):  # a stored row is a shown column
        sar = 1 / sar
    if sar > 1:
        return round(info.width * sar), info.height
    return info.width, round(info.height / sar)


def cache_folder(cache_dir: Path | None = None) -> Path:
    """The folder of the WebM encodings: ``annotate-media`` in ``cache_dir``, by default the user cache
    folder (``$ROBOJUDGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/robojudge``, else ``~/.cache/robojudge``)."""
    return (cache_dir if cache_dir is not None else settings.get().cache_dir) / CACHE_SUBDIR


def _key(fingerprint: FileFingerprint) -> str:
    """The name of the encoding of the video with ``fingerprint``: the frames this reader gives this file,
    encoded this way."""
    parts = [ENCODING, READER_VERSION, *fingerprint.parts()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _source_tag(source: str) -> str:
    """The part of a note's name that the video's path gives: an encoding's older siblings are found by
    it without reading every note."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _note(root: Path, key: str) -> dict[str, object] | None:
    """What the note beside encoding ``key`` says (the video's path, and how it was encoded), or None when
    there is none (made by a robojudge before the notes) or it cannot be read."""
    for path in root.glob(f"{key}.*.json"):
        with contextlib.suppress(OSError, ValueError):
            facts = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(facts, dict) and isinstance(facts.get("source"), str):
                return facts
    return None


def _remove(root: Path, key: str) -> None:
    """Remove encoding ``key`` and its note (on Windows a file being streamed stays, for a later clean)."""
    for path in [root / f"{key}.webm", *(p for p in root.glob(f"{key}.*.json") if _ours(p, _NOTE))]:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _drop_older(root: Path, key: str, source: str) -> None:
    """Remove the encodings of ``source`` made before it changed: noted by this way of encoding and this
    reader, under another name. One made by another robojudge version is left alone (a server of that
    version may be serving it, and would encode it again): :func:`media_cache` removes it on request."""
    for path in root.glob(f"*.{_source_tag(source)}.json"):
        other = path.name.split(".", 1)[0]
        if other == key:
            continue
        facts = _note(root, other)
        if (facts is not None and facts["source"] == source and facts.get("encoding") == ENCODING
                and facts.get("reader") == READER_VERSION):
            _remove(root, other)


#: The names this cache gives its files: an encoding (``<key>.webm``), its note
#: (``<key>.<source tag>.json``), an encode's private file (``<key>.<pid>.<thread>.part.webm``) and a
#: note being written (``.<note name>.<pid>.<8 hex>.tmp``, :func:`~robojudge._files.temp_beside`).
#: Only files so named are counted or removed: anything else in the folder is not the cache's.
_ENCODING = re.compile(r"[0-9a-f]{32}\.webm")
_NOTE = re.compile(r"[0-9a-f]{32}\.[0-9a-f]{16}\.json")
_PART = re.compile(r"[0-9a-f]{32}\.[0-9]+\.[0-9]+\.part\.webm")
_NOTE_TMP = re.compile(r"\.[0-9a-f]{32}\.[0-9a-f]{16}\.json\.[0-9]+\.[0-9a-f]{8}\.tmp")


def _ours(path: Path, *shapes: re.Pattern[str]) -> bool:
    """Whether ``path``'s name has one of ``shapes`` (the names this cache writes)."""
    return any(shape.fullmatch(path.name) for shape in shapes)


def _left_behind(root: Path, now: float) -> list[Path]:
    """The temporary files of stopped encodes (``<key>.<pid>.<thread>.part.webm``, and a note's
    ``.<note>.<pid>.<hex>.tmp``) not written to for :data:`LEFT_BEHIND_S`."""
    found = []
    for path in [*root.glob("*.part.webm"), *root.glob(".*.tmp")]:
        if not _ours(path, _PART, _NOTE_TMP):
            continue
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > LEFT_BEHIND_S:
                found.append(path)
    return found


def remove_left_behind(cache_dir: Path | None = None) -> int:
    """Remove the temporary files that stopped encodes left in the cache (:func:`_left_behind`); how many."""
    root = cache_folder(cache_dir)
    gone = 0
    for path in _left_behind(root, time.time()) if root.is_dir() else []:
        with contextlib.suppress(OSError):
            path.unlink()
            gone += 1
    return gone


def playable(path: Path, cache_dir: Path | None = None) -> Path:
    """``path`` when a browser plays it, else the WebM encoding of its frames (made on first use).

    Raises:
        VideoError: The video holds no readable frames.
        OSError: The file or folder is missing.
    """
    fingerprint = FileFingerprint.of(path)
    if (path.is_file() and path.suffix.lower() in BROWSER_SUFFIXES
            and _plays_as_is(str(path), tuple(fingerprint.parts()))):
        return path
    root = cache_folder(cache_dir)
    key = _key(fingerprint)
    out = root / f"{key}.webm"
    if out.is_file():
        return out
    # every frame at the video's own times
    sampled = sample_frames(path, fps=None, max_frames=None, size=_display_size(path))
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f"{key}.{os.getpid()}.{threading.get_ident()}.part.webm"
    note = {"source": fingerprint.path, "encoding": ENCODING, "reader": READER_VERSION}
    try:
        write_video(tmp, sampled.frames, fps=sampled.source_fps, timestamps=_own_times(sampled.timestamps))
        replace_text(root / f"{key}.{_source_tag(fingerprint.path)}.json", json.dumps(note) + "\n", root=root)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    _drop_older(root, key, fingerprint.path)
    remove_left_behind(cache_dir)
    return out


@dataclass
class MediaCache:
    """What the WebM cache holds (:func:`media_cache`): its encodings, those no video gives any more, and
    the leftovers of stopped encodes; with ``clean``, the last two are removed."""

    folder: Path
    encodings: int = 0
    size: int = 0  # bytes of the encodings
    stale: list[Path] = field(default_factory=list)  # encodings no video gives now
    stale_size: int = 0
    unnoted: int = 0  # of ``stale``: made by a robojudge before the notes, their video unknown
    left_behind: list[Path] = field(default_factory=list)
    not_ours: list[Path] = field(default_factory=list)  # files not named as the cache names its own: left
    removed: bool = False


def _still_made(facts: dict[str, object], key: str) -> bool:
    """Whether the video the note names would be encoded under ``key`` now (there, unchanged, by this
    robojudge)."""
    try:
        return _key(FileFingerprint.of(str(facts["source"]))) == key
    except OSError:  # moved or deleted
        return False


def media_cache(cache_dir: Path | None = None, *, clean: bool = False) -> MediaCache:
    """Look through the WebM cache: every encoding, and those that no video gives any more (their video
    moved, was deleted or changed since, or was encoded by another robojudge version, or it has no note
    naming its video: made before the notes). With ``clean`` those are removed, with the files of stopped
    encodes and notes without an encoding (:data:`LEFT_BEHIND_S` old). A server that serves a removed
    encoding makes it again on its next request. Only files named as the cache names its own are counted
    or removed: any other file in the folder (a WebM or JSON put there by hand, a shared or mistaken
    ``$ROBOJUDGE_CACHE_DIR``) is listed in ``not_ours`` and left.
    """
    root = cache_folder(cache_dir)
    state = MediaCache(root)
    if not root.is_dir():
        return state
    now = time.time()
    for path in sorted(root.glob("*.webm")):
        if not _ours(path, _ENCODING):
            continue
        key = path.name[: -len(".webm")]
        with contextlib.suppress(OSError):
            size = path.stat().st_size
            state.encodings += 1
            state.size += size
            facts = _note(root, key)
            if facts is None or not _still_made(facts, key):
                state.stale.append(path)
                state.stale_size += size
                state.unnoted += facts is None
    state.left_behind = _left_behind(root, now)
    for path in root.glob("*.json"):  # a note whose encoding is gone (stopped before the rename, removed)
        if not _ours(path, _NOTE):
            continue
        encoding = root / f"{path.name.split('.', 1)[0]}.webm"
        with contextlib.suppress(OSError):
            if not encoding.exists() and now - path.stat().st_mtime > LEFT_BEHIND_S:
                state.left_behind.append(path)
    state.not_ours = sorted(path for path in root.iterdir()
                            if not _ours(path, _ENCODING, _NOTE, _PART, _NOTE_TMP))
    if clean:
        for path in state.stale:
            _remove(root, path.name[: -len(".webm")])
        for path in state.left_behind:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        state.removed = True
    return state
