"""A frame folder whose images differ in size is refused, not scored with some frames rescaled."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from robojudge.suite import validate_manifest
from robojudge.video import VideoError, probe_video, sample_frames


def _folder(path: Path, sizes: list[tuple[int, int]]) -> Path:
    path.mkdir(parents=True)
    for i, (w, h) in enumerate(sizes):
        cv2.imwrite(str(path / f"frame_{i}.png"), np.full((h, w, 3), 20 * i, np.uint8))
    (path / "fps.txt").write_text("8")
    return path


@pytest.mark.parametrize("read", [sample_frames, probe_video])
def test_images_of_two_sizes_name_the_odd_one(tmp_path: Path, read: object) -> None:
    folder = _folder(tmp_path / "ep1", [(48, 32)] * 10 + [(48, 40)] + [(48, 32)])
    with pytest.raises(VideoError) as info:
        read(folder, **({"size": 16} if read is sample_frames else {}))  # type: ignore[operator]
    assert info.value.path == folder
    assert info.value.reason == (
        "images differ in size: frame_10.png is 48x40, frame_0.png (the first) is 48x32; "
        "the frames of a video share one size"
    )
    assert str(folder) in str(info.value)


def test_one_size_reads_and_a_turned_jpeg_counts_as_turned(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "ep1", [(20, 12)] * 3)
    assert sample_frames(folder, fps=None).frames.shape == (3, 12, 20, 3)
    from PIL import Image

    turned = tmp_path / "turned"
    turned.mkdir()
    for i in range(2):  # stored 12x20 but marked as turned a quarter: read as 20x12, like the others
        image = Image.fromarray(np.zeros((20, 12, 3), np.uint8))
        exif = Image.Exif()
        exif[0x0112] = 6
        image.save(turned / f"f{i}.jpg", exif=exif)
    Image.fromarray(np.zeros((12, 20, 3), np.uint8)).save(turned / "f2.jpg")
    frames = sample_frames(turned, fps=None)
    assert frames.frames.shape == (3, 12, 20, 3)


def test_validate_deep_reports_a_folder_of_two_sizes(tmp_path: Path) -> None:
    _folder(tmp_path / "ep1", [(48, 32), (48, 32), (32, 48)])
    manifest = tmp_path / "s.jsonl"
    manifest.write_text(json.dumps({"item_id": "ep1", "video": "ep1"}) + "\n")
    problems = validate_manifest(manifest, media="deep")
    errors = [p for p in problems if p.is_error]
    assert [(p.item_id, p.field) for p in errors] == [("ep1", "video")]
    assert "frame_2.png is 32x48, frame_0.png (the first) is 48x32" in errors[0].message
