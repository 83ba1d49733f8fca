"""Reading video with PyAV 19 as with 18: the two calls of PyAV whose behaviour 19 changed.

Found by the packaging audit of 2026-12-06: pip installs PyAV 19 on Python 3.12 and 3.13, where no video
could be read. ``av.open`` no longer takes ``metadata_errors`` (a ``TypeError`` for every file), and
iterating a frame's side data gives the entries' types instead of the entries (the display matrix was
looked for with ``.type`` of a type). Here PyAV 18 reads real files, with its ``av.open`` or side-data
iteration replaced by one that behaves as 19's does; under PyAV 19 the same tests run it unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from av.sidedata.sidedata import SideDataContainer
from av.video.stream import VideoStream

from _encode import mux_frames
from robojudge.video import probe_video, sample_frames
from robojudge.video._orient import _display_matrix

ONE = 1 << 16  # 1.0 in the display matrix's 16.16 fixed point
FRAMES = np.random.default_rng(3).integers(0, 256, (3, 24, 40, 3), dtype=np.uint8)


def _write(path: Path, matrix: list[int] | None = None, title: str | None = None) -> Path:
    """Lossless H.264 (4:4:4, qp 0) of FRAMES, with a display matrix and a title when given."""
    with av.open(str(path), "w") as container:
        if title is not None:
            container.metadata["title"] = title
        stream = container.add_stream("libx264", rate=10, options={"qp": "0"})
        stream.width, stream.height, stream.pix_fmt = 40, 24, "yuv444p"
        if matrix is not None:
            stream.set_display_matrix(matrix)
        mux_frames(container, stream, (av.VideoFrame.from_ndarray(rgb, format="rgb24") for rgb in FRAMES))
    return path


def _quarter_turn(tmp_path: Path) -> Path:
    if not hasattr(VideoStream, "set_display_matrix"):
        pytest.skip("writing a display matrix needs a newer PyAV")
    return _write(tmp_path / "turned.mp4", [0, ONE, 0, -ONE, 0, 0, 0, 0, 1 << 30])  # shown a quarter turn


def _as_stored(tmp_path: Path) -> np.ndarray:
    """FRAMES as read from a file without a display matrix (the codec rounds them: not FRAMES)."""
    return sample_frames(_write(tmp_path / "stored.mp4"), fps=None, max_frames=None).frames


def _iterates_types(self: Any) -> Any:
    """Side data iterated as PyAV 19 iterates it: the types, as a Mapping's keys."""
    return iter([self[i].type for i in range(len(self))])


@pytest.fixture()
def av19_side_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SideDataContainer, "__iter__", _iterates_types)


def _open_without_metadata_errors(real: Any) -> Any:
    """``av.open`` with the keywords PyAV 19 takes: ``metadata_errors`` is a ``TypeError``."""

    def open(file: Any, mode: Any = None, format: Any = None, options: Any = None,  # noqa: A001
             container_options: Any = None, buffer_size: int = 32768, timeout: Any = None,
             io_open: Any = None, hwaccel: Any = None) -> Any:
        return real(file, mode=mode, format=format, options=options, container_options=container_options,
                    buffer_size=buffer_size, timeout=timeout, io_open=io_open, hwaccel=hwaccel)

    return open


def test_the_display_matrix_is_found_when_side_data_iterates_its_types(
    tmp_path: Path, av19_side_data: None
) -> None:
    path = _quarter_turn(tmp_path)
    with av.open(str(path)) as container:
        frame = next(container.decode(video=0))
        assert all(isinstance(k, type(frame.side_data[0].type)) for k in SideDataContainer(frame))
        assert _display_matrix(frame) == (0.0, 1.0, -1.0, 0.0)
    # 270 degrees counter-clockwise, as FFmpeg's autorotate turns it (tests/video/test_display_matrix.py)
    assert probe_video(path).rotation == 270
    got = sample_frames(path, fps=None, max_frames=None).frames
    np.testing.assert_array_equal(got, np.rot90(_as_stored(tmp_path), 3, axes=(1, 2)))


def test_a_frame_without_side_data_has_no_matrix(tmp_path: Path, av19_side_data: None) -> None:
    path = _write(tmp_path / "plain.mp4")
    with av.open(str(path)) as container:
        assert _display_matrix(next(container.decode(video=0))) is None
    assert probe_video(path).rotation == 0


def test_a_video_opens_with_an_av_open_that_takes_no_metadata_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = _as_stored(tmp_path)
    path = _write(tmp_path / "plain.mp4")
    monkeypatch.setattr(av, "open", _open_without_metadata_errors(av.open))
    with pytest.raises(TypeError, match="metadata_errors"):
        av.open(str(path), metadata_errors="ignore")
    assert probe_video(path).frame_count == 3
    np.testing.assert_array_equal(sample_frames(path, fps=None, max_frames=None).frames, want)


def test_a_title_that_is_not_utf8_does_not_stop_the_video(tmp_path: Path) -> None:
    # The title's UTF-8 "é" (c3 a9) becomes Latin-1's e9 and a space, the same length in the file.
    path = _write(tmp_path / "titled.mkv", title="caf\u00e9 robot")
    data = path.read_bytes()
    assert data.count("caf\u00e9 robot".encode()) == 1
    path.write_bytes(data.replace("caf\u00e9 robot".encode(), b"caf\xe9  robot"))
    with pytest.raises(UnicodeDecodeError):
        b"caf\xe9  robot".decode()
    assert (probe_video(path).width, probe_video(path).duration) == (40, 0.3)
    np.testing.assert_array_equal(sample_frames(path, fps=None, max_frames=None).frames, _as_stored(tmp_path))
