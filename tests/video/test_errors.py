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


def _cut(src: Path, dst: Path, fraction: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * fraction)])
    return dst


def _decodable(path: Path) -> int:
    from robojudge.video._decode import decoded_frames, open_video

    with open_video(path) as (container, stream):
        return sum(1 for _ in decoded_frames(container, stream))


@pytest.mark.parametrize("fps", [None, 4.0])
def test_grossly_truncated_mp4_is_an_error(tmp_path: Path, fps: float | None) -> None:
    # The writer puts the mp4 index first, so the first third of the file still opens and declares
    # 40 frames (2.5 s at 16 fps) but holds the data of only about a third of them. Scoring that
    # prefix as if it were the whole video would be wrong: it is an error, whatever the sampling rate.
    full = write_video(tmp_path / "full.mp4", textured_clip(40, 96, 64), fps=16)
    third = _cut(full, tmp_path / "third.mp4", 1 / 3)
    n = _decodable(third)
    assert 0 < n < 20
    reason = _reason(lambda p: sample_frames(p, fps=fps, max_frames=None), third)
    assert reason == f"truncated: decoded {n} of 40 declared frames ({n / 16:.1f} s of 2.5 s)"


def test_mildly_truncated_mp4_returns_the_prefix_with_a_warning(tmp_path: Path) -> None:
    # Losing the last few frames (more than one, less than half) keeps the decodable prefix usable,
    # but the sampled result says what is missing.
    full = write_video(tmp_path / "full.mp4", textured_clip(40, 96, 64), fps=16)
    most = _cut(full, tmp_path / "most.mp4", 0.9)
    n = _decodable(most)
    assert 20 <= n <= 38
    complete = sample_frames(full, fps=None, max_frames=None)
    partial = sample_frames(most, fps=None, max_frames=None)
    assert complete.warnings == ()
    assert len(partial) == n and partial.indices.tolist() == list(range(n))
    np.testing.assert_array_equal(partial.frames[: n - 1], complete.frames[: n - 1])
    assert partial.warnings == (f"truncated: decoded {n} of 40 declared frames ({n / 16:.1f} s of 2.5 s)",)


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
    assert "missing its header (moov)" in _reason(sample_frames, half)


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


def _gif(path: Path, n: int) -> Path:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("gif", rate=10)
        stream.width = stream.height = 32
        stream.pix_fmt = "rgb8"
        for t in range(n):
            frame = np.zeros((32, 32, 3), np.uint8)
            frame[4:10, t % 26:t % 26 + 5] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


def test_a_gif_cut_short_says_so(tmp_path: Path) -> None:
    # A GIF declares no length: cut at 30% it decoded as a short clip with no sign of the cut.
    full = _gif(tmp_path / "full.gif", 60)
    cut = _cut(full, tmp_path / "cut.gif", 0.3)
    assert sample_frames(full, fps=None, max_frames=None).warnings == ()
    got = sample_frames(cut, fps=None, max_frames=None)
    assert 0 < len(got) < 60
    assert any("GIF ends without its trailer" in w for w in got.warnings)
    assert any("GIF ends without its trailer" in w for w in probe_video(cut).warnings)


@pytest.mark.parametrize("fn", READERS)
@pytest.mark.parametrize("where", ["frames", "header"])
def test_an_mp4_cut_before_its_header_says_so(tmp_path: Path, fn: object, where: str) -> None:
    # Audit (codecs F5): an MP4 whose moov header comes last (a recorder's default), cut short before it
    # or inside it, was refused as "no video stream" (as an audio-only .m4a is) or "not a video file".
    full = tmp_path / "full.mp4"
    with av.open(str(full), "w") as container:  # libavformat's default: moov after the frames
        stream = container.add_stream("libx264", rate=16)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuv420p"
        for rgb in textured_clip(20, 32, 32):
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    data = full.read_bytes()
    moov, mdat = data.index(b"moov") - 4, data.index(b"mdat") - 4
    assert moov > mdat  # the header at the end
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: (mdat + moov) // 2 if where == "frames" else moov + 12])
    assert _reason(fn, cut) == (
        "no streams: an MP4/MOV missing its header (moov), as a recording stopped before it was finalised "
        "or a partial download leaves it; the frames cannot be located")
