"""Pixel-level metrics computed straight from decoded frames."""

from __future__ import annotations

from robojudge.metrics import functional as F
from robojudge.metrics._content import require_motion
from robojudge.metrics._frames import GrayPreprocess, gray_sequence
from robojudge.metrics._registry import Family, Input, metric
from robojudge.metrics._score import Score
from robojudge.suite._schema import Item


class PixelConsistencyConfig(GrayPreprocess):
    """Preprocessing of :func:`pixel_frame_consistency`; defaults are RoboJudge App. B.3's."""


@metric(
    "pixel_frame_consistency",
    family=Family.pixel,
    inputs={Input.video},
    higher_is_better=False,
    native_range=(0.0, 255.0),
    version="4",  # v4: a frozen picture that fades or flashes is still (v3: scored)
    # v3: a clip under 16 px on a side is unscored (v2: scaled up to 256x256 and scored)
    citation=(
        "RoboJudge: Multimodal Language Models as Judges for Embodied Video Generation, "
        "App. B.3 (Pixel Frame Consistency)"
    ),
    description=(
        "Mean absolute grayscale difference between consecutive frames (decoded at 8 fps, "
        "resized to 256x256), averaged over time. Lower is more consistent."
    ),
    config=PixelConsistencyConfig,
)
def pixel_frame_consistency(item: Item, config: PixelConsistencyConfig) -> Score:
    """RoboJudge's pixel frame consistency ``D_pix`` of the item's main video.

    Per the paper (App. B.3) the video is decoded at 8 fps, every frame is resized to 256x256 and
    converted to grayscale ``G_t`` in [0, 255], and ``D_pix = 1/(T-1) * sum_t mean|G_{t+1} - G_t|``.
    The formula is :func:`robojudge.metrics.functional.frame_consistency`. A lower value means more
    local frame consistency; correlations with human ratings use the
    reversed sign, which the metric declares through ``higher_is_better=False``.

    A still video (nothing moves beyond codec noise, :func:`~robojudge.metrics._content.require_motion`)
    would score the best value, 0, for a failure to animate; it is left unscored instead.
    """
    frames = gray_sequence(item, config)
    require_motion(frames)
    per_step = F.frame_differences(frames)
    value = F.frame_consistency(frames)
    return Score(value=value, details={"frames": len(frames), "max_step": float(per_step.max())})
