"""Colour and pixel formats of video files: what robojudge reads from HDR and wide-gamut tags, high bit
depths and 16-bit RGB, each checked on small clips written here with PyAV."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np
import PIL.Image
import pytest
from _videogen import textured_clip

from _encode import mux_frames
from robojudge.suite import validate_manifest
from robojudge.video import VideoError, probe_video, sample_frames, video_warnings


def _tagged(path: Path, frames: np.ndarray, trc: int, primaries: int, colorspace: int,
            pix_fmt: str = "yuv420p", codec: str = "libx264") -> Path:
    """``frames`` (RGB) encoded with the colour tags given (FFmpeg's enum values) in the bitstream."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=8)
        stream.height, stream.width, stream.pix_fmt = frames.shape[1], frames.shape[2], pix_fmt
        ctx = stream.codec_context
        ctx.color_trc, ctx.color_primaries, ctx.colorspace, ctx.color_range = trc, primaries, colorspace, 1
        mux_frames(container, stream, (_tag(av.VideoFrame.from_ndarray(image, format="rgb24").reformat(
            format=pix_fmt), i, colorspace, 1, trc, primaries) for i, image in enumerate(frames)))
    return path


def _tag(frame: av.VideoFrame, i: int, colorspace: int, color_range: int, trc: int | None = None,
         primaries: int | None = None) -> av.VideoFrame:
    """``frame`` as the ``i``-th of an 8 fps clip, with the colour tags given (FFmpeg's enum values)."""
    frame.colorspace, frame.color_range = colorspace, color_range
    if trc is not None and hasattr(frame, "color_trc"):  # (PyAV 14.2's frames have no transfer or primaries)
        frame.color_trc, frame.color_primaries = trc, primaries
    frame.pts, frame.time_base = i, Fraction(1, 8)
    return frame


@pytest.mark.parametrize(("trc", "name"), [(16, "PQ (SMPTE ST 2084)"), (18, "HLG (ARIB STD-B67)")])
def test_an_hdr_transfer_is_a_warning_naming_it(tmp_path: Path, trc: int, name: str) -> None:
    path = _tagged(tmp_path / "hdr.mp4", textured_clip(4, 64, 48), trc=trc, primaries=9, colorspace=9)
    expected = (f"HDR video read as SDR, without tone mapping: the stream is tagged with the {name} transfer "
                "and BT.2020 primaries, and frames are converted with its YUV matrix alone, so their "
                "brightness and colours do not compare with SDR videos' (whites come out gray, colours "
                "washed out)")
    with video_warnings() as found:
        read = sample_frames(path, fps=None, max_frames=None)
    assert read.warnings == (expected,)  # once, however many frames were read
    assert found == [f"{path}: {expected}"]
    assert probe_video(path).warnings == (expected,)


def test_bt2020_primaries_alone_are_a_wide_gamut_warning(tmp_path: Path) -> None:
    # An SDR BT.2020 stream (transfer "BT.2020 10-bit", 14): no tone mapping is missing, the gamut is.
    path = _tagged(tmp_path / "wide.mp4", textured_clip(3, 64, 48), trc=14, primaries=9, colorspace=9)
    assert sample_frames(path, fps=4, max_frames=2).warnings == (
        "wide-gamut video read as SDR: the stream is tagged with BT.2020 primaries, which are not "
        "converted to BT.709, so colours come out less saturated than they are",)


def test_sdr_tags_say_nothing(tmp_path: Path) -> None:
    path = _tagged(tmp_path / "sdr.mp4", textured_clip(3, 64, 48), trc=1, primaries=1, colorspace=1)
    assert sample_frames(path, fps=None, max_frames=None).warnings == ()
    assert probe_video(path).warnings == ()


def _yuv_frames(n: int, pix_fmt: str, width: int = 64, height: int = 48,
                shift: int = 0) -> list[av.VideoFrame]:
    """``n`` frames of one YUV picture per frame, BT.709 limited range, with smooth gradients and sharp
    colour edges; ``shift`` moves every sample up by that many bits (the same picture at a higher depth)."""
    rng = np.random.default_rng(3)
    wide = pix_fmt.startswith("yuv422")
    frames = []
    for i in range(n):
        y = np.clip(16 + np.add.outer(np.arange(height) * 3, np.arange(width) * 2) + 7 * i, 16, 235)
        cw, ch = width // 2, height if wide else height // 2
        u = rng.integers(16, 241, (ch, cw))
        v = np.full((ch, cw), 128)
        v[:, cw // 2:] = 230  # a red edge: where chroma upsampling shows
        frame = av.VideoFrame(width, height, pix_fmt)
        for plane, values in zip(frame.planes, (y, u, v), strict=True):
            dtype = np.uint16 if shift else np.uint8
            stride = plane.line_size // np.dtype(dtype).itemsize
            buffer = np.zeros((plane.height, stride), dtype)
            buffer[:, : plane.width] = values.astype(np.int64) << shift
            plane.update(buffer.tobytes())
        frame.colorspace, frame.color_range = 1, 1
        frame.pts, frame.time_base = i, Fraction(1, 8)
        frames.append(frame)
    return frames


def _lossless(path: Path, frames: list[av.VideoFrame]) -> Path:
    """``frames`` in FFV1 (lossless at every depth), tagged BT.709 limited range."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("ffv1", rate=8)
        stream.width, stream.height, stream.pix_fmt = frames[0].width, frames[0].height, frames[0].format.name
        stream.codec_context.colorspace, stream.codec_context.color_range = 1, 1
        for frame in frames:
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


@pytest.mark.parametrize(("eight", "deep", "shift"), [
    ("yuv420p", "yuv420p10le", 2), ("yuv422p", "yuv422p10le", 2), ("yuv420p", "yuv420p12le", 4)])
def test_the_same_yuv_at_a_higher_bit_depth_reads_the_same(tmp_path: Path, eight: str, deep: str,
                                                           shift: int) -> None:
    # swscale converted 10-bit 4:2:0 and 4:2:2 by another path than 8-bit: about 1.6 levels darker, the
    # chroma filtered (tens of levels off at colour edges).
    low = _lossless(tmp_path / "eight.mkv", _yuv_frames(3, eight))
    high = _lossless(tmp_path / "deep.mkv", _yuv_frames(3, deep, shift=shift))
    read = sample_frames(high, fps=None, max_frames=None).frames
    assert np.array_equal(read, sample_frames(low, fps=None, max_frames=None).frames)


def _encode(path: Path, frames: np.ndarray, codec: str, pix_fmt: str) -> Path:
    """RGB ``frames`` encoded as ``pix_fmt`` by ``codec``, untagged."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=8)
        stream.height, stream.width, stream.pix_fmt = frames.shape[1], frames.shape[2], pix_fmt
        for image in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


@pytest.mark.skipif(int(av.__version__.split(".")[0]) < 18, reason="PyAV before 18 converts as BT.601")
@pytest.mark.parametrize(("codec", "pix_fmt"), [("libx264", "yuv420p"), ("libx264", "yuv422p"),
                                                ("libx264", "yuv444p"), ("mjpeg", "yuvj420p")])
def test_eight_bit_yuv_reads_as_pyav_converts_it(tmp_path: Path, codec: str, pix_fmt: str) -> None:
    # The 8-bit paths are untouched: they give the values that stored rows were computed from (with
    # PyAV 18, which reads the tags as robojudge now hands them over).
    path = _encode(tmp_path / f"eight.{'avi' if codec == 'mjpeg' else 'mp4'}", textured_clip(3, 64, 48),
                   codec, pix_fmt)
    tagged = _lossless(tmp_path / "tagged.mkv", _yuv_frames(3, "yuv420p"))  # BT.709, limited range
    for video in (path, tagged):
        with av.open(str(video)) as container:
            plain = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])
        assert np.array_equal(sample_frames(video, fps=None, max_frames=None).frames, plain)


@pytest.mark.parametrize(("pix_fmt", "channels"), [("rgb48be", 3), ("gray16be", 1)])
def test_sixteen_bit_video_reads_as_a_folder_of_the_same_pngs(tmp_path: Path, pix_fmt: str,
                                                                channels: int) -> None:
    # swscale rounded 16-bit RGB and gray up by half a level on average (32896 read 129); OpenCV keeps
    # each sample's high byte. The same 16-bit frames read alike as a frame folder and as a video.
    rng = np.random.default_rng(5)
    frames = rng.integers(0, 65536, (3, 48, 64, channels)).astype(np.uint16)
    frames[:, 0, :, :] = np.linspace(0, 65535, 64).round().astype(np.uint16)[:, None]
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "fps.txt").write_text("8")
    source = "rgb48le" if channels == 3 else "gray16le"
    with av.open(str(tmp_path / "video.mov"), "w") as container:
        stream = container.add_stream("png", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, pix_fmt
        for i, image in enumerate(frames):
            plane = image if channels == 3 else image[..., 0]
            frame = av.VideoFrame.from_ndarray(plane, format=source)
            png = cv2.cvtColor(plane, cv2.COLOR_RGB2BGR) if channels == 3 else plane
            assert cv2.imwrite(str(folder / f"frame_{i}.png"), png)  # a 16-bit PNG
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    video = sample_frames(tmp_path / "video.mov", fps=None, max_frames=None).frames
    assert np.array_equal(video, sample_frames(folder, fps=None, max_frames=None).frames)
    assert np.array_equal(video, np.broadcast_to(frames >> 8, video.shape))  # each sample's high byte


def _flat(pix_fmt: str, y: int, u: int, v: int, colorspace: int, color_range: int) -> av.VideoFrame:
    """A 64x48 frame of one YUV colour, tagged with the matrix and range given (0: untagged)."""
    frame = av.VideoFrame(64, 48, pix_fmt)
    for plane, value in zip(frame.planes, (y, u, v), strict=True):
        dtype = np.uint16 if "10" in pix_fmt else np.uint8
        plane.update(np.full(plane.buffer_size // np.dtype(dtype).itemsize, value, dtype).tobytes())
    frame.colorspace, frame.color_range = colorspace, color_range
    return frame


# Pure red in each matrix and range, as YUV: (format, Y, U, V, matrix tag, range tag).
_REDS = {
    "BT.709 limited": ("yuv420p", 63, 102, 240, 1, 1),
    "BT.709 full": ("yuv420p", 54, 99, 255, 1, 2),  # full range without a yuvj format
    "BT.601 limited": ("yuv420p", 81, 90, 240, 6, 1),
    "untagged (BT.601 limited)": ("yuv420p", 81, 90, 240, 2, 0),
    "BT.2020 limited": ("yuv420p", 74, 97, 240, 9, 1),
    "BT.709 full, 10-bit": ("yuv420p10le", 218, 395, 1023, 1, 2),
}


@pytest.mark.parametrize("name", list(_REDS))
def test_the_frame_tags_choose_matrix_and_range(tmp_path: Path, name: str) -> None:
    # PyAV 14.2 (the lowest allowed) read every frame as BT.601 limited range unless told otherwise:
    # BT.709 red came out (233, 0, 2), full-range 10-bit with its blacks lifted and whites clipped. The
    # tags are handed over explicitly, so every allowed PyAV reads pure red.
    pix_fmt, y, u, v, colorspace, color_range = _REDS[name]
    frames = [_flat(pix_fmt, y, u, v, colorspace, color_range) for _ in range(2)]
    for i, frame in enumerate(frames):
        frame.pts, frame.time_base = i, Fraction(1, 8)
    path = tmp_path / "red.mkv"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("ffv1", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, pix_fmt
        stream.codec_context.colorspace, stream.codec_context.color_range = colorspace, color_range
        for frame in frames:
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    red = sample_frames(path, fps=None, max_frames=None).frames.astype(int)
    assert np.abs(red - np.array([255, 0, 0])).max() <= 3, red[0, 0, 0]


def _ycgco_clip(path: Path) -> Path:
    """Lossless H.264 4:4:4 in YCgCo (matrix tag 8), full range: patches of pure red, green, blue and gray."""
    rgb = np.zeros((48, 64, 3))
    rgb[:, :16], rgb[:, 16:32], rgb[:, 32:48], rgb[:, 48:] = (255, 0, 0), (0, 255, 0), (0, 0, 255), 128
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    planes = [np.clip(np.round(p), 0, 255).astype(np.uint8)
              for p in (r / 4 + g / 2 + b / 4, -r / 4 + g / 2 - b / 4 + 128, r / 2 - b / 2 + 128)]
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=8, options={"qp": "0", "preset": "ultrafast"})
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv444p"
        stream.codec_context.colorspace, stream.codec_context.color_range = 8, 2
        frames = []
        for i in range(2):
            frame = av.VideoFrame(64, 48, "yuv444p")
            for plane, values in zip(frame.planes, planes, strict=True):
                buffer = np.zeros((plane.height, plane.line_size), np.uint8)
                buffer[:, :64] = values
                plane.update(buffer.tobytes())
            frames.append(_tag(frame, i, 8, 2))
        mux_frames(container, stream, frames)
    return path


def test_a_ycgco_clip_is_refused_naming_the_file_and_matrix(tmp_path: Path) -> None:
    # swscale has no YCgCo coefficients. Read as BT.601, as untagged video is, its green patch came out
    # purple (128, 84, 255) and its blue green (0, 177, 0), with no warning.
    path = _ycgco_clip(tmp_path / "ycgco.mp4")
    with av.open(str(path)) as container:
        assert int(next(container.decode(video=0)).colorspace) == 8  # the tag survives the round trip
    reason = ("unsupported colour matrix YCgCo (AVColorSpace 8): only BT.601, BT.709, FCC, SMPTE 240M and "
              "BT.2020 YUV can be converted to RGB")
    with pytest.raises(VideoError) as raised:
        sample_frames(path, fps=None, max_frames=None)
    assert (raised.value.path, raised.value.reason) == (path, reason)
    # The probe says it too (it passed such a clip, which failed only once its frames were read): what
    # `suite validate` and a run's look at an item's size and framing read.
    with pytest.raises(VideoError) as probed:
        probe_video(path)
    assert (probed.value.path, probed.value.reason) == (path, reason)


def test_validation_names_a_clip_of_an_unsupported_matrix_before_a_run(tmp_path: Path) -> None:
    _ycgco_clip(tmp_path / "ycgco.mp4")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "g/ep1", "video": "ycgco.mp4"}) + "\n")
    (found,) = validate_manifest(manifest, media="open")
    assert (found.line, found.item_id, found.field, found.severity) == (1, "g/ep1", "video", "warning")
    assert found.message == ("cannot be decoded: unsupported colour matrix YCgCo (AVColorSpace 8): only "
                             "BT.601, BT.709, FCC, SMPTE 240M and BT.2020 YUV can be converted to RGB")


@pytest.mark.parametrize(("pix_fmt", "colorspace", "name"), [
    ("yuv420p", 12, "chroma-derived non-constant luminance (AVColorSpace 12)"),
    ("yuv444p", 14, "ICtCp (AVColorSpace 14)"),
    ("yuv420p10le", 8, "YCgCo (AVColorSpace 8)"),  # refused by name, not by swscale's 8-bit reduction
    ("yuv420p", 16, "YCgCo-R (even) (AVColorSpace 16)"),
])
def test_other_matrices_swscale_lacks_are_refused(tmp_path: Path, pix_fmt: str, colorspace: int,
                                                 name: str) -> None:
    path = tmp_path / "tagged.mkv"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("ffv1", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, pix_fmt
        stream.codec_context.colorspace, stream.codec_context.color_range = colorspace, 1
        for i in range(2):
            frame = _flat(pix_fmt, 400 if "10" in pix_fmt else 100, 128, 128, colorspace, 1)
            frame.pts, frame.time_base = i, Fraction(1, 8)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    for read in (lambda: sample_frames(path, fps=4, max_frames=2), lambda: probe_video(path)):
        with pytest.raises(VideoError, match=r"unsupported colour matrix (.+): only BT\.601") as raised:
            read()
        assert raised.value.reason.startswith(f"unsupported colour matrix {name}: ")


def _png_folder(folder: Path, frames: list[np.ndarray], mode: str) -> Path:
    folder.mkdir()
    (folder / "fps.txt").write_text("8")
    for i, image in enumerate(frames):
        PIL.Image.fromarray(image, "RGBA").convert(mode).save(folder / f"f_{i}.png")
    return folder


@pytest.mark.parametrize("mode", ["RGBA", "LA"])
def test_a_frame_folder_with_transparent_pixels_warns_as_a_video_does(tmp_path: Path, mode: str) -> None:
    rgb = textured_clip(4, 64, 48)
    alpha = np.full((4, 48, 64, 1), 255, np.uint8)
    alpha[1, :, :32] = 40  # one frame of four transparent on its left half
    frames = list(np.concatenate([rgb, alpha], axis=3))
    folder = _png_folder(tmp_path / "frames", frames, mode)
    with video_warnings() as found:
        read = sample_frames(folder, fps=None, max_frames=None)
    expected = ("alpha channel ignored: 1 of the 4 frames read have transparent pixels (lowest alpha 40 of "
                "255); frames are read as their stored colours, as if opaque, not composited onto a "
                "background")
    assert read.warnings == (expected,)
    assert found == [f"{folder}: {expected}"]
    # The same frames in a video say the same.
    video = tmp_path / "alpha.mov"
    with av.open(str(video), "w") as container:
        stream = container.add_stream("png", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "rgba"
        for image in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgba")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    if mode == "RGBA":
        assert sample_frames(video, fps=None, max_frames=None).warnings == (expected,)


def test_a_palette_png_with_a_transparent_entry_warns(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(2):
        image = PIL.Image.fromarray(np.tile(np.arange(64, dtype=np.uint8) % 4, (48, 1)), "P")
        image.putpalette([255, 0, 255, 10, 200, 30, 0, 0, 255, 90, 90, 90])
        image.save(folder / f"f_{i}.png", transparency=0)  # palette entry 0 (magenta) is transparent
    assert sample_frames(folder, fps=None, max_frames=None).warnings[-1].startswith(
        "alpha channel ignored: 2 of the 2 frames read have transparent pixels (lowest alpha 0 of 255)")


def test_an_opaque_rgba_frame_folder_says_nothing_of_alpha(tmp_path: Path) -> None:
    rgb = textured_clip(2, 64, 48)
    frames = list(np.concatenate([rgb, np.full((2, 48, 64, 1), 255, np.uint8)], axis=3))
    folder = _png_folder(tmp_path / "frames", frames, "RGBA")
    assert sample_frames(folder, fps=None, max_frames=None).warnings == ()


@pytest.mark.parametrize("key", [(255, 0, 255), (0, 255, 0)])
def test_a_gif_says_its_transparent_pixels_read_as_white(tmp_path: Path, key: tuple[int, int, int]) -> None:
    # A sticker GIF: palette entry 0 (the key colour) transparent, a block moving over it. FFmpeg gives
    # the transparent pixels white, not the key colour the file stores: the warning says what they are.
    # (written with Pillow: PyAV's GIF encoder keeps no transparent palette entry)
    frames = []
    for i in range(3):
        index = np.zeros((48, 64), np.uint8)
        index[10:20, 5 + 10 * i: 15 + 10 * i] = 1
        frame = PIL.Image.fromarray(index, "P")
        frame.putpalette([*key, 200, 120, 40])
        frames.append(frame)
    path = tmp_path / "sticker.gif"
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=125, loop=0, transparency=0,
                   disposal=2)
    read = sample_frames(path, fps=None, max_frames=None)
    assert read.frames[:, 0, 0].tolist() == [[255, 255, 255]] * 3  # white, not the key colour
    assert read.warnings == (
        "alpha channel ignored: 3 of the 3 frames read have transparent pixels (lowest alpha 0 of 255); "
        "transparent pixels are read as white, whatever colour the palette holds for them, not composited "
        "onto a background",)
