"""Frame-paired reference metrics on a blank or still video, and on a blank or still reference.

Over a flat scene (a plain table before a plain wall, as in the simulator suites) a blank or frozen
video matches most of a moving reference pixel for pixel: SSIM's constants made an all-white video 0.72
and the frozen first frame 0.88 on the demo's Fetch scene, above real rollouts. Against a moving
reference such a video now scores the metric's worst, as the frames a video does not reach do; a blank
reference leaves the item unscored, and a still one is compared with a notice. Clips are lossless PNG
folders of 48x64 frames, so every value is exact.
"""

import math

import numpy as np
import pytest

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import write_video

T, H, W = 8, 48, 64
STILL_VIDEO_NOTICE = ("the generated video is still while its reference moves: scored at the metric's worst, "
                      "as missing frames are")


def _flat_scene() -> np.ndarray:
    """A light, flat background with a dark 12x12 block that crosses it, 6 px a frame: a robot arm over
    a plain table, as little of the frame as moves in a simulator rollout."""
    frames = np.full((T, H, W, 3), 215, np.uint8)
    frames[:, H // 2:, :] = 185  # the table: flat, a little darker than the wall
    for t in range(T):
        frames[t, 18:30, 4 + 6 * t:16 + 6 * t] = (40, 60, 90)
    return frames


def _item(tmp_path, gen: np.ndarray, ref: np.ndarray) -> Item:
    write_video(tmp_path / "gen", gen, fps=8)
    write_video(tmp_path / "ref", ref, fps=8)
    return Item(item_id="a", video=str(tmp_path / "gen"), reference_video=str(tmp_path / "ref"))


GENERATED = {
    "white": lambda ref: np.full_like(ref, 255),
    "grey": lambda ref: np.full_like(ref, 128),
    "frozen": lambda ref: np.repeat(ref[:1], T, axis=0),
    # flat frames that flash: not still by their block means, but they show nothing
    "flashing": lambda ref: np.stack([np.full(ref.shape[1:], 255 * (t % 2), np.uint8) for t in range(T)]),
}


@pytest.mark.parametrize("kind", sorted(GENERATED))
@pytest.mark.parametrize(("metric", "worst"), [("iq1_psnr", 0.0), ("iq1_ssim", 0.0)])
def test_a_blank_or_still_video_against_a_moving_reference_scores_the_worst(tmp_path, kind, metric, worst):
    ref = _flat_scene()
    score = get_metric(metric).compute(_item(tmp_path, GENERATED[kind](ref), ref))
    assert score.value == worst, score.details
    assert score.details["notice"] == STILL_VIDEO_NOTICE
    assert "still_reason" in score.details
    assert score.details["frames"] == T and score.details["frames_expected"] == T


def test_the_flat_scene_is_where_a_still_video_scored_like_a_rollout(tmp_path):
    # Why the rule is needed: compared frame by frame, the frozen first frame of the flat scene scores
    # far above 0 dB and SSIM 0, as a rollout would (this is what version 4 / 5 returned for it).
    ref = _flat_scene()
    frozen = np.repeat(ref[:1], T, axis=0)
    assert np.mean([F.ssim(g, r) for g, r in zip(frozen, ref, strict=True)]) > 0.7
    assert np.mean([F.psnr(g, r) for g, r in zip(frozen, ref, strict=True)]) > 15


def test_a_moving_video_is_compared_exactly_as_before(tmp_path):
    ref = _flat_scene()
    rng = np.random.default_rng(3)
    gen = np.clip(ref + rng.normal(0, 6, ref.shape), 0, 255).astype(np.uint8)
    gen = np.roll(gen, 2, axis=2)  # the block a little off: a rollout, not a copy
    item = _item(tmp_path, gen, ref)
    psnr = get_metric("iq1_psnr").compute(item)
    ssim = get_metric("iq1_ssim").compute(item)
    # Each value is the plain mean of the per-frame values, bit for bit, and says nothing more.
    pairs = list(zip(gen, ref, strict=True))
    assert psnr.value == float(np.mean([F.psnr(g, r) for g, r in pairs], dtype=np.float64))
    assert ssim.value == float(np.mean([max(F.ssim(g, r), 0.0) for g, r in pairs], dtype=np.float64))
    assert "notice" not in psnr.details and "notice" not in ssim.details
    assert 0 < ssim.value < 1 and 0 < psnr.value < 100


@pytest.mark.parametrize("metric", ["iq1_psnr", "iq1_ssim"])
@pytest.mark.parametrize("colour", [0, 255])
def test_a_blank_reference_leaves_the_item_unscored_naming_the_file(tmp_path, metric, colour):
    ref = np.full((T, H, W, 3), colour, np.uint8)
    score = get_metric(metric).compute(_item(tmp_path, _flat_scene(), ref))
    assert math.isnan(score.value)
    reason = score.details["unscored_reason"]
    assert reason.startswith("the reference video is blank: ") and str(tmp_path / "ref") in reason


@pytest.mark.parametrize("metric", ["iq1_psnr", "iq1_ssim"])
def test_a_still_reference_is_compared_with_a_notice(tmp_path, metric):
    scene = _flat_scene()
    ref = np.repeat(scene[:1], T, axis=0)
    for name, gen in (("moving", scene), ("still", ref)):  # a still video is not penalised against it
        (tmp_path / name).mkdir()
        score = get_metric(metric).compute(_item(tmp_path / name, gen, ref))
        assert score.scored and score.value > 0, (name, score.details)
        assert score.details["notice"].startswith("the reference video is still: compared as it is")
    assert score.value == (100.0 if metric == "iq1_psnr" else pytest.approx(1.0))  # the still copy


def test_lpips_scores_a_still_video_at_its_worst_before_the_network_loads(tmp_path, weights):
    # No weights at all: reaching the network would raise MissingWeightsError.
    ref = _flat_scene()
    score = get_metric("iq1_lpips").compute(_item(tmp_path, np.full_like(ref, 255), ref))
    assert score.value == 1.0 and score.details["notice"] == STILL_VIDEO_NOTICE
