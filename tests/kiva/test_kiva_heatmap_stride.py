"""The reader's heatmap stride: 4 input pixels a cell (the original network) or 2 (one more decoder step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from robojudge.kiva import TrainConfig, load_reader  # noqa: E402
from robojudge.kiva._net import KeypointReader  # noqa: E402
from robojudge.kiva._reader import FORMAT, _write  # noqa: E402


def _heat_shape(net: KeypointReader, size: int) -> tuple[int, int]:
    seen: list[tuple[int, int]] = []
    hook = net.heat.register_forward_hook(lambda _m, _i, out: seen.append(tuple(out.shape[-2:])))
    net(torch.rand(1, 9, size, size))
    hook.remove()
    return seen[0]


def test_stride_sets_the_heatmap_cell_and_positions_stay_in_input_pixels():
    torch.manual_seed(0)
    coarse, fine = KeypointReader(5, 3, 8, stride=4).eval(), KeypointReader(5, 3, 8, stride=2).eval()
    assert _heat_shape(coarse, 64) == (16, 16) and _heat_shape(fine, 64) == (32, 32)
    with torch.no_grad():
        pos, vis = fine(torch.rand(2, 9, 64, 64))
    assert pos.shape == (2, 5, 2) and vis.shape == (2, 5)
    assert bool(((pos >= 0) & (pos <= 64)).all())
    with pytest.raises(ValueError, match="stride must be 2 or 4"):
        KeypointReader(5, 3, 8, stride=3)


def test_a_stride_2_checkpoint_reloads_as_stride_2_and_a_config_without_a_stride_as_4(tmp_path: Path):
    # Stride 2 is the default now; a config stored before the option existed has no stride and was
    # trained at 4, so it must read back as 4.
    assert TrainConfig().heatmap_stride == 2
    cfg = TrainConfig(size=32, width=8, heatmap_stride=2)
    assert cfg.model_dump()["heatmap_stride"] == 2
    with pytest.raises(ValueError):
        TrainConfig(heatmap_stride=8)
    torch.manual_seed(1)
    net = KeypointReader(4, cfg.context, cfg.width, cfg.heatmap_stride).eval()
    meta = {"format": FORMAT, "keypoints": ["a", "b", "c", "d"], "config": json.loads(cfg.model_dump_json()),
            "robot": "fetch", "image_size": 32, "links": []}
    _write(tmp_path, net.state_dict(), meta)
    loaded = load_reader(tmp_path)
    assert loaded.net.stride == 2
    x = torch.rand(1, 9, 32, 32)
    with torch.no_grad():
        assert torch.equal(loaded.net(x)[0], net(x)[0])
    # Without a stride the config is one stored before the option (stride 4): the same weights do not load,
    # the checkpoint says which network it is, and a stride-4 network's do, reading as it did.
    meta["config"].pop("heatmap_stride")
    _write(tmp_path, net.state_dict(), meta)
    with pytest.raises(Exception, match="not a KIVA reader checkpoint"):
        load_reader(tmp_path)
    old = KeypointReader(4, cfg.context, cfg.width, 4).eval()
    _write(tmp_path, old.state_dict(), meta)
    loaded = load_reader(tmp_path)
    assert loaded.net.stride == 4
    with torch.no_grad():
        assert torch.equal(loaded.net(x)[0], old(x)[0])


def test_the_cli_trains_with_the_python_defaults():
    # `robojudge kiva train` and TrainConfig() must not drift apart: the same size, epochs and stride.
    import inspect

    from robojudge.cli._kiva import train_cmd

    params = inspect.signature(train_cmd).parameters
    cfg = TrainConfig()
    assert cfg.size == 128
    for name in ("size", "epochs", "heatmap_stride", "heatmap_loss", "members", "context", "seed", "holdout",
                 "threads", "warp"):
        assert params[name].default.default == getattr(cfg, name), name
