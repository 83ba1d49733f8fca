"""Every container the writer produces decodes, and frame folders behave like videos."""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from _videogen import levels_clip, naive_decode, textured_clip

from robojudge.video import VideoError, probe_video, sample_frames, write_video

FORMATS = [
    ("clip.mp4", None, "h264"),
    ("clip.mov", None, "h264"),
    ("clip.mkv", None, "h264"),
    ("clip.webm", None, "vp9"),
    ("clip_vp8.webm", "libvpx", "vp8"),
    ("clip.avi", None, "mjpeg"),
    ("clip_mpeg4.avi", "mpeg4", "mpeg4"),
    ("clip.gif", None, "gif"),
]


@pytest.mark.parametrize(("name", "codec", "decoded_codec"), FORMATS)
def test_container_round_trip(tmp_path: Path, name: str, codec: str | None, decoded_codec: str) -> None:
    # 20 flat frames at 10 fps (GIF stores delays in 1/100 s, so 10 fps is exact there too);
    # frame i has level 12 i. At 4 fps the targets k/4 s hit frames floor(2.5 k): 0, 2, 5, 7, ...
    path = write_video(tmp_path / name, levels_clip(20, 66, 50, step=12), fps=10, codec=codec)
    info = probe_video(path)
    assert (info.width, info.height, info.codec) == (66, 50, decoded_codec)
    assert info.fps == pytest.approx(10.0, rel=0.01)
    everything = sample_frames(path, fps=None, max_frames=None)
    assert everything.indices.tolist() == list(range(20))
    np.testing.assert_allclose(everything.timestamps, np.arange(20) / 10, atol=1e-3)
    np.testing.assert_array_equal(everything.frames, np.stack(naive_decode(path)))
    sampled = sample_frames(path)
    assert sampled.indices.tolist() == [0, 2, 5, 7, 10, 12, 15, 17]
    assert everything.warnings == sampled.warnings == info.warnings == ()  # nothing assumed
    means = sampled.frames.reshape(len(sampled), -1).mean(axis=1)
    np.testing.assert_allclose(means, 12 * sampled.indices, atol=2.5)


@pytest.mark.parametrize("name", ["odd.webm", "odd.mkv", "odd.avi", "odd.gif", "odd_frames"])
def test_odd_sizes_in_every_container(tmp_path: Path, name: str) -> None:
    path = write_video(tmp_path / name, textured_clip(4, 257, 143), fps=8)
    frames = sample_frames(path, fps=None).frames
    assert frames.shape == (4, 143, 257, 3)
    if path.is_file():
        np.testing.assert_array_equal(frames, np.stack(naive_decode(path)))


@pytest.mark.parametrize("name", ["d.mp4", "d.mkv", "d.webm", "d.avi", "d.gif"])
def test_writer_is_deterministic(tmp_path: Path, name: str) -> None:
    frames = textured_clip(10, 64, 48)
    digests = []
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        path = write_video(tmp_path / sub / name, frames, fps=10)
        digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    assert digests[0] == digests[1]


_WRITE_IN_CHILD = """
import sys
import cv2
import numpy as np
from robojudge.video import write_video

# A blurred texture that pans, with a blinking patch: motion that the encoder's look-ahead and
# macroblock-tree rate control work on (the code path that read uninitialised memory, see below).
size, n = int(sys.argv[2]), 48
rng = np.random.default_rng(0)
tex = cv2.GaussianBlur(rng.integers(0, 256, (2 * size, 2 * size, 3), dtype=np.uint8), (0, 0), 2)
frames = np.stack([np.roll(tex, (t, 2 * t), axis=(0, 1))[:size, :size] for t in range(n)])
for t in range(n):
    frames[t, 10 + t % 20 : 20 + t % 20, 30:40] = 255 * (t % 2)
write_video(sys.argv[1], frames, fps=10)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("name", "size"), [("d.mp4", 64), ("d_odd.mp4", 63), ("d.webm", 64), ("d.avi", 64)])
def test_writer_is_deterministic_across_processes(tmp_path: Path, name: str, size: int) -> None:
    # Same frames, separate processes whose heaps hold different garbage (glibc's MALLOC_PERTURB_
    # fills every fresh allocation with a byte pattern): the files must be byte-identical. libx264's
    # AVX-512 macroblock-tree code reads past the end of its buffers, so with mbtree on the output
    # depended on leftover heap contents and the simulator suite differed between two builds.
    import os
    import subprocess
    import sys

    digests = set()
    for perturb in ("0", "1", "77", "200"):
        path = tmp_path / perturb / name
        path.parent.mkdir()
        env = {**os.environ, "MALLOC_PERTURB_": perturb}
        subprocess.run(
            [sys.executable, "-c", _WRITE_IN_CHILD, str(path), str(size)], env=env, check=True, timeout=120
        )
        digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    assert len(digests) == 1


def test_writer_rejects_bad_arrays(tmp_path: Path) -> None:
    with pytest.raises(VideoError):
        write_video(tmp_path / "x.mp4", np.zeros((2, 8, 8, 4), np.uint8))
    with pytest.raises(VideoError):
        write_video(tmp_path / "x.mp4", np.zeros((2, 8, 8, 3), np.float32))
    with pytest.raises(VideoError):
        write_video(tmp_path / "x.mp4", np.zeros((0, 8, 8, 3), np.uint8))


def _write_images(folder: Path, levels: list[int], names: list[str]) -> None:
    folder.mkdir()
    for level, name in zip(levels, names, strict=True):
        cv2.imwrite(str(folder / name), np.full((12, 20, 3), level, np.uint8))


def test_frame_folder_natural_order_and_default_fps(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    # Written in shuffled order; natural order is frame_1, frame_2, ..., frame_12.
    numbers = [10, 2, 1, 12, 3, 11, 4, 9, 5, 8, 6, 7]
    _write_images(folder, [20 * n for n in numbers], [f"frame_{n}.png" for n in numbers])
    (folder / "notes.txt").write_text("ignored")
    s = sample_frames(folder, fps=None)
    assert s.source_fps == 30.0
    np.testing.assert_allclose(s.timestamps, np.arange(12) / 30)
    np.testing.assert_array_equal(s.frames[:, 0, 0, 0], [20 * n for n in range(1, 13)])
    info = probe_video(folder)
    assert (info.width, info.height, info.frame_count, info.codec) == (20, 12, 12, "png")
    # The rate is a guess: the result says so, and names the file that would settle it.
    assumed = "no fps.txt in the frame folder; rate assumed to be 30 fps"
    assert s.warnings == info.warnings == (assumed,)


@pytest.mark.parametrize("fps_name", ["fps", "fps.txt"])
def test_frame_folder_fps_file(tmp_path: Path, fps_name: str) -> None:
    folder = tmp_path / "frames"
    _write_images(folder, [10 * i for i in range(9)], [f"img{i}.jpg" for i in range(9)])
    (folder / fps_name).write_text("8\n")
    # 9 frames at 8 fps, targets k/4 s -> frames 2k: 0, 2, 4, 6, 8.
    s = sample_frames(folder)
    assert s.indices.tolist() == [0, 2, 4, 6, 8] and s.source_fps == 8.0
    assert s.warnings == probe_video(folder).warnings == ()
    np.testing.assert_allclose(s.frames.reshape(5, -1).mean(axis=1), 10 * s.indices, atol=2)
    assert sample_frames(folder, size=10, gray=True).frames.shape == (5, 6, 10)


def test_writer_folder_round_trip(tmp_path: Path) -> None:
    frames = levels_clip(6, step=40)
    folder = write_video(tmp_path / "out_frames", frames, fps=12)
    assert sorted(p.name for p in folder.iterdir())[:2] == ["fps.txt", "frame_00000.png"]
    s = sample_frames(folder, fps=None)
    assert s.source_fps == 12.0
    np.testing.assert_array_equal(s.frames, frames)
