"""The heatmap loss (``TrainConfig.heatmap_loss``) and the input context (``TrainConfig.context``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from robojudge.kiva import TrainConfig  # noqa: E402
from robojudge.kiva._data import EpisodeData  # noqa: E402
from robojudge.kiva._net import KeypointReader  # noqa: E402
from robojudge.kiva._train import heatmap_cross_entropy, heatmap_target, train_net  # noqa: E402


def test_the_target_is_a_unit_gaussian_of_one_cell_round_the_keypoint():
    kp = torch.tensor([[50.3, 70.9], [64.0, 64.0]])
    t = heatmap_target(kp, (32, 32), 128)  # cells of 4 px
    assert t.shape == (2, 32, 32)
    assert torch.allclose(t.sum(dim=(1, 2)), torch.ones(2))
    centres = (torch.arange(32) + 0.5) * 4
    mean_x = (t.sum(dim=1) * centres).sum(-1)
    mean_y = (t.sum(dim=2) * centres).sum(-1)
    assert torch.allclose(mean_x, kp[:, 0], atol=1e-3) and torch.allclose(mean_y, kp[:, 1], atol=1e-3)
    # A standard deviation of one cell (4 px) along each axis, far from the edges.
    sd_x = ((t[1].sum(dim=0) * (centres - 64.0) ** 2).sum()).sqrt()
    assert float(sd_x) == pytest.approx(4.0, rel=1e-3)
    # Worked by hand: at 64 px the keypoint sits on the corner of four cells (centres 62 and 66 px), each
    # half a cell away on both axes, so they share the peak.
    peak = t[1].max()
    assert torch.allclose(t[1][15:17, 15:17], peak.expand(2, 2))


def test_cross_entropy_of_a_flat_map_is_the_log_of_its_cells_and_invisible_keypoints_do_not_count():
    gen = torch.Generator().manual_seed(5)
    logp = torch.full((2, 3, 8, 8), -math.log(64))
    kp = torch.rand(2, 3, 2, generator=gen) * 32
    vis = torch.tensor([[True, False, True], [False, False, True]])
    assert float(heatmap_cross_entropy(logp, kp, vis, 32)) == pytest.approx(math.log(64), rel=1e-6)
    # Sharper where the keypoint is: lower; an invisible keypoint's map changes nothing.
    sharp = logp.clone()
    sharp[0, 1] = torch.log_softmax(torch.randn(64, generator=gen) * 10, dim=0).view(8, 8)
    assert float(heatmap_cross_entropy(sharp, kp, vis, 32)) == pytest.approx(math.log(64), rel=1e-6)
    # The target as the map: that keypoint's term becomes the target's own entropy, below log(64); the mean
    # is over the three visible keypoints.
    target = heatmap_target(kp[0, :1], (8, 8), 32)[0]
    sharp[0, 0] = torch.log(target)
    entropy = float(-(target * torch.log(target)).sum())
    assert entropy < math.log(64) - 1.0
    want = (entropy + 2 * math.log(64)) / 3
    assert float(heatmap_cross_entropy(sharp, kp, vis, 32)) == pytest.approx(want, rel=1e-5)


def test_read_returns_forwards_positions_and_normalised_log_heatmaps():
    torch.manual_seed(0)
    net = KeypointReader(3, context=1, width=8).eval()
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        pos, vis, logp = net.read(x)
        pos2, vis2 = net(x)
    assert torch.equal(pos, pos2) and torch.equal(vis, vis2)
    assert logp.shape == (2, 3, 8, 8)
    assert torch.allclose(logp.exp().sum(dim=(2, 3)), torch.ones(2, 3), atol=1e-5)


def _blobs(n: int, size: int, seed: int) -> EpisodeData:
    """Frames with one bright 3 x 3 square on black, the keypoint at its centre."""
    rng = np.random.default_rng(seed)
    frames = np.zeros((n, size, size, 3), dtype=np.uint8)
    kp = np.zeros((n, 1, 2), dtype=np.float32)
    for t in range(n):
        x, y = rng.integers(4, size - 5, size=2)
        frames[t, y - 1 : y + 2, x - 1 : x + 2] = 255
        kp[t, 0] = (x + 0.5, y + 0.5)
    return EpisodeData(episode=None, frames=frames, keypoints=kp,  # type: ignore[arg-type]
                       visible=np.ones((n, 1), dtype=bool), native=(size, size), fps=10.0)


def _held_out(net: KeypointReader, data: EpisodeData, cfg: TrainConfig) -> tuple[float, float]:
    """Cross-entropy of the maps against the target, and the mean position error in pixels."""
    from robojudge.kiva._infer import stack_context, to_tensor

    x = to_tensor(stack_context(data.frames, np.arange(len(data.frames)), cfg.context))
    kp = torch.from_numpy(data.keypoints)
    vis = torch.from_numpy(data.visible)
    with torch.no_grad():
        pos, _, logp = net.read(x)
    return float(heatmap_cross_entropy(logp, kp, vis, cfg.size)), float((pos - kp).norm(dim=-1).mean())


def test_the_heatmap_loss_is_on_by_default_off_in_configs_stored_before_it_and_trains_the_maps():
    assert TrainConfig().heatmap_loss == 0.01
    assert TrainConfig(heatmap_loss=0.0).model_dump()["heatmap_loss"] == 0.0
    stored = {k: v for k, v in TrainConfig().model_dump().items() if k != "heatmap_loss"}
    assert TrainConfig.from_stored(stored).heatmap_loss == 0.0  # a reader trained before the option
    with pytest.raises(ValueError):
        TrainConfig(heatmap_loss=-1.0)
    train, held = [_blobs(48, 32, 1)], _blobs(24, 32, 2)
    base = dict(size=32, width=8, epochs=6, batch_size=8, holdout=0.0, context=1, shift=0, heatmap_stride=4)
    plain_cfg, hm_cfg = TrainConfig(**base, heatmap_loss=0.0), TrainConfig(**base, heatmap_loss=0.05)
    plain, _ = train_net(train, 1, plain_cfg)
    hm, loss_a = train_net(train, 1, hm_cfg)
    again, loss_b = train_net(train, 1, hm_cfg)
    assert loss_a == loss_b and all(torch.equal(a, b) for a, b in zip(
        hm.state_dict().values(), again.state_dict().values(), strict=True))
    # On frames it never saw, the maps trained with the loss are much nearer the target's Gaussian than
    # those of the position loss alone (which here are sharper, a peak narrower than one cell), and the
    # positions read from them are as good.
    ce_plain, err_plain = _held_out(plain, held, plain_cfg)
    ce_hm, err_hm = _held_out(hm, held, hm_cfg)
    assert ce_hm < ce_plain - 1.0, (ce_plain, ce_hm)
    assert err_hm < max(1.5 * err_plain, 1.0), (err_plain, err_hm)


def test_context_sets_the_inputs_frames_and_reaches_the_cli():
    import inspect

    from robojudge.cli._kiva import train_cmd

    params = inspect.signature(train_cmd).parameters
    assert params["context"].default.default == TrainConfig().context == 3
    assert params["heatmap_loss"].default.default == TrainConfig().heatmap_loss
    one = KeypointReader(2, context=1, width=8)
    three = KeypointReader(2, context=3, width=8)
    assert one.enc1[0][0].in_channels == 3 + 2 and three.enc1[0][0].in_channels == 9 + 2
