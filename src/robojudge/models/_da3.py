"""Depth Anything 3 (Lin et al. 2025): per-frame depth, intrinsics and poses of a frame set, jointly.

RoboPhys-3D App. B.2.1 estimates "per-frame depth and camera pose jointly with depth anything 3
(DA3) [36]" for its reprojection metrics. The network comes from the ``depth-anything-3`` package
(0.1.1): :func:`build_da3` builds ``DepthAnything3Net`` from the package's own YAML preset
(``configs/<model_name>.yaml``) and :func:`load_da3` fills it from the Hugging Face repository's
``model.safetensors``; the preset name is read from the repository's ``config.json``
(``{"model_name": "da3-base"}``, written by ``huggingface_hub``'s ``PyTorchModelHubMixin``). The
checkpoint's keys carry the API wrapper's ``model.`` prefix, which is stripped; the load is strict.

Only the network is used, which needs torch, einops, addict and omegaconf. The package's API module
(``depth_anything_3.api``) is not imported: it pulls in evo, open3d, moviepy and others, and the
package pins ``numpy<2``, so robojudge expects it installed with ``--no-deps`` next to those four.

Input preparation follows the package's ``InputProcessor`` with ``process_res_method
="upper_bound_resize"``: the longer side is resized to ``process_res`` (OpenCV area / cubic), each
side is then rounded to the nearest multiple of the 14-pixel patch, and the frames are normalised with
ImageNet's mean and standard deviation. Outputs are DA3's raw (up-to-scale) depth, its intrinsics in
pixels of the resized frames, and camera-to-world poses (DA3 returns world-to-camera ``[R | t]``,
inverted here), all as numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robojudge.models._cache import NETWORKS, NetworkKey
from robojudge.models._load import checked_load, files_stamp, folder_config, local_weights, torch_device
from robojudge.models._specs import DA3_BASE
from robojudge.models._weights import WeightSpec

if TYPE_CHECKING:
    import torch

PATCH = 14
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
CHECKPOINT = "model.safetensors"
CONFIG = "config.json"
INSTALL_HINT = (
    "install the network code with `pip install --no-deps depth-anything-3==0.1.1` plus "
    "`pip install omegaconf addict einops` (the package's other requirements, numpy<2 among them, are "
    "not needed for the network and conflict with robojudge's)"
)


@dataclass(frozen=True)
class Da3Geometry:
    """DA3's reconstruction of ``N`` frames at its processing resolution ``h x w``.

    Attributes:
        frames: ``(N, h, w, 3)`` uint8, the resized frames the network saw.
        depth: ``(N, h, w)`` z-depth, in DA3's (arbitrary, shared) scale.
        intrinsics: ``(N, 3, 3)`` pinhole matrices in pixels of ``frames``.
        cam2world: ``(N, 4, 4)`` camera-to-world poses (OpenCV axes), same scale as ``depth``.
    """

    frames: np.ndarray
    depth: np.ndarray
    intrinsics: np.ndarray
    cam2world: np.ndarray


def _import_da3() -> tuple[Any, Any, Any]:
    try:
        from depth_anything_3.cfg import create_object, load_config
        from depth_anything_3.registry import MODEL_REGISTRY
    except ImportError as exc:
        raise ImportError(f"Depth Anything 3 is not importable ({exc}); {INSTALL_HINT}") from exc
    return create_object, load_config, MODEL_REGISTRY


def build_da3(model_name: str) -> torch.nn.Module:
    """A randomly initialised ``DepthAnything3Net`` from the package's preset ``model_name`` (``da3-small``).

    Raises:
        ImportError: When the ``depth_anything_3`` package (or omegaconf/addict/einops) is missing.
        KeyError: When the package has no such preset.
    """
    create_object, load_config, registry = _import_da3()
    if model_name not in registry:
        raise KeyError(f"Depth Anything 3 has no preset {model_name!r}; known: {', '.join(sorted(registry))}")
    net: torch.nn.Module = create_object(load_config(registry[model_name]))
    return net.eval()


def preset_name(folder: Path, default: str) -> str:
    """The preset named by ``folder/config.json`` (``model_name``), or ``default`` without one.

    Raises:
        ValueError: When ``config.json`` is not valid JSON or not a JSON object (names the file).
    """
    data = folder_config(folder, CONFIG)
    name = default if data is None else data.get("model_name", default)
    return str(name)


def load_da3_state(net: torch.nn.Module, checkpoint: Path) -> torch.nn.Module:
    """Load a DA3 hub checkpoint (keys ``model.*``) into ``net`` strictly; returns ``net``.

    Raises:
        ValueError: When the file's keys do not match the network's (names the file and a few keys).
    """
    from safetensors.torch import load_file

    state = load_file(str(checkpoint))
    state = {k.removeprefix("model."): v for k, v in state.items()}
    own = net.state_dict()
    missing, extra = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    if missing or extra:
        raise ValueError(
            f"{checkpoint}: does not match the DA3 network ({len(missing)} missing keys, e.g. "
            f"{missing[:3]}; {len(extra)} unexpected, e.g. {extra[:3]}); is it a DA3 checkpoint of this "
            "preset?"
        )
    net.load_state_dict({k: v.to(own[k].dtype) for k, v in state.items()})
    return net


def _build(folder: Path, default: str, device: str) -> torch.nn.Module:
    net = build_da3(preset_name(folder, default))
    return load_da3_state(net, folder / CHECKPOINT).to(device).eval()


def load_da3(
    spec: WeightSpec = DA3_BASE, *, metric: str | None = None, device: str | None = None
) -> torch.nn.Module:
    """The DA3 network of ``spec`` on ``device``, through the network cache (per folder and device).

    Raises:
        MissingWeightsError: When the repository is not on this machine (names ``metric``).
        ImportError: When the network code is not installed (says what to install).
        FileNotFoundError: When the folder has no ``model.safetensors``.
    """
    folder = local_weights(spec, metric)
    if not (folder / CHECKPOINT).is_file():
        raise FileNotFoundError(f"{folder} holds no {CHECKPOINT} for the DA3 weights '{spec.name}'")
    _import_da3()  # fail on missing network code before torch is imported
    default = spec.repo_id.split("/")[-1].lower() if spec.repo_id else "da3-base"
    dev = torch_device(device)
    key = NetworkKey(spec.name, f"{folder}|{files_stamp(folder)}", dev, f"da3:{default}")
    return NETWORKS.get(key, lambda: checked_load(spec, folder, metric, lambda: _build(folder, default, dev)))


def _nearest_multiple(x: int, p: int = PATCH) -> int:
    down = (x // p) * p
    up = down + p
    return max(p, up if abs(up - x) <= abs(x - down) else down)


def processing_size(h: int, w: int, process_res: int) -> tuple[int, int]:
    """``(h, w)`` after DA3's upper-bound resize: longer side to ``process_res``, sides to multiples of 14."""
    scale = process_res / float(max(h, w))
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    return _nearest_multiple(nh), _nearest_multiple(nw)


def prepare_frames(frames: np.ndarray, process_res: int = 504) -> np.ndarray:
    """Resize ``(N, H, W, 3)`` uint8 frames as DA3's input processor does (see module doc)."""
    import cv2

    if frames.ndim != 4 or frames.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) RGB frames, got shape {frames.shape}")
    h, w = frames.shape[1:3]
    scale = process_res / float(max(h, w))
    mid = (max(1, round(w * scale)), max(1, round(h * scale)))
    th, tw = processing_size(h, w, process_res)
    out = []
    for f in frames:
        g = f
        if mid != (w, h):
            g = cv2.resize(f, mid, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
        if (tw, th) != mid:
            up = tw > mid[0] or th > mid[1]
            g = cv2.resize(g, (tw, th), interpolation=cv2.INTER_CUBIC if up else cv2.INTER_AREA)
        out.append(g)
    return np.stack(out).astype(np.uint8)


def da3_geometry(net: torch.nn.Module, frames: np.ndarray, *, process_res: int = 504) -> Da3Geometry:
    """Run DA3 on all ``frames`` jointly (one multi-view forward pass) and return its geometry.

    ``net`` is a ``DepthAnything3Net`` (or any module with its call signature and output keys
    ``depth``, ``intrinsics``, ``extrinsics`` (world-to-camera, ``(1, N, 3|4, 4)``)).
    """
    import torch

    small = prepare_frames(frames, process_res)
    param = next(net.parameters())
    x = torch.from_numpy(small).to(param.device, torch.float32).permute(0, 3, 1, 2) / 255.0
    mean = torch.tensor(IMAGENET_MEAN, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=x.device).view(1, 3, 1, 1)
    x = ((x - mean) / std)[None]
    with torch.inference_mode():
        if x.device.type == "cuda":
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            with torch.autocast(device_type="cuda", dtype=dtype):
                out = net(x)
        else:
            out = net(x)
    depth = out["depth"].float().reshape(len(small), *small.shape[1:3]).cpu().numpy().astype(np.float64)
    ixt = out["intrinsics"].float()[0].cpu().numpy().astype(np.float64)
    w2c = out["extrinsics"].float()[0].cpu().numpy().astype(np.float64)
    if w2c.shape[-2:] == (3, 4):
        w2c = np.concatenate([w2c, np.broadcast_to([[0.0, 0.0, 0.0, 1.0]], (len(w2c), 1, 4))], axis=1)
    return Da3Geometry(frames=small, depth=depth, intrinsics=ixt, cam2world=np.linalg.inv(w2c))


__all__ = [
    "Da3Geometry",
    "build_da3",
    "da3_geometry",
    "load_da3",
    "load_da3_state",
    "prepare_frames",
    "preset_name",
    "processing_size",
]
