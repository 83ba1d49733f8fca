"""ViCLIP video and text embeddings as VBench's ``overall_consistency`` computes them.

ViCLIP (Wang et al., "InternVid", ICLR 2024) is a CLIP ViT-L/14 whose image tower sees a clip of
frames at once: every patch of every frame is one token of a single transformer, with a learned
embedding per frame position added to the patch tokens. Its text tower is CLIP's causal text
transformer with a 32-token context. VBench (Huang et al., CVPR 2024) scores "overall consistency"
as the cosine between the ViCLIP embedding of 8 frames and that of the prompt; RoboPhys-3D App. B.1
reports it as Semantics Consistency (``cc_semantics``).

This module holds VBench's frame choice, preprocessing and tokenisation, the embedding functions,
which take the network as an argument, and :func:`load_viclip`. The architecture's sizes are
:class:`~robojudge.models._viclip_config.ViCLIPConfig` (also read back from a checkpoint's tensor
shapes); the network itself is built by :mod:`robojudge.models._viclip_net` (torch at module level,
so imported only when a network is made). torch, torchvision and openai-clip are imported inside the
functions here.
"""

from __future__ import annotations

import functools
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robojudge.models._load import load_cached, load_state_dict, ready
from robojudge.models._specs import VICLIP_L14_INTERNVID
from robojudge.models._viclip_config import ViCLIPConfig, config_from_state_dict

if TYPE_CHECKING:
    import torch

    from robojudge.models._viclip_net import ViCLIP

#: CLIP's image normalisation, which VBench's ``clip_transform`` applies before ViCLIP.
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
#: CLIP's byte-pair vocabulary ids of the start and end markers.
START_TOKEN, END_TOKEN = 49406, 49407


def frame_indices(total: int, count: int = 8) -> list[int]:
    """VBench's "middle" choice of ``count`` frames among ``total``.

    The video is cut into ``min(count, total)`` equal spans (bounds ``int`` of an even grid from 0 to
    ``total``) and the middle frame of each span is taken; a video shorter than ``count`` frames is
    padded by repeating its last frame.

    Raises:
        ValueError: When ``total`` or ``count`` is below 1.
    """
    if total < 1 or count < 1:
        raise ValueError(f"need at least one frame to choose from and to choose, got {total} and {count}")
    spans = min(count, total)
    bounds = np.linspace(0, total, spans + 1).astype(int)
    chosen = [int(lo + hi - 1) // 2 for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    return chosen + [chosen[-1]] * (count - spans)


def preprocess_frames(frames: np.ndarray, size: int) -> torch.Tensor:
    """uint8 RGB ``(T, H, W, 3)`` frames as VBench's ``clip_transform`` prepares them: ``(T, 3, size, size)``.

    The shorter side is resized to ``size`` (bicubic, antialiased, on the uint8 frames, so the result
    is rounded back to uint8 as torchvision does), the centre ``size x size`` is cropped, values are
    scaled to [0, 1] and normalised with CLIP's mean and standard deviation.
    """
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as tvf

    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"expected uint8 (T, H, W, 3) RGB frames, got {frames.dtype} {frames.shape}")
    x = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2)
    x = tvf.resize(x, [size], interpolation=InterpolationMode.BICUBIC, antialias=True)
    x = tvf.center_crop(x, [size, size])
    out: torch.Tensor = tvf.normalize(x.float() / 255.0, list(CLIP_MEAN), list(CLIP_STD))
    return out


@functools.lru_cache(maxsize=1)
def _bpe() -> Any:
    """openai-clip's byte-pair tokenizer (the same code and vocabulary file as VBench's copy)."""
    loaded = sys.modules.get("clip.simple_tokenizer")
    if loaded is None:
        # Importing clip.simple_tokenizer runs clip/__init__, which needs pkg_resources: the same
        # stand-in as CLIP-IQA's, with torch and torchvision imported before it is in place.
        import torch  # noqa: F401
        import torchvision.transforms  # noqa: F401

        from robojudge.models._clipiqa import packaging_as_pkg_resources

        with packaging_as_pkg_resources():
            import clip.simple_tokenizer
        loaded = clip.simple_tokenizer
    return loaded.SimpleTokenizer()


def tokenize(texts: Sequence[str], context_length: int = 32) -> np.ndarray:
    """CLIP tokens of each text as ViCLIP reads them: ``(N, context_length)`` int64, zero-padded.

    Each row is the start marker, the text's byte-pair tokens (lower-cased, whitespace collapsed) and
    the end marker; a longer text is cut to ``context_length`` tokens with the last one set to the end
    marker, as ViCLIP's tokenizer does.
    """
    bpe = _bpe()
    out = np.zeros((len(texts), context_length), dtype=np.int64)
    for row, text in enumerate(texts):
        ids = [START_TOKEN, *bpe.encode(text), END_TOKEN]
        if len(ids) > context_length:
            ids = ids[:context_length]
            ids[-1] = END_TOKEN
        out[row, : len(ids)] = ids
    return out


def _device(net: ViCLIP) -> torch.device:
    return next(net.parameters()).device


def viclip_video_embedding(net: ViCLIP, frames: np.ndarray) -> np.ndarray:
    """The ViCLIP embedding ``(D,)`` of one clip of uint8 RGB frames ``(T, H, W, 3)``, not normalised.

    ``T`` must be the network's frame count (8 for the published model) or 1. Use
    :func:`frame_indices` to choose the frames of a longer video as VBench does.
    """
    import torch

    size = net.config.input_resolution
    first = next(net.parameters())  # frames go in at the network's device and precision
    clip = preprocess_frames(frames, size).unsqueeze(0).to(device=first.device, dtype=first.dtype)
    with torch.inference_mode():
        emb = net.encode_video(clip)
    out: np.ndarray = emb[0].double().cpu().numpy()
    return out


def viclip_text_embedding(net: ViCLIP, texts: Sequence[str]) -> np.ndarray:
    """The ViCLIP embeddings ``(N, D)`` of ``texts``, not normalised (see :func:`tokenize`)."""
    import torch

    tokens = torch.from_numpy(tokenize(texts, net.config.context_length)).to(_device(net))
    with torch.inference_mode():
        emb = net.encode_text(tokens)
    out: np.ndarray = emb.double().cpu().numpy()
    return out


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors (VBench's dot product of L2-normalised embeddings); 0 when one is zero."""
    x, y = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm > 0 else 0.0


def _build_viclip(path: Path, device: str) -> ViCLIP:
    from robojudge.models._viclip_net import ViCLIP

    try:
        state = load_state_dict(path)
    except pickle.UnpicklingError as exc:  # weights_only refuses pickled objects besides tensors
        raise ValueError(f"{path} holds pickled objects besides tensors, which robojudge does not load "
                         f"(torch.load weights_only): {exc}") from exc
    net = ViCLIP(config_from_state_dict(state, str(path)))
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
    ready(net, device)
    return net


def load_viclip(metric: str | None = None, device: str | None = None) -> ViCLIP:
    """ViCLIP ViT-L/14 (InternVid-10M-FLT) built by robojudge and loaded strictly from its checkpoint.

    The sizes are read from the checkpoint's tensor shapes (:func:`~robojudge.models._viclip_config.
    config_from_state_dict`), so the published file gives the ViT-L/14. Cached (see
    :mod:`robojudge.models._cache`); on the GPU when one is visible.

    Raises:
        MissingWeightsError: When ``ViClip-InternVid-10M-FLT.pth`` is not on this machine (names ``metric``).
        ValueError: When the file's keys or shapes do not match the network (names the file and the first
            missing and unexpected keys).
    """
    return load_cached(VICLIP_L14_INTERNVID, "viclip", _build_viclip, metric=metric, device=device)


__all__ = [
    "CLIP_MEAN",
    "CLIP_STD",
    "ViCLIPConfig",
    "config_from_state_dict",
    "cosine",
    "frame_indices",
    "load_viclip",
    "preprocess_frames",
    "tokenize",
    "viclip_text_embedding",
    "viclip_video_embedding",
]
