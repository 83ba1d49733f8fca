"""Colour and pixel formats of video files: what robojudge reads from HDR and wide-gamut tags, high bit
depths and 16-bit RGB, each checked on small clips written here with PyAV."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from _videogen import textured_clip

from robojudge.video import probe_video, sample_frames, video_warnings


def _tagged(path: Path, frames: np.ndarray, trc: int, primaries: int, colorspace: int,
            pix_fmt: str = "yuv420p", codec: str = "libx264") -> Path:
    """``frames`` (RGB) encoded with the colour tags given (FFmpeg's enum values) in the bitstream."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=8)
        stream.height, stream.width, stream.pix_fmt = frames.shape[1], frames.shape[2], pix_fmt
        ctx = stream.codec_context
        ctx.color_trc, ctx.color_primaries, ctx.colorspace, ctx.color_range = trc, primaries, colorspace, 1
        for i, image in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format=pix_fmt)
            frame.color_trc, frame.color_primaries, frame.colorspace, frame.color_range = (
                trc, primaries, colorspace, 1)
            frame.pts, frame.time_base = i, Fraction(1, 8)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


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
