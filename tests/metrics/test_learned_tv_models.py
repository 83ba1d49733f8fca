"""The full-size torchvision, pyiqa and lpips loaders of robojudge.models, end to end through metrics.

Each network is built with random weights, saved as a state dict into a temporary
``$ROBOJUDGE_WEIGHTS`` folder, loaded back by the metric and compared with the pure function run on
the same network. Full-size architectures are slow to build on CPU, so most tests are marked slow.
"""

import math

import cv2
import numpy as np
import pytest
import torch

from robojudge import models as nets
from robojudge.metrics import get_metric
from robojudge.metrics.learned import tv_nets
from robojudge.metrics.learned.tv_sets import InceptionConfig, inception_score_of_videos
from robojudge.run._score import MetricRequest, compute_metric
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

RNG = np.random.default_rng(11)


def _save(root, spec, state):
    path = root / spec.name / spec.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, path)


def _video(tmp_path, name, frames):
    write_video(tmp_path / name, frames, fps=8)  # PNG folder: lossless
    return str(tmp_path / name)


def _random_vgg16_features_state():
    from torchvision.models.vgg import cfgs, make_layers

    torch.manual_seed(0)
    return {f"features.{k}": v for k, v in make_layers(cfgs["D"]).state_dict().items()}


def test_load_state_dict_unwraps_and_strips_prefixes(tmp_path):
    t = torch.ones(2)
    torch.save({"state_dict": {"module.a.weight": t}}, tmp_path / "w.pth")
    assert list(nets.load_state_dict(tmp_path / "w.pth")) == ["a.weight"]
    torch.save({"a": 1}, tmp_path / "bad.pth")
    with pytest.raises(ValueError, match="bad.pth does not hold a state dict"):
        nets.load_state_dict(tmp_path / "bad.pth")


@pytest.mark.slow  # saves and loads a 59 MB VGG-16 feature file
def test_cc_style_end_to_end_with_random_vgg16_features(weights, tmp_path):
    _save(weights, nets.VGG16_IMAGENET, _random_vgg16_features_state())
    still = np.repeat(RNG.integers(0, 256, (1, 32, 32, 3), dtype=np.uint8), 3, axis=0)
    req = MetricRequest.build("cc_style", {"width": 32, "height": 32})
    row = compute_metric(Item(item_id="s", video=_video(tmp_path, "still", still)), req)
    # Identical frames have no style drift, the best value 0, for a failure to animate: unscored.
    assert row.status == "ok" and math.isnan(row.value) and "is still" in row.details["unscored_reason"]
    changing = RNG.integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    row = compute_metric(Item(item_id="c", video=_video(tmp_path, "changing", changing)), req)
    net = nets.load_vgg16_features()
    expect = tv_nets.style_distances(tv_nets.gram_matrices(changing, net)).mean()
    assert row.status == "ok" and row.value > 0 and row.value == pytest.approx(expect, rel=1e-6)


@pytest.mark.slow  # lpips builds a full random VGG-16 (with classifier) before our weights go in
def test_iq1_lpips_end_to_end_zero_for_identical_videos(weights, tmp_path):
    state = _random_vgg16_features_state()
    _save(weights, nets.VGG16_IMAGENET, state)
    frames = RNG.integers(0, 256, (2, 32, 32, 3), dtype=np.uint8)
    video = _video(tmp_path, "a", frames)
    same = compute_metric(
        Item(item_id="a", video=video, reference_video=video), MetricRequest.build("iq1_lpips")
    )
    assert same.status == "ok" and same.value == 0.0
    other = _video(tmp_path, "b", 255 - frames)
    diff = compute_metric(
        Item(item_id="b", video=video, reference_video=other), MetricRequest.build("iq1_lpips")
    )
    assert diff.status == "ok" and diff.value > 0
    net = nets.load_lpips_vgg()
    assert torch.equal(net.net.slice1[0].weight, state["features.0.weight"])  # backbone came from our file
    assert torch.equal(dict(net.net.slice5.named_children())["28"].bias, state["features.28.bias"])
    # A generated video that stops after 2 of the reference's 4 frames: the 2 frames it has match
    # (distance 0), the 2 it lacks count as 1, the top of the range: (0 + 0 + 1 + 1) / 4.
    long_ref = _video(tmp_path, "c", np.concatenate([frames, 255 - frames]))
    short = compute_metric(Item(item_id="c", video=video, reference_video=long_ref),
                           MetricRequest.build("iq1_lpips"))
    assert short.status == "ok" and short.value == pytest.approx(0.5)
    assert short.details["frames_missing"] == 2 and short.details["frames_expected"] == 4


@pytest.mark.slow  # full-size MUSIQ on CPU
def test_musiq_end_to_end_with_a_random_full_size_checkpoint(weights, tmp_path):
    from pyiqa.archs.musiq_arch import MUSIQ

    torch.manual_seed(0)
    _save(weights, nets.MUSIQ_SPAQ, MUSIQ(num_class=1, pretrained=False).state_dict())
    frames = RNG.integers(0, 256, (2, 24, 40, 3), dtype=np.uint8)
    item = Item(item_id="m", video=_video(tmp_path, "m", frames))
    row = compute_metric(item, MetricRequest.build("musiq_spaq"))
    expect = tv_nets.musiq_scores(frames, nets.load_musiq_spaq()).mean() / 100
    assert row.status == "ok" and row.value == pytest.approx(expect, rel=1e-5)
    assert compute_metric(item, MetricRequest.build("iq1_musiq")).value == pytest.approx(row.value)


@pytest.mark.slow  # RAFT-large needs 128 px frames
def test_flow_motion_magnitude_raft_end_to_end(weights, tmp_path):
    from torchvision.models.optical_flow import raft_large

    torch.manual_seed(0)
    _save(weights, nets.RAFT_THINGS, raft_large(weights=None).state_dict())
    # A smooth texture panning 2 px a frame: consecutive frames correspond (independent noise frames
    # would be left unscored before RAFT runs).
    blurred = cv2.GaussianBlur(RNG.integers(0, 256, (128, 136, 3)).astype(np.float32), (0, 0), 3)
    texture = cv2.normalize(blurred, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    frames = np.stack([texture[:, 2 * t:2 * t + 128] for t in range(3)])
    cfg = {"width": 128, "height": 128, "num_flow_updates": 1}
    row = compute_metric(
        Item(item_id="r", video=_video(tmp_path, "r", frames)),
        MetricRequest.build("flow_motion_magnitude_raft", cfg),
    )
    sampled = sample_frames(tmp_path / "r", fps=8, max_frames=None, size=(128, 128)).frames
    expect = tv_nets.raft_flow_magnitudes(sampled, nets.load_raft_things(), num_flow_updates=1).mean()
    assert row.status == "ok" and row.value == pytest.approx(expect, rel=1e-5)
    with pytest.raises(ValueError, match="divisible by 8"):
        get_metric("flow_motion_magnitude_raft").make_config({"width": 130})


@pytest.mark.slow  # full-size Inception-v3 at 299 px
def test_inception_score_end_to_end_with_random_inception(weights, tmp_path):
    from torchvision.models import Inception3

    torch.manual_seed(0)
    _save(weights, nets.INCEPTION_V3, Inception3(init_weights=False, transform_input=True).state_dict())
    videos = [
        _video(tmp_path, f"v{i}", RNG.integers(0, 256, (2, 16, 16, 3), dtype=np.uint8)) for i in range(2)
    ]
    cfg = InceptionConfig(frames_per_video=2, splits=2)
    result = inception_score_of_videos(videos, cfg)
    again = inception_score_of_videos(videos, cfg, net=nets.load_inception_v3())
    assert result.value >= 1.0 and result.value == pytest.approx(again.value)
