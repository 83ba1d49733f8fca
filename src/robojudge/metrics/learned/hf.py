"""Model-backed metrics whose networks load with transformers (CLIP, DINO, DINOv2, V-JEPA 2, depth, HPSv3).

Importing this module registers them; each module imports torch and transformers only inside the
functions that run a network.
"""

from robojudge.metrics.learned import hf_aesthetic, hf_consistency, hf_depth, hf_hpsv3, hf_vjepa

__all__ = ["hf_aesthetic", "hf_consistency", "hf_depth", "hf_hpsv3", "hf_vjepa"]
