"""Sizes of a generated video against its reference (audit "sizes", F1 and F2).

A faithful rollout framed wider than its 4:3 reference (16:9, square) was stretched to the reference's
size and scored PSNR 14 dB, like a video of another scene; an 8x6 thumbnail was scaled up and scored
15 dB, and the 256x256 flow metrics scored it too. Such items are now unscored with the reason, and a
row records the video's own size next to the reference's.

The clips are H.264 files written with PyAV: one textured scene with a square moving across it, seen
through windows of different sizes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from _encode import mux_frames
from robojudge.metrics._errors import Unmeasurable
from robojudge.run import SerialExecutor, build_requests, score_items
from robojudge.run._score import MetricRequest, compute_metric
from robojudge.store import ResultStore
from robojudge.suite import Item

FRAMES = 8


def _world(t: int) -> np.ndarray:
    """The scene at frame ``t``: a smooth random texture 128 px wide, 48 high, and a red square."""
    rng = np.random.default_rng(3)
    tex = cv2.resize(rng.integers(30, 220, (6, 16, 3), dtype=np.uint8), (128, 48),
                     interpolation=cv2.INTER_CUBIC)
    x = 40 + 3 * t
    tex[16:28, x:x + 12] = (220, 30, 30)
    return tex


def _clip(path: Path, frames: list[np.ndarray], fps: int = 10, sar: Fraction | None = None) -> str:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.height, stream.width = frames[0].shape[:2]
        if sar is not None:  # anamorphic: pixels sar times as wide as high
            stream.codec_context.sample_aspect_ratio = sar
        stream.pix_fmt = "yuv444p"
        stream.options = {"crf": "10"}
        mux_frames(out, stream, (av.VideoFrame.from_ndarray(np.ascontiguousarray(f), format="rgb24")
                                 for f in frames))
    return str(path)


def _reference() -> list[np.ndarray]:
    return [_world(t)[:, 32:96] for t in range(FRAMES)]  # 64x48, 4:3


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("framing")
    ref = _reference()
    variants = {
        "reference": ref,
        # the same framing at twice the resolution: resized, compared
        "double": [cv2.resize(f, (128, 96), interpolation=cv2.INTER_CUBIC) for f in ref],
        # the same scene through a wider window (84x48, 7:4): faithful, another field of view
        "wide": [_world(t)[:, 22:106] for t in range(FRAMES)],
        # a portrait render (a lost rotation flag)
        "portrait": [np.ascontiguousarray(np.rot90(f)) for f in ref],
        # the same framing as an 8x6 thumbnail
        "tiny": [cv2.resize(f, (8, 6), interpolation=cv2.INTER_AREA) for f in ref],
        # the same framing at 24x18 and at 256x192: scaled up 2.7x, down 4x to be compared
        "small": [cv2.resize(f, (24, 18), interpolation=cv2.INTER_AREA) for f in ref],
        "large": [cv2.resize(f, (256, 192), interpolation=cv2.INTER_CUBIC) for f in ref],
    }
    out = {name: _clip(d / f"{name}.mp4", frames) for name, frames in variants.items()}
    # a generator's rounding of the reference's size (Wan's 832x480 for 854x480 is 2.6% off): the
    # same framing, resized
    out["rounded"] = _clip(d / "rounded.mp4", [cv2.resize(f, (62, 48), interpolation=cv2.INTER_AREA)
                                              for f in ref])
    # the same framing stored at 48x48 in pixels 4:3 wide (anamorphic): it shows as 64x48
    out["anamorphic"] = _clip(d / "anamorphic.mp4", [cv2.resize(f, (48, 48), interpolation=cv2.INTER_AREA)
                                                    for f in ref], sar=Fraction(4, 3))
    return out


def _row(clips: dict[str, str], name: str, metric: str):
    item = Item(item_id=name, video=clips[name], reference_video=clips["reference"])
    return compute_metric(item, MetricRequest.build(metric))


@pytest.mark.parametrize("metric", ["iq1_psnr", "iq1_ssim"])
def test_the_same_framing_at_another_size_is_compared_and_both_sizes_recorded(clips, metric) -> None:
    row = _row(clips, "double", metric)
    assert row.status == "ok" and row.value is not None and math.isfinite(row.value)
    details = row.details or {}
    assert details["video_size"] == "128x96" and details["reference_size"] == "64x48"
    assert details["frame_size"] == "64x48"  # the size compared at
    assert "video_warnings" not in details


@pytest.mark.parametrize(("name", "said"), [
    ("small", "scaled up 2.7x, from 24x18 to its reference size 64x48, to be compared: the reference's "
              "detail is compared with detail the video does not have (more than 2x; "),
    ("large", "scaled down 4.0x, from 256x192 to its reference size 64x48, to be compared: its detail "
              "finer than the reference's pixels is not compared (more than 2x; "),
])
def test_a_resize_of_more_than_twice_warns_in_the_rows_and_the_run(clips, tmp_path, name, said) -> None:
    # A 24x18 clip compared with its 64x48 reference (or a 256x192 one) was scored with no word of the
    # resize; 128x96 against 64x48 (2x, a size generators differ by) still says nothing.
    item = Item(item_id=name, video=clips[name], reference_video=clips["reference"])
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        summary = score_items([item], build_requests(["iq1_psnr", "iq1_ssim"]), store,
                              executor=SerialExecutor())
        rows = list(store.rows())
    expected = [f"{clips[name]}: the video is {said}the value reflects the two resolutions as well as the "
                "video)"]
    assert sorted((r.metric, (r.details or {}).get("video_warnings")) for r in rows) == [
        ("iq1_psnr", expected), ("iq1_ssim", expected)]
    assert all(r.value is not None and math.isfinite(r.value) for r in rows)  # compared, as before
    assert summary.warned == 2 and summary.video_warnings == {name: expected}


@pytest.mark.parametrize("name", ["rounded", "anamorphic"])
def test_a_rounded_size_or_non_square_pixels_of_the_same_framing_are_compared(clips, name) -> None:
    # 62x48 against 64x48 is 3% off (a side rounded as generators round it); 48x48 of 4:3 pixels shows
    # as 64x48. Both were unscored as another framing by the first version of the check (1%, stored
    # sizes), though they scored 36-40 dB before it.
    row = _row(clips, name, "iq1_psnr")
    assert row.status == "ok" and row.value is not None and row.value > 25, row.details


@pytest.mark.parametrize("metric", ["iq1_psnr", "iq1_ssim"])
def test_another_framing_is_unscored_naming_both_sizes(clips, metric) -> None:
    row = _row(clips, "wide", metric)
    assert row.status == "ok" and row.value is not None and math.isnan(row.value)
    details = row.details or {}
    reason = details["unscored_reason"]
    assert reason.startswith("the video is 84x48 (aspect 1.750), its reference 64x48 (1.333): aspect ratios "
                             "more than 5% apart frame the scene differently")
    assert details["video_size"] == "84x48" and details["reference_size"] == "64x48"


@pytest.mark.parametrize("metric", ["dc_depth_accuracy", "vjepa_paired_similarity"])
def test_the_video_grounded_model_metrics_refuse_another_framing_before_any_network(clips, metric) -> None:
    # Both squash the two videos to one square: a 7:4 view of a 4:3 reference was scored silently (depth
    # compared pixel by pixel with other parts of the scene). The check reads the probes, so no network
    # is needed to see the refusal (none is installed here).
    from robojudge.metrics import get_metric

    spec = get_metric(metric)
    wide = spec.compute(Item(item_id="w", video=clips["wide"], reference_video=clips["reference"]))
    assert not wide.scored
    reason = wide.details["unscored_reason"]
    assert reason.startswith("the video is 84x48 (aspect 1.750), its reference 64x48")
    assert wide.details["video_size"] == "84x48" and wide.details["reference_size"] == "64x48"
    tiny = spec.compute(Item(item_id="t", video=clips["tiny"], reference_video=clips["reference"]))
    assert not tiny.scored and tiny.details["unscored_reason"].startswith("frames of 8x6 are too small")


def test_a_portrait_video_against_a_landscape_reference_names_the_lost_rotation(clips) -> None:
    row = _row(clips, "portrait", "iq1_psnr")
    assert row.value is not None and math.isnan(row.value)
    reason = (row.details or {})["unscored_reason"]
    assert "the video is 48x64" in reason and "a lost rotation flag" in reason


@pytest.mark.parametrize("metric", ["iq1_psnr", "iq1_ssim"])
def test_a_tiny_clip_is_not_scaled_up_to_its_reference(clips, metric) -> None:
    row = _row(clips, "tiny", metric)
    assert row.status == "ok" and row.value is not None and math.isnan(row.value)
    details = row.details or {}
    assert details["unscored_reason"].startswith(
        "frames of 8x6 are too small: the video is under 16 px on a side")
    assert "64x48" in details["unscored_reason"]
    assert details["video_size"] == "8x6" and details["reference_size"] == "64x48"


@pytest.mark.parametrize("metric", ["flow_warp_error", "flow_motion_magnitude_farneback",
                                    "pixel_frame_consistency"])
def test_the_256px_metrics_leave_a_tiny_clip_unscored(clips, metric) -> None:
    tiny = compute_metric(Item(item_id="t", video=clips["tiny"]), MetricRequest.build(metric))
    assert tiny.status == "ok" and tiny.value is not None and math.isnan(tiny.value)
    details = tiny.details or {}
    assert details["unscored_reason"].startswith("frames of 8x6 are too small")
    assert "scaled up to 256x256" in details["unscored_reason"] and details["video_size"] == "8x6"
    # the same scene at 64x48 is measured
    full = compute_metric(Item(item_id="f", video=clips["reference"]), MetricRequest.build(metric))
    assert full.value is not None and math.isfinite(full.value)


def test_the_least_side_is_the_motion_checks_two_blocks() -> None:
    from robojudge.metrics._content import BLOCK, MIN_SIDE, require_side

    assert MIN_SIDE == 2 * BLOCK == 16
    require_side((MIN_SIDE, MIN_SIDE))
    with pytest.raises(Unmeasurable, match="frames of 40x15 are too small"):
        require_side((40, MIN_SIDE - 1))


def test_depth_accuracy_reads_a_low_rate_reference_and_its_clip_at_one_rate(tmp_path) -> None:
    # A 3-fps reference (RT-1's rate) and a 30-fps clip of the same 4 s. Asked for 4 fps, the reference
    # kept its frames 1/3 s apart while the clip gave 1/4 s, and the pairs by index drifted apart by up to
    # 0.9 s. Both are read at 3 fps; the frames are taken before any network loads.
    from robojudge.metrics.learned.hf_depth import DepthAccuracyConfig, depth_frames
    from robojudge.video import video_warnings, write_video

    frames = np.zeros((120, 32, 32, 3), np.uint8)
    clip = write_video(tmp_path / "clip", frames, fps=30)
    reference = write_video(tmp_path / "reference", frames[::10], fps=3)
    item = Item(item_id="d", video=str(clip), reference_video=str(reference))
    with video_warnings() as warned:
        gen, ref, facts = depth_frames(item, DepthAccuracyConfig())
    n = min(len(gen), len(ref))
    assert n == 12
    assert np.allclose(gen.timestamps[:n], ref.timestamps[:n], atol=1e-6)  # the same moments in both
    assert {k: facts[k] for k in ("pairing_fps", "fps_configured", "video_fps", "reference_fps")} == {
        "pairing_fps": 3.0, "fps_configured": 4.0, "video_fps": 30.0, "reference_fps": 3.0}
    assert any("fps=4 is above the reference's own 3 fps" in w for w in warned)
