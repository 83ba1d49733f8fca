"""Bad inputs raise VideoError with a clear reason; no PyAV or OpenCV exception escapes."""

from __future__ import annotations

import pickle
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
from _videogen import levels_clip, textured_clip

from robojudge.video import VideoError, probe_video, sample_frames, write_video

READERS = [sample_frames, probe_video]


def _reason(fn: object, path: Path) -> str:
    with pytest.raises(VideoError) as info:
        fn(path)  # type: ignore[operator]
    assert info.value.path == path
    return info.value.reason


@pytest.mark.parametrize("fn", READERS)
def test_missing_file(tmp_path: Path, fn: object) -> None:
    assert _reason(fn, tmp_path / "nope.mp4") == "file not found"


@pytest.mark.parametrize("fn", READERS)
def test_zero_byte_file(tmp_path: Path, fn: object) -> None:
    path = tmp_path / "empty.mp4"
    path.touch()
    assert "0 bytes" in _reason(fn, path)


@pytest.mark.parametrize("fn", READERS)
def test_text_file_named_mp4(tmp_path: Path, fn: object) -> None:
    path = tmp_path / "notes.mp4"
    path.write_text("this is a plain text file, not a video\n" * 20)
    assert "not a video file" in _reason(fn, path)


def test_truncated_mp4_returns_decodable_prefix(tmp_path: Path) -> None:
    # The writer puts the mp4 index first, so the first half of the file still has its index and
    # about half of the frame data: sampling returns the frames that decode, without error.
    full = write_video(tmp_path / "full.mp4", textured_clip(40, 96, 64), fps=16)
    half = tmp_path / "half.mp4"
    half.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    complete = sample_frames(full, fps=None, max_frames=None)
    partial = sample_frames(half, fps=None, max_frames=None)
    assert 0 < len(partial) < len(complete)
    n = len(partial)
    assert partial.indices.tolist() == list(range(n))
    np.testing.assert_array_equal(partial.frames[: n - 1], complete.frames[: n - 1])


def test_truncated_mp4_without_index_is_an_error(tmp_path: Path) -> None:
    # Plain PyAV muxing writes the index (moov) at the end; cutting the file loses it.
    path = tmp_path / "full.mp4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=16)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for rgb in levels_clip(16):
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    half = tmp_path / "half.mp4"
    half.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert "not a video file" in _reason(sample_frames, half)


@pytest.mark.parametrize("fn", READERS)
def test_no_decodable_frame(tmp_path: Path, fn: object) -> None:
    full = write_video(tmp_path / "full.mp4", textured_clip(20, 96, 64), fps=16)
    head = full.read_bytes()
    moov_end = head.index(b"mdat")  # keep the header and index, drop all frame data
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(head[: moov_end + 64])
    assert _reason(fn, cut) == "zero frames decoded"


@pytest.mark.parametrize("fn", READERS)
def test_audio_only_file(tmp_path: Path, fn: object) -> None:
    path = tmp_path / "tone.m4a"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=16000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        frame.sample_rate = 16000
        frame.pts, frame.time_base = 0, Fraction(1, 16000)
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    assert _reason(fn, path) == "no video stream"


@pytest.mark.parametrize("fn", READERS)
def test_empty_frame_folder(tmp_path: Path, fn: object) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "readme.txt").write_text("no images here")
    assert "empty frame folder" in _reason(fn, folder)


def test_unreadable_image_in_folder(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(3):
        cv2.imwrite(str(folder / f"f{i}.png"), np.zeros((8, 8, 3), np.uint8))
    (folder / "f3.png").write_bytes(b"definitely not a png")
    reason = _reason(lambda p: sample_frames(p, fps=None), folder)
    assert "f3.png" in reason


def test_bad_fps_file(tmp_path: Path) -> None:
    folder = write_video(tmp_path / "frames", levels_clip(2), fps=5)
    (folder / "fps.txt").write_text("fast")
    assert "fps.txt" in _reason(sample_frames, folder)


def test_video_error_pickles() -> None:
    err = VideoError("/data/clip.mp4", "zero frames decoded")
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, VideoError)
    assert (back.path, back.reason, str(back)) == (err.path, err.reason, str(err))
