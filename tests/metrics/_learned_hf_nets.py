"""Tiny randomly initialised transformers networks saved as a ``$ROBOJUDGE_WEIGHTS`` folder (no hub)."""

from __future__ import annotations

from pathlib import Path


def save_tiny_clip(folder: Path, processor: bool = True) -> Path:
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    torch.manual_seed(0)
    cfg = CLIPConfig(
        text_config={"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "vocab_size": 99, "max_position_embeddings": 16,
                     "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1},
        vision_config={"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )
    CLIPModel(cfg).save_pretrained(folder)
    if processor:
        proc = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
        proc.save_pretrained(folder)
    return folder


def save_tiny_clip_tokenizer(folder: Path) -> Path:
    """A CLIP BPE tokenizer over lowercase letters, digits and ``.,;'`` (plus ``th``, ``the``), in ``folder``.

    Its ids fit :func:`save_tiny_clip`'s text model: start 0, end (and pad, unknown) 1, at most 99 ids.
    """
    import string

    from transformers import CLIPTokenizer

    chars = list(string.ascii_lowercase + string.digits + ".,;'")
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for token in [*chars, *(c + "</w>" for c in chars), "th", "the</w>"]:
        vocab[token] = len(vocab)
    CLIPTokenizer(vocab=vocab, merges=[("t", "h"), ("th", "e</w>")]).save_pretrained(folder)
    return folder


def save_tiny_vit(folder: Path) -> Path:
    import torch
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    torch.manual_seed(1)
    cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                    image_size=32, patch_size=8)
    ViTModel(cfg, add_pooling_layer=False).save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def save_tiny_dinov2(folder: Path) -> Path:
    import torch
    from transformers import Dinov2Config, Dinov2Model

    torch.manual_seed(2)
    cfg = Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, image_size=28,
                       patch_size=14)
    Dinov2Model(cfg).save_pretrained(folder)
    return folder


def save_tiny_vjepa2(folder: Path) -> Path:
    import torch
    from transformers import VJEPA2Config, VJEPA2Model

    torch.manual_seed(3)
    cfg = VJEPA2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, patch_size=16,
                       crop_size=32, frames_per_clip=4, tubelet_size=2, pred_hidden_size=32,
                       pred_num_hidden_layers=1, pred_num_attention_heads=4, num_pooler_layers=1)
    VJEPA2Model(cfg).save_pretrained(folder)
    return folder


def save_tiny_depth(folder: Path) -> Path:
    import torch
    from transformers import (
        DepthAnythingConfig,
        DepthAnythingForDepthEstimation,
        Dinov2Config,
        DPTImageProcessor,
    )

    torch.manual_seed(4)
    backbone = Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, image_size=28,
                            patch_size=14, out_indices=[1, 2], reshape_hidden_states=False)
    cfg = DepthAnythingConfig(backbone_config=backbone, reassemble_hidden_size=32, neck_hidden_sizes=[16, 32],
                              reassemble_factors=[2, 1], fusion_hidden_size=16, head_hidden_size=8,
                              patch_size=14)
    model = DepthAnythingForDepthEstimation(cfg)
    with torch.no_grad():  # a positive output everywhere, so median scaling is defined
        model.head.conv3.bias.fill_(1.0)
    model.save_pretrained(folder)
    DPTImageProcessor(size={"height": 28, "width": 28}, keep_aspect_ratio=False, ensure_multiple_of=14,
                      do_pad=False).save_pretrained(folder)
    return folder


def save_all(root: Path) -> Path:
    """Every network of robojudge's transformers metrics under ``root/<weights name>``."""
    save_tiny_clip(root / "clip_vit_b32")
    save_tiny_vit(root / "dino_vit_b16")
    save_tiny_dinov2(root / "dinov2_vit_b14")
    save_tiny_vjepa2(root / "vjepa2_vitg_ssv2")
    save_tiny_depth(root / "depth_anything_v2_small")
    return root
