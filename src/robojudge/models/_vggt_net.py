"""The VGGT network (Wang et al., "VGGT: Visual Geometry Grounded Transformer", CVPR 2025): frames of one
scene in, a camera pose code, depth and world points of every frame out, in one pass.

torch is imported at module level; :func:`robojudge.models._vggt.build_vggt` imports this module when a
network is built. Submodule names match the published checkpoint's keys (``aggregator.frame_blocks.0
.attn.qkv.weight``...) so it loads strictly; the tracking head is not built (its ``track_head.*`` keys are
dropped by the loader).

The aggregator: every frame is cut into patch tokens by DINOv2 (ViT-L/14 with registers in the
published model); each frame's token list is prefixed with a camera token and register tokens, one
learned set for the first frame and another shared by the others (so the first frame defines the world
frame); then ``depth`` rounds of a frame block (attention within each frame) followed by a global block
(attention across all frames' tokens), both with 2D RoPE on the patch grid (special tokens at position
0) and QK-norm. Each round's two outputs, concatenated on channels, form one layer for the heads.
"""

from __future__ import annotations

import torch
from torch import nn

from robojudge.models._vggt_config import VggtConfig
from robojudge.models._vggt_heads import CameraHead, DptHead
from robojudge.models._vggt_layers import Block, DinoV2, PatchEmbed, Rope2D

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _first_and_rest(table: torch.Tensor, b: int, s: int) -> torch.Tensor:
    """(1, 2, k, C) tokens -> (b * s, k, C): entry 0 for each sequence's first frame, 1 for the others."""
    first = table[:, :1].expand(b, 1, *table.shape[2:])
    rest = table[:, 1:].expand(b, s - 1, *table.shape[2:])
    return torch.cat([first, rest], dim=1).reshape(b * s, *table.shape[2:])


class Aggregator(nn.Module):
    """Alternating frame / global attention over the tokens of every frame (see the module doc)."""

    def __init__(self, cfg: VggtConfig, keep: set[int]) -> None:
        super().__init__()
        c = cfg.embed_dim
        if cfg.patch_embed == "conv":
            self.patch_embed: nn.Module = PatchEmbed(cfg.patch_size, c)
        else:
            self.patch_embed = DinoV2(img_size=cfg.img_size, patch=cfg.patch_size, dim=c,
                                      depth=cfg.dino_depth, heads=cfg.dino_heads,
                                      registers=cfg.num_register_tokens)
        self.rope = Rope2D(cfg.rope_freq)

        def block() -> Block:
            return Block(c, cfg.num_heads, mlp_ratio=cfg.mlp_ratio, layer_scale=cfg.layer_scale, qk_norm=True,
                         rope=self.rope)

        self.frame_blocks = nn.ModuleList([block() for _ in range(cfg.depth)])
        self.global_blocks = nn.ModuleList([block() for _ in range(cfg.depth)])
        self.camera_token = nn.Parameter(torch.zeros(1, 2, 1, c))
        self.register_token = nn.Parameter(torch.zeros(1, 2, cfg.num_register_tokens, c))
        self.patch_start_idx = 1 + cfg.num_register_tokens
        self.patch = cfg.patch_size
        self.keep = keep
        self.register_buffer("_mean", torch.tensor(IMAGENET_MEAN).view(1, 1, 3, 1, 1), persistent=False)
        self.register_buffer("_std", torch.tensor(IMAGENET_STD).view(1, 1, 3, 1, 1), persistent=False)

    def _positions(self, n: int, rows: int, cols: int, device: torch.device) -> torch.Tensor:
        grid = torch.cartesian_prod(torch.arange(rows, device=device), torch.arange(cols, device=device)) + 1
        special = torch.zeros(self.patch_start_idx, 2, dtype=grid.dtype, device=device)
        return torch.cat([special, grid]).expand(n, -1, -1)

    def forward(self, images: torch.Tensor) -> dict[int, torch.Tensor]:
        """``images`` (B, S, 3, H, W) in 0-1 -> the kept layers ``{index: (B, S, P, 2C)}``."""
        b, s, _, h, w = images.shape
        mean, std = self.get_buffer("_mean"), self.get_buffer("_std")
        x = ((images - mean) / std).reshape(b * s, 3, h, w)
        special = [_first_and_rest(self.camera_token, b, s), _first_and_rest(self.register_token, b, s)]
        tokens = torch.cat([*special, self.patch_embed(x)], dim=1)
        p, c = tokens.shape[1:]
        pos = self._positions(b * s, h // self.patch, w // self.patch, images.device)
        out: dict[int, torch.Tensor] = {}
        for i, (fb, gb) in enumerate(zip(self.frame_blocks, self.global_blocks, strict=True)):
            local = fb(tokens.reshape(b * s, p, c), pos)
            tokens = gb(local.reshape(b, s * p, c), pos.reshape(b, s * p, 2))
            if i in self.keep:
                out[i] = torch.cat([local.reshape(b, s, p, c), tokens.reshape(b, s, p, c)], dim=-1)
        return out


class VggtNet(nn.Module):
    """Aggregator plus the camera, depth and point heads a :class:`VggtConfig` enables."""

    def __init__(self, cfg: VggtConfig) -> None:
        super().__init__()
        wide = 2 * cfg.embed_dim
        keep = {cfg.depth - 1} | (set(cfg.dpt_layers) if cfg.depth_head or cfg.point_head else set())
        bad = sorted(i for i in keep if not 0 <= i < cfg.depth)
        if bad:
            raise ValueError(f"DPT layers {bad} are outside the aggregator's {cfg.depth} layers")
        self.cfg = cfg
        self.aggregator = Aggregator(cfg, keep)
        dpt = {"patch": cfg.patch_size, "features": cfg.dpt_features, "channels": cfg.dpt_channels,
               "layers": cfg.dpt_layers}
        self.camera_head = (CameraHead(wide, depth=cfg.camera_depth, heads=cfg.camera_heads,
                                       layer_scale=cfg.layer_scale) if cfg.camera_head else None)
        self.point_head = DptHead(wide, out=4, activation="inv_log", **dpt) if cfg.point_head else None  # type: ignore[arg-type]
        self.depth_head = DptHead(wide, out=2, activation="exp", **dpt) if cfg.depth_head else None  # type: ignore[arg-type]

    def forward(self, images: torch.Tensor) -> dict[str, torch.Tensor]:
        """``images`` (S, 3, H, W) or (B, S, 3, H, W) in 0-1, H and W multiples of the patch size.

        Returns (batch dimension kept): ``pose_enc`` (B, S, 9), ``depth`` (B, S, H, W, 1), ``depth_conf``
        (B, S, H, W), ``world_points`` (B, S, H, W, 3), ``world_points_conf`` (B, S, H, W), for the
        enabled heads.
        """
        if images.dim() == 4:
            images = images[None]
        h, w = images.shape[-2:]
        if h % self.cfg.patch_size or w % self.cfg.patch_size:
            raise ValueError(f"image size {h}x{w} is not a multiple of the {self.cfg.patch_size}-pixel patch")
        layers = self.aggregator(images)
        start = self.aggregator.patch_start_idx
        out: dict[str, torch.Tensor] = {}
        # Like the publisher's model, the heads run in float32 even when the aggregator ran under autocast.
        with torch.autocast(device_type=images.device.type, enabled=False):
            layers = {i: t.float() for i, t in layers.items()}
            if self.camera_head is not None:
                out["pose_enc"] = self.camera_head(layers[self.cfg.depth - 1])[-1]
            if self.depth_head is not None:
                out["depth"], out["depth_conf"] = self.depth_head(layers, (h, w), start)
            if self.point_head is not None:
                out["world_points"], out["world_points_conf"] = self.point_head(layers, (h, w), start)
        return out
