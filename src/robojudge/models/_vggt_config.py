"""The shape of a VGGT network (torch-free, so the loader and the network module both import it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class VggtConfig:
    """The network's shape. Defaults are the published VGGT-1B (``VGGT()`` with its defaults).

    ``patch_embed`` is ``"dinov2"`` (a DINOv2 ViT of ``dino_depth`` blocks and ``dino_heads`` heads, as wide
    as the aggregator, with ``num_register_tokens`` registers and a position table for ``img_size``) or
    ``"conv"`` (one strided convolution). ``dpt_layers`` are the aggregator layers the DPT heads read.
    """

    img_size: int = 518
    patch_size: int = 14
    embed_dim: int = 1024
    depth: int = 24
    num_heads: int = 16
    mlp_ratio: float = 4.0
    num_register_tokens: int = 4
    patch_embed: Literal["dinov2", "conv"] = "dinov2"
    dino_depth: int = 24
    dino_heads: int = 16
    rope_freq: float = 100.0
    layer_scale: float = 0.01
    camera_depth: int = 4
    camera_heads: int = 16
    dpt_features: int = 256
    dpt_channels: tuple[int, int, int, int] = (256, 512, 1024, 1024)
    dpt_layers: tuple[int, int, int, int] = (4, 11, 17, 23)
    camera_head: bool = True
    depth_head: bool = True
    point_head: bool = True

    @classmethod
    def tiny(cls, patch_embed: Literal["dinov2", "conv"] = "dinov2") -> VggtConfig:
        """A few-thousand-parameter configuration for tests (28-pixel position table, 4 layers)."""
        return cls(img_size=28, embed_dim=32, depth=4, num_heads=2, num_register_tokens=2,
                   patch_embed=patch_embed, dino_depth=2, dino_heads=2, camera_depth=1, camera_heads=2,
                   dpt_features=16, dpt_channels=(8, 16, 32, 32), dpt_layers=(0, 1, 2, 3))
