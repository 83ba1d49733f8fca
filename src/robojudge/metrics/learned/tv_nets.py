"""Pure network computations behind the torchvision/pyiqa/lpips/TorchScript metrics.

Each function takes the network as an argument (so tests pass a tiny random one), takes uint8 RGB
frames ``(N, H, W, 3)``, runs in batches on the network's device and returns numpy arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: ReLU outputs of torchvision's VGG-16 ``features`` used for Gram matrices: relu1_2, relu2_2,
#: relu3_3, relu4_3 (the style layers of Johnson et al., 2016, for VGG-16).
VGG16_STYLE_LAYERS = (3, 8, 15, 22)


def device_of(net: torch.nn.Module) -> torch.device:
    """The device of a network's first parameter or buffer (CPU for one that has none)."""
    import torch

    for tensor in (*net.parameters(), *net.buffers()):
        return tensor.device
    return torch.device("cpu")


def to_unit_tensor(frames: np.ndarray, device: torch.device | str) -> torch.Tensor:
    """uint8 ``(N, H, W, 3)`` frames as float ``(N, 3, H, W)`` in [0, 1] on ``device``."""
    import torch

    if frames.ndim != 4 or frames.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) RGB frames, got shape {frames.shape}")
    return torch.from_numpy(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2).float() / 255.0


def batches(n: int, size: int) -> Iterator[slice]:
    """Consecutive slices of at most ``size`` covering ``range(n)``."""
    for start in range(0, n, max(1, size)):
        yield slice(start, min(n, start + max(1, size)))


def cap_longer_side(x: torch.Tensor, max_side: int) -> torch.Tensor:
    """Downscale ``(N, 3, H, W)`` so the longer side is at most ``max_side`` (VBench's ``longer`` mode).

    As VBench's imaging-quality preprocessing: only when ``max(H, W) > max_side``, scale
    ``s = max_side / max(H, W)``, size ``(int(s H), int(s W))``, bilinear without antialiasing.
    """
    import torch.nn.functional as F  # noqa: N812

    h, w = x.shape[-2:]
    if max(h, w) <= max_side:
        return x
    s = max_side / max(h, w)
    return F.interpolate(
        x, size=(int(s * h), int(s * w)), mode="bilinear", align_corners=False, antialias=False
    )


def musiq_scores(
    frames: np.ndarray, net: torch.nn.Module, *, max_side: int = 512, batch_size: int = 8
) -> np.ndarray:
    """Per-frame MUSIQ predictions (the checkpoint's MOS scale; SPAQ's is 0-100).

    Frames go in as [0, 1] RGB after :func:`cap_longer_side`; pyiqa's MUSIQ rescales to [-1, 1] and
    builds its multi-scale patches itself.
    """
    import torch

    dev = device_of(net)
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in batches(len(frames), batch_size):
            x = cap_longer_side(to_unit_tensor(frames[sl], dev), max_side)
            out.append(net(x).reshape(-1).float().cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def raft_flow_magnitudes(
    frames: np.ndarray, net: torch.nn.Module, *, num_flow_updates: int = 20, batch_size: int = 4
) -> np.ndarray:
    """Per-step mean RAFT flow magnitude ``m_t = 1/(HW) sum sqrt(u^2 + v^2)`` from frame t to t+1.

    Frames are scaled to [-1, 1] (torchvision's RAFT convention); their sides must be divisible by 8.
    The last of RAFT's iterative refinements is used.
    """
    import torch

    if frames.shape[1] % 8 or frames.shape[2] % 8:
        raise ValueError(f"RAFT needs frame sides divisible by 8, got {frames.shape[2]}x{frames.shape[1]}")
    dev = device_of(net)
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in batches(len(frames) - 1, batch_size):
            a = to_unit_tensor(frames[sl.start : sl.stop], dev) * 2 - 1
            b = to_unit_tensor(frames[sl.start + 1 : sl.stop + 1], dev) * 2 - 1
            flow = net(a, b, num_flow_updates=num_flow_updates)[-1]
            out.append(flow.double().pow(2).sum(dim=1).sqrt().mean(dim=(1, 2)).cpu().numpy())
    return np.concatenate(out)


def lpips_distances(
    gen: np.ndarray, ref: np.ndarray, net: torch.nn.Module, *, batch_size: int = 8
) -> np.ndarray:
    """Per-pair LPIPS distance of two equally shaped frame stacks (inputs scaled to [-1, 1])."""
    import torch

    if gen.shape != ref.shape:
        raise ValueError(f"frame stacks differ in shape: {gen.shape} vs {ref.shape}")
    dev = device_of(net)
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in batches(len(gen), batch_size):
            a = to_unit_tensor(gen[sl], dev) * 2 - 1
            b = to_unit_tensor(ref[sl], dev) * 2 - 1
            out.append(net(a, b).reshape(-1).double().cpu().numpy())
    return np.concatenate(out)


def gram_matrices(
    frames: np.ndarray,
    features: torch.nn.Module,
    layers: tuple[int, ...] = VGG16_STYLE_LAYERS,
    *,
    batch_size: int = 8,
) -> list[np.ndarray]:
    """Gram matrices ``G = F F^T / (C H W)`` of the activations after each module index in ``layers``.

    ``features`` is a sequential CNN (torchvision's ``vgg16().features``); frames are ImageNet-
    normalized first. Returns one ``(N, C_l, C_l)`` array per layer (Gatys et al., 2016).
    """
    import torch

    dev = device_of(features)
    mean = torch.tensor(IMAGENET_MEAN, device=dev).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=dev).view(1, 3, 1, 1)
    grams: list[list[np.ndarray]] = [[] for _ in layers]
    with torch.inference_mode():
        for sl in batches(len(frames), batch_size):
            x = (to_unit_tensor(frames[sl], dev) - mean) / std
            for index, module in enumerate(features.children()):
                x = module(x)
                if index in layers:
                    n, c, h, w = x.shape
                    flat = x.reshape(n, c, h * w).double()
                    grams[layers.index(index)].append(
                        (flat @ flat.transpose(1, 2) / (c * h * w)).cpu().numpy()
                    )
                if index >= max(layers):
                    break
    return [np.concatenate(g) for g in grams]


def style_distances(grams: list[np.ndarray]) -> np.ndarray:
    """Per-frame style drift from the first frame: ``mean_l mean((G_l(t) - G_l(1))^2)`` for t >= 2."""
    per_layer = [((g[1:] - g[:1]) ** 2).reshape(len(g) - 1, -1).mean(axis=1) for g in grams]
    drift: np.ndarray = np.mean(per_layer, axis=0)
    return drift


def interpolation_errors(frames: np.ndarray, net: torch.nn.Module, *, batch_size: int = 4) -> np.ndarray:
    """Mean absolute error (0-255) between each odd frame and its interpolation from its neighbours.

    As VBench's motion smoothness: for odd ``t`` with a successor, the network predicts frame ``t``
    from frames ``t-1`` and ``t+1``; the prediction is quantized to uint8 and compared with the real
    frame. Inputs are [0, 1] RGB, replicate-padded to multiples of 16 and cropped back.
    """
    import torch
    import torch.nn.functional as F  # noqa: N812

    targets = np.arange(1, len(frames) - 1, 2)
    if targets.size == 0:
        raise ValueError(f"needs at least 3 frames, got {len(frames)}")
    dev = device_of(net)
    h, w = frames.shape[1:3]
    pad = (0, (-w) % 16, 0, (-h) % 16)
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in batches(targets.size, batch_size):
            t = targets[sl]
            a = F.pad(to_unit_tensor(frames[t - 1], dev), pad, mode="replicate")
            b = F.pad(to_unit_tensor(frames[t + 1], dev), pad, mode="replicate")
            pred = net(a, b)[..., :h, :w].clamp(0, 1)
            pred_u8 = (pred * 255).round()
            real = torch.from_numpy(np.ascontiguousarray(frames[t])).to(dev).permute(0, 3, 1, 2).float()
            out.append((pred_u8 - real).abs().mean(dim=(1, 2, 3)).double().cpu().numpy())
    return np.concatenate(out)
