"""The sizes of a ViCLIP network, given or read back from a checkpoint's tensor shapes.

Kept apart from :mod:`robojudge.models._viclip` (preprocessing, embeddings, loading) and
:mod:`robojudge.models._viclip_net` (the network, torch at module level) so that both can import it
without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

#: CLIP transformers use 64-dimensional attention heads (ViT-L/14: 1024 wide, 16 heads; text: 768, 12).
HEAD_DIM = 64


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


__all__ = ["HEAD_DIM", "ViCLIPConfig", "config_from_state_dict"]
