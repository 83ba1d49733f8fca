"""Types shared by the video layer: errors, stream facts, a file's identity and one sampled video."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import cv2
import numpy as np


class VideoError(Exception):
    """A video (or frame folder) that cannot be decoded as asked.

    Attributes:
        path: the file or folder that failed.
        reason: a short human-readable reason (``"zero frames"``, ``"not a video file"``, ...).
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple[type[VideoError], tuple[str, str]]:
        # Keeps the error picklable across process-pool boundaries.
        return (VideoError, (str(self.path), self.reason))


@dataclass(frozen=True)
class VideoInfo:
    """What a container says about its main video stream, after its display turn is applied.

    ``rotation`` is counter-clockwise degrees (0, 90, 180 or 270), applied after a left-right mirror
    when ``mirrored`` (a display matrix that flips the picture).
    """

    path: Path
    width: int
    height: int
    fps: float
    frame_count: int | None
    duration: float | None
    rotation: int
    codec: str
    warnings: tuple[str, ...] = field(default=(), compare=False)
    mirrored: bool = False
    #: pixel width / height of the stored picture when its pixels are not square (anamorphic video),
    #: else None; frames are read as stored, ``width`` x ``height``
    sample_aspect: Fraction | None = None

    @property
    def display_size(self) -> tuple[int, int]:
        """``(width, height)`` as the picture is shown: the stored size with non-square pixels made
        square (a 480x360 video of 4:3 pixels shows as 640x360); the stored size otherwise.

        >>> from pathlib import Path
        >>> VideoInfo(Path("v.mp4"), 480, 360, 30.0, None, None, 0, "h264",
        ...           sample_aspect=Fraction(4, 3)).display_size
        (640, 360)
        """
        sar = self.sample_aspect
        if sar is None:
            return self.width, self.height
        if self.rotation in (90, 270):  # turned: the stored width is shown as the height
            return self.width, round(self.height * sar)
        return round(self.width * sar), self.height

    @property
    def frames(self) -> int | None:
        """Frames the video holds: the count its container declares, else its duration times its rate
        (rounded); None when neither is known."""
        if self.frame_count:
            return self.frame_count
        return round(self.duration * self.fps) if self.duration and self.fps else None


@dataclass(frozen=True)
class FileFingerprint:
    """A video file or frame folder as it is now, from ``stat`` calls only (no content hash).

    The absolute path (as given, links not followed) with the device and inode numbers name the
    file; size, modification time and change time say whether it changed. The change time (``ctime``)
    is what catches a file rewritten in place at the same size with its modification time put back
    (``rsync --inplace -t``, ``touch -d``, an archive re-extracted): no program can set it. A frame
    folder also lists its files (name, size, modification and change time), since rewriting a frame
    in place leaves the folder's own times alone. Equal fingerprints mean the same frames, so the
    frame cache is keyed by them, and the judges' remembered frame hashes by :meth:`parts`.
    """

    path: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    entries: tuple[tuple[str, int, int, int], ...] = ()
    ctime_ns: int = 0

    @classmethod
    def of(cls, path: str | Path) -> FileFingerprint:
        """The fingerprint of ``path`` now; one ``stat`` for a file.

        Raises:
            OSError: ``path`` cannot be stat'ed (missing, no permission).
        """
        st = os.stat(path)
        entries: tuple[tuple[str, int, int, int], ...] = ()
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(path) as it:
                files = []
                for e in it:
                    if e.is_file():
                        est = e.stat()
                        files.append((e.name, est.st_size, est.st_mtime_ns, est.st_ctime_ns))
                entries = tuple(sorted(files))
        return cls(os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, entries,
                   st.st_ctime_ns)

    def parts(self) -> list[Any]:
        """The fingerprint as a flat JSON-able list; stored judge caches remember frame hashes under
        its hash (a change of its form costs one more decode of each video, nothing else)."""
        return [self.path, self.device, self.inode, self.size, self.mtime_ns, self.ctime_ns, *self.entries]


def frame_digest(frame: np.ndarray) -> str:
    """Content hash of one frame: BLAKE2b (12 bytes) over its shape and pixels, as hex.

    Response caches are keyed by these, so the definition must not change.
    """
    h = hashlib.blake2b(digest_size=12)
    h.update(repr(frame.shape).encode())
    h.update(np.ascontiguousarray(frame).data)
    return h.hexdigest()


def encode_jpeg(frame: np.ndarray, quality: int) -> bytes:
    """One ``(H, W, 3)`` RGB (or ``(H, W)`` gray) frame as JPEG bytes (OpenCV's encoder)."""
    image = cv2.cvtColor(frame, cv2.COLOR_RGB2BGR) if frame.ndim == 3 else frame
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:  # pragma: no cover - OpenCV only fails on invalid arrays
        raise ValueError("JPEG encoding failed")
    return buf.tobytes()


def jpeg_data_url(jpeg: bytes) -> str:
    """JPEG bytes as a ``data:image/jpeg;base64,...`` URL."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


class SampledFrames:
    """Frames picked from a video, in temporal order: the one type for a sampled video.

    Metrics read the pixels; judges send their content hashes (:attr:`hashes`) and JPEG encodings
    (:meth:`jpeg`, :meth:`data_urls`), computed on first use and kept on the object, so every
    rubric and metric that shares it (through :func:`robojudge.video.frame_cache`) pays for them
    once. It pickles with whatever was computed, so a decoder process can hash and encode, and
    drop the pixels before sending it back (:meth:`without_pixels`).

    Attributes:
        timestamps: ``(N,)`` float64 presentation times in seconds, from the start of the stream.
        indices: ``(N,)`` int64 index of each frame among all decoded frames of the source.
        source_fps: average frame rate of the source.
        path: where the frames came from.
        warnings: what had to be assumed about the source, in words: a frame rate it does not give,
            time stamps that could not be used, frames missing from its end. Empty for a
            well-formed video.
        fingerprint: the source file as it was when it was sampled (``None`` when it could not be
            stat'ed).
        picked: how many frames the rate step picked before ``max_frames`` kept some of them: the
            video's length at the sampled rate (``len(self)`` when nothing was left out). A reader that
            needs only the first frames (``spread="head"``) still learns how many there are.
        tolerance: how late (seconds) a frame may be stamped and still count as shown at a target time
            of the rate step (half a tick of the time base, or the time stamps' scatter): what
            :meth:`shown_at` holds the time stamps to.
    """

    __slots__ = ("_frames", "_hashes", "_jpeg", "_urls", "fingerprint", "indices", "path", "picked",
                 "source_fps", "timestamps", "tolerance", "warnings")

    def __init__(
        self,
        frames: np.ndarray | None,
        timestamps: np.ndarray,
        indices: np.ndarray,
        source_fps: float,
        path: Path,
        warnings: tuple[str, ...] = (),
        fingerprint: FileFingerprint | None = None,
        picked: int | None = None,
        tolerance: float = 1e-6,
    ) -> None:
        self._frames = frames
        self.timestamps = timestamps
        self.picked = int(timestamps.shape[0]) if picked is None else picked
        self.tolerance = tolerance
        self.indices = indices
        self.source_fps = source_fps
        self.path = path
        self.warnings = warnings
        self.fingerprint = fingerprint
        self._hashes: list[str] | None = None
        self._jpeg: dict[int, tuple[bytes, ...]] = {}
        self._urls: dict[int, tuple[str, ...]] = {}

    @property
    def frames(self) -> np.ndarray:
        """``(N, H, W, 3)`` uint8 RGB, or ``(N, H, W)`` uint8 when sampled in grayscale.

        Raises:
            ValueError: the pixels were dropped after hashing and encoding (:meth:`without_pixels`).
        """
        if self._frames is None:
            raise ValueError(f"{self.path}: the pixels of these frames were dropped after encoding "
                             f"(JPEG qualities kept: {sorted(self._jpeg) or 'none'})")
        return self._frames

    @property
    def has_pixels(self) -> bool:
        """Whether :attr:`frames` holds the pixels (False after :meth:`without_pixels`)."""
        return self._frames is not None

    def __len__(self) -> int:
        return int(self.timestamps.shape[0])

    def __repr__(self) -> str:
        shape = None if self._frames is None else self._frames.shape
        return f"SampledFrames({self.path}, {len(self)} frames, shape={shape}, fps={self.source_fps:g})"

    @property
    def nbytes(self) -> int:
        """Bytes held by the pixels (what the frame cache budgets)."""
        return 0 if self._frames is None else int(self._frames.nbytes)

    @property
    def video_seconds(self) -> float:
        """How long the video is as far as these frames show: the last time stamp plus one source frame."""
        if not len(self):
            return 0.0
        step = 1.0 / self.source_fps if self.source_fps > 0 else 0.0
        return float(self.timestamps[-1]) + step

    def shown_at(self, fps: float) -> np.ndarray:
        """For each target time ``k / fps`` from the first frame, the position among these frames of the
        one a player shows then: the latest at or before it (``tolerance`` allowed), repeats allowed,
        as a player holds a frame. ``int64``, one per target up to the last frame's time.

        Meant for frames sampled at ``fps`` with nothing thinned (``max_frames`` None, or ``"head"``):
        the rate step picks a frame for each target but never one twice, so a video that stalls, or
        has a variable frame rate, gives fewer frames than targets; this says which frame each target
        holds. Constant-rate video gives ``0, 1, 2, ...``.

        >>> f = SampledFrames(None, np.array([0.0, 0.1, 0.5, 0.6]), np.arange(4), 10.0, Path("v.mp4"))
        >>> f.shown_at(10.0).tolist()  # 0.2-0.4 s hold the frame shown at 0.1 s
        [0, 1, 1, 1, 1, 2, 3]
        """
        if not fps > 0:
            raise ValueError(f"fps must be positive, got {fps}")
        firsts: list[int] = []  # the first target each frame is shown at
        for time in (float(t) for t in self.timestamps - (self.timestamps[0] if len(self) else 0.0)):
            # the rate step's own test (robojudge.video._select.RatePicker): a frame is at target k
            # unless its time is past k / fps + tolerance
            k = max(firsts[-1] + 1 if firsts else 0, int(np.ceil((time - self.tolerance) * fps)) - 1)
            while time > k / fps + self.tolerance:
                k += 1
            firsts.append(k)
        if not firsts:
            return np.zeros(0, dtype=np.int64)
        shown = np.searchsorted(np.asarray(firsts), np.arange(firsts[-1] + 1), side="right") - 1
        return shown.astype(np.int64)

    @property
    def hashes(self) -> list[str]:
        """:func:`frame_digest` of each frame (what judges' reply caches are keyed by)."""
        if self._hashes is None:
            self._hashes = [frame_digest(f) for f in self.frames]
        return self._hashes

    def jpeg(self, quality: int) -> tuple[bytes, ...]:
        """Each frame as JPEG bytes at ``quality`` (:func:`encode_jpeg`), encoded once per quality.

        Raises:
            ValueError: the pixels were dropped and this quality was not encoded before.
        """
        found = self._jpeg.get(quality)
        if found is None:
            urls = self._urls.get(quality)
            if urls is not None:  # what came from a decoder process: the URLs, not the bytes
                found = tuple(base64.b64decode(u.partition(",")[2]) for u in urls)
            elif self._frames is None:
                have = ", ".join(f"jpeg:{q}" for q in sorted({*self._jpeg, *self._urls})) or "none"
                raise ValueError(
                    f"frames were encoded without pixels ({have}); JPEG quality {quality} is missing"
                )
            else:
                found = tuple(encode_jpeg(f, quality) for f in self._frames)
            self._jpeg[quality] = found
        return found

    def has_jpeg(self, quality: int) -> bool:
        """Whether :meth:`jpeg` and :meth:`data_urls` at ``quality`` cost no JPEG encoding."""
        return quality in self._jpeg or quality in self._urls

    def data_urls(self, quality: int) -> tuple[str, ...]:
        """:meth:`jpeg` as ``data:image/jpeg;base64,...`` URLs, built once per quality."""
        found = self._urls.get(quality)
        if found is None:
            found = self._urls[quality] = tuple(jpeg_data_url(b) for b in self.jpeg(quality))
        return found

    def without_pixels(self) -> SampledFrames:
        """The same frames with their hashes and JPEG encodings but no pixels (small to pickle).

        Raises:
            ValueError: nothing was encoded: the frames would be lost.
        """
        if not self._jpeg and not self._urls:
            raise ValueError(f"{self.path}: dropping the pixels needs a JPEG encoding first")
        out = SampledFrames(None, self.timestamps, self.indices, self.source_fps, self.path, self.warnings,
                            self.fingerprint, self.picked, self.tolerance)
        out._hashes = self.hashes
        out._jpeg = dict(self._jpeg)
        out._urls = dict(self._urls)
        return out

    def __getstate__(self) -> dict[str, Any]:
        # One form per quality crosses a process boundary: the data URLs where they were built (a
        # judge sends those, and building them is work the receiving event loop is spared), else
        # the bytes; either is rebuilt from the other on demand.
        state = {s: getattr(self, s) for s in self.__slots__}
        state["_jpeg"] = {q: b for q, b in self._jpeg.items() if q not in self._urls}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
