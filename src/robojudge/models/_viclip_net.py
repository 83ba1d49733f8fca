"""The ViCLIP network (Wang et al., "InternVid", ICLR 2024), written from VBench's description of it.

torch is imported at module level here, so nothing imports this module until a network is built
(:func:`robojudge.models.load_viclip`, or tests). Module and parameter names are those of the
published checkpoint ``ViClip-InternVid-10M-FLT.pth`` as VBench's ``third_party/ViCLIP`` loads it (its
``model`` entry, strictly): ``vision_encoder.*``, ``text_encoder.*`` and the contrastive temperature
``temp``. They were derived from VBench's code, not checked against the file itself.

Shapes, for the published ViT-L/14 (:class:`robojudge.models._viclip.ViCLIPConfig` defaults):

* video tower: a ``Conv3d(3, 1024, (1, 14, 14))`` without bias cuts every frame into 16 x 16 patches;
  each patch token gets a spatial position (shared by all frames, index 0 belonging to the class
  token) and a frame position (``temporal_positional_embedding``, one per frame); all patch tokens
  of all frames, after one class token, go through 24 pre-norm residual blocks (QuickGELU MLPs of
  4x width), and the class token's output, layer-normed and projected by ``proj`` (1024 x 768), is
  the video embedding;
* text tower: CLIP's: token and position embeddings (32 positions), 12 causal residual blocks of
  width 768, a final layer norm, and the end-marker token's output projected by
  ``text_projection`` (768 x 768).

Dropout, drop-path and token masking exist only in training and are left out.
"""

from __future__ import annotations

import torch
from torch import nn

from robojudge.models._viclip_config import ViCLIPConfig


class QuickGELU(nn.Module):
    """CLIP's sigmoid approximation of GELU, ``x * sigmoid(1.702 x)``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)


class FeedForward(nn.Module):
    """The residual block's MLP: ``c_fc`` (width -> 4 width), QuickGELU, ``c_proj`` (back to width)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.gelu = QuickGELU()
        self.c_proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.c_proj(self.gelu(self.c_fc(x)))
        return out


class ResidualBlock(nn.Module):
    """Pre-norm attention then pre-norm MLP, each added back to its input (batch-first tokens)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = FeedForward(width)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask)[0]
        out: torch.Tensor = x + self.mlp(self.ln_2(x))
        return out


class Transformer(nn.Module):
    """A stack of :class:`ResidualBlock` (keys ``resblocks.<i>.*``)."""

    def __init__(self, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.resblocks = nn.ModuleList(ResidualBlock(width, heads) for _ in range(layers))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for block in self.resblocks:
            x = block(x, mask)
        return x


def _random(*shape: int, scale: float) -> nn.Parameter:
    return nn.Parameter(scale * torch.randn(*shape))


class VideoEncoder(nn.Module):
    """ViCLIP's video tower: ``(B, 3, T, H, W)`` normalised frames -> ``(B, embed_dim)``."""

    def __init__(self, cfg: ViCLIPConfig) -> None:
        super().__init__()
        width, patch = cfg.vision_width, cfg.patch_size
        grid = cfg.input_resolution // patch
        scale = width**-0.5
        self.num_frames = cfg.num_frames
        self.conv1 = nn.Conv3d(3, width, (1, patch, patch), (1, patch, patch), bias=False)
        self.class_embedding = _random(width, scale=scale)
        self.positional_embedding = _random(grid * grid + 1, width, scale=scale)
        self.temporal_positional_embedding = _random(1, cfg.num_frames, width, scale=scale)
        self.ln_pre = nn.LayerNorm(width)
        self.transformer = Transformer(width, cfg.vision_layers, ViCLIPConfig.heads(width))
        self.ln_post = nn.LayerNorm(width)
        self.proj = _random(width, cfg.embed_dim, scale=scale)

    def forward(self, video: torch.Tensor) -> torch.Tensor:
        x = self.conv1(video)  # (B, C, T, g, g)
        b, c, t = x.shape[:3]
        x = x.flatten(3).permute(0, 2, 3, 1)  # (B, T, N, C): N patches per frame
        x = x + self.positional_embedding[1:]
        if t == 1:  # a still image: the average frame position, as ViCLIP does
            x = x + self.temporal_positional_embedding.mean(1)
        elif t == self.num_frames:
            x = x + self.temporal_positional_embedding[0, :, None, :]
        else:
            raise ValueError(f"ViCLIP takes clips of {self.num_frames} frames (or 1), got {t}")
        # Patch-major, frame-minor token order, as ViCLIP lays them out (the class token's output
        # does not depend on it: attention over the tokens is order-free once positions are added).
        tokens = x.transpose(1, 2).reshape(b, -1, c)
        cls = (self.class_embedding + self.positional_embedding[0]).expand(b, 1, c)
        x = self.transformer(self.ln_pre(torch.cat([cls, tokens], dim=1)))
        out: torch.Tensor = self.ln_post(x[:, 0]) @ self.proj
        return out


class TextEncoder(nn.Module):
    """ViCLIP's (CLIP's) text tower: ``(B, context_length)`` token ids -> ``(B, embed_dim)``."""

    causal_mask: torch.Tensor

    def __init__(self, cfg: ViCLIPConfig) -> None:
        super().__init__()
        width = cfg.text_width
        self.context_length = cfg.context_length
        self.token_embedding = nn.Embedding(cfg.vocab_size, width)
        self.positional_embedding = _random(cfg.context_length, width, scale=0.01)
        self.transformer = Transformer(width, cfg.text_layers, ViCLIPConfig.heads(width))
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = _random(width, cfg.embed_dim, scale=width**-0.5)
        # Additive causal mask (-inf above the diagonal); not part of the checkpoint.
        mask = torch.full((cfg.context_length, cfg.context_length), float("-inf")).triu(1)
        self.register_buffer("causal_mask", mask, persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.shape[-1] != self.context_length:
            raise ValueError(f"ViCLIP's text tower takes {self.context_length} tokens, "
                             f"got {tokens.shape[-1]}")
        x = self.token_embedding(tokens) + self.positional_embedding
        x = self.ln_final(self.transformer(x, self.causal_mask.to(x.dtype)))
        # The end marker has the highest id in CLIP's vocabulary, so argmax finds it in each row.
        end = tokens.argmax(dim=-1)
        out: torch.Tensor = x[torch.arange(x.shape[0], device=x.device), end] @ self.text_projection
        return out


class ViCLIP(nn.Module):
    """Both towers and the contrastive temperature ``temp`` (kept only so the checkpoint loads)."""

    def __init__(self, config: ViCLIPConfig | None = None) -> None:
        super().__init__()
        self.config = config or ViCLIPConfig()
        self.vision_encoder = VideoEncoder(self.config)
        self.text_encoder = TextEncoder(self.config)
        self.temp = nn.Parameter(torch.tensor(0.01))

    def encode_video(self, clips: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(B, embed_dim)`` of normalised clips ``(B, T, 3, H, W)``."""
        out: torch.Tensor = self.vision_encoder(clips.permute(0, 2, 1, 3, 4))
        return out

    def encode_text(self, tokens: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(B, embed_dim)`` of token rows ``(B, context_length)``."""
        out: torch.Tensor = self.text_encoder(tokens.long())
        return out


__all__ = ["FeedForward", "QuickGELU", "ResidualBlock", "TextEncoder", "Transformer", "VideoEncoder",
           "ViCLIP"]
