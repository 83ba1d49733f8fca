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


def _png_with_late_exif(path: Path, rgb: np.ndarray, orientation: int) -> Path:
    """A PNG whose ``eXIf`` chunk (the orientation given) follows the image data, as some tools write it."""
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.fromarray(rgb).save(path, exif=exif)
    data = path.read_bytes()
    chunks, at = [], 8
    while at < len(data):
        length = int.from_bytes(data[at : at + 4], "big")
        chunks.append((data[at + 4 : at + 8], data[at : at + 12 + length]))
        at += 12 + length
    body = b"".join(c for kind, c in chunks if kind not in (b"eXIf", b"IEND"))
    path.write_bytes(data[:8] + body + b"".join(c for kind, c in chunks if kind in (b"eXIf", b"IEND")))
    return path


def test_listing_a_png_folder_decodes_no_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pillow's getexif decoded every PNG whole to look for EXIF after its pixels: listing 40 720p RGBA
    # PNGs took 5.4 s, for a header read of 24 ms.
    import PIL.ImageFile

    folder = _folder(tmp_path / "ep1", [(48, 32)] * 4)
    _png_with_late_exif(folder / "frame_4.png", np.zeros((48, 32, 3), np.uint8), 6)  # shown 48x32
    decoded = []
    load = PIL.ImageFile.ImageFile.load

    def counted(self: PIL.ImageFile.ImageFile) -> object:
        decoded.append(self)
        return load(self)

    monkeypatch.setattr(PIL.ImageFile.ImageFile, "load", counted)
    info = probe_video(folder)
    assert (info.width, info.height, info.frame_count) == (48, 32, 5) and decoded == []


def test_exif_after_the_pixels_turns_the_size_and_xmp_does_not(tmp_path: Path) -> None:
    from PIL import Image, PngImagePlugin

    late = tmp_path / "late"
    late.mkdir()
    cv2.imwrite(str(late / "f0.png"), np.zeros((48, 32, 3), np.uint8))
    _png_with_late_exif(late / "f1.png", np.zeros((32, 48, 3), np.uint8), 6)  # OpenCV turns it: 32x48
    assert sample_frames(late, fps=None).frames.shape == (2, 48, 32, 3)
    # An orientation in XMP alone: Pillow's getexif reported it, so the image was sized as turned and the
    # folder refused, but OpenCV reads the image as stored, like the other.
    xmp = tmp_path / "xmp"
    xmp.mkdir()
    cv2.imwrite(str(xmp / "f0.png"), np.zeros((32, 48, 3), np.uint8))
    text = PngImagePlugin.PngInfo()
    text.add_itxt("XML:com.adobe.xmp",
                  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-'
                  'syntax-ns#"><rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" '
                  'tiff:Orientation="6"/></rdf:RDF></x:xmpmeta>')
    Image.fromarray(np.zeros((32, 48, 3), np.uint8)).save(xmp / "f1.png", pnginfo=text)
    assert sample_frames(xmp, fps=None).frames.shape == (2, 32, 48, 3)


def _png_with_exif_payload(path: Path, rgb: np.ndarray, payload: bytes, *, late: bool) -> Path:
    """A PNG with an ``eXIf`` chunk of the given bytes, before or after the image data."""
    import zlib

    cv2.imwrite(str(path), rgb)
    data = path.read_bytes()
    chunk = len(payload).to_bytes(4, "big") + b"eXIf" + payload
    chunk += zlib.crc32(b"eXIf" + payload).to_bytes(4, "big")
    at = data.index(b"IEND") - 4 if late else data.index(b"IDAT") - 4
    path.write_bytes(data[:at] + chunk + data[at:])
    return path


@pytest.mark.parametrize("read", [sample_frames, probe_video])
def test_an_eXIf_chunk_that_cannot_be_read_is_a_warning_not_a_traceback(tmp_path: Path, read: object) -> None:
    # Pillow's EXIF parser raised a bare SyntaxError ('not a TIFF file') for junk in the chunk: listing the
    # folder crashed the score CLI with a traceback. OpenCV reads such an image as stored.
    folder = tmp_path / "ep1"
    folder.mkdir()
    for i, late in enumerate((False, True)):
        _png_with_exif_payload(folder / f"f{i}.png", np.full((12, 20, 3), 40, np.uint8), b"garbage!" * 4,
                               late=late)
    cv2.imwrite(str(folder / "f2.png"), np.zeros((12, 20, 3), np.uint8))
    (folder / "fps.txt").write_text("8")
    got = read(folder, **({"fps": None} if read is sample_frames else {}))  # type: ignore[operator]
    if read is sample_frames:
        assert got.frames.shape == (3, 12, 20, 3)
    else:
        assert (got.width, got.height, got.frame_count) == (20, 12, 3)
    assert [w for w in got.warnings if "EXIF" in w] == [
        "2 image(s) hold EXIF that cannot be read (first: f0.png: SyntaxError: not a TIFF file (header "
        "b'garbage!' not valid)); read as stored, without its orientation, as OpenCV reads them"
    ]


def _bomb_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow refuses images of more than twice MAX_IMAGE_PIXELS (here 2,000 pixels): a 64x64 frame
    stands in for a 16000x16000 PNG of about 1 MB, without writing one."""
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)


@pytest.mark.parametrize("read", [sample_frames, probe_video])
def test_an_image_over_the_pixel_limit_is_a_video_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: object
) -> None:
    folder = _folder(tmp_path / "ep1", [(64, 64)] * 2)
    _bomb_limit(monkeypatch)
    with pytest.raises(VideoError) as info:  # before: PIL.Image.DecompressionBombError, no OSError
        read(folder, **({"size": 16} if read is sample_frames else {}))  # type: ignore[operator]
    assert info.value.path == folder
    assert info.value.reason == (
        "image frame_0.png is 4,096 pixels, over the limit of 2,000 pixels an image may have "
        "(Pillow refuses it as a possible decompression bomb)"
    )


def test_an_image_over_the_pixel_limit_fails_its_item_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from robojudge.run import build_requests, score_items
    from robojudge.store import ResultStore
    from robojudge.suite import load_suite

    _folder(tmp_path / "big", [(64, 64)] * 3)
    _folder(tmp_path / "small", [(16, 12)] * 3)
    manifest = tmp_path / "s.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": n}) + "\n" for n in ("big", "small")))
    _bomb_limit(monkeypatch)
    problems = validate_manifest(manifest, media="deep")  # before: the error's traceback, no list
    assert [(p.item_id, p.field) for p in problems if p.item_id == "big"] == [("big", "video")]
    assert "frame_0.png is 4,096 pixels, over the limit of 2,000" in str(problems[0])
    with ResultStore(tmp_path / "results.sqlite") as store:  # workers=1: scored in this process
        summary = score_items(load_suite(manifest, strict=False).items,
                              build_requests(["pixel_frame_consistency"]), store)
        rows = {r.item_id: r for r in store.rows()}
    assert (summary.ok, summary.failed) == (1, 1)
    assert rows["small"].status == "ok"
    assert rows["big"].status == "error" and "4,096 pixels, over the limit" in str(rows["big"].error)
