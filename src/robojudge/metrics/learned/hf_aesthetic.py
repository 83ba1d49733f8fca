"""RoboPhys-3D aesthetic quality from the LAION aesthetic predictor on CLIP ViT-L/14 frame embeddings.

RoboPhys-3D App. B.1.2 scores LAION-AP on ``[0, 1]`` with "the LAION aesthetic predictor" and gives no
further detail. robojudge reads it as VBench's aesthetic-quality protocol (robojudge's choice, the paper
names neither head version nor frame rate): each frame's CLIP ViT-L/14
image embedding is L2-normalised and fed to the linear head published by LAION
(``sa_0_4_vit_l_14_linear.pth``, a ``Linear(768, 1)`` predicting a 0-10 rating); the rating is
divided by 10 and averaged over frames.

CLIP-AP (``aq_clip_ap``, App. B.1.2, ``[0, 10]``) is not implemented here: the paper calls it "an
independent CLIP-based predictor" without naming the checkpoint, so robojudge cannot tell which head
(or which CLIP) it is.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input, Provider
from robojudge.metrics._score import Score
from robojudge.metrics.learned.hf_consistency import FrameSampling, video_frames
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.models import resolve_weights
from robojudge.suite._schema import Item

#: The predictor's rating scale: ratings are 0-10, App. B.1.2 reports LAION-AP on [0, 1].
RATING_SCALE = 10.0


def linear_head(state: dict[str, Any], path: Path | str = "head") -> Any:
    """A ``torch.nn.Linear(D, 1)`` built here and filled from ``state`` (keys ``weight``, ``bias``).

    Raises:
        ValueError: When ``state`` does not hold a ``(1, D)`` weight and a ``(1,)`` bias; the message
            names ``path``.
    """
    import torch

    weight, bias = state.get("weight"), state.get("bias")
    if (not isinstance(weight, torch.Tensor) or not isinstance(bias, torch.Tensor) or weight.ndim != 2
            or weight.shape[0] != 1 or tuple(bias.shape) != (1,) or set(state) != {"weight", "bias"}):
        keys = {k: tuple(v.shape) for k, v in state.items() if isinstance(v, torch.Tensor)}
        raise ValueError(f"{path}: expected a linear head state dict {{weight: (1, D), bias: (1,)}}, "
                         f"got {keys}")
    head = torch.nn.Linear(int(weight.shape[1]), 1)
    head.load_state_dict(state, strict=True)
    head.eval()
    return head


def load_linear_head(path: Path) -> Any:
    """The LAION linear head from a ``.pth`` state dict (``torch.load(weights_only=True)``, on CPU)."""
    from robojudge.models import load_state_dict

    return linear_head(load_state_dict(path), path)


@functools.lru_cache(maxsize=4)
def _head_arrays(path: str, mtime_ns: int) -> tuple[np.ndarray, float]:
    """The head's weight vector and bias, loaded once per file version and process."""
    head = load_linear_head(Path(path))
    weight = head.weight.detach().double().cpu().numpy().reshape(-1)
    return weight, float(head.bias.detach().double().cpu().item())


def aesthetic_ratings(embeddings: np.ndarray, weight: np.ndarray, bias: float) -> np.ndarray:
    """Per-frame ratings ``w . (e_t / |e_t|) + b`` of ``(T, D)`` CLIP embeddings, on the 0-10 scale."""
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2 or len(e) == 0:
        raise MetricInputError(f"needs CLIP embeddings of at least 1 frame, got shape {e.shape}")
    w = np.asarray(weight, dtype=np.float64).reshape(-1)
    if w.shape[0] != e.shape[1]:
        raise MetricInputError(f"aesthetic head expects {w.shape[0]}-d embeddings, CLIP gives {e.shape[1]}")
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    unit = e / np.where(norms > 0, norms, 1.0)
    ratings: np.ndarray = unit @ w + float(bias)
    return ratings


@robophys_metric(
    "aq_laion_ap",
    family=Family.quality,
    inputs={Input.video},
    description=(
        "LAION aesthetic predictor (linear head, sa_0_4_vit_l_14_linear) on L2-normalised CLIP ViT-L/14 "
        "image embeddings of whole frames (8 fps), rating / 10 averaged over frames (VBench protocol)."
    ),
    provider=Provider.model,
    config=FrameSampling,
    note="LAION aesthetic predictor v1 linear head on CLIP ViT-L/14, rating / 10, mean over frames",
    weights=("clip_vit_l14", "laion_aesthetic_linear_l14"),
)
def aq_laion_ap(item: Item, config: FrameSampling) -> Score:
    """RoboPhys-3D LAION-AP: mean over frames of the LAION rating divided by 10 (see module doc)."""
    from robojudge.models import clip_image_features, load_clip

    net = load_clip("clip_vit_l14", metric="aq_laion_ap")
    head_path = resolve_weights("laion_aesthetic_linear_l14", metric="aq_laion_ap")
    weight, bias = _head_arrays(str(head_path), head_path.stat().st_mtime_ns)
    frames = video_frames(item, config)
    ratings = aesthetic_ratings(clip_image_features(net, frames, batch=config.batch_size), weight, bias)
    scores = ratings / RATING_SCALE
    return Score(value=float(scores.mean()), details={
        "frames": len(frames), "rating_mean": float(ratings.mean()), "min_frame": float(scores.min()),
    })


__all__ = ["RATING_SCALE", "aesthetic_ratings", "aq_laion_ap", "linear_head", "load_linear_head"]
