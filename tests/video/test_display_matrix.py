"""A display matrix that mirrors the picture is applied as FFmpeg's autorotate applies it.

Found by an audit of 2026-12-06 (phone front cameras, editors' "flip"): only the matrix's angle was read,
so a left-right mirror (angle 180) came out upside down and a quarter turn with a flip came out turned
but not mirrored; an angle off a quarter turn was rounded without a word.
"""

from __future__ import annotations

from pathlib import Path

import av
import av.filter
import numpy as np
import pytest
from av.video.stream import VideoStream

from _encode import mux_frames
from robojudge.video import probe_video, sample_frames
from robojudge.video._decode import open_video, stream_meta
from robojudge.video._filesample import _two_pass
from robojudge.video._post import PostProcess

if not hasattr(VideoStream, "set_display_matrix"):
    pytest.skip("writing a display matrix needs a newer PyAV", allow_module_level=True)

ONE = 1 << 16  # 1.0 in the matrix's 16.16 fixed point; its last element is 1.0 in 2.30
FRAMES = np.random.default_rng(0).integers(0, 256, (3, 24, 40, 3), dtype=np.uint8)


def _write(path: Path, frames: np.ndarray, matrix: list[int] | None = None) -> Path:
    """Lossless H.264 (4:4:4, qp 0), so two files of the same pixels decode to the same RGB."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=10, options={"qp": "0"})
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv444p"
        if matrix is not None:
            stream.set_display_matrix(matrix)
        mux_frames(container, stream, (av.VideoFrame.from_ndarray(rgb, format="rgb24") for rgb in frames))
    return path


def _ffmpeg_shows(frames: np.ndarray, filters: list[tuple[str, str | None]]) -> np.ndarray:
    """The frames through the filters ``ffmpeg`` inserts for the matrix (run by FFmpeg itself)."""
    out = []
    for rgb in frames:
        graph = av.filter.Graph()
        last = graph.add_buffer(width=rgb.shape[1], height=rgb.shape[0], format="rgb24", time_base=1)
        for name, arg in filters:
            node = graph.add(name, arg) if arg else graph.add(name)
            last.link_to(node)
            last = node
        sink = graph.add("buffersink")
        last.link_to(sink)
        graph.configure()
        graph.push(av.VideoFrame.from_ndarray(rgb, format="rgb24"))
        out.append(graph.pull().to_ndarray(format="rgb24"))
    return np.stack(out)


def _matrix(a: int, b: int, c: int, d: int) -> list[int]:
    return [a * ONE, b * ONE, 0, c * ONE, d * ONE, 0, 0, 0, 1 << 30]


@pytest.mark.parametrize(
    ("matrix", "filters"),
    [
        (_matrix(-1, 0, 0, 1), [("hflip", None)]),  # angle 180 with a mirror: was read upside down
        (_matrix(1, 0, 0, -1), [("vflip", None)]),  # angle 0: was read as stored
        (_matrix(0, -1, -1, 0), [("transpose", "clock_flip")]),  # 90 with a flip: was turned, not mirrored
        (_matrix(0, 1, 1, 0), [("transpose", "cclock_flip")]),
        (_matrix(-1, 0, 0, -1), [("hflip", None), ("vflip", None)]),  # a plain half turn, as before
    ],
    ids=["hflip", "vflip", "rot90-hflip", "transpose", "rot180"],
)
def test_a_mirroring_matrix_gives_the_picture_ffmpeg_shows(
    tmp_path: Path, matrix: list[int], filters: list[tuple[str, str | None]]
) -> None:
    flagged = _write(tmp_path / "flagged.mp4", FRAMES, matrix)
    plain = _write(tmp_path / "plain.mp4", np.ascontiguousarray(_ffmpeg_shows(FRAMES, filters)))
    want = sample_frames(plain, fps=None, max_frames=None)
    got = sample_frames(flagged, fps=None, max_frames=None)
    assert got.frames.shape == want.frames.shape and np.array_equal(got.frames, want.frames)
    assert got.warnings == ()
    info, shown = probe_video(flagged), probe_video(plain)
    assert (info.width, info.height) == (shown.width, shown.height) and info.warnings == ()
    assert info.mirrored == (len(filters) == 1)
    # the two-pass read (for files whose packet stamps cannot name the frames) turns them alike
    with open_video(flagged) as (container, stream):
        meta = stream_meta(container, stream)
    again = _two_pass(flagged, meta, None, None, PostProcess(None, False))
    assert np.array_equal(again.frames, want.frames)


def test_an_angle_off_a_quarter_turn_is_rounded_with_a_warning(tmp_path: Path) -> None:
    # 45 degrees counter-clockwise (cos 45 = 0.7071 in 16.16); ffmpeg would rotate by 45 degrees, a
    # browser shows it as stored. It was rounded to 0 without a word.
    q = round(0.70710678 * ONE)
    path = _write(tmp_path / "rot45.mp4", FRAMES, [q, -q, 0, q, q, 0, 0, 0, 1 << 30])
    said = ("the display matrix turns the picture 45 degrees counter-clockwise, not a multiple of 90: frames "
            "are read turned by the nearest quarter turn, 0 degrees")
    info = probe_video(path)
    assert (info.rotation, info.mirrored, info.warnings) == (0, False, (said,))
    got = sample_frames(path, fps=None, max_frames=None)
    assert got.warnings == (said,) and got.frames.shape == (3, 24, 40, 3)
