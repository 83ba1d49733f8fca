"""Training a reader leaves the caller's torch random stream where it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def test_training_leaves_the_callers_torch_stream_alone() -> None:
    from robojudge.kiva import TrainConfig
    from robojudge.kiva._data import Episode, EpisodeData
    from robojudge.kiva._train import train_net

    rng = np.random.default_rng(0)
    data = [EpisodeData(Episode("x", "g", Path("x.mp4"), None, 0, False),
                        rng.integers(0, 255, (6, 16, 16, 3), dtype=np.uint8),
                        rng.uniform(3, 13, (6, 2, 2)).astype(np.float32), np.ones((6, 2), bool),
                        (16, 16), 10.0)]
    cfg = TrainConfig(size=16, width=8, epochs=1, batch_size=3, holdout=0.0)
    torch.manual_seed(1234)
    want = torch.rand(6)
    torch.manual_seed(1234)
    head = torch.rand(3)
    _, losses = train_net(data, 2, cfg)
    # Before: training ran torch.manual_seed(cfg.seed) on the caller's global generator.
    assert torch.equal(torch.cat([head, torch.rand(3)]), want)
    assert train_net(data, 2, cfg)[1] == losses  # still seeded
