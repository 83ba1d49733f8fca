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
