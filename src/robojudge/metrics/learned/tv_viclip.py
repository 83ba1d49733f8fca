"""RoboPhys-3D Semantics Consistency (``cc_semantics``): ViCLIP video-instruction cosine, as VBench.

RoboPhys-3D App. B.1 (paper 002, line 410) lists Semantics Consistency on ``[0, 1]`` (higher is
better) as "overall semantic stability using ViCLIP features", citing VBench and InternVid. The
values it reports (0.13-0.23) are those of VBench's ``overall_consistency`` dimension, which is what
robojudge computes:

1. 8 frames are chosen by VBench's "middle" rule (:func:`robojudge.models.frame_indices`:
   the middle frame of each of 8 equal spans of the whole video; a shorter video repeats its last
   frame);
2. they are resized (shorter side 224, bicubic), centre-cropped to 224 x 224, scaled to [0, 1] and
   normalised with CLIP's mean and standard deviation, and embedded as one clip by ViCLIP ViT-L/14
   (InternVid-10M-FLT);
3. the item's instruction, as VBench's prompt, is embedded by ViCLIP's text tower (CLIP byte-pair
   tokens, 32-token context);
4. the value is the cosine of the two embeddings.

VBench does not clip the cosine, and neither does robojudge: an unrelated video and text give a
small positive cosine in practice, but a negative one is reported as is (below the taxonomy's
lower bound 0), and the identity normalization passes it on unchanged. As in VBench, only the chosen
frames are converted and kept (``sample_frames(..., spread="middle")``), so a long video costs the
memory of 8 frames; ``details.indices`` names them (0-based, among all decoded frames).
"""

from __future__ import annotations

from robojudge.metrics._content import require_motion
from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input, NoConfig, Provider
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item
from robojudge.video import sample_frames

WEIGHTS = "viclip_l14_internvid"
#: Frames ViCLIP ViT-L/14 embeds as one clip (its config's ``num_frames``; VBench's 8).
VICLIP_FRAMES = 8


@robophys_metric(
    "cc_semantics",
    family=Family.features,
    inputs={Input.video, Input.instruction},
    description=(
        "VBench overall consistency: cosine between the ViCLIP ViT-L/14 (InternVid-10M-FLT) embedding of 8 "
        "frames (middle of 8 equal spans, 224x224 centre crop, CLIP normalisation) and that of the item's "
        "instruction; not clipped at 0."
    ),
    provider=Provider.model,
    note="VBench overall_consistency with ViCLIP (InternVid, Wang et al., ICLR 2024); prompt = instruction",
    weights=(WEIGHTS,),
    version="3",  # v3: a frozen picture whose brightness drifts is still, unscored (v2: measured)
)
def cc_semantics(item: Item, config: NoConfig) -> Score:
    """Cosine of the ViCLIP embeddings of 8 frames of the video and of the instruction (see module doc)."""
    from robojudge.models import (
        cosine,
        frame_indices,
        load_viclip,
        viclip_text_embedding,
        viclip_video_embedding,
    )

    if not item.instruction or not item.instruction.strip():
        raise MetricInputError(f"item {item.item_id!r} has no instruction: cc_semantics compares the video "
                               "with it (set 'instruction' in the manifest)")
    # Only the chosen frames are decoded and kept: the video layer's "middle" spread is VBench's rule
    # for a video of at least ``count`` frames; a shorter one comes back whole and its last frame is
    # repeated here (frame_indices on fewer frames than ``count``). A one-frame or still video is
    # unscored before ViCLIP loads: a frozen start scene can match the instruction's words.
    sampled = sample_frames(item.video, fps=None, max_frames=VICLIP_FRAMES, spread="middle")
    require_motion(sampled.frames)
    net = load_viclip(metric="cc_semantics")
    count = net.config.num_frames
    if count != VICLIP_FRAMES:
        sampled = sample_frames(item.video, fps=None, max_frames=count, spread="middle")
    chosen = frame_indices(len(sampled), count)
    video = viclip_video_embedding(net, sampled.frames[chosen])
    text = viclip_text_embedding(net, [item.instruction])[0]
    details = {"indices": [int(sampled.indices[i]) for i in chosen], "distinct_frames": len(set(chosen))}
    return Score(value=cosine(video, text), details=details)


__all__ = ["WEIGHTS", "cc_semantics"]
