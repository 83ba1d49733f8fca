"""Loading transformers networks from resolved weights: offline, once per process, on the GPU if any.

Every loader takes a :class:`WeightSpec` (or its name), resolves it with
:func:`robojudge.models.resolve_weights` (never a download) and calls ``from_pretrained`` on the
local folder with ``local_files_only=True``. Loaded networks go through the network cache
(:mod:`robojudge.models._cache`), so a worker scoring many items loads each network once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.models._load import load_cached
from robojudge.models._weights import WeightSpec

# Guards the lazy tokenizer of a loaded CLIP (two threads scoring texts at once load it once).
_TOKENIZER_LOCK = threading.Lock()

#: ImageNet normalisation (DINO's and V-JEPA 2's image processors use it).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


@dataclass
class LoadedNetwork:
    """A network in eval mode with its processor (``None`` when the folder has none) and device.

    ``tokenizer`` is filled on first use by :func:`clip_text_features`, so it lives and leaves the
    cache with its network.
    """

    model: Any
    processor: Any
    device: str
    path: Path
    tokenizer: Any = field(default=None, repr=False)


def _cached(kind: str, spec: WeightSpec | str, metric: str | None, device: str | None,
            build: Callable[[Path, str], LoadedNetwork]) -> LoadedNetwork:
    return load_cached(spec, kind, build, metric=metric, device=device)


def _processor(path: Path, loader: Any) -> Any:
    """The folder's processor, or None when it ships no preprocessor config (tiny test models)."""
    if not (path / "preprocessor_config.json").is_file():
        return None
    return loader.from_pretrained(path, local_files_only=True)


#: The transformers ``model_type`` each image-ViT weights name must hold (AutoModel builds any).
_VIT_TYPES = {"dino_vit_b16": "vit", "dinov2_vit_b14": "dinov2"}


def _pretrained(loader: Any, path: Path, want: str | None, **kw: Any) -> Any:
    """``loader.from_pretrained(path)`` offline, refused when the folder holds another network.

    transformers builds a network of the asked class from a folder of another one, with the weights it
    does not find initialised at random (it only prints a report): a DINO folder where CLIP is expected
    gave a random CLIP whose frame consistency was 0.99999. Raises ValueError (an unusable-weights error
    once :func:`~robojudge.models._load.checked_load` wraps it) when ``config.json`` names another
    ``model_type`` than ``want`` or a weight of the network is missing from the files.
    """
    import json

    try:
        found = json.loads((path / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError):
        found = None
    if want is not None and found is not None and found != want:
        raise ValueError(f"the folder holds a {found!r} network (config.json model_type), not {want!r}")
    model, info = loader.from_pretrained(path, local_files_only=True, output_loading_info=True, **kw)
    missing = list(info.get("missing_keys") or ())
    if missing:
        raise ValueError(f"{len(missing)} of the network's weights are not in the files (e.g. {missing[0]}): "
                         "they hold another network")
    return model


def _finish(model: Any, path: Path, device: str, processor: Any) -> LoadedNetwork:
    model.eval()
    model.to(device)
    return LoadedNetwork(model=model, processor=processor, device=device, path=path)


def load_clip(spec: WeightSpec | str = "clip_vit_b32", *, metric: str | None = None,
              device: str | None = None) -> LoadedNetwork:
    """CLIP (``CLIPModel`` and ``CLIPImageProcessor``) from local weights."""

    def build(path: Path, dev: str) -> LoadedNetwork:
        from transformers import CLIPImageProcessor, CLIPModel

        model = _pretrained(CLIPModel, path, "clip")
        return _finish(model, path, dev, _processor(path, CLIPImageProcessor))

    return _cached("clip", spec, metric, device, build)


def load_vit(spec: WeightSpec | str = "dino_vit_b16", *, metric: str | None = None,
             device: str | None = None) -> LoadedNetwork:
    """An image ViT (DINO, DINOv2: ``AutoModel`` without a pooling head) and its image processor."""

    name = spec if isinstance(spec, str) else spec.name

    def build(path: Path, dev: str) -> LoadedNetwork:
        from transformers import AutoImageProcessor, AutoModel

        want = _VIT_TYPES.get(name)
        # DINO checkpoints carry no pooler; keep it out so no randomly initialised layer is built.
        try:
            model = _pretrained(AutoModel, path, want, add_pooling_layer=False)
        except TypeError:
            model = _pretrained(AutoModel, path, want)
        return _finish(model, path, dev, _processor(path, AutoImageProcessor))

    return _cached("vit", spec, metric, device, build)


def load_vjepa2(spec: WeightSpec | str = "vjepa2_vitg_ssv2", *, metric: str | None = None,
                device: str | None = None) -> LoadedNetwork:
    """The V-JEPA 2 encoder (``VJEPA2Model``; a classification checkpoint loads without its head)."""

    def build(path: Path, dev: str) -> LoadedNetwork:
        from transformers import VJEPA2Model

        model = _pretrained(VJEPA2Model, path, "vjepa2")
        return _finish(model, path, dev, None)

    return _cached("vjepa2", spec, metric, device, build)


def load_depth(spec: WeightSpec | str = "depth_anything_v2_small", *, metric: str | None = None,
               device: str | None = None) -> LoadedNetwork:
    """A monocular depth model (``AutoModelForDepthEstimation``) and its image processor."""

    def build(path: Path, dev: str) -> LoadedNetwork:
        from transformers import AutoImageProcessor, AutoModelForDepthEstimation

        model = _pretrained(AutoModelForDepthEstimation, path, None)
        return _finish(model, path, dev, _processor(path, AutoImageProcessor))

    return _cached("depth", spec, metric, device, build)


def normalize_frames(frames: np.ndarray, mean: tuple[float, ...] = IMAGENET_MEAN,
                     std: tuple[float, ...] = IMAGENET_STD) -> Any:
    """``(N, H, W, 3)`` uint8 RGB to a float32 ``(N, 3, H, W)`` tensor: ``(x / 255 - mean) / std``."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(frames)).float().div_(255.0).permute(0, 3, 1, 2)
    m = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1)
    return (x - m) / s


def _pixels(net: LoadedNetwork, frames: np.ndarray, size: int, mean: tuple[float, ...],
            std: tuple[float, ...]) -> Any:
    """Pixel values: the network's own image processor when it has one, else a resize + normalize."""
    if net.processor is not None:
        return net.processor(images=list(frames), return_tensors="pt")["pixel_values"]
    import torch.nn.functional as F

    x = normalize_frames(frames, mean, std)
    return F.interpolate(x, size=(size, size), mode="bicubic", align_corners=False)


def _batches(n: int, batch: int) -> list[slice]:
    return [slice(i, min(i + batch, n)) for i in range(0, n, batch)]


def clip_image_features(net: LoadedNetwork, frames: np.ndarray, batch: int = 32) -> np.ndarray:
    """CLIP image embeddings (after the visual projection) of ``(N, H, W, 3)`` uint8 frames: ``(N, D)``."""
    import torch

    cfg = net.model.config.vision_config
    out = []
    with torch.inference_mode():
        for sl in _batches(len(frames), batch):
            px = _pixels(net, frames[sl], cfg.image_size, (0.4815, 0.4578, 0.4082), (0.2686, 0.2613, 0.2758))
            res = net.model.get_image_features(pixel_values=px.to(net.device))
            emb = res if isinstance(res, torch.Tensor) else res.pooler_output
            out.append(emb.float().cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def _clip_tokenizer(net: LoadedNetwork) -> Any:
    """The CLIP tokenizer of ``net``'s weights folder, loaded on first use and kept with the network."""
    with _TOKENIZER_LOCK:
        if net.tokenizer is None:
            names = ("tokenizer.json", "vocab.json")
            if not any((net.path / name).is_file() for name in names):
                raise FileNotFoundError(
                    f"CLIP weights folder {net.path} has no tokenizer (neither tokenizer.json nor "
                    "vocab.json with merges.txt): the text encoder needs it; copy the repository's tokenizer "
                    "files there or fetch the whole repository again with `robojudge weights fetch NAME`"
                )
            from transformers import CLIPTokenizer

            net.tokenizer = CLIPTokenizer.from_pretrained(net.path, local_files_only=True)
        return net.tokenizer


def clip_text_features(net: LoadedNetwork, texts: list[str], batch: int = 32) -> np.ndarray:
    """CLIP text embeddings (after the text projection) of ``texts``: ``(N, D)``, not normalised.

    Each text is tokenized by the CLIP tokenizer of the same weights folder and truncated to the text
    encoder's context (``max_position_embeddings`` tokens, 77 for OpenAI's CLIP, start and end
    tokens included); words past it do not reach the embedding.
    """
    import torch

    tokenizer = _clip_tokenizer(net)
    context = int(net.model.config.text_config.max_position_embeddings)
    out = []
    with torch.inference_mode():
        for sl in _batches(len(texts), batch):
            tokens = tokenizer(list(texts[sl]), padding=True, truncation=True, max_length=context,
                               return_tensors="pt")
            res = net.model.get_text_features(input_ids=tokens["input_ids"].to(net.device),
                                              attention_mask=tokens["attention_mask"].to(net.device))
            emb = res if isinstance(res, torch.Tensor) else res.pooler_output
            out.append(emb.float().cpu().numpy())
    if not out:
        raise ValueError("clip_text_features needs at least one text")
    return np.concatenate(out).astype(np.float64)


def vit_cls_features(net: LoadedNetwork, frames: np.ndarray, batch: int = 32) -> np.ndarray:
    """The final-layer class token of an image ViT (DINO's image descriptor) for each frame: ``(N, D)``."""
    import torch

    size = int(getattr(net.model.config, "image_size", 224))
    out = []
    with torch.inference_mode():
        for sl in _batches(len(frames), batch):
            px = _pixels(net, frames[sl], size, IMAGENET_MEAN, IMAGENET_STD)
            hidden = net.model(pixel_values=px.to(net.device)).last_hidden_state
            out.append(hidden[:, 0].float().cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def vjepa2_video_embedding(net: LoadedNetwork, frames: np.ndarray) -> np.ndarray:
    """One V-JEPA 2 embedding of a clip: the encoder's patch tokens averaged, ``(D,)``.

    ``frames`` is ``(T, H, W, 3)`` uint8 RGB, already sampled and resized; it is normalised with
    ImageNet statistics (as V-JEPA 2's video processor does). An odd frame count repeats the last
    frame so that the tubelets (2 frames) tile the clip.
    """
    import torch

    if len(frames) % 2:
        frames = np.concatenate([frames, frames[-1:]])
    x = normalize_frames(frames).unsqueeze(0).to(net.device)  # (1, T, 3, H, W)
    with torch.inference_mode():
        out = net.model(pixel_values_videos=x, skip_predictor=True)
    emb: np.ndarray = out.last_hidden_state.mean(dim=1)[0].float().cpu().numpy().astype(np.float64)
    return emb


def predict_depth(net: LoadedNetwork, frames: np.ndarray, batch: int = 8) -> np.ndarray:
    """The depth model's per-pixel output for each frame, resized to the frames' size: ``(N, H, W)``."""
    import torch
    import torch.nn.functional as F

    h, w = frames.shape[1:3]
    size = int(getattr(net.model.config, "image_size", 518) or 518)
    size = max(14, size - size % 14)
    out = []
    with torch.inference_mode():
        for sl in _batches(len(frames), batch):
            px = _pixels(net, frames[sl], size, IMAGENET_MEAN, IMAGENET_STD)
            pred = net.model(pixel_values=px.to(net.device)).predicted_depth  # (B, h', w')
            pred = F.interpolate(pred.unsqueeze(1).float(), size=(h, w), mode="bilinear", align_corners=False)
            out.append(pred[:, 0].cpu().numpy())
    return np.concatenate(out).astype(np.float64)
