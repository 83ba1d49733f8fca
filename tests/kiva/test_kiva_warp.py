"""Training augmentation by a smooth random warp (``TrainConfig.warp``): keypoints move with the content."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from robojudge.kiva import TrainConfig  # noqa: E402
from robojudge.kiva._data import EpisodeData  # noqa: E402
from robojudge.kiva._train import _warp, train_net  # noqa: E402


def _coordinates(n: int, size: int) -> torch.Tensor:
    """Images whose two channels hold each pixel's own x and y: warped, they say where pixels came from."""
    ys, xs = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    return torch.stack([xs, ys]).expand(n, 2, size, size).clone()


def _sample(img: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    """Bilinear samples of ``img`` (n, c, s, s) at pixel positions ``at`` (n, k, 2): (n, k, c)."""
    size = img.shape[-1]
    grid = (at * (2.0 / (size - 1)) - 1.0).unsqueeze(1)
    return torch.nn.functional.grid_sample(img, grid, align_corners=True)[:, :, 0].transpose(1, 2)


def test_warped_keypoints_land_on_the_warped_content_and_link_lengths_vary():
    size, n = 64, 24
    rng = np.random.default_rng(7)
    kp = torch.from_numpy(rng.uniform(10, 54, size=(n, 3, 2)).astype(np.float32))
    vis = torch.ones(n, 3, dtype=torch.bool)
    out, moved, vis_out = _warp(_coordinates(n, size), kp, vis, np.random.default_rng(1), 0.03)
    assert out.shape == (n, 2, size, size) and moved.shape == kp.shape and moved.dtype == kp.dtype
    assert float((moved - kp).norm(dim=-1).mean()) > 1.0  # the warp moved the keypoints by pixels
    # The warped image at a keypoint's new position shows what was at its old one.
    came_from = _sample(out, moved)
    assert float((came_from - kp).norm(dim=-1)[vis_out].max()) < 0.05
    before = (kp[:, 0] - kp[:, 1]).norm(dim=-1)
    after = (moved[:, 0] - moved[:, 1]).norm(dim=-1)
    assert float((after - before).abs().mean()) > 0.5  # not a rigid shift: the two ends move apart or closer
    # The same draws give the same warp, and every context channel gets the same one.
    again = _warp(_coordinates(n, size), kp, vis, np.random.default_rng(1), 0.03)
    assert torch.equal(again[0], out) and torch.equal(again[1], moved)
    stacked = _warp(torch.cat([_coordinates(n, size)] * 3, dim=1), kp, vis, np.random.default_rng(1), 0.03)[0]
    assert torch.equal(stacked[:, 4:6], out)


def test_keypoints_warped_out_of_the_frame_are_not_visible():
    size = 32
    kp = torch.tensor([[[0.2, 16.0], [16.0, 16.0]]] * 16)
    vis = torch.ones(16, 2, dtype=torch.bool)
    _, moved, vis_out = _warp(torch.rand(16, 3, size, size), kp, vis, np.random.default_rng(3), 0.05)
    outside = (moved[:, 0, 0] < 0)
    assert bool(outside.any())
    assert not bool(vis_out[outside, 0].any())
    assert bool(vis_out[:, 1].all())


def test_warp_is_off_by_default_and_in_configs_stored_before_it_and_bounded():
    assert TrainConfig().warp == 0.0
    stored = {k: v for k, v in TrainConfig(warp=0.02).model_dump().items() if k != "warp"}
    assert TrainConfig.from_stored(stored).warp == 0.0  # a reader trained before the option
    assert TrainConfig(warp=0.02).model_dump()["warp"] == 0.02
    with pytest.raises(ValueError):
        TrainConfig(warp=0.2)
    with pytest.raises(ValueError):
        TrainConfig(warp=-0.01)


def test_training_with_a_warp_is_seeded_and_differs_from_training_without():
    rng = np.random.default_rng(5)
    size, t, k = 24, 6, 3
    data = [EpisodeData(episode=None, frames=rng.integers(0, 255, size=(t, size, size, 3), dtype=np.uint8),
                        keypoints=rng.uniform(4, 20, size=(t, k, 2)).astype(np.float32),
                        visible=np.ones((t, k), dtype=bool), native=(size, size), fps=10.0)]  # type: ignore[arg-type]
    base = dict(size=size, width=8, epochs=2, batch_size=4, holdout=0.0)
    warped_a, loss_a = train_net(data, k, TrainConfig(**base, warp=0.03))
    warped_b, loss_b = train_net(data, k, TrainConfig(**base, warp=0.03))
    plain, loss_p = train_net(data, k, TrainConfig(**base))
    assert loss_a == loss_b
    for name, value in warped_a.state_dict().items():
        assert torch.equal(value, warped_b.state_dict()[name]), name
    assert loss_a != loss_p


def test_the_cli_stores_the_warp_and_refuses_one_out_of_range(kiva_suite, tmp_path):
    import json

    from typer.testing import CliRunner

    from robojudge.cli import build_app

    app = build_app("kiva")
    args = ["kiva", "train", "--episodes", str(kiva_suite), "--robot", "fetch", "--size", "32",
            "--epochs", "1", "--holdout", "0.25", "--quiet"]
    ok = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "w"), "--warp", "0.03"])
    assert ok.exit_code == 0, ok.output
    assert json.loads((tmp_path / "w" / "reader.json").read_text())["config"]["warp"] == 0.03
    bad = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x"), "--warp", "0.5"])
    assert bad.exit_code == 2 and "warp" in bad.output
    assert not (tmp_path / "x" / "reader.pt").exists()
