"""A tiny random CLIP in OpenAI's RN50.pt format (a TorchScript archive), for the CLIP-IQA tests.

OpenAI publishes CLIP as traced TorchScript, and pyiqa's ``clip_model.load`` reads only that form
from a path (after ``torch.jit.load`` fails it reads a state dict from a moved file position), so the
tiny model is traced and saved the same way rather than with ``torch.save(state_dict)``.
"""

import warnings
from pathlib import Path

# The bundled BPE tokenizer needs the real vocabulary (49408 tokens) and context (77 tokens); the
# rest is as small as pyiqa's ModifiedResNet allows: width 8 gives a 256-d attention pool with 4 heads,
# text width 64 gives 1 head.
TINY = {"embed_dim": 32, "image_resolution": 64, "vision_layers": (1, 1, 1, 1), "vision_width": 8,
        "vision_patch_size": None, "context_length": 77, "vocab_size": 49408, "transformer_width": 64,
        "transformer_heads": 1, "transformer_layers": 1}
START, END = 49406, 49407  # the tokenizer's start/end-of-text ids


def tiny_clip(seed: int = 0):
    """pyiqa's CLIP (ModifiedResNet vision tower) with random weights, in eval mode."""
    import torch
    from pyiqa.archs.clip_model import CLIP

    torch.manual_seed(seed)
    model = CLIP(**TINY).eval()
    with torch.no_grad():  # spread the zero-initialised last batch-norms so the ResNet blocks do something
        for name, param in model.visual.named_parameters():
            if name.endswith("bn3.weight"):
                param.normal_(1.0, 0.1)
    return model


def save_tiny_rn50(root: Path, seed: int = 0):
    """Trace a tiny CLIP, save it as ``root/clip_rn50_openai/RN50.pt``; returns (path, model)."""
    import torch

    model = tiny_clip(seed)
    tokens = torch.zeros(1, 77, dtype=torch.long)
    tokens[0, :2] = torch.tensor([START, END])
    path = root / "clip_rn50_openai" / "RN50.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's jit deprecation notices
        traced = torch.jit.trace(model, (torch.rand(1, 3, 64, 64), tokens), check_trace=False)
        torch.jit.save(traced, str(path))
    return path, model


def forbid_downloads(monkeypatch) -> None:
    """Make every download path pyiqa and openai-clip have raise instead of reaching the network."""
    import urllib.request

    from pyiqa.archs import arch_util, clip_model

    from robojudge.models._clipiqa import clipiqa_arch

    arch = clipiqa_arch()  # imports openai-clip too
    import clip.clip

    def refuse(*args, **kwargs):
        raise AssertionError(f"a download was attempted: {args} {kwargs}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    targets = ((clip_model, "_download"), (clip.clip, "_download"), (arch_util, "load_file_from_url"),
               (arch, "load_file_from_url"))
    for module, name in targets:
        monkeypatch.setattr(module, name, refuse)
