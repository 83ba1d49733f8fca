"""robojudge.metrics._derived: what metrics derive from an item's shared frames is computed once.

The frame cache hands every metric of an item the same read-only frame array; gray frames and the
block means of the content checks derived from it used to be computed again by every metric (and twice
by ``cc_photometric``), about 50-175 ms each on a 720p clip of 10 s.
"""

import gc

import numpy as np
import pytest
from _scene import FPS, clean_frames

from robojudge.metrics import _content, _derived, get_metric
from robojudge.metrics.robophys import motion
from robojudge.run import MetricRequest, Task, compute_task
from robojudge.suite import Item
from robojudge.video import frame_cache, write_video

#: The weights-free metrics that read only the video (the per-item set the benchmark times).
VIDEO_ONLY = ("cc_photometric", "ctg_camera_control", "flow_motion_magnitude_farneback", "flow_warp_error",
              "mq_dynamic_degree", "mq_flow_score", "mq_temporal_flickering", "pixel_frame_consistency",
              "rbg_stability")


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _counter(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(id(args[0]))  # not the array: holding it would keep its memo entries alive
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_read_only_array_is_derived_once_and_forgotten_with_it():
    frames = _frozen(np.arange(24, dtype=np.uint8).reshape(2, 3, 4).copy())
    computed = []

    def total(answer):
        computed.append(answer)
        return answer

    first = _derived.derived(frames, "sum", lambda: total(276))
    again = _derived.derived(frames, "sum", lambda: total(-1))
    other = _derived.derived(frames, "max", lambda: 23)
    assert (first, again, other, computed) == (276, 276, 23, [276])
    ident = id(frames)
    assert ident in _derived._MEMO
    del frames
    gc.collect()
    assert ident not in _derived._MEMO  # the entry lives exactly as long as its array


@pytest.mark.parametrize("make", [
    lambda: np.zeros((2, 4, 4), np.uint8),  # writeable: its pixels may change between calls
    lambda: _frozen(np.zeros((4, 4, 4), np.uint8)[:2].copy()[::1]),  # read-only view of a writeable copy
])
def test_an_array_that_can_change_is_derived_every_time(make):
    frames = make()
    if frames.base is not None:
        frames.flags.writeable = False
        assert frames.base.flags.writeable
    calls = []
    for _ in range(2):
        _derived.derived(frames, "k", lambda: calls.append(1))
    assert len(calls) == 2 and id(frames) not in _derived._MEMO


def test_content_facts_match_the_separate_checks_and_are_shared():
    rng = np.random.default_rng(5)
    scene = rng.integers(0, 256, (32, 48), dtype=np.uint8)
    frames = _frozen(np.stack([np.roll(scene, t, 1) for t in range(4)]))
    facts = _content.content_facts(frames)
    blocks = _content.block_means(frames)
    assert facts.raw_change == float(np.abs(blocks - blocks[0]).max())
    assert facts.largest_change == _content.change_past_brightness(frames, blocks) <= facts.raw_change
    assert _content.content_facts(frames) is facts
    assert not facts.step_correlations.flags.writeable  # shared: nobody may change it


@pytest.fixture
def clip(tmp_path):
    write_video(tmp_path / "clip.mp4", clean_frames(), fps=FPS)
    return Item(item_id="clip", video=str(tmp_path / "clip.mp4"))


def test_photometric_computes_block_means_once(clip, monkeypatch):
    blocks = _counter(monkeypatch, _content, "block_means")
    with frame_cache():
        get_metric("cc_photometric").compute(clip)
    assert len(blocks) == 1  # require_motion and require_correspondence used to compute them each


def test_the_video_metrics_of_an_item_derive_each_array_once(clip, monkeypatch):
    separate = {m: get_metric(m).compute(clip).value for m in VIDEO_ONLY}  # no frame cache: nothing shared
    blocks = _counter(monkeypatch, _content, "block_means")
    lumas = _counter(monkeypatch, motion, "luma")
    rows = compute_task(Task(clip, tuple(MetricRequest.build(m) for m in VIDEO_ONLY)))
    assert {r.metric: r.value for r in rows} == separate
    # Three distinct arrays: native RGB (flickering), its gray (the five native-size flow and geometry
    # metrics; the 8 fps clip needs no stride for dynamic degree) and the 8 fps 256x256 gray sampling.
    assert len(blocks) == 3 and len(set(blocks)) == 3  # ten calls before the memo
    assert len(lumas) == 1  # five gray conversions of the same frames before
    gc.collect()
    assert not _derived._MEMO  # the frame cache is gone, and the derived arrays with it
