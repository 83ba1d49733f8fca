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
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from pathlib import Path

import numpy as np

from robojudge import settings
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
    root = (cache_dir if cache_dir is not None else settings.get().cache_dir) / CACHE_SUBDIR
    parts = [ENCODING, READER_VERSION, *fingerprint.parts()]  # the frames this reader gives this file
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]
    out = root / f"{key}.webm"
    if out.is_file():
        return out
    # every frame at the video's own times
    sampled = sample_frames(path, fps=None, max_frames=None, size=_display_size(path))
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f"{key}.{os.getpid()}.{threading.get_ident()}.part.webm"
    try:
        write_video(tmp, sampled.frames, fps=sampled.source_fps, timestamps=_own_times(sampled.timestamps))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out
