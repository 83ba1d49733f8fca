"""Videos made playable: a browser's video element plays MP4, WebM, Ogg (and MOV/MKV holding those
codecs), but a suite's video may be a folder of images, a GIF, an animated WebP, an AVI, FLV, WMV or MPEG.

Such a video is encoded once into a WebM (VP9, which browsers play at any frame size) in the cache
folder (``$ROBOJUDGE_CACHE_DIR/annotate-media``), named by a hash of the folder's fingerprint (its
path, inode, and every file's name, size and modification time), so a changed folder is encoded
again and the file name says nothing about the item. Each frame keeps its own presentation time, so
a GIF's or an animated WebP's frames of unequal durations play as they were made. Encoding happens on
the first request for the folder; concurrent first requests each write a private temporary file and
the last rename wins (the files are equal).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import numpy as np

from robojudge import settings
from robojudge.video import FileFingerprint, sample_frames, whole_milliseconds, write_video

CACHE_SUBDIR = "annotate-media"
#: Part of each cached file's name: a new way of encoding (2: frames keep their own times) makes new files.
ENCODING = 2
#: Files a browser's video element plays as they are (by suffix); any other video is encoded to WebM.
BROWSER_SUFFIXES = frozenset({".mp4", ".m4v", ".webm", ".ogv", ".mov", ".mkv"})


def _own_times(timestamps: np.ndarray) -> np.ndarray | None:
    """Each frame at its own time (a GIF's or WebP's frames may last unequal times), or None (the
    average rate) when the times cannot be kept in whole milliseconds: frames under 1 ms apart (above
    1000 fps, a 0 ms frame)."""
    keep = len(timestamps) > 1 and whole_milliseconds(timestamps) is not None
    return timestamps if keep else None


def playable(path: Path, cache_dir: Path | None = None) -> Path:
    """``path`` when a browser plays it, else the WebM encoding of its frames (made on first use).

    Raises:
        VideoError: The video holds no readable frames.
    """
    if path.is_file() and path.suffix.lower() in BROWSER_SUFFIXES:
        return path
    root = (cache_dir if cache_dir is not None else settings.get().cache_dir) / CACHE_SUBDIR
    parts = [ENCODING, *FileFingerprint.of(path).parts()]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]
    out = root / f"{key}.webm"
    if out.is_file():
        return out
    sampled = sample_frames(path, fps=None, max_frames=None)  # every frame at the video's own rate
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f"{key}.{os.getpid()}.{threading.get_ident()}.part.webm"
    try:
        write_video(tmp, sampled.frames, fps=sampled.source_fps, timestamps=_own_times(sampled.timestamps))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out
