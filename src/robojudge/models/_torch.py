"""Loaders for networks built by torchvision, pyiqa, lpips or TorchScript, from local weight files.

Every loader builds the architecture with random (or no) initialisation and then loads a checkpoint
file that :func:`robojudge.models.resolve_weights` found, so nothing is ever downloaded here: not by
torchvision's ``weights=`` enums, not by pyiqa's ``pretrained=True`` and not by lpips' backbone.

Loaded networks go through the network cache (:mod:`robojudge.models._cache`), so scoring many items
loads each network once per process. torch and the model libraries are imported inside the loaders
only; the weight specs are in :mod:`robojudge.models._specs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from robojudge.models._load import load_cached, load_state_dict, ready
from robojudge.models._specs import (
    FRAME_INTERPOLATION,
    I3D_TORCHSCRIPT,
    INCEPTION_V3,
    MUSIQ_SPAQ,
    RAFT_THINGS,
    VGG16_IMAGENET,
)

if TYPE_CHECKING:
    import torch


def _musiq(path: Path, device: str) -> torch.nn.Module:
    from pyiqa.archs.musiq_arch import MUSIQ

    # pretrained=False keeps pyiqa from fetching its default (AVA) checkpoint; SPAQ has one output.
    net = MUSIQ(num_class=1, pretrained=False, pretrained_model_path=None)
    net.load_state_dict(load_state_dict(path))
    return ready(net, device)


def _raft_large(path: Path, device: str) -> torch.nn.Module:
    from torchvision.models.optical_flow import raft_large

    net = raft_large(weights=None, progress=False)
    net.load_state_dict(load_state_dict(path))
    return ready(net, device)


def _vgg16_features(path: Path, device: str) -> torch.nn.Module:
    from torchvision.models.vgg import cfgs, make_layers

    # Only the convolutional part is used; the classifier's keys (if the file has them) are skipped.
    net = make_layers(cfgs["D"], batch_norm=False)
    state = {
        k.removeprefix("features."): v
        for k, v in load_state_dict(path).items()
        if k.startswith("features.")
    }
    if not state:
        raise ValueError(f"{path} holds no VGG-16 'features.*' tensors")
    net.load_state_dict(state)
    return ready(net, device)


def _lpips_vgg(path: Path, device: str) -> torch.nn.Module:
    import lpips

    # pnet_rand=True: lpips builds torchvision's VGG-16 without fetching ImageNet weights; its own
    # linear calibration layers (weights/v0.1/vgg.pth) ship inside the pip package.
    net = lpips.LPIPS(net="vgg", version="0.1", pretrained=True, pnet_rand=True, verbose=False)
    # The backbone is built here and dropped once copied, so it does not take a cache entry of its own.
    features = list(_vgg16_features(path, "cpu").children())
    for block in (net.net.slice1, net.net.slice2, net.net.slice3, net.net.slice4, net.net.slice5):
        for index, module in block.named_children():
            module.load_state_dict(features[int(index)].state_dict())
    return ready(net, device)


def _inception_v3(path: Path, device: str) -> torch.nn.Module:
    from torchvision.models import Inception3

    # transform_input=True is how torchvision runs its ImageNet checkpoint (inputs ImageNet-normalized).
    net = Inception3(num_classes=1000, aux_logits=True, transform_input=True, init_weights=False)
    net.load_state_dict(load_state_dict(path))
    return ready(net, device)


def _torchscript(path: Path, device: str) -> torch.nn.Module:
    import torch

    net: torch.nn.Module = torch.jit.load(str(path), map_location=device)  # type: ignore[no-untyped-call]
    return ready(net, device)


def load_musiq_spaq(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """pyiqa's MUSIQ architecture with the SPAQ checkpoint: input ``(N, 3, H, W)`` in [0, 1], output MOS.

    Raises:
        MissingWeightsError: When the checkpoint is not on this machine (names ``metric``).
    """
    return load_cached(MUSIQ_SPAQ, "musiq", _musiq, metric=metric, device=device)


def load_raft_things(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """torchvision's ``raft_large``, Chairs+Things weights; inputs in [-1, 1], sides divisible by 8."""
    return load_cached(RAFT_THINGS, "raft_large", _raft_large, metric=metric, device=device)


def load_vgg16_features(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """The convolutional part (``features``) of torchvision's ImageNet VGG-16."""
    return load_cached(VGG16_IMAGENET, "vgg16_features", _vgg16_features, metric=metric, device=device)


def load_lpips_vgg(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """LPIPS v0.1 on VGG-16: the lpips package's calibration layers on the resolved VGG-16 backbone."""
    return load_cached(VGG16_IMAGENET, "lpips_vgg", _lpips_vgg, metric=metric, device=device)


def load_inception_v3(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """torchvision's ImageNet Inception-v3; input ``(N, 3, 299, 299)`` ImageNet-normalized, output logits."""
    return load_cached(INCEPTION_V3, "inception_v3", _inception_v3, metric=metric, device=device)


def load_i3d_torchscript(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """The TorchScript I3D (see :data:`~robojudge.models.I3D_TORCHSCRIPT` for its calling contract)."""
    return load_cached(I3D_TORCHSCRIPT, "torchscript", _torchscript, metric=metric, device=device)


def load_frame_interpolation(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """The TorchScript frame-interpolation network (see :data:`~robojudge.models.FRAME_INTERPOLATION`)."""
    return load_cached(FRAME_INTERPOLATION, "torchscript", _torchscript, metric=metric, device=device)
