"""Frame folders of images with alpha: each sampled image is decoded once where it can be, and reads as
the colour reader and the alpha check read it apart.

An RGBA PNG was decoded by OpenCV for its colours, then again by Pillow for its alpha, fully opaque
exports too: about twice the time of the same frames without alpha.
"""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import PIL.Image
import PIL.ImageFile
import pytest

from robojudge.video import sample_frames
from robojudge.video._folder import lowest_alpha, read_frame, read_image

_RNG = np.random.default_rng(11)
_RGBA = _RNG.integers(0, 256, (48, 64, 4), dtype=np.uint8)
_OPAQUE = np.concatenate([_RGBA[..., :3], np.full((48, 64, 1), 255, np.uint8)], axis=2)


def _write(folder: Path, kind: str) -> Path:
    """One image of ``kind`` in ``folder``; returns its path."""
    if kind == "rgba16.png":  # 16 bits a sample: read with Pillow for its alpha, as before
        path = folder / "f.png"
        wide = (cv2.cvtColor(_RGBA, cv2.COLOR_RGBA2BGRA).astype(np.uint16) * 257) + 3
        assert cv2.imwrite(str(path), wide)
        return path
    name, suffix = kind.rsplit(".", 1)
    path = folder / f"f.{suffix}"
    options: dict[str, object] = {}
    if name == "opaque":
        image = PIL.Image.fromarray(_OPAQUE, "RGBA")
    elif name == "la":
        image = PIL.Image.fromarray(_RGBA, "RGBA").convert("LA")
    elif name == "rgb":
        image = PIL.Image.fromarray(_RGBA[..., :3].copy(), "RGB")
    elif name == "rgb-keyed":  # a transparent colour (tRNS), no alpha channel
        image = PIL.Image.fromarray(_RGBA[..., :3].copy(), "RGB")
        options["transparency"] = tuple(int(v) for v in _RGBA[0, 0, :3])
    elif name == "palette":
        image = PIL.Image.fromarray(_RGBA[..., 0] % 4, "P")
        image.putpalette([255, 0, 255, 10, 200, 30, 0, 0, 255, 90, 90, 90])
        options["transparency"] = 0
    else:
        image = PIL.Image.fromarray(_RGBA, "RGBA")
    if name == "turned":  # an EXIF orientation: OpenCV turns the colours, so the image is read both ways
        exif = PIL.Image.Exif()
        exif[0x0112] = 6
        options["exif"] = exif
    if suffix == "webp":
        options["lossless"] = name != "lossy"
    image.save(path, **options)
    return path


@pytest.mark.parametrize("kind", ["rgba.png", "opaque.png", "la.png", "rgba.webp", "lossy.webp",
                                  "opaque.webp", "rgba16.png", "turned.png", "turned.webp", "palette.png",
                                  "rgb-keyed.png", "rgb.png", "rgb.jpg"])
def test_an_image_reads_as_the_colour_reader_and_the_alpha_check_read_it(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path, kind)
    image, lowest = read_frame(tmp_path, path)
    assert image.dtype == np.uint8 and image.flags.c_contiguous
    assert np.array_equal(image, read_image(tmp_path, path))
    assert lowest == lowest_alpha(tmp_path, path)
    if kind.startswith("turned"):
        assert image.shape == (64, 48, 3)  # the EXIF quarter turn applied
    if kind in ("rgba.png", "rgba.webp"):
        assert lowest == int(_RGBA[..., 3].min())


def test_a_name_that_is_not_utf8_reads_alike(tmp_path: Path) -> None:
    path = tmp_path / os.fsdecode(b"f\xff.png")
    PIL.Image.fromarray(_RGBA, "RGBA").save(path)
    image, lowest = read_frame(tmp_path, path)
    assert np.array_equal(image, read_image(tmp_path, path)) and lowest == lowest_alpha(tmp_path, path)


def _pillow_decodes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, np.ndarray]:
    """How many images Pillow decodes while ``folder`` is sampled, and the frames read."""
    count = [0]
    load = PIL.ImageFile.ImageFile.load

    def counted(self: PIL.ImageFile.ImageFile) -> object:
        count[0] += 1
        return load(self)

    with monkeypatch.context() as patch:
        patch.setattr(PIL.ImageFile.ImageFile, "load", counted)
        frames = sample_frames(folder, fps=None, max_frames=None).frames
    return count[0], frames


def test_an_opaque_rgba_folder_costs_pillow_no_more_than_an_rgb_one(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Pillow's share of the work: whatever listing the folder costs, the alpha is no second decode.
    for name, mode in (("rgb", "RGB"), ("rgba", "RGBA")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "fps.txt").write_text("8")
        for i in range(3):
            PIL.Image.fromarray(np.roll(_OPAQUE, i, axis=1), "RGBA").convert(mode).save(folder / f"f_{i}.png")
    rgb = _pillow_decodes(tmp_path / "rgb", monkeypatch)
    rgba = _pillow_decodes(tmp_path / "rgba", monkeypatch)
    assert np.array_equal(rgb[1], rgba[1])
    assert rgba[0] == rgb[0], (rgba[0], rgb[0])
