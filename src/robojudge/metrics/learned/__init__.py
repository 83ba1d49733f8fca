"""Model-backed metrics: networks loaded through robojudge.models, imported lazily."""

# Registers sa_clip (CLIP text score) and aq_clip_iqa (pyiqa's CLIP-IQA); the registry's built-in
# loader imports this package through learned.hf. Both modules import torch, transformers and pyiqa
# only inside their functions.
from robojudge.metrics.learned import hf_text, tv_clipiqa  # noqa: F401

__all__ = ["hf_text", "tv_clipiqa"]
