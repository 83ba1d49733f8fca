"""ViCLIP video and text embeddings as VBench's ``overall_consistency`` computes them.

ViCLIP (Wang et al., "InternVid", ICLR 2024) is a CLIP ViT-L/14 whose image tower sees a clip of
frames at once: every patch of every frame is one token of a single transformer, with a learned
embedding per frame position added to the patch tokens. Its text tower is CLIP's causal text
transformer with a 32-token context. VBench (Huang et al., CVPR 2024) scores "overall consistency"
as the cosine between the ViCLIP embedding of 8 frames and that of the prompt; RoboPhys-3D App. B.1
reports it as Semantics Consistency (``cc_semantics``).

This module holds the light part: the architecture's sizes (:class:`ViCLIPConfig`, also read back
from a checkpoint's tensor shapes), VBench's frame choice, preprocessing and tokenisation, and the
embedding functions, which take the network as an argument. The network itself is built by
:mod:`robojudge.models._viclip_net` (torch at module level, so imported only when a network is made)
and loaded from a file by :func:`robojudge.models.load_viclip`. torch, torchvision and openai-clip
are imported inside the functions here.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

    from robojudge.models._viclip_net import ViCLIP

#: CLIP's image normalisation, which VBench's ``clip_transform`` applies before ViCLIP.
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
#: CLIP transformers use 64-dimensional attention heads (ViT-L/14: 1024 wide, 16 heads; text: 768, 12).
HEAD_DIM = 64
#: CLIP's byte-pair vocabulary ids of the start and end markers.
START_TOKEN, END_TOKEN = 49406, 49407


@dataclass(frozen=True)
class ViCLIPConfig:
    """Sizes of a ViCLIP network. The defaults are the published ViT-L/14 (InternVid-10M-FLT) model.

    Attributes:
        input_resolution: Side of the square frames the video tower takes.
        patch_size: Side of a patch (the video tower's convolution is 1 frame deep).
        vision_width: Width of the video transformer.
        vision_layers: Its number of residual blocks.
        num_frames: Frames per clip (the length of the frame-position embedding).
        embed_dim: Size of the shared video-text embedding.
        text_width: Width of the text transformer.
        text_layers: Its number of residual blocks.
        context_length: Text tokens per prompt (ViCLIP uses 32, not CLIP's 77).
        vocab_size: Size of the byte-pair vocabulary.
    """

    input_resolution: int = 224
    patch_size: int = 14
    vision_width: int = 1024
    vision_layers: int = 24
    num_frames: int = 8
    embed_dim: int = 768
    text_width: int = 768
    text_layers: int = 12
    context_length: int = 32
    vocab_size: int = 49408

    def __post_init__(self) -> None:
        if self.input_resolution % self.patch_size:
            raise ValueError(f"input_resolution {self.input_resolution} is not a multiple of patch_size "
                             f"{self.patch_size}")
        for name in ("vision_width", "text_width"):
            if getattr(self, name) % self.heads(getattr(self, name)):
                raise ValueError(f"{name} {getattr(self, name)} must be a multiple of {HEAD_DIM} "
                                 "(or below it)")

    @staticmethod
    def heads(width: int) -> int:
        """Attention heads of a ``width``-wide CLIP transformer: one per 64 channels, at least one."""
        return max(1, width // HEAD_DIM)


def _blocks(state: Mapping[str, Any], prefix: str) -> int:
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.")
    found = {int(m.group(1)) for key in state if (m := pattern.match(key))}
    return max(found) + 1 if found else 0


def config_from_state_dict(state: Mapping[str, torch.Tensor], where: str = "state dict") -> ViCLIPConfig:
    """The :class:`ViCLIPConfig` whose network has the tensor shapes of ``state``.

    Head counts are not stored in a checkpoint; they follow CLIP's 64 channels per head.

    Raises:
        ValueError: When a tensor the sizes are read from is absent or has an unexpected shape; the
            message names ``where``.
    """
    need = ("vision_encoder.conv1.weight", "vision_encoder.positional_embedding",
            "vision_encoder.temporal_positional_embedding", "vision_encoder.proj",
            "text_encoder.token_embedding.weight", "text_encoder.positional_embedding")
    missing = [k for k in need if k not in state]
    if missing:
        raise ValueError(f"{where} is not a ViCLIP checkpoint: it lacks {', '.join(missing)}")
    conv = tuple(state["vision_encoder.conv1.weight"].shape)
    if len(conv) != 5 or conv[2] != 1 or conv[3] != conv[4]:
        raise ValueError(f"{where}: vision_encoder.conv1.weight has shape {conv}, "
                         "expected (width, 3, 1, p, p)")
    patches = int(state["vision_encoder.positional_embedding"].shape[0]) - 1
    grid = round(patches ** 0.5)
    if grid * grid != patches:
        raise ValueError(f"{where}: vision_encoder.positional_embedding holds {patches} patch positions, "
                         "not a square grid")
    vocab, text_width = (int(n) for n in state["text_encoder.token_embedding.weight"].shape)
    return ViCLIPConfig(
        input_resolution=grid * conv[3],
        patch_size=conv[3],
        vision_width=conv[0],
        vision_layers=_blocks(state, "vision_encoder.transformer.resblocks."),
        num_frames=int(state["vision_encoder.temporal_positional_embedding"].shape[1]),
        embed_dim=int(state["vision_encoder.proj"].shape[1]),
        text_width=text_width,
        text_layers=_blocks(state, "text_encoder.transformer.resblocks."),
        context_length=int(state["text_encoder.positional_embedding"].shape[0]),
        vocab_size=vocab,
    )


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


__all__ = [
    "CLIP_MEAN",
    "CLIP_STD",
    "ViCLIPConfig",
    "config_from_state_dict",
    "cosine",
    "frame_indices",
    "preprocess_frames",
    "tokenize",
    "viclip_text_embedding",
    "viclip_video_embedding",
]
