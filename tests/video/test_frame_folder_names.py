"""An image of a frame folder whose name is not UTF-8 is read like any other."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from robojudge.video import sample_frames


def _folder(path: Path, names: list[str]) -> Path:
    path.mkdir()
    for k, name in enumerate(names):
        picture = np.zeros((20, 12, 3), np.uint8)
        picture[:4, :6] = 60 * (k + 1)
        exif = Image.Exif()
        exif[0x0112] = 6  # stored turned a quarter: the reader turns it back
        Image.fromarray(picture).save(path / name, format="JPEG", quality=95, exif=exif)
    return path


def test_a_frame_name_that_is_not_utf8_is_read(tmp_path: Path) -> None:
    # Before: OpenCV's imread crashed the process (segmentation fault) on the name's surrogate escape.
    plain = _folder(tmp_path / "plain", ["f0.jpg", "f1.jpg", "f2.jpg"])
    odd = _folder(tmp_path / "odd", ["f0.jpg", os.fsdecode(b"f1\xe9.jpg"), "f2.jpg"])
    expected = sample_frames(plain, fps=None).frames
    assert expected.shape == (3, 12, 20, 3)
    np.testing.assert_array_equal(sample_frames(odd, fps=None).frames, expected)
