"""torchvision/pyiqa/TorchScript metrics with tiny networks: pure functions, contracts and missing weights.

Networks are built in the test (random or hand-set weights) and saved to a temporary weights folder;
nothing reaches a model hub. The full-size loaders are exercised in test_learned_tv_models.py (slow).
"""

import math

import numpy as np
import pytest
import scipy.linalg
import torch
from torchvision.transforms.functional import resize

from robojudge import models as nets
from robojudge.metrics import get_metric
from robojudge.metrics._sets import score_sets
from robojudge.metrics.learned import tv_nets
from robojudge.metrics.learned.distribution import inception_score
from robojudge.metrics.learned.tv_sets import (
    FvdConfig,
    InceptionConfig,
    fvd_of_videos,
    inception_score_of_videos,
)
from robojudge.models import MissingWeightsError
from robojudge.run._score import MetricRequest, compute_metric
from robojudge.suite import Item
from robojudge.video import write_video

RNG = np.random.default_rng(7)


def _place(root, spec, save):
    path = root / spec.name / spec.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    save(str(path))
    return path


def _uniform_video(path, colours, size=(16, 16), fps=10):
    frames = np.stack([np.full((*size, 3), c, np.uint8) for c in colours])
    write_video(path, frames, fps=fps)  # PNG folder: lossless
    return str(path)


# --- frame interpolation (TorchScript contract) --------------------------------------------------------


class _Midpoint(torch.nn.Module):
    """A 1-layer conv interpolator: forward(frame0, frame1) = (frame0 + frame1) / 2, per channel."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(6, 3, 1, bias=False)
        w = torch.zeros(3, 6, 1, 1)
        for c in range(3):
            w[c, c] = w[c, 3 + c] = 0.5
        self.conv.weight.data.copy_(w)

    def forward(self, frame0: torch.Tensor, frame1: torch.Tensor) -> torch.Tensor:
        return self.conv(torch.cat([frame0, frame1], dim=1))


def _item(tmp_path, name, frames, **kw):
    write_video(tmp_path / name, frames, fps=10)
    return Item(item_id=name, video=str(tmp_path / name), **kw)


def test_motion_smoothness_end_to_end_with_a_torchscript_interpolator(weights, tmp_path):
    _place(weights, nets.FRAME_INTERPOLATION, torch.jit.script(_Midpoint()).save)
    # 20x24 frames are not multiples of 16: padding and cropping are exercised.
    # The top rows brighten by 10 a frame over a fixed gradient, the bottom rows stay: it moves (a whole
    # frame changing level only is still, and unscored). Per pixel each frame is its neighbours' midpoint.
    gradient = (40 + 2 * np.arange(24))[None, :, None].repeat(20, 0).repeat(3, 2)
    top = (np.arange(20) < 10)[:, None, None]
    ramp = np.stack([gradient + 10 * t * top for t in range(7)]).astype(np.uint8)
    flicker = np.full((5, 20, 24, 3), 100, np.uint8)
    flicker[1::2, :10] = 200  # the top rows flicker 0, 200, 0 ... the bottom rows stay at 100
    flicker[0::2, :10] = 0
    smooth = compute_metric(_item(tmp_path, "ramp", ramp), MetricRequest.build("mq_motion_smoothness"))
    # Linear intensity ramp: the midpoint of frames t-1 and t+1 is frame t exactly, error 0, score 1.
    assert smooth.status == "ok" and smooth.value == pytest.approx(1.0)
    rough = compute_metric(_item(tmp_path, "flicker", flicker), MetricRequest.build("mq_motion_smoothness"))
    # Odd frames' top rows are 200, their neighbours' 0: prediction 0, error 200 on half the pixels and 0 on
    # the others, score (255 - 100) / 255.
    assert rough.status == "ok" and rough.value == pytest.approx(155 / 255)


def test_interpolation_errors_use_only_odd_frames():
    frames = np.stack([np.full((16, 16, 3), v, np.uint8) for v in (0, 50, 0, 60, 0, 99)])
    # Targets t = 1 and 3 (t = 5 has no successor): errors |0 - 50| = 50 and |0 - 60| = 60.
    errors = tv_nets.interpolation_errors(frames, _Midpoint())
    assert errors == pytest.approx([50.0, 60.0])
    with pytest.raises(ValueError, match="at least 3 frames"):
        tv_nets.interpolation_errors(frames[:2], _Midpoint())


# --- FVD (I3D TorchScript contract) --------------------------------------------------------------------


class _TinyI3D(torch.nn.Module):
    """A 1-layer Conv3d feature net with the I3D TorchScript signature: (N, 3, T, H, W) -> (N, 4)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv3d(3, 4, 1)

    def forward(
        self, x: torch.Tensor, rescale: bool = False, resize: bool = False, return_features: bool = False
    ) -> torch.Tensor:
        return self.conv(x).mean(dim=(2, 3, 4))


def _fvd_reference(net, gen_colours, ref_colours):
    # A uniform clip of colour c enters as c / 127.5 - 1; the 1x1x1 conv then gives W x + b.
    w = net.conv.weight.detach().double().numpy().reshape(4, 3)
    b = net.conv.bias.detach().double().numpy()

    def feats(colours):
        return np.array([w @ (np.asarray(c, float) / 127.5 - 1) + b for c in colours])

    f, g = feats(gen_colours), feats(ref_colours)
    c1, c2 = np.cov(f, rowvar=False), np.cov(g, rowvar=False)
    root = scipy.linalg.sqrtm(c1 @ c2).real
    return float(((f.mean(0) - g.mean(0)) ** 2).sum() + np.trace(c1 + c2 - 2 * root))


def test_fvd_matches_a_hand_computed_frechet_distance(tmp_path):
    torch.manual_seed(0)
    net = _TinyI3D().eval()
    gen_c = RNG.integers(0, 256, (6, 3))
    ref_c = RNG.integers(0, 256, (6, 3))
    gen = [_uniform_video(tmp_path / f"g{i}", [c] * 4) for i, c in enumerate(gen_c)]
    ref = [_uniform_video(tmp_path / f"r{i}", [c] * 4) for i, c in enumerate(ref_c)]
    cfg = FvdConfig(frames=4)  # the tiny network does not care about clip length
    result = fvd_of_videos(gen, ref, cfg, net=net)  # 6 >= 4 + 1 samples: no warning
    assert result.value == pytest.approx(_fvd_reference(net, gen_c, ref_c), rel=1e-5)
    assert result.warnings == () and (result.n_generated, result.n_reference) == (6, 6)
    assert fvd_of_videos(gen, gen, cfg, net=net).value == pytest.approx(0.0, abs=1e-6)


class _TinyMotionI3D(_TinyI3D):
    """Features of the frame-to-frame change only: (N, 3, T, H, W) -> (N, 4), as I3D tells speeds apart."""

    def forward(
        self, x: torch.Tensor, rescale: bool = False, resize: bool = False, return_features: bool = False
    ) -> torch.Tensor:
        return self.conv(x[:, :, 1:] - x[:, :, :-1]).mean(dim=(2, 3, 4))


def test_fvd_clips_of_both_sets_cover_the_same_time(tmp_path):
    # Each reference fades at its own pace at 20 fps; the generated set is the same fades at 10 fps
    # (every second frame). 4 native frames covered 0.2 s of a reference and 0.4 s of its copy: twice
    # the change per frame, FVD far from 0. At the common 10 fps the clips are the same frames.
    torch.manual_seed(0)
    net = _TinyMotionI3D().eval()
    start, pace = RNG.integers(0, 60, (6, 3)), RNG.integers(2, 12, (6, 3))
    ref = [_uniform_video(tmp_path / f"r{i}", [c + p * k for k in range(8)], fps=20)
           for i, (c, p) in enumerate(zip(start, pace, strict=True))]
    gen = [_uniform_video(tmp_path / f"g{i}", [c + p * k for k in range(0, 8, 2)], fps=10)
           for i, (c, p) in enumerate(zip(start, pace, strict=True))]
    cfg = FvdConfig(frames=4)
    result = fvd_of_videos(gen, ref, cfg, net=net)
    assert result.value == pytest.approx(0.0, abs=1e-6) and result.fps == 10.0
    # A rate above a video's own is lowered to the lowest; a lower one is kept (2 frames at 5 fps).
    assert fvd_of_videos(gen, ref, FvdConfig(frames=4, fps=30), net=net).fps == 10.0
    assert fvd_of_videos(gen, ref, FvdConfig(frames=2, fps=5), net=net).fps == 5.0
    short = ("needs 4 frames \\(stride 1\\) at 5 fps, 0.80 s of video, and it lasts 0.40 s .*the common "
             "rate 5 fps is the configured fps=5: .*raise fps")
    with pytest.raises(ValueError, match=short):
        fvd_of_videos(gen, ref, FvdConfig(frames=4, fps=5), net=net)


def test_a_low_rate_reference_that_makes_the_clips_too_long_is_named_before_the_network_loads(
    weights, tmp_path
):
    # 1-s, 30-fps generated clips against 4-s, 10-fps references: 16 frames at the common 10 fps need 1.6 s,
    # so the set fails. The error said only "needs 16 frames (stride 1) at 10 fps, got 10", after I3D
    # loaded; it now names the reference that set the rate, the time needed and the clip's length, from
    # the probes (no I3D weights are installed here: the error comes first).
    gen = [_uniform_video(tmp_path / f"g{i}", [(i, 0, 0)] * 30, fps=30) for i in range(2)]
    ref = [_uniform_video(tmp_path / f"r{i}", [(0, i, 0)] * 40, fps=10) for i in range(2)]
    with pytest.raises(ValueError) as info:
        fvd_of_videos(gen, ref)
    said = str(info.value)
    assert said.startswith(f"{gen[0]}: FVD needs 16 frames (stride 1) at 10 fps, 1.60 s of video, and it "
                           "lasts 1.00 s (30 frames at 30 fps)")
    assert f"the common rate 10 fps is {ref[0]}'s own rate, the lowest of the 4 videos compared" in said
    assert "lower frames or stride" in said and "references at the generated videos' rate" in said
    # Shorter clips fit; the same clips at the generated rate need no change.
    assert fvd_of_videos(gen, ref, FvdConfig(frames=8), net=_TinyI3D()).fps == 10.0


def test_fvd_rejects_short_videos_and_tiny_sets(tmp_path):
    short = [_uniform_video(tmp_path / f"s{i}", [(i, i, i)] * 8) for i in range(2)]
    with pytest.raises(ValueError, match="needs 16 frames"):
        fvd_of_videos(short, short, net=_TinyI3D())
    with pytest.raises(ValueError, match="at least 2"):
        fvd_of_videos(short[:1], short, net=_TinyI3D())


def test_iq1_fvd_as_a_set_metric_warns_on_small_sets(weights, tmp_path):
    _place(weights, nets.I3D_TORCHSCRIPT, torch.jit.script(_TinyI3D()).save)
    items = []
    for i in range(3):
        gen = _uniform_video(tmp_path / f"g{i}", [RNG.integers(0, 256, 3)] * 4)
        ref = _uniform_video(tmp_path / f"r{i}", [RNG.integers(0, 256, 3)] * 4)
        items.append(Item(item_id=f"i{i}", video=gen, reference_video=ref, generator="m"))
    (row,) = score_sets(items, ["iq1_fvd"], by="generator", configs={"iq1_fvd": {"frames": 4}})
    assert row.status == "ok" and row.value > 0 and row.n_references == 3
    assert "rank-deficient" in row.warning  # 3 videos of 4-d features: below 4 + 1


# --- Inception Score -----------------------------------------------------------------------------------


def test_inception_score_of_videos_matches_numpy(tmp_path):
    torch.manual_seed(1)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 5, 1), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()
    ).eval()
    colours = RNG.integers(0, 256, (4, 2, 3))  # 4 videos of 2 uniform frames
    videos = [_uniform_video(tmp_path / f"v{i}", list(c)) for i, c in enumerate(colours)]
    result = inception_score_of_videos(videos, InceptionConfig(frames_per_video=2, splits=2), net=net)
    w = net[0].weight.detach().double().numpy().reshape(5, 3)
    b = net[0].bias.detach().double().numpy()
    x = (colours.reshape(-1, 3) / 255 - np.array(tv_nets.IMAGENET_MEAN)) / np.array(tv_nets.IMAGENET_STD)
    logits = x @ w.T + b
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    want, want_std = inception_score(probs, splits=2)
    assert result.value == pytest.approx(want, rel=1e-6)
    # The std is a difference of close split scores worked out from float32 logits: a relative 1e-6 of
    # 0.0025 is below float32's resolution there, and missed in CI under load (1.5e-6 off): absolute
    assert result.std == pytest.approx(want_std, abs=1e-6)


# --- MUSIQ, RAFT, Gram matrices, LPIPS plumbing --------------------------------------------------------


def test_cap_longer_side_matches_vbench_resize():
    x = torch.rand(1, 3, 300, 600)
    out = tv_nets.cap_longer_side(x, 512)  # s = 512 / 600: (int(256.0), int(512.0)) = (256, 512)
    assert out.shape[-2:] == (256, 512)
    assert torch.allclose(out, resize(x, [256, 512], antialias=False), atol=1e-6)
    small = torch.rand(1, 3, 200, 400)
    assert tv_nets.cap_longer_side(small, 512) is small


@pytest.mark.slow  # pyiqa's multi-scale patching costs seconds even for a one-layer MUSIQ on CPU
def test_musiq_scores_are_batch_invariant_with_a_small_musiq():
    from pyiqa.archs.musiq_arch import MUSIQ

    torch.manual_seed(0)
    net = MUSIQ(num_class=1, hidden_size=32, mlp_dim=32, num_heads=2, num_layers=1, pretrained=False).eval()
    frames = RNG.integers(0, 256, (2, 40, 56, 3), dtype=np.uint8)
    together = tv_nets.musiq_scores(frames, net, batch_size=2)
    alone = np.array([tv_nets.musiq_scores(f[None], net)[0] for f in frames])
    with torch.inference_mode():
        direct = net(torch.from_numpy(frames).permute(0, 3, 1, 2).float() / 255).reshape(-1).numpy()
    assert together.shape == (2,) and together == pytest.approx(alone, rel=1e-4)
    assert together == pytest.approx(direct, rel=1e-5)


@pytest.mark.slow  # RAFT needs 128 px frames; a few seconds on CPU
def test_raft_flow_magnitudes_follow_the_formula():
    from torchvision.models.optical_flow import raft_small

    torch.manual_seed(0)
    net = raft_small(weights=None).eval()
    frames = RNG.integers(0, 256, (3, 128, 128, 3), dtype=np.uint8)
    mags = tv_nets.raft_flow_magnitudes(frames, net, num_flow_updates=2, batch_size=1)
    x = torch.from_numpy(frames).permute(0, 3, 1, 2).float() / 255 * 2 - 1
    with torch.inference_mode():
        flow = net(x[:-1], x[1:], num_flow_updates=2)[-1].double()
    expect = torch.sqrt(flow[:, 0] ** 2 + flow[:, 1] ** 2).mean(dim=(1, 2)).numpy()
    assert mags == pytest.approx(expect, rel=1e-4)
    with pytest.raises(ValueError, match="divisible by 8"):
        tv_nets.raft_flow_magnitudes(frames[:, :100], net)


def test_gram_matrices_and_style_distance_by_hand():
    torch.manual_seed(0)
    features = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.ReLU()).eval()
    frames = RNG.integers(0, 256, (3, 6, 5, 3), dtype=np.uint8)
    (grams,) = tv_nets.gram_matrices(frames, features, layers=(1,))
    w = features[0].weight.detach().double().numpy().reshape(4, 3)
    b = features[0].bias.detach().double().numpy()
    x = (frames / 255 - np.array(tv_nets.IMAGENET_MEAN)) / np.array(tv_nets.IMAGENET_STD)
    act = np.maximum(x.reshape(3, -1, 3) @ w.T + b, 0)  # (N, HW, C)
    expect = np.einsum("npc,npd->ncd", act, act) / (4 * 30)  # G = F F^T / (C H W)
    assert grams == pytest.approx(expect, rel=1e-5)
    drift = tv_nets.style_distances([grams])
    assert drift == pytest.approx([((expect[t] - expect[0]) ** 2).mean() for t in (1, 2)], rel=1e-5)
    same = np.repeat(frames[:1], 3, axis=0)
    assert tv_nets.style_distances(tv_nets.gram_matrices(same, features, layers=(1,))) == pytest.approx(
        [0, 0]
    )


def test_lpips_distances_batch_and_scale_inputs():
    class MeanAbs(torch.nn.Module):  # stands in for LPIPS: inputs must arrive in [-1, 1]
        def forward(self, a, b):
            assert a.min() >= -1 and a.max() <= 1
            return (a - b).abs().mean(dim=(1, 2, 3), keepdim=True)

    a = np.full((3, 4, 4, 3), 255, np.uint8)
    b = np.zeros_like(a)
    assert tv_nets.lpips_distances(a, b, MeanAbs(), batch_size=2) == pytest.approx([2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="differ in shape"):
        tv_nets.lpips_distances(a, b[:2], MeanAbs())


# --- registration and missing weights ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric_id", "weights_name"),
    [
        ("musiq_spaq", "musiq_spaq"),
        ("iq1_musiq", "musiq_spaq"),
        ("flow_motion_magnitude_raft", "raft_things"),
        ("iq1_lpips", "vgg16_imagenet"),
        ("cc_style", "vgg16_imagenet"),
        ("mq_motion_smoothness", "frame_interpolation"),
    ],
)
def test_missing_weights_give_an_error_row_naming_metric_and_remedy(
    weights, tmp_path, metric_id, weights_name
):
    # One pattern moving a pixel a frame: it moves (not still; a pattern that only brightens is) and
    # stays in correspondence, so every metric gets as far as loading its network.
    pattern = RNG.integers(0, 256, (32, 32, 3))
    frames = np.stack([np.roll(pattern, t, axis=1) for t in range(3)])
    item = _item(tmp_path, "v", frames.astype(np.uint8), reference_video=None)
    item = item.model_copy(update={"reference_video": item.video})
    row = compute_metric(item, MetricRequest.build(metric_id))
    assert row.status == "error"
    assert f"metric {metric_id!r} needs" in row.error
    from robojudge.models import get_weights, how_to_provide

    assert how_to_provide(get_weights(weights_name)) in row.error and str(weights / weights_name) in row.error
    assert get_metric(metric_id).weights == (weights_name,)


def test_missing_weights_for_set_metrics(weights, tmp_path):
    video = _uniform_video(tmp_path / "v", [(1, 2, 3)] * 16)
    with pytest.raises(MissingWeightsError, match="iq1_fvd.*i3d_torchscript"):
        fvd_of_videos([video, video], [video, video])
    with pytest.raises(MissingWeightsError, match="iq1_inception_score.*inception_v3_imagenet"):
        inception_score_of_videos([video])


def test_directions_and_ranges_follow_the_papers():
    assert (
        get_metric("iq1_lpips").higher_is_better is False and get_metric("cc_style").higher_is_better is False
    )
    assert get_metric("iq1_musiq").native_range == (0.0, 1.0) == get_metric("musiq_spaq").native_range
    assert get_metric("iq1_fvd").higher_is_better is False
    assert get_metric("iq1_inception_score").native_range[0] == 1.0
    assert get_metric("flow_motion_magnitude_raft").higher_is_better is True  # raw direction kept (App. B.3)
    # Below 128 px a side RAFT refuses every item: refused in the config, before any video is read.
    with pytest.raises(ValueError, match=r"width: Input should be greater than or equal to 128"):
        get_metric("flow_motion_magnitude_raft").make_config({"width": 64})
    assert not math.isinf(get_metric("mq_motion_smoothness").native_range[0])
