"""Loaders for networks built by torchvision, pyiqa, lpips or TorchScript, from local weight files.

Every loader builds the architecture with random (or no) initialisation and then loads a checkpoint
file that :func:`robojudge.models.resolve_weights` found, so nothing is ever downloaded here: not by
torchvision's ``weights=`` enums, not by pyiqa's ``pretrained=True`` and not by lpips' backbone.

Loaded networks are cached per (file, device), so scoring many items loads each network once per
process. torch and the model libraries are imported inside the loaders only.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robojudge.models._weights import WeightSpec, register_weights, resolve_weights, torch_device

if TYPE_CHECKING:
    import torch

    from robojudge.models._viclip_net import ViCLIP

_TV = "https://download.pytorch.org/models/"


def _torchvision_how(filename: str) -> str:
    return (
        f"torchvision publishes it outside the Hugging Face hub, at {_TV}{filename}; `robojudge weights "
        "fetch` downloads that address, or copy the file there by hand"
    )


#: MUSIQ trained on SPAQ, as pyiqa publishes it (RoboJudge App. B.3: "MUSIQ-SPAQ").
MUSIQ_SPAQ = register_weights(
    WeightSpec(
        name="musiq_spaq",
        unverified=True,
        repo_id="chaofengc/IQA-PyTorch-Weights",
        revision=None,
        filename="musiq_spaq_ckpt-358bb6af.pth",
        description="MUSIQ image-quality transformer trained on SPAQ (pyiqa checkpoint)",
        library="pyiqa",
        metrics=("musiq_spaq", "iq1_musiq"),
    )
)

#: OpenAI's CLIP RN50, the TorchScript file the openai-clip package downloads; the URL's folder name is
#: the file's SHA-256. CLIP-IQA's backbone (RoboPhys-3D App. B.1.2), loaded by pyiqa (models._clipiqa).
_CLIP_RN50_SHA256 = "afeb0e10f9e5a86da6080e35cf09123aca3b358a0c3e3b6c78a7b63bc04b6762"
CLIP_RN50_OPENAI = register_weights(
    WeightSpec(
        name="clip_rn50_openai",
        unverified=True,
        repo_id=None,
        revision=None,
        filename="RN50.pt",
        url=f"https://openaipublic.azureedge.net/clip/models/{_CLIP_RN50_SHA256}/RN50.pt",
        sha256=_CLIP_RN50_SHA256,
        description="CLIP RN50 image and text encoders (OpenAI's TorchScript release)",
        library="pyiqa",
        how=(
            "OpenAI publishes it outside the Hugging Face hub; `robojudge weights fetch` downloads it and "
            "checks its SHA-256. A copy that openai-clip or pyiqa already downloaded (~/.cache/clip/RN50.pt "
            "or ~/.cache/torch/hub/clip/RN50.pt) is the same file"
        ),
        metrics=("aq_clip_iqa",),
    )
)

#: RAFT-large trained on FlyingChairs + FlyingThings (torchvision's port of the paper's raft-things.pth).
RAFT_THINGS = register_weights(
    WeightSpec(
        name="raft_things",
        repo_id=None,
        revision=None,
        filename="raft_large_C_T_V1-22a6c225.pth",
        url=f"{_TV}raft_large_C_T_V1-22a6c225.pth",
        description="RAFT-large optical flow, Chairs+Things (torchvision C_T_V1)",
        library="torchvision",
        how=_torchvision_how("raft_large_C_T_V1-22a6c225.pth"),
        metrics=("flow_motion_magnitude_raft",),
    )
)

#: torchvision's ImageNet VGG-16; LPIPS-VGG's backbone and the Gram-matrix style features.
VGG16_IMAGENET = register_weights(
    WeightSpec(
        name="vgg16_imagenet",
        repo_id="ByteDance/LatentSync-1.6",
        revision="c42c7e6c8e9c213626389fa7d9a3c444b8536353",
        filename="auxiliary/vgg16-397923af.pth",
        description="VGG-16 ImageNet classifier (torchvision file vgg16-397923af.pth)",
        library="torchvision",
        how=f"the same file is torchvision's {_TV}vgg16-397923af.pth; either copy works",
        metrics=("iq1_lpips", "cc_style"),
    )
)

#: torchvision's ImageNet Inception-v3 (1000 classes) for the Inception Score.
INCEPTION_V3 = register_weights(
    WeightSpec(
        name="inception_v3_imagenet",
        repo_id=None,
        revision=None,
        filename="inception_v3_google-0cc3c7bd.pth",
        url=f"{_TV}inception_v3_google-0cc3c7bd.pth",
        description="Inception-v3 ImageNet classifier (torchvision IMAGENET1K_V1)",
        library="torchvision",
        how=_torchvision_how("inception_v3_google-0cc3c7bd.pth"),
        metrics=("iq1_inception_score",),
    )
)

#: The Kinetics-400 I3D as a TorchScript file (the StyleGAN-V export used by most PyTorch FVD code).
I3D_TORCHSCRIPT = register_weights(
    WeightSpec(
        name="i3d_torchscript",
        unverified=True,
        repo_id="ByteDance/LatentSync-1.6",
        revision="c42c7e6c8e9c213626389fa7d9a3c444b8536353",
        filename="auxiliary/i3d_torchscript.pt",
        description="I3D Kinetics-400 video classifier, TorchScript (FVD features)",
        library="torchscript",
        how=(
            "any TorchScript file with forward(x, rescale: bool, resize: bool, return_features: bool) taking "
            "(N, 3, T, 224, 224) in [-1, 1] and returning (N, 400) features works (see docs/metrics.md)"
        ),
        metrics=("iq1_fvd",),
    )
)

#: A video frame-interpolation network exported to TorchScript (VBench uses AMT-S).
FRAME_INTERPOLATION = register_weights(
    WeightSpec(
        name="frame_interpolation",
        unverified=True,
        repo_id="lalala125/AMT",
        revision=None,
        filename="frame_interpolation.pt",
        description="video frame-interpolation network, TorchScript (AMT-S in VBench)",
        library="torchscript",
        how=(
            "`robojudge weights fetch` cannot get this one: the hub holds AMT-S only as a plain checkpoint "
            "(amt-s.pth). Export it, or any interpolation network, to TorchScript with forward(frame0, "
            "frame1) -> middle frame, all (N, 3, H, W) in [0, 1], H and W multiples of 16"
        ),
        metrics=("mq_motion_smoothness",),
    )
)


#: ViCLIP ViT-L/14 trained on InternVid-10M-FLT, the video-text model of VBench's overall consistency,
#: which RoboPhys-3D App. B.1 reports as Semantics Consistency. Built by robojudge.models._viclip_net.
VICLIP_L14_INTERNVID = register_weights(
    WeightSpec(
        name="viclip_l14_internvid",
        unverified=True,
        repo_id="OpenGVLab/ViCLIP",
        revision=None,
        filename="ViClip-InternVid-10M-FLT.pth",
        description="ViCLIP ViT-L/14 video and text encoders (InternVid-10M-FLT)",
        library="torch",
        how=(
            "VBench loads the same file as third_party/ViCLIP/ViClip-InternVid-10M-FLT.pth; its 'model' "
            "entry is the state dict"
        ),
        metrics=("cc_semantics",),
    )
)


def load_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors, on CPU, without running pickled code (``weights_only``).

    Accepts a bare state dict or one nested under ``state_dict``/``params``/``model``, and strips a
    ``module.`` prefix left by ``DataParallel``.

    Raises:
        ValueError: When the file holds no state dict.
    """
    import torch

    obj: Any = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "params", "model"):
        if isinstance(obj, dict) and isinstance(obj.get(key), dict):
            obj = obj[key]
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise ValueError(f"{path} does not hold a state dict of tensors")
    return {k.removeprefix("module."): v for k, v in obj.items()}


def _ready(net: torch.nn.Module, device: str) -> torch.nn.Module:
    net.eval()
    for param in net.parameters():  # ScriptModules lack requires_grad_(); this works for both kinds
        param.requires_grad_(False)
    return net.to(device)


@functools.lru_cache(maxsize=4)
def _musiq(path: str, device: str) -> torch.nn.Module:
    from pyiqa.archs.musiq_arch import MUSIQ

    # pretrained=False keeps pyiqa from fetching its default (AVA) checkpoint; SPAQ has one output.
    net = MUSIQ(num_class=1, pretrained=False, pretrained_model_path=None)
    net.load_state_dict(load_state_dict(Path(path)))
    return _ready(net, device)


@functools.lru_cache(maxsize=4)
def _raft_large(path: str, device: str) -> torch.nn.Module:
    from torchvision.models.optical_flow import raft_large

    net = raft_large(weights=None, progress=False)
    net.load_state_dict(load_state_dict(Path(path)))
    return _ready(net, device)


@functools.lru_cache(maxsize=4)
def _vgg16_features(path: str, device: str) -> torch.nn.Module:
    from torchvision.models.vgg import cfgs, make_layers

    # Only the convolutional part is used; the classifier's keys (if the file has them) are skipped.
    net = make_layers(cfgs["D"], batch_norm=False)
    state = {
        k.removeprefix("features."): v
        for k, v in load_state_dict(Path(path)).items()
        if k.startswith("features.")
    }
    if not state:
        raise ValueError(f"{path} holds no VGG-16 'features.*' tensors")
    net.load_state_dict(state)
    return _ready(net, device)


@functools.lru_cache(maxsize=4)
def _lpips_vgg(path: str, device: str) -> torch.nn.Module:
    import lpips

    # pnet_rand=True: lpips builds torchvision's VGG-16 without fetching ImageNet weights; its own
    # linear calibration layers (weights/v0.1/vgg.pth) ship inside the pip package.
    net = lpips.LPIPS(net="vgg", version="0.1", pretrained=True, pnet_rand=True, verbose=False)
    features = list(_vgg16_features(path, "cpu").children())
    for block in (net.net.slice1, net.net.slice2, net.net.slice3, net.net.slice4, net.net.slice5):
        for index, module in block.named_children():
            module.load_state_dict(features[int(index)].state_dict())
    return _ready(net, device)


@functools.lru_cache(maxsize=4)
def _inception_v3(path: str, device: str) -> torch.nn.Module:
    from torchvision.models import Inception3

    # transform_input=True is how torchvision runs its ImageNet checkpoint (inputs ImageNet-normalized).
    net = Inception3(num_classes=1000, aux_logits=True, transform_input=True, init_weights=False)
    net.load_state_dict(load_state_dict(Path(path)))
    return _ready(net, device)


@functools.lru_cache(maxsize=4)
def _torchscript(path: str, device: str) -> torch.nn.Module:
    import torch

    net: torch.nn.Module = torch.jit.load(path, map_location=device)  # type: ignore[no-untyped-call]
    return _ready(net, device)


def _path(spec: WeightSpec, metric: str | None) -> str:
    return str(resolve_weights(spec, metric=metric))


def load_musiq_spaq(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """pyiqa's MUSIQ architecture with the SPAQ checkpoint: input ``(N, 3, H, W)`` in [0, 1], output MOS.

    Raises:
        MissingWeightsError: When the checkpoint is not on this machine (names ``metric``).
    """
    return _musiq(_path(MUSIQ_SPAQ, metric), torch_device(device))


def load_raft_things(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """torchvision's ``raft_large``, Chairs+Things weights; inputs in [-1, 1], sides divisible by 8."""
    return _raft_large(_path(RAFT_THINGS, metric), torch_device(device))


def load_vgg16_features(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """The convolutional part (``features``) of torchvision's ImageNet VGG-16."""
    return _vgg16_features(_path(VGG16_IMAGENET, metric), torch_device(device))


def load_lpips_vgg(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """LPIPS v0.1 on VGG-16: the lpips package's calibration layers on the resolved VGG-16 backbone."""
    return _lpips_vgg(_path(VGG16_IMAGENET, metric), torch_device(device))


def load_inception_v3(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """torchvision's ImageNet Inception-v3; input ``(N, 3, 299, 299)`` ImageNet-normalized, output logits."""
    return _inception_v3(_path(INCEPTION_V3, metric), torch_device(device))


def load_i3d_torchscript(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """The TorchScript I3D (see :data:`I3D_TORCHSCRIPT` for its calling contract)."""
    return _torchscript(_path(I3D_TORCHSCRIPT, metric), torch_device(device))


def load_frame_interpolation(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """The TorchScript frame-interpolation network (see :data:`FRAME_INTERPOLATION` for its contract)."""
    return _torchscript(_path(FRAME_INTERPOLATION, metric), torch_device(device))


@functools.lru_cache(maxsize=2)
def _viclip(path: str, device: str) -> ViCLIP:
    import pickle

    from robojudge.models._viclip import config_from_state_dict
    from robojudge.models._viclip_net import ViCLIP

    try:
        state = load_state_dict(Path(path))
    except pickle.UnpicklingError as exc:  # weights_only refuses pickled objects besides tensors
        raise ValueError(f"{path} holds pickled objects besides tensors, which robojudge does not load "
                         f"(torch.load weights_only): {exc}") from exc
    net = ViCLIP(config_from_state_dict(state, path))
    keys = set(net.state_dict())
    missing, unexpected = sorted(keys - set(state)), sorted(set(state) - keys)
    if missing or unexpected:
        raise ValueError(
            f"{path} does not match robojudge's ViCLIP: {len(missing)} missing keys (first: "
            f"{', '.join(missing[:5]) or '-'}), {len(unexpected)} unexpected keys (first: "
            f"{', '.join(unexpected[:5]) or '-'})"
        )
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as exc:  # a tensor of the wrong shape
        raise ValueError(f"{path} does not match robojudge's ViCLIP: {exc}") from exc
    _ready(net, device)
    return net


def load_viclip(metric: str | None = None, device: str | None = None) -> ViCLIP:
    """ViCLIP ViT-L/14 (InternVid-10M-FLT) built by robojudge and loaded strictly from its checkpoint.

    The sizes are read from the checkpoint's tensor shapes (:func:`robojudge.models._viclip.
    config_from_state_dict`), so the published file gives the ViT-L/14. Cached per (file, device);
    on the GPU when one is visible.

    Raises:
        MissingWeightsError: When ``ViClip-InternVid-10M-FLT.pth`` is not on this machine (names ``metric``).
        ValueError: When the file's keys or shapes do not match the network (names the file and the first
            missing and unexpected keys).
    """
    return _viclip(_path(VICLIP_L14_INTERNVID, metric), torch_device(device))


def clear_loaded() -> None:
    """Forget every cached network (tests that swap weight files call this)."""
    from robojudge.models import _clipiqa, _hpsv3  # they import this module, so only at call time

    for cached in (_musiq, _raft_large, _vgg16_features, _lpips_vgg, _inception_v3, _torchscript, _viclip):
        cached.cache_clear()
    _clipiqa.clear_clipiqa()
    _hpsv3.clear_hpsv3()
