"""sample_frames on real encoded files: counts, timestamps, content, rotation, resizing."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from _videogen import levels_clip, naive_decode, textured_clip, write_timed
from av.video.stream import VideoStream

from robojudge.video import _filesample, probe_video, sample_frames, write_video


@pytest.fixture(scope="module")
def clip81(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """81 flat frames at 16 fps; frame i has gray level 3 i (0 .. 240)."""
    return write_video(tmp_path_factory.mktemp("v") / "clip81.mp4", levels_clip(81), fps=16)


def test_81_frames_at_16fps(clip81: Path) -> None:
    # Targets k/4 s, k = 0..20, coincide with frames 4k (4k/16 s): 21 frames, no thinning needed.
    s = sample_frames(clip81)
    assert s.indices.tolist() == list(range(0, 81, 4))
    np.testing.assert_allclose(s.timestamps, np.arange(21) * 0.25, atol=1e-9)
    assert s.frames.shape == (21, 48, 64, 3) and s.frames.dtype == np.uint8
    assert s.frames.flags["C_CONTIGUOUS"] and s.source_fps == pytest.approx(16.0)


def test_content_matches_chosen_index(clip81: Path) -> None:
    # The mean brightness of each sampled frame must be 3 * (its index), up to compression error.
    s = sample_frames(clip81)
    means = s.frames.reshape(len(s), -1).mean(axis=1)
    np.testing.assert_allclose(means, 3 * s.indices, atol=1.5)


def test_fps_none_and_high_fps_take_every_frame(clip81: Path) -> None:
    assert sample_frames(clip81, fps=None, max_frames=None).indices.tolist() == list(range(81))
    assert len(sample_frames(clip81, fps=30, max_frames=None)) == 81
    # Every frame, then thinned 81 -> 32 uniformly: positions round(j * 80 / 31).
    s = sample_frames(clip81, fps=None, max_frames=32)
    assert s.indices.tolist() == np.round(np.linspace(0, 80, 32)).astype(int).tolist()
    means = s.frames.reshape(len(s), -1).mean(axis=1)
    np.testing.assert_allclose(means, 3 * s.indices, atol=1.5)


def test_ten_seconds_at_30fps_is_thinned_to_32(tmp_path: Path) -> None:
    # 300 frames at 30 fps. Rate step: targets k/4 s for k = 0..39 -> 40 picks, frame floor(7.5 k).
    # Thinning 40 -> 32 keeps positions round(j * 39 / 31) (first and last included).
    path = write_video(tmp_path / "ten.mp4", levels_clip(300, 32, 32, step=0), fps=30)
    s = sample_frames(path)
    positions = [0, 1, 3, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15, 16, 18, 19,
                 20, 21, 23, 24, 25, 26, 28, 29, 30, 31, 33, 34, 35, 36, 38, 39]  # fmt: skip
    assert s.indices.tolist() == [int(7.5 * p) for p in positions]
    np.testing.assert_allclose(s.timestamps, s.indices / 30, atol=1e-6)
    assert s.indices[0] == 0 and s.indices[-1] == 292  # floor(7.5 * 39)


@pytest.mark.parametrize("suffix", [".mkv", ".mp4"])
def test_variable_frame_rate(tmp_path: Path, suffix: str) -> None:
    # Frames at 0, 100, 150, 500, 550, 600, 1000, 1300 ms. 4 fps targets 0 .. 1.25 s pick the latest
    # frame at or before each: 0, 2, 3, 5, 6, (6 again: dropped).
    times_ms = [0, 100, 150, 500, 550, 600, 1000, 1300]
    frames = levels_clip(len(times_ms), step=30)
    path = write_timed(tmp_path / f"vfr{suffix}", frames, times_ms)
    s = sample_frames(path)
    assert s.indices.tolist() == [0, 2, 3, 5, 6]
    np.testing.assert_allclose(s.timestamps, [0.0, 0.15, 0.5, 0.6, 1.0], atol=1e-3)
    means = s.frames.reshape(len(s), -1).mean(axis=1)
    np.testing.assert_allclose(means, 30 * s.indices, atol=2)


def test_single_frame_video(tmp_path: Path) -> None:
    path = write_video(tmp_path / "one.mp4", levels_clip(1), fps=16)
    s = sample_frames(path)
    assert len(s) == 1 and s.indices.tolist() == [0] and s.timestamps.tolist() == [0.0]


def test_odd_size_and_resizing(tmp_path: Path) -> None:
    path = write_video(tmp_path / "odd.mp4", textured_clip(8, 257, 143), fps=8)
    assert sample_frames(path).frames.shape == (4, 143, 257, 3)
    # Longer side -> 100: height round(143 * 100 / 257) = round(55.6) = 56.
    assert sample_frames(path, size=100).frames.shape == (4, 56, 100, 3)
    assert sample_frames(path, size=(64, 48)).frames.shape == (4, 48, 64, 3)
    assert sample_frames(path, size=400).frames.shape == (4, 223, 400, 3)  # enlarging works too
    info = probe_video(path)
    assert (info.width, info.height, info.frame_count) == (257, 143, 8)


def test_fast_resampling_is_bilinear_down_to_half_a_side_and_area_beyond(tmp_path: Path) -> None:
    path = write_video(tmp_path / "tex.mp4", textured_clip(4, 200, 120), fps=4)
    native = sample_frames(path).frames
    for size, interp in ((150, cv2.INTER_LINEAR), (100, cv2.INTER_LINEAR), (60, cv2.INTER_AREA)):
        fast = sample_frames(path, size=size, resample="fast").frames
        expected = np.stack([cv2.resize(f, fast.shape[2:0:-1], interpolation=interp) for f in native])
        assert np.array_equal(fast, expected), size
        area = np.stack([cv2.resize(f, fast.shape[2:0:-1], interpolation=cv2.INTER_AREA) for f in native])
        assert np.array_equal(sample_frames(path, size=size).frames, area), size  # the default is area
    # 150 px is not a whole fraction of 200: the two resamplings give other frames, cached apart
    assert not np.array_equal(sample_frames(path, size=150, resample="fast").frames,
                              sample_frames(path, size=150).frames)
    with pytest.raises(ValueError, match="resample"):
        sample_frames(path, size=150, resample="cubic")


def test_gray_matches_cv2(tmp_path: Path) -> None:
    path = write_video(tmp_path / "tex.mp4", textured_clip(12), fps=12)
    rgb = sample_frames(path, size=80)
    gray = sample_frames(path, size=80, gray=True)
    assert gray.frames.shape == rgb.frames.shape[:3] and gray.frames.flags["C_CONTIGUOUS"]
    expected = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in rgb.frames])
    assert np.abs(gray.frames.astype(int) - expected).max() <= 1


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_rotation_metadata_is_applied(tmp_path: Path, rotation: int) -> None:
    if not hasattr(VideoStream, "set_display_rotation"):
        pytest.skip("writing display rotation needs a newer PyAV")
    frames = np.zeros((3, 32, 64, 3), dtype=np.uint8)
    frames[:, :, :8] = 255  # white stripe along the left edge of the stored picture
    path = write_timed(tmp_path / f"rot{rotation}.mp4", frames, [0, 250, 500], rotation=rotation)
    info = probe_video(path)
    assert info.rotation == rotation
    s = sample_frames(path)
    # FFmpeg's display matrix angle is counter-clockwise: turning the picture 90 degrees that way
    # moves the left edge to the bottom; 180 to the right; 270 (= 90 clockwise) to the top.
    if rotation == 180:
        assert (info.width, info.height) == (64, 32) and s.frames.shape[1:3] == (32, 64)
        assert s.frames[0, :, -8:].mean() > 240 and s.frames[0, :, :-8].mean() < 15
    else:
        assert (info.width, info.height) == (32, 64) and s.frames.shape[1:3] == (64, 32)
        stripe = s.frames[0, -8:] if rotation == 90 else s.frames[0, :8]
        rest = s.frames[0, :-8] if rotation == 90 else s.frames[0, 8:]
        assert stripe.mean() > 240 and rest.mean() < 15
    # size refers to the upright picture.
    assert sample_frames(path, size=16).frames.shape[1:3] == ((8, 16) if rotation == 180 else (16, 8))


def test_skipping_unselected_frames_does_not_change_pixels(tmp_path: Path) -> None:
    # Moving texture makes B/P-frames depend on others; every sampled frame must equal the frame a
    # plain decode of all frames yields, with or without the fast planned path.
    path = write_video(tmp_path / "motion.mp4", textured_clip(48), fps=16)
    reference = naive_decode(path)
    fast = sample_frames(path, fps=3, max_frames=8)
    for index, frame in zip(fast.indices, fast.frames, strict=True):
        np.testing.assert_array_equal(frame, reference[index])


def test_fallback_path_agrees_with_planned_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_video(tmp_path / "motion.mkv", textured_clip(40), fps=24)
    planned = sample_frames(path, fps=5, max_frames=6)
    monkeypatch.setattr(_filesample._Plan, "make", classmethod(lambda cls, *a, **k: None))
    fallback = sample_frames(path, fps=5, max_frames=6)
    assert planned.indices.tolist() == fallback.indices.tolist()
    np.testing.assert_allclose(planned.timestamps, fallback.timestamps)
    np.testing.assert_array_equal(planned.frames, fallback.frames)


def test_invalid_arguments(clip81: Path) -> None:
    for kwargs in ({"fps": 0}, {"max_frames": 0}, {"size": 0}, {"size": (10, 0)}):
        with pytest.raises(ValueError):
            sample_frames(clip81, **kwargs)


@pytest.mark.slow
def test_4k_video_with_resize(tmp_path: Path) -> None:
    frames = np.ascontiguousarray(
        np.broadcast_to(np.linspace(0, 255, 3840, dtype=np.uint8)[None, None, :, None], (3, 2160, 3840, 3))
    )
    path = write_video(tmp_path / "uhd.mp4", frames, fps=4)
    s = sample_frames(path, size=256)
    assert s.frames.shape == (3, 144, 256, 3)
    assert probe_video(path).width == 3840


def test_reread_path_when_packets_exceed_buffer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_video(tmp_path / "motion.mp4", textured_clip(30), fps=16)
    buffered = sample_frames(path, fps=4, max_frames=5)
    monkeypatch.setattr(_filesample, "PACKET_BUFFER_BYTES", 1)
    reread = sample_frames(path, fps=4, max_frames=5)
    # 30 frames at 16 fps: rate picks 0, 4, ..., 28 (8 picks); thinning to 5 keeps positions
    # round(linspace(0, 7, 5)) = round(0, 1.75, 3.5, 5.25, 7) = 0, 2, 4, 5, 7 (3.5 rounds to even).
    assert buffered.indices.tolist() == reread.indices.tolist() == [0, 8, 16, 20, 28]
    np.testing.assert_array_equal(buffered.frames, reread.frames)


def test_middle_spread_takes_the_middle_of_equal_spans(clip81: Path) -> None:
    # 81 frames cut into 8 spans with bounds int(81 k / 8) = 0, 10, 20, 30, 40, 50, 60, 70, 81;
    # middles (lo + hi - 1) // 2 = 4, 14, 24, 34, 44, 54, 64, 75.
    s = sample_frames(clip81, fps=None, max_frames=8, spread="middle")
    assert s.indices.tolist() == [4, 14, 24, 34, 44, 54, 64, 75]
    means = s.frames.reshape(len(s), -1).mean(axis=1)
    np.testing.assert_allclose(means, 3 * s.indices, atol=1.5)  # the content is those frames'
    # a different key from the uniform spread, so the frame cache does not hand one for the other
    assert sample_frames(clip81, fps=None, max_frames=8).indices.tolist() == [0, 11, 23, 34, 46, 57, 69, 80]
    with pytest.raises(ValueError, match="spread must be one of"):
        sample_frames(clip81, spread="edges")


def test_middle_spread_on_a_frame_folder_and_a_short_video(tmp_path: Path) -> None:
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(12):
        cv2.imwrite(str(folder / f"{i:03d}.png"), np.full((8, 8, 3), 20 * i, dtype=np.uint8))
    # 12 frames, 8 spans: bounds 0, 1, 3, 4, 6, 7, 9, 10, 12 -> middles 0, 1, 3, 4, 6, 7, 9, 10.
    s = sample_frames(folder, fps=None, max_frames=8, spread="middle")
    assert s.indices.tolist() == [0, 1, 3, 4, 6, 7, 9, 10]
    short = write_video(tmp_path / "five.mp4", levels_clip(5), fps=16)
    assert sample_frames(short, fps=None, max_frames=8, spread="middle").indices.tolist() == [0, 1, 2, 3, 4]
