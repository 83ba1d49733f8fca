"""The one type for a sampled video: hashes and JPEGs on demand, kept, and carried across processes."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from robojudge.video import (
    FileFingerprint,
    SampledFrames,
    encode_jpeg,
    frame_digest,
    jpeg_data_url,
    sample_frames,
    write_video,
)


def _frames(n: int = 3) -> SampledFrames:
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(n, 16, 24, 3), dtype=np.uint8)
    return SampledFrames(pixels, np.arange(n) / 4.0, np.arange(n, dtype=np.int64), 8.0, Path("v.mp4"))


def test_hashes_and_jpegs_are_computed_once_and_kept() -> None:
    f = _frames()
    assert f.hashes == [frame_digest(p) for p in f.frames]
    assert f.hashes is f.hashes
    assert not f.has_jpeg(80)
    jpegs = f.jpeg(80)
    assert f.has_jpeg(80) and f.jpeg(80) is jpegs
    assert jpegs == tuple(encode_jpeg(p, 80) for p in f.frames)
    assert f.data_urls(80) == tuple(jpeg_data_url(b) for b in jpegs)
    assert f.jpeg(50) != jpegs  # each quality on its own


def test_video_seconds_is_the_last_time_stamp_plus_one_source_frame() -> None:
    assert _frames(3).video_seconds == pytest.approx(0.5 + 1 / 8)
    none = np.zeros((0, 2, 2, 3), np.uint8)
    empty = SampledFrames(none, np.zeros(0), np.zeros(0, np.int64), 8.0, Path("e"))
    assert empty.video_seconds == 0.0 and len(empty) == 0


def test_pickles_with_what_was_computed_and_without_pixels_when_dropped() -> None:
    f = _frames()
    f.data_urls(70)
    f.jpeg(60)
    slim = f.without_pixels()
    back = pickle.loads(pickle.dumps(slim))
    assert not back.has_pixels and back.has_jpeg(70) and back.has_jpeg(60)
    assert back.hashes == f.hashes and back.data_urls(70) == f.data_urls(70)
    assert back.jpeg(70) == f.jpeg(70)  # decoded from the URLs that crossed
    assert back.data_urls(60) == f.data_urls(60)  # built from the bytes that crossed
    assert len(pickle.dumps(slim)) < len(pickle.dumps(f))
    # one form per quality crosses, not both
    assert len(pickle.dumps(slim)) < sum(map(len, f.data_urls(70))) + sum(map(len, f.jpeg(60))) + 2000
    with pytest.raises(ValueError, match="dropped after encoding"):
        back.frames  # noqa: B018
    with pytest.raises(ValueError, match="JPEG quality 90 is missing"):
        back.jpeg(90)
    with pytest.raises(ValueError, match="needs a JPEG encoding"):
        _frames().without_pixels()


def test_fingerprint_names_the_file_and_changes_with_it(tmp_path: Path) -> None:
    clip = write_video(tmp_path / "c.mp4", np.zeros((4, 16, 16, 3), np.uint8), fps=4)
    first = FileFingerprint.of(clip)
    assert first.path == str(clip) and first.size == clip.stat().st_size and first.entries == ()
    assert sample_frames(clip).fingerprint == first
    write_video(clip, np.zeros((6, 16, 16, 3), np.uint8), fps=4)
    assert FileFingerprint.of(clip) != first
    with pytest.raises(OSError):
        FileFingerprint.of(tmp_path / "missing.mp4")


def test_shown_at_holds_a_frame_over_a_stall_and_is_the_identity_at_a_constant_rate(tmp_path: Path) -> None:
    # 30 fps stored in whole milliseconds: frame 20 at 0.667 s, just after the target 20 / 30; half a
    # tick of the time base still counts it as shown there, as the rate step does.
    times = [round(i / 30, 3) for i in range(40)]
    even = SampledFrames(None, np.asarray(times), np.arange(40), 30.0, Path("v.mp4"), tolerance=0.0005)
    assert even.shown_at(30.0).tolist() == list(range(40))
    # Frames 10-19 dropped: frame 9 is held over the targets 9-19, each later frame shown at its own.
    kept = [i for i in range(40) if not 10 <= i < 20]
    stalled = SampledFrames(None, np.asarray([times[i] for i in kept]), np.asarray(kept), 30.0, Path("v.mp4"),
                            tolerance=0.0005)
    assert stalled.shown_at(30.0).tolist() == [*range(10), *[9] * 10, *range(10, 30)]
    # A sampled video gives its rate step's tolerance, and a constant-rate file the identity.
    path = write_video(tmp_path / "c.mp4", np.zeros((12, 16, 16, 3), np.uint8), fps=30)
    read = sample_frames(path, fps=30, max_frames=None)
    assert read.tolerance > 0 and read.shown_at(30.0).tolist() == list(range(12))
    assert pickle.loads(pickle.dumps(read)).tolerance == read.tolerance
