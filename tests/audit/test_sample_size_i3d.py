"""The sample-size audit on I3D window features, with a tiny network of the I3D TorchScript contract."""

from __future__ import annotations

import numpy as np
import pytest

from robojudge.audit import audit_sample_size
from robojudge.audit._sample_size import I3D_SIZE, i3d_windows
from robojudge.models import MissingWeightsError
from robojudge.suite._demo import make_synthetic_suite
from robojudge.video import sample_frames

torch = pytest.importorskip("torch")


class _TinyI3D(torch.nn.Module):
    """(N, 3, T, H, W) -> (N, 4): a 1x1x1 convolution, averaged over time and space."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv3d(3, 4, 1)

    def forward(self, x, rescale: bool = False, resize: bool = False, return_features: bool = False):
        return self.conv(x).mean(dim=(2, 3, 4))


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return make_synthetic_suite(tmp_path_factory.mktemp("i3d") / "syn", episodes=2, seed=0)


def test_i3d_windows_are_the_network_on_each_window(suite) -> None:
    from robojudge.suite import load_suite

    net = _TinyI3D()
    video = load_suite(suite).items[0].video
    got = i3d_windows(video, 8, None, net)
    frames = sample_frames(video, fps=None, max_frames=None, size=(I3D_SIZE, I3D_SIZE)).frames
    assert got.shape == (len(frames) // 8, 4)
    # By hand: the network on window k is W (mean pixel of the window scaled to [-1, 1]) + b.
    w = net.conv.weight.detach().double().numpy().reshape(4, 3)
    b = net.conv.bias.detach().double().numpy()
    for k in range(len(got)):
        mean = frames[8 * k:8 * k + 8].reshape(-1, 3).astype(np.float64).mean(axis=0) / 127.5 - 1.0
        assert got[k] == pytest.approx(w @ mean + b, abs=1e-5)


@pytest.mark.slow
def test_sample_size_with_i3d_features(suite, weights) -> None:
    run = audit_sample_size(suite, generators=["faithful", "flicker", "stalled"], ns=[2, 4], window=8,
                            draws=10, features="i3d", net=_TinyI3D())
    assert run.result.windows == {"faithful": 8, "flicker": 8, "stalled": 8}
    assert run.reference_windows == 8
    with pytest.raises(MissingWeightsError, match="iq1_fvd.*i3d_torchscript"):
        audit_sample_size(suite, features="i3d")  # `weights`: an empty weights folder, offline
    with pytest.raises(ValueError, match="unknown features 'i4d'"):
        audit_sample_size(suite, features="i4d")
