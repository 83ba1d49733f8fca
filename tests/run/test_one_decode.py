"""A task decodes its item's main video once for every metric that reads it at native size or at
RoboJudge App. B.3's 8 fps 256x256 gray (``prefetch_main_video``), with the values of separate decodes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from _samplings import count_decode_passes, read_and_declared
from robojudge.metrics import FrameOptions, Input, Provider, get_metric, list_metrics
from robojudge.run import MetricRequest, Task, build_requests, compute_task
from robojudge.run import _score as run_score
from robojudge.suite import Item
from robojudge.video import _filesample as FS
from robojudge.video import _sample, write_video

#: The weights-free metrics that read only the video (benchmarks/bench_real_speed.py's set), named here:
#: other test modules register toy metrics of their own in the same process.
WEIGHTS_FREE = ("cc_photometric", "ctg_camera_control", "flow_motion_magnitude_farneback", "flow_warp_error",
                "mq_dynamic_degree", "mq_flow_score", "mq_temporal_flickering", "pixel_frame_consistency",
                "rbg_stability")


def _video_only() -> list[str]:
    return list(WEIGHTS_FREE)


def test_the_named_set_is_registered_and_reads_only_the_video():
    specs = [s for s in list_metrics() if s.provider is Provider.computed and set(s.inputs) == {Input.video}]
    assert set(WEIGHTS_FREE) <= {s.id for s in specs}


@pytest.fixture(scope="module")
def item(tmp_path_factory) -> Item:
    rng = np.random.default_rng(3)
    canvas = rng.integers(0, 256, (120, 260, 3), dtype=np.uint8)
    canvas = np.repeat(np.repeat(canvas[::4, ::4], 4, 0), 4, 1)  # blobs large enough to track
    frames = np.stack([canvas[i : i + 96, 2 * i : 2 * i + 160] for i in range(24)])
    path = write_video(tmp_path_factory.mktemp("one_decode") / "clip.mp4", frames, fps=16)
    return Item(item_id="clip", video=str(path))


@pytest.fixture
def passes(monkeypatch) -> list[str]:
    """One entry per pass over a file's packets."""
    return count_decode_passes(monkeypatch)


def _rows(task: Task) -> dict[str, tuple]:
    return {r.metric: (r.status, r.value, r.error, r.details) for r in compute_task(task)}


@pytest.mark.parametrize(
    "options",
    [FrameOptions(), FrameOptions(profile="fast"), FrameOptions(max_side=100), FrameOptions(max_frames=10)],
    ids=["native", "fast", "max-side", "max-frames"],
)
def test_the_weights_free_set_decodes_the_video_once(item, passes, monkeypatch, options):
    reqs = tuple(build_requests(_video_only(), frames=options))
    joint = _rows(Task(item, reqs))
    assert passes == ["pass"]  # native frames and the 8 fps gray sequence, from one decode
    assert all(status == "ok" for status, *_ in joint.values()), joint
    passes.clear()
    monkeypatch.setattr(run_score, "prefetch_main_video", lambda *_: 0)
    apart = _rows(Task(item, reqs))
    assert len(passes) == 2
    assert joint == apart  # bit for bit, details (frame sizes, warnings) included


def test_a_lone_reader_and_a_broken_video_cost_what_they_did(item, passes, tmp_path, monkeypatch):
    one = tuple(build_requests(["cc_photometric"]))
    _rows(Task(item, one))
    assert passes == ["pass"]
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00" * 64)
    bad = Item(item_id="bad", video=str(broken))
    reqs = tuple(build_requests(_video_only()))
    joint = _rows(Task(bad, reqs))
    monkeypatch.setattr(run_score, "prefetch_main_video", lambda *_: 0)
    assert joint == _rows(Task(bad, reqs))  # each metric's row says what is wrong, as before
    assert all(status == "error" and "video error" in error for status, _, error, _ in joint.values())


@pytest.fixture(scope="module")
def referenced(item, tmp_path_factory) -> Item:
    """``item`` with a reference of another size and a lower rate (the pairing resamples the video)."""
    rng = np.random.default_rng(4)
    frames = rng.integers(0, 256, (12, 48, 80, 3), dtype=np.uint8)
    ref = write_video(tmp_path_factory.mktemp("one_decode_ref") / "ref.mp4", frames, fps=8)
    return item.model_copy(update={"reference_video": str(ref)})


@pytest.mark.parametrize("metric", ["iq1_psnr", "iq1_ssim", *WEIGHTS_FREE])
def test_each_config_declares_what_its_metric_reads_of_the_main_video(referenced, metric):
    read, declared = read_and_declared(referenced, metric)
    assert read == declared and len(declared) == 1


def test_with_a_reference_the_main_video_is_still_decoded_once(referenced, monkeypatch):
    decodes: list[str] = []
    real = FS.sample_file_many

    def counted(path, samplings):
        decodes.append(Path(path).name)
        return real(path, samplings)

    monkeypatch.setattr(FS, "sample_file_many", counted)  # sample_file's way in
    monkeypatch.setattr(_sample, "sample_file_many", counted)  # prefetch_frames'
    reqs = tuple(build_requests([*WEIGHTS_FREE, "iq1_psnr", "iq1_ssim"]))
    joint = _rows(Task(referenced, reqs))
    # the main video once for its three samplings (native, 8 fps gray, the reference's rate and size);
    # the reference on its own, once for both paired metrics, and once more for the few small frames of
    # its start that the tiling check reads (once per file: the second paired metric asks no more)
    assert sorted(decodes) == ["clip.mp4", "ref.mp4", "ref.mp4"]
    monkeypatch.setattr(run_score, "prefetch_main_video", lambda *_: 0)
    assert joint == _rows(Task(referenced, reqs))
    assert all(status == "ok" for status, *_ in joint.values()), joint


def test_a_reference_that_cannot_be_read_costs_only_its_own_rows(referenced, passes, tmp_path, monkeypatch):
    gone = referenced.model_copy(update={"reference_video": str(tmp_path / "gone.mp4")})
    reqs = tuple(build_requests([*WEIGHTS_FREE, "iq1_psnr"]))
    joint = _rows(Task(gone, reqs))
    assert passes == ["pass"]  # the other samplings still come from one pass
    assert joint["iq1_psnr"][0] == "error" and "gone.mp4" in joint["iq1_psnr"][2]
    assert all(joint[m][0] == "ok" for m in WEIGHTS_FREE)
    monkeypatch.setattr(run_score, "prefetch_main_video", lambda *_: 0)
    assert joint == _rows(Task(gone, reqs))


@pytest.fixture
def decoded(monkeypatch) -> list[int]:
    """Frames decoded by each pass over a file's packets (a probe's first frame is not counted)."""
    counts: list[int] = []
    real = FS._Plan._decode

    def counting(ctx, packets, wanted, *rest):
        counts.append(0)
        for frame in real(ctx, packets, wanted, *rest):
            counts[-1] += 1
            yield frame

    monkeypatch.setattr(FS._Plan, "_decode", staticmethod(counting))
    return counts


def test_an_item_its_metrics_refuse_by_framing_decodes_no_frame(item, decoded, tmp_path, monkeypatch):
    # The paired metrics leave framings more than 5% apart (160x96 against a 4:3 reference) unscored from
    # the probes, but their configs declared the sampling they would read: two of them (another rate)
    # made the task decode the video ahead (20 of its 24 frames) for rows that read none of it.
    rng = np.random.default_rng(5)
    ref = write_video(tmp_path / "ref43.mp4", rng.integers(0, 256, (12, 48, 64, 3), dtype=np.uint8), fps=8)
    framed = item.model_copy(update={"reference_video": str(ref)})
    reqs = (MetricRequest.build("iq1_psnr"), MetricRequest.build("iq1_ssim", {"fps": 4}))
    rows = _rows(Task(framed, reqs))
    assert decoded == []
    for status, value, _, details in rows.values():
        assert status == "ok" and value is not None and math.isnan(value)
        assert details["unscored_reason"].startswith("the video is 160x96 (aspect 1.667), its reference "
                                                     "64x48")
    # The trackers' config declares nothing either (their rows are unscored from the same probes).
    tracked = framed.model_copy(update={"state": str(tmp_path / "state.npz")})
    assert get_metric("ta_hsd").make_config().main_video_samplings(tracked) == []
    assert get_metric("ta_hsd").make_config().main_video_samplings(
        tracked.model_copy(update={"reference_video": item.video})) != []
    monkeypatch.setattr(run_score, "prefetch_main_video", lambda *_: 0)
    assert rows == _rows(Task(framed, reqs))


def test_a_clip_too_small_for_its_metrics_decodes_no_frame(decoded, tmp_path):
    # A 12x8 clip: the paired metrics and the 256x256 gray metrics each refuse it from its probe; the two
    # samplings declared made the task decode all 40 frames first.
    rng = np.random.default_rng(6)
    tiny = write_video(tmp_path / "tiny.mp4", rng.integers(0, 256, (40, 8, 12, 3), dtype=np.uint8), fps=8)
    clip = Item(item_id="tiny", video=str(tiny), reference_video=str(tiny))
    refused = ["iq1_psnr", "pixel_frame_consistency", "flow_warp_error"]
    rows = _rows(Task(clip, tuple(build_requests(refused))))
    assert decoded == []
    assert all(value is not None and math.isnan(value) for _, value, _, _ in rows.values()), rows
    assert all("frames of 12x8 are too small" in d["unscored_reason"] for *_, d in rows.values())
    # A metric that does read the clip decodes it once, for itself alone.
    _rows(Task(clip, tuple(build_requests([*refused, "mq_temporal_flickering"]))))
    assert decoded == [40]
