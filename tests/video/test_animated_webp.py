"""Animated WebP: FFmpeg decodes still WebP only, so an animated one was "zero frames decoded". It is read
with Pillow, each frame shown for its own duration, and scored like any video."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from robojudge.suite import scan_folder
from robojudge.video import VideoError, is_animated_webp, probe_video, sample_frames, write_video

DURATIONS_MS = [100, 100, 50, 50, 200, 100, 100, 100]


def _frames(n: int = len(DURATIONS_MS), alpha: int | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    shape = (48, 64, 3 if alpha is None else 4)
    frames = [rng.integers(0, 256, size=shape, dtype=np.uint8) for _ in range(n)]
    if alpha is not None:
        for f in frames:
            f[..., 3] = alpha
    return frames


def _webp(path: Path, frames: list[np.ndarray], durations: list[int] | int = DURATIONS_MS) -> Path:
    images = [Image.fromarray(f) for f in frames]
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0, lossless=True)
    return path


def test_frames_come_back_at_their_own_times(tmp_path: Path) -> None:
    frames = _frames()
    path = _webp(tmp_path / "clip.webp", frames)
    assert is_animated_webp(path)
    info = probe_video(path)
    # 8 frames over 800 ms; shown at 0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.6, 0.7 s
    assert (info.width, info.height, info.frame_count, info.codec) == (64, 48, 8, "webp (animated)")
    assert info.duration == pytest.approx(0.8) and info.fps == pytest.approx(10.0)
    every = sample_frames(path, fps=None, max_frames=None)
    np.testing.assert_allclose(every.timestamps, [0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.6, 0.7])
    np.testing.assert_array_equal(every.frames, np.stack(frames))  # lossless: the exact pixels
    assert every.warnings == ()
    # 4 fps: targets 0, 0.25, 0.5 (0.75 is past the last frame); latest frame at or before each
    four = sample_frames(path, fps=4.0)
    assert four.indices.tolist() == [0, 3, 5]
    np.testing.assert_array_equal(four.frames, np.stack([frames[i] for i in (0, 3, 5)]))
    # the densest rate is 20 fps (two 50 ms frames): 10 fps is a rate step, not every frame
    assert sample_frames(path, fps=10.0).indices.tolist() == [0, 1, 2, 4, 5, 6, 7]
    assert sample_frames(path, fps=20.0).indices.tolist() == list(range(8))
    small = sample_frames(path, fps=None, size=32)
    assert small.frames.shape == (8, 24, 32, 3)


def test_still_webp_is_not_a_video_and_a_cut_file_is_refused(tmp_path: Path) -> None:
    still = tmp_path / "still.webp"
    Image.fromarray(_frames(1)[0]).save(still, lossless=True)
    assert not is_animated_webp(still)
    assert not is_animated_webp(tmp_path / "missing.webp")
    data = _webp(tmp_path / "clip.webp", _frames()).read_bytes()
    cut = tmp_path / "cut.webp"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError, match=r"cut\.webp: truncated: the file holds \d+ of the \d+ bytes"):
        sample_frames(cut)


def test_no_durations_and_transparency_are_said(tmp_path: Path) -> None:
    path = _webp(tmp_path / "timeless.webp", _frames(4), durations=0)
    got = sample_frames(path, fps=None)
    np.testing.assert_allclose(got.timestamps, np.arange(4) / 30)
    assert got.warnings == ("animated WebP gives no frame durations; rate assumed to be 30 fps",)
    see_through = _webp(tmp_path / "alpha.webp", _frames(3, alpha=100), durations=100)
    (warning,) = sample_frames(see_through, fps=None).warnings
    assert warning.startswith("alpha channel ignored: 3 of the 3 frames read have transparent pixels "
                              "(lowest alpha 100 of 255)")


def test_scan_takes_an_animated_webp_as_a_video_and_scoring_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "videos"
    (root / "gen").mkdir(parents=True)
    _webp(root / "gen" / "ep1.webp", _frames())
    write_video(root / "gen" / "ep2.mp4", np.stack(_frames(4)), fps=4)
    frames_dir = root / "gen" / "ep3"  # a frame folder of still WebP images stays a frame folder
    frames_dir.mkdir()
    for i, f in enumerate(_frames(3)):
        Image.fromarray(f).save(frames_dir / f"{i}.webp", lossless=True)
    result = scan_folder(root, frame_folders=True)
    videos = {it["item_id"]: it["video"] for it in result.items}
    assert set(videos) == {"gen/ep1", "gen/ep2", "gen/ep3"}
    assert videos["gen/ep1"].endswith("ep1.webp") and videos["gen/ep3"].endswith("ep3")

    monkeypatch.chdir(tmp_path)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({**it, "instruction": "x"}) + "\n" for it in result.items))
    from robojudge.run import score_suite

    run = score_suite(manifest, ["pixel_frame_consistency"])
    assert run.summary.ok == 3 and run.summary.failed == 0


def test_a_canvas_over_the_pixel_limit_is_a_video_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _webp(tmp_path / "clip.webp", _frames(3), 100)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # refused past 2,000 pixels; the canvas is 64x48
    with pytest.raises(VideoError) as info:  # before: PIL.Image.DecompressionBombError, no OSError
        sample_frames(path, fps=None)
    assert info.value.path == path
    assert info.value.reason == (
        "the animated WebP is 64x48 (3,072 pixels), over the limit of 2,000 pixels an image may have "
        "(Pillow refuses it as a possible decompression bomb)"
    )
