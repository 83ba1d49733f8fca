"""Model-backed metrics: networks loaded through robojudge.models, imported lazily."""

# Registers sa_clip (CLIP text score), aq_clip_iqa (pyiqa's CLIP-IQA) and cc_semantics (ViCLIP); the
# registry's built-in loader imports this package through learned.hf. These modules import torch,
# transformers and pyiqa only inside their functions.
from robojudge.metrics.learned import hf_text, tv_clipiqa, tv_viclip  # noqa: F401

__all__ = ["hf_text", "tv_clipiqa", "tv_viclip"]
