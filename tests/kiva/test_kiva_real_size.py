"""KIVA on a video larger than its reader reads: sampled at the reader's square and a <= 256 px check copy as
it is decoded, never held at its own size (audit realsize, F1), with the same small frames as before."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import cv2
import numpy as np
import pytest

from robojudge.kiva import HELD_SIDE, sample_clip
from robojudge.metrics import get_metric
from robojudge.suite import Item, load_suite
from robojudge.video import frame_cache, sample_frames, write_video

PARTS = ("kiva", "kiva_rigidity", "kiva_jerk")


def _upscaled(kiva_suite: Path, tmp_path: Path, side: int) -> Item:
    """The suite's faithful Fetch rollout (64 px) upscaled to ``side`` px: a few hundred kB of mp4."""
    item = load_suite(kiva_suite).by_id("fetch00-oracle")
    frames = sample_frames(item.video, fps=None, max_frames=None).frames
    big = np.stack([cv2.resize(f, (side, side), interpolation=cv2.INTER_LANCZOS4) for f in frames])
    path = write_video(tmp_path / f"fetch_{side}.mp4", big, fps=10)
    return item.model_copy(update={"item_id": f"fetch_{side}", "video": str(path), "views": None,
                                   "main_view": None, "calibration": None})


@pytest.mark.parametrize(("shape", "size"), [((320, 320), 32), ((240, 320), 128), ((100, 100), 128),
                                             ((300, 300), 64)])
def test_the_readers_frames_are_the_ones_resized_from_the_native_frames(tmp_path, shape, size):
    # What the reader reads must not change: each native frame squashed to size x size with INTER_AREA, as
    # read_frames did after holding the whole clip (a video smaller than the square is read natively and
    # squared as before, since sample_frames enlarges bilinearly).
    rng = np.random.default_rng(1)
    h, w = shape
    texture = cv2.GaussianBlur(rng.integers(0, 256, (h, w + 40, 3), dtype=np.uint8), (0, 0), 2)
    frames = np.stack([texture[:, 2 * t : 2 * t + w] for t in range(20)])  # panning across it
    path = write_video(tmp_path / "clip.mp4", frames, fps=10)
    native = sample_frames(path, fps=None, max_frames=None).frames
    with frame_cache():
        clip = sample_clip(path, size)
    squared = np.stack([cv2.resize(f, (size, size), interpolation=cv2.INTER_AREA) for f in native])
    assert clip.small is not None and np.array_equal(clip.small, squared)
    assert (clip.width, clip.height) == (w, h) and len(clip) == len(native)
    assert max(clip.check.shape[1:3]) == min(max(h, w), HELD_SIDE)


def test_a_large_video_is_never_read_at_its_own_size(tiny_reader, kiva_suite, tmp_path, monkeypatch):
    # 512 px, 48 frames: 37.7 MB of native frames, over a 20 MB frame budget; what KIVA reads (48 frames of
    # the 32 px square and of the 256 px check copy) is 9.6 MB. Before, every part was an error row
    # ("would hold"), and without the budget the row said it read 512x512.
    from robojudge.run._score import MetricRequest, compute_metric

    item = _upscaled(kiva_suite, tmp_path, 512)
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "0.02")
    rows = [compute_metric(item, MetricRequest.build(m, {"reader": str(tiny_reader)})) for m in PARTS]
    for row in rows:
        assert row.status == "ok", row.error
        sizes = (row.details or {})["frame_size"].split(", ")
        assert "512x512" not in sizes and set(sizes) <= {"32x32", "256x256"}


def test_native_frames_held_by_the_frame_cache_give_the_same_values(tiny_reader, kiva_suite, tmp_path,
                                                                   monkeypatch):
    # Where another metric has the native frames in the frame cache, KIVA makes its frames from them rather
    # than decoding again: the same small frames, so the same tracks and values.
    item = _upscaled(kiva_suite, tmp_path, 320)
    cfg = get_metric("kiva").make_config({"reader": str(tiny_reader)})
    with frame_cache():
        sampled = get_metric("kiva").compute(item, cfg)
    from robojudge.metrics.learned import kiva as kiva_module

    monkeypatch.setattr(kiva_module, "_TRACKS", OrderedDict())  # read again, not reused
    with frame_cache():
        sample_frames(item.video, fps=None, max_frames=None)  # another metric's native read
        from_native = get_metric("kiva").compute(item, cfg)
    assert sampled.value == from_native.value
    assert sampled.details["segments"] == from_native.details["segments"]
