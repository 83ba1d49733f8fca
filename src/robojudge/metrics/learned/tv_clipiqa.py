"""RoboPhys-3D aesthetic quality by CLIP-IQA (``aq_clip_iqa``), on pyiqa's implementation.

RoboPhys-3D App. B.1.2 lists CLIP-IQA on ``[0, 1]`` (higher is better) as a measure of perceptual
quality from CLIP representations, sensitive to distortions such as overexposure, noise and blur,
citing Wang, Chan and Loy (AAAI 2023). The paper gives no backbone, prompts or frame protocol;
robojudge uses the field's implementation, pyiqa's ``clipiqa``: OpenAI's CLIP RN50 with the attention
pool's positional embedding left out (so frames of any size go in unresized), and for each of five
antonym prompt pairs the softmax probability of the positive prompt, averaged over the pairs. The
original paper's plain CLIP-IQA uses the single pair "Good photo." / "Bad photo."; pyiqa's ensemble
differs from it, so values are pyiqa's, not the paper's.

Frames are sampled as for the sibling AQ metric ``aq_laion_ap`` (8 fps by default, native size) and
the video's value is the mean of the per-frame scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robojudge.metrics._registry import Family, Input, Provider
from robojudge.metrics._score import Score
from robojudge.metrics.learned.hf_consistency import FrameSampling, video_frames
from robojudge.metrics.learned.tv_nets import batches, device_of, to_unit_tensor
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.models import CLIP_RN50_OPENAI, clip_network, load_clipiqa
from robojudge.suite._schema import Item

if TYPE_CHECKING:
    import torch


def clipiqa_scores(frames: np.ndarray, net: torch.nn.Module, *, batch_size: int = 32) -> np.ndarray:
    """Per-frame CLIP-IQA scores in [0, 1] of uint8 RGB frames ``(N, H, W, 3)``.

    Frames go to the network as ``(n, 3, H, W)`` floats in [0, 1], ``batch_size`` at a time, on the
    device of its CLIP model; pyiqa's ``CLIPIQA`` applies CLIP's normalisation itself.
    """
    import torch

    dev = device_of(clip_network(net))
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in batches(len(frames), batch_size):
            out.append(net(to_unit_tensor(frames[sl], dev)).reshape(-1).double().cpu().numpy())
    return np.concatenate(out)


@robophys_metric(
    "aq_clip_iqa",
    family=Family.quality,
    inputs={Input.video},
    description=(
        "pyiqa's CLIP-IQA (OpenAI CLIP RN50, no positional embedding; softmax of five antonym prompt "
        "pairs such as 'Good image'/'bad image', averaged over pairs) on native-size frames at 8 fps, "
        "averaged over frames. Differs from the original single 'Good photo.'/'Bad photo.' pair."
    ),
    provider=Provider.model,
    config=FrameSampling,
    note="Wang, Chan and Loy, AAAI 2023, as implemented by pyiqa (clipiqa, RN50)",
    weights=(CLIP_RN50_OPENAI.name,),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
)
def aq_clip_iqa(item: Item, config: FrameSampling) -> Score:
    """RoboPhys-3D CLIP-IQA: ``mean_t CLIPIQA(I_t)`` over the sampled frames (see the module doc)."""
    frames = video_frames(item, config)  # a one-frame or still video is unscored before CLIP loads
    net = load_clipiqa(metric="aq_clip_iqa")
    per_frame = clipiqa_scores(frames, net, batch_size=config.batch_size)
    return Score(
        value=float(per_frame.mean()), details={"frames": len(per_frame), "min_frame": float(per_frame.min())}
    )


__all__ = ["aq_clip_iqa", "clipiqa_scores"]
