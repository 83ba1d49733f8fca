"""Frame folders: a directory of still images treated as a constant-rate video.

Images (``.png``, ``.jpg``, ``.jpeg``, ``.bmp``, ``.webp``; case-insensitive; hidden files ignored)
are ordered by natural sort of their names, so ``frame_2.png`` comes before ``frame_10.png``.
Frame ``i`` is shown at ``i / fps`` seconds. The rate is read from a file named ``fps.txt`` (or
``fps``; ``fps.txt`` wins if both exist) holding a positive number. Without one the rate is assumed
to be 30 fps, and the sampled frames carry a warning saying so: the rate decides which frames a
4 fps sampling picks, so a guess changes scores. Only the images that are actually sampled are
decoded, but every image's header is read when the folder is listed: the frames of a video share one
size, so a folder whose images differ in size is refused (naming the first odd image) rather than
scored with some frames rescaled. Images are read as RGB; a sampled image with transparent pixels gives
the video files' alpha warning (its alpha is read only for images that have one: with the colours, in
one decode, for an 8-bit RGBA or gray+alpha image without EXIF; with Pillow for the rest).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from robojudge.video._types import VideoError, VideoInfo

__all__ = [
    "DEFAULT_FOLDER_FPS",
    "IMAGE_SUFFIXES",
    "over_pixel_limit",
    "folder_rate",
    "list_images",
    "lowest_alpha",
    "numbering_gaps",
    "probe_folder",
    "read_frame",
    "read_image",
]

DEFAULT_FOLDER_FPS = 30.0
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".webp"})

_DIGITS = re.compile(r"(\d+)")


def _natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    parts = _DIGITS.split(name)
    return tuple((0, int(p)) if p.isdigit() else (1, p.lower()) for p in parts)


def list_images(folder: Path, warnings: list[str] | None = None) -> list[Path]:
    """Image files in ``folder`` in natural order.

    Args:
        warnings: Receives a warning when images hold EXIF that cannot be read (junk in a PNG's
            ``eXIf`` chunk): they are read as stored, not turned, as OpenCV reads them.

    Raises:
        VideoError: There are none, an image's header cannot be read, or the images differ in size.
    """
    try:
        entries = [p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
    except OSError as exc:
        raise VideoError(folder, f"cannot list folder: {exc}") from exc
    images = [p for p in entries if not p.name.startswith(".") and p.is_file()]
    if not images:
        raise VideoError(folder, "empty frame folder (no .png/.jpg/.jpeg/.bmp/.webp images)")
    ordered = sorted(images, key=lambda p: _natural_key(p.name))
    bad_exif: list[tuple[Path, str]] = []
    first = _image_size(folder, ordered[0], bad_exif)
    for image in ordered[1:]:
        size = _image_size(folder, image, bad_exif)
        if size != first:
            raise VideoError(
                folder,
                f"images differ in size: {image.name} is {size[0]}x{size[1]}, {ordered[0].name} (the first) "
                f"is {first[0]}x{first[1]}; the frames of a video share one size",
            )
    if bad_exif and warnings is not None:
        image, why = bad_exif[0]
        warnings.append(f"{len(bad_exif)} image(s) hold EXIF that cannot be read (first: {image.name}: "
                        f"{why}); read as stored, without its orientation, as OpenCV reads them")
    return ordered


_BOMB = re.compile(r"\((\d+) pixels\) exceeds limit of (\d+) pixels")


def over_pixel_limit(
    path: Path, what: str, exc: Image.DecompressionBombError, size: tuple[int, int] | None = None
) -> VideoError:
    """The :class:`VideoError` for an image Pillow refuses to open for its size: more pixels than twice
    ``PIL.Image.MAX_IMAGE_PIXELS`` (a decompression bomb: a PNG of about 1 MB may declare 16000x16000).

    Pillow raises ``DecompressionBombError``, which is no ``OSError``: uncaught, one such frame stopped a
    whole score run and ``suite validate``. Here it fails its item only, naming ``what`` (the image), its
    size (``(width, height)`` when known, else its pixel count) and the limit.
    """
    found = _BOMB.search(str(exc))
    if found is None:  # another Pillow's wording: its own message says the sizes
        return VideoError(path, f"{what} is too large for Pillow to open: {exc}")
    pixels, limit = int(found.group(1)), int(found.group(2))
    shown = f"{size[0]}x{size[1]} ({pixels:,} pixels)" if size else f"{pixels:,} pixels"
    return VideoError(path, f"{what} is {shown}, over the limit of {limit:,} pixels an image may have "
                      "(Pillow refuses it as a possible decompression bomb)")


# EXIF orientations that turn the picture a quarter (OpenCV applies them when it reads an image).
_TRANSPOSED = frozenset({5, 6, 7, 8})
_ORIENTATION = 0x0112


def _image_size(folder: Path, image: Path, bad_exif: list[tuple[Path, str]]) -> tuple[int, int]:
    """``(width, height)`` of an image as it will be decoded, from its header alone; an image whose EXIF
    cannot be read is added to ``bad_exif`` with why."""
    try:
        with Image.open(image) as img:
            width, height = img.size
            try:
                turned = _orientation(img, image) in _TRANSPOSED
            except Exception as exc:  # Pillow's EXIF parser raises SyntaxError, struct.error, ...
                # OpenCV skips an EXIF block it cannot parse and decodes the image as stored.
                bad_exif.append((image, f"{type(exc).__name__}: {exc}"))
                turned = False
    except Image.DecompressionBombError as exc:
        raise over_pixel_limit(folder, f"image {image.name}", exc) from None
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise VideoError(folder, f"cannot read image {image.name}: {exc}") from exc
    return (height, width) if turned else (width, height)


def _orientation(img: Image.Image, image: Path) -> int | None:
    """The EXIF orientation of an opened image, as OpenCV applies it, without decoding its pixels.

    Pillow's ``getexif`` decoded a whole PNG to look for an ``eXIf`` chunk after the image data (listing
    a folder of 40 720p RGBA PNGs took 5.4 s instead of 24 ms); here such a chunk is found by stepping
    over the PNG's chunks. ``getexif`` also takes an orientation from XMP, which OpenCV does not apply,
    so a PNG turned by XMP alone was sized as turned and read as stored: only EXIF counts here.
    """
    data = img.info.get("exif")
    if data is None and img.format == "PNG":
        data = _png_exif(image)
    if not data:
        return None
    exif = Image.Exif()
    exif.load(data)
    return exif.get(_ORIENTATION)


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_exif(image: Path) -> bytes | None:
    """The payload of a PNG's ``eXIf`` chunk (as Pillow keeps it, after ``Exif\\0\\0``), found by reading
    each chunk's header and seeking past its data; None when it has none."""
    with open(image, "rb") as f:
        if f.read(8) != _PNG_SIGNATURE:
            return None
        while len(head := f.read(8)) == 8:
            length, kind = int.from_bytes(head[:4], "big"), head[4:]
            if kind == b"eXIf":
                return b"Exif\x00\x00" + f.read(length)
            if kind == b"IEND":
                return None
            f.seek(length + 4, os.SEEK_CUR)  # the data and its CRC
    return None


def numbering_gaps(images: list[Path]) -> tuple[str, ...]:
    """A warning when the images are numbered in one pattern (``frame_004.png``) and numbers are missing
    (``frame_004.png`` then ``frame_010.png``): the frames are read as consecutive at the folder's
    rate, so every frame after a gap is placed too early."""
    if len(images) < 2:
        return ()
    parts = [_DIGITS.split(p.name) for p in images]
    shape = [part[::2] for part in parts]  # the text between the numbers
    if any(s != shape[0] for s in shape) or len(parts[0]) < 2:
        return ()  # not one numbered pattern: name order is all there is
    numbers = [int(part[-2]) for part in parts]  # the last number of each name
    missing = sum(max(0, b - a - 1) for a, b in zip(numbers, numbers[1:], strict=False))
    if missing == 0:
        return ()
    at = next(i for i, (a, b) in enumerate(zip(numbers, numbers[1:], strict=False)) if b - a > 1)
    first, then = images[at].name, images[at + 1].name
    return (f"frame numbering skips {missing} number(s) (first {first} then {then}): the images are read "
            "as consecutive frames, so each frame after a gap is placed earlier than it was shown",)


def folder_rate(folder: Path) -> tuple[float, tuple[str, ...]]:
    """Frame rate of a folder, with a warning when it is assumed (no ``fps.txt`` / ``fps``)."""
    for name in ("fps.txt", "fps"):
        candidate = folder / name
        if candidate.is_file():
            raw = candidate.read_bytes()
            if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # as Windows PowerShell's > and Out-File write
                raise VideoError(folder, f"{name} is UTF-16 (as Windows PowerShell's > and Out-File write "
                                         "it), not UTF-8: save it as UTF-8 (Set-Content -Encoding utf8)")
            text = raw.decode("utf-8-sig", errors="replace").strip()  # a BOM is no error
            try:
                value = float(text)
            except ValueError:
                raise VideoError(folder, f"{name} does not hold a number: {text[:40]!r}") from None
            if not (math.isfinite(value) and value > 0):
                raise VideoError(folder, f"{name} must hold a positive frame rate, got {value}")
            return value, ()
    assumed = f"no fps.txt in the frame folder; rate assumed to be {DEFAULT_FOLDER_FPS:g} fps"
    return DEFAULT_FOLDER_FPS, (assumed,)


def read_image(folder: Path, image: Path) -> np.ndarray:
    """Read one frame as ``(H, W, 3)`` uint8 RGB; EXIF orientation is applied by OpenCV."""
    try:
        if _utf8(str(image)):
            bgr = cv2.imread(str(image), cv2.IMREAD_COLOR)
        else:  # OpenCV crashes on a name that is not UTF-8 (held in surrogate escapes): decode its bytes
            bgr = cv2.imdecode(np.fromfile(image, np.uint8), cv2.IMREAD_COLOR)
    except (cv2.error, OSError) as exc:
        raise VideoError(folder, f"cannot read image {image.name}: {exc}") from exc
    if bgr is None or bgr.size == 0:
        raise VideoError(folder, f"cannot read image {image.name}")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


# Pillow's modes with an alpha channel; a palette or RGB image may name a transparent colour instead.
_ALPHA_MODES = frozenset({"RGBA", "RGBa", "LA", "La", "PA"})
# Of them, those OpenCV reads unchanged as 8-bit BGRA whose colour channels are IMREAD_COLOR's.
_BGRA_MODES = frozenset({"RGBA", "LA"})


def read_frame(folder: Path, image: Path) -> tuple[np.ndarray, int | None]:
    """One frame as :func:`read_image` reads it, and its lowest alpha as :func:`lowest_alpha` gives it.

    An image with an alpha channel was decoded twice, by OpenCV for its colours and by Pillow for its
    alpha: twice the time of an opaque image, for fully opaque RGBA exports too. An 8-bit RGBA or
    gray+alpha image is decoded once, by OpenCV with its alpha, whose colour channels are what its colour
    reader gives. That read ignores EXIF orientation, so an image with EXIF is still read both ways, as
    are 16-bit images and palettes or RGB with a transparent colour.
    """
    try:
        with Image.open(image) as img:  # the header alone
            mode, keyed = img.mode, "transparency" in img.info
    except Image.DecompressionBombError as exc:
        raise over_pixel_limit(folder, f"image {image.name}", exc) from None
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise VideoError(folder, f"cannot read image {image.name}: {exc}") from exc
    if mode not in _ALPHA_MODES and not keyed:
        return read_image(folder, image), None
    if mode in _BGRA_MODES:
        try:
            if _utf8(str(image)):
                bgra, kinds, _ = cv2.imreadWithMetadata(str(image), cv2.IMREAD_UNCHANGED)
            else:
                bgra, kinds, _ = cv2.imdecodeWithMetadata(np.fromfile(image, np.uint8), cv2.IMREAD_UNCHANGED)
        except (cv2.error, OSError):
            bgra, kinds = None, ()
        exif = any(int(k) == cv2.IMAGE_METADATA_EXIF for k in kinds)
        if (bgra is not None and not exif and bgra.dtype == np.uint8 and bgra.ndim == 3
                and bgra.shape[2] == 4 and bgra.size):
            return cv2.cvtColor(bgra, cv2.COLOR_BGRA2RGB), int(bgra[..., 3].min())
    # anything else (and an image OpenCV fails on: the colour reader says why) as before
    return read_image(folder, image), lowest_alpha(folder, image)


def lowest_alpha(folder: Path, image: Path) -> int | None:
    """The lowest alpha (0-255) of an image with an alpha channel or a transparent colour (a PNG's
    ``tRNS``), which :func:`read_image` drops; None for an image without either (nothing decoded)."""
    try:
        with Image.open(image) as img:
            if img.mode not in _ALPHA_MODES and "transparency" not in img.info:
                return None
            return int(np.asarray(img.convert("RGBA").getchannel("A")).min())
    except Image.DecompressionBombError as exc:
        raise over_pixel_limit(folder, f"image {image.name}", exc) from None
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise VideoError(folder, f"cannot read image {image.name}: {exc}") from exc


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def probe_folder(folder: Path) -> VideoInfo:
    """Describe a frame folder; reads only its first image."""
    listed: list[str] = []
    images = list_images(folder, listed)
    fps, warnings = folder_rate(folder)
    warnings += numbering_gaps(images) + tuple(listed)
    first = read_image(folder, images[0])
    return VideoInfo(
        path=folder,
        width=int(first.shape[1]),
        height=int(first.shape[0]),
        fps=fps,
        frame_count=len(images),
        duration=len(images) / fps,
        rotation=0,
        codec=images[0].suffix.lower().lstrip("."),
        warnings=warnings,
    )
