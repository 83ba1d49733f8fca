"""A video with non-square pixels (anamorphic, e.g. DV's 720x480 shown at 853x480) is read as stored,
and every read of it says so in its warnings, which reach the result rows (``details.video_warnings``)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from robojudge.run import build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import probe_video, sample_frames, write_video

SAYS = ("non-square pixels (sample aspect ratio 32:27): frames are read as stored, 96x64, not as displayed, "
        "114x64; sizes, flow and geometry are in stored pixels")


@pytest.fixture
def anamorphic(tmp_path: Path) -> Path:
    path = tmp_path / "dv.mp4"
    rng = np.random.default_rng(0)
    canvas = rng.integers(0, 256, (64 + 20, 96 + 40, 3), dtype=np.uint8)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 96, 64, "yuv420p"
        stream.codec_context.sample_aspect_ratio = Fraction(32, 27)
        for i in range(16):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(canvas[i:i + 64, 2 * i:2 * i + 96]),
                                               format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def test_every_read_says_the_pixels_are_not_square(anamorphic: Path, tmp_path: Path) -> None:
    frames = sample_frames(anamorphic, fps=None, max_frames=None)
    assert frames.frames.shape == (16, 64, 96, 3)  # as stored
    assert SAYS in frames.warnings
    assert SAYS in probe_video(anamorphic).warnings
    square = write_video(tmp_path / "square.mp4", frames.frames, fps=8)
    assert not any("non-square" in w for w in sample_frames(square, fps=None, max_frames=None).warnings)
    assert not any("non-square" in w for w in probe_video(square).warnings)


def test_the_warning_reaches_the_rows(anamorphic: Path, tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = score_items([Item(item_id="dv", video=str(anamorphic))],
                              build_requests(["pixel_frame_consistency"]), store)
        (row,) = store.rows()
    assert row.details["video_warnings"] == [f"{anamorphic}: {SAYS}"] and summary.warned == 1


@pytest.mark.skipif(not hasattr(av.video.stream.VideoStream, "set_display_matrix"),
                    reason="writing a display matrix needs a newer PyAV")
def test_a_turned_video_names_the_sizes_it_is_read_and_shown_at(tmp_path: Path) -> None:
    # Audit (codecs F4): 64x48 stored, SAR 4:3, a quarter turn: frames are read as 48x64 and shown as
    # 48x85, but the warning said "read as stored, 64x48, not as displayed, 85x48".
    path = tmp_path / "turned.mp4"
    one = 1 << 16
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.codec_context.sample_aspect_ratio = Fraction(4, 3)
        stream.set_display_matrix([0, one, 0, -one, 0, 0, 0, 0, 1 << 30])  # 90 degrees
        for i in range(4):
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.full((48, 64, 3), 40 * i, np.uint8),
                                                                   format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    says = ("non-square pixels (sample aspect ratio 4:3): frames are read as stored, 48x64 (turned upright), "
            "not as displayed, 48x85; sizes, flow and geometry are in stored pixels")
    got = sample_frames(path, fps=None, max_frames=None)
    info = probe_video(path)
    assert got.frames.shape[1:3] == (64, 48) and info.rotation in (90, 270)
    assert says in got.warnings and says in info.warnings
