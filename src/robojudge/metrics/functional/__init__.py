"""The maths of robojudge's computed metrics as plain functions on arrays.

Every metric that needs no network weights (provider ``computed``) is, at heart, a formula on frames,
flow fields, flags or strings. The registered metric (``get_metric(id)``) reads an item's files,
decides what to do with degenerate clips (a still video is left unscored, a missing frame counts as the
worst value, ...) and then calls the function here that holds the formula: one implementation, which
anyone can call on their own arrays::

    >>> import numpy as np
    >>> from robojudge.metrics import functional as F
    >>> a = np.zeros((4, 4, 3), np.uint8)
    >>> round(F.psnr(a + 5, a), 4)
    34.1514

Conventions of this package:

* Inputs are numpy arrays: frames are ``uint8`` RGB ``(T, H, W, 3)`` (one frame ``(H, W, 3)``) unless
  a function says it takes grayscale ``(T, H, W)``; flow fields are ``(H, W, 2)`` float (x, y).
* Outputs are plain Python floats (or ints, bools), or numpy arrays for per-frame / per-step values.
* No files, no :class:`~robojudge.suite.Item`, no registry, no caches, no pydantic configs: settings
  are keyword arguments whose defaults are the metric's defaults. Flow settings travel together as
  one ``settings`` object: :class:`Farneback` (default :data:`FARNEBACK`, the RoboJudge pair's),
  :class:`FlowSettings` (adds ``estimator`` and ``dis_preset``; :data:`NATIVE_FLOW`, DIS, is the
  native-size trio's default), or any object with those attributes, such as a flow metric's config.
* Bad arrays raise ``ValueError``; an input with nothing to measure may raise
  :class:`robojudge.metrics.Unmeasurable` (a ``ValueError``), the one thing imported from outside
  this package.
* Each function names the paper and section it follows and carries a doctest on a tiny array
  (run by ``tests/metrics/test_functional.py``).
* Heavy or optional libraries (scikit-image, sacrebleu) are imported inside the function that needs them.

The functions live in private modules by topic (``_image``, ``_flow``, ``_motion``, ``_text``,
``_state``, ...) and are re-exported here; import them from ``robojudge.metrics.functional``.
"""

from robojudge.metrics.functional._baseline import uniform_score
from robojudge.metrics.functional._flow import (
    DIS_MEDIUM_BELOW,
    DIS_PRESETS,
    FARNEBACK,
    NATIVE_FLOW,
    Farneback,
    FarnebackSettings,
    FlowSettings,
    FlowSteps,
    dis_preset_for,
    estimator_of,
    farneback_flow,
    flow_function,
    flow_magnitude,
    flow_steps,
    forward_backward_epe,
    motion_magnitude,
    motion_magnitudes,
    optical_flow,
    top_magnitude,
    warp_by_flow,
    warp_error,
    warp_residuals,
)
from robojudge.metrics.functional._geometry import (
    BackgroundMotion,
    CameraControl,
    Stability,
    background_homographies,
    camera_control,
    contrast_normalized,
    corner_drift,
    default_intervals,
    patch_correlations,
    sustained_stability,
    verified_ratio,
)
from robojudge.metrics.functional._image import frame_consistency, frame_differences, psnr, ssim
from robojudge.metrics.functional._motion import (
    dynamic_degree,
    dynamic_steps,
    dynamic_threshold,
    flicker_score,
    is_dynamic,
    temporal_flickering,
)
from robojudge.metrics.functional._photometric import (
    PhotometricConsistency,
    photometric_consistency,
    photometric_from_steps,
    soft_motion,
)
from robojudge.metrics.functional._reprojection import (
    ReprojectionResult,
    RoundTrip,
    displacement_score,
    masked_psnr,
    reprojection_consistency,
    round_trip,
    warp_into,
)
from robojudge.metrics.functional._state import collision_events, task_success
from robojudge.metrics.functional._text import bleu
from robojudge.metrics.functional._tracking import (
    DYN_MAX,
    HSD_MAX,
    MAX_MISSING,
    NDTW_MAX,
    DistanceScore,
    Localization,
    average_precision_recall,
    box_iou,
    diameter,
    dtw,
    dyn_score,
    fill_gaps,
    hsd_score,
    ndtw_score,
    on_time_grid,
    range_ratio,
    speeds,
    symmetric_hausdorff,
    track_localization,
)

__all__ = [
    "BackgroundMotion",
    "CameraControl",
    "DYN_MAX",
    "DistanceScore",
    "DIS_MEDIUM_BELOW",
    "DIS_PRESETS",
    "FARNEBACK",
    "NATIVE_FLOW",
    "Farneback",
    "FarnebackSettings",
    "FlowSettings",
    "FlowSteps",
    "HSD_MAX",
    "Localization",
    "MAX_MISSING",
    "NDTW_MAX",
    "PhotometricConsistency",
    "ReprojectionResult",
    "RoundTrip",
    "Stability",
    "average_precision_recall",
    "background_homographies",
    "bleu",
    "box_iou",
    "camera_control",
    "collision_events",
    "contrast_normalized",
    "corner_drift",
    "default_intervals",
    "diameter",
    "displacement_score",
    "dtw",
    "dyn_score",
    "dynamic_degree",
    "dynamic_steps",
    "dynamic_threshold",
    "dis_preset_for",
    "estimator_of",
    "farneback_flow",
    "fill_gaps",
    "flicker_score",
    "flow_magnitude",
    "flow_function",
    "flow_steps",
    "forward_backward_epe",
    "frame_consistency",
    "frame_differences",
    "hsd_score",
    "is_dynamic",
    "masked_psnr",
    "motion_magnitude",
    "motion_magnitudes",
    "ndtw_score",
    "on_time_grid",
    "patch_correlations",
    "photometric_consistency",
    "photometric_from_steps",
    "psnr",
    "range_ratio",
    "reprojection_consistency",
    "round_trip",
    "soft_motion",
    "speeds",
    "ssim",
    "sustained_stability",
    "symmetric_hausdorff",
    "task_success",
    "temporal_flickering",
    "top_magnitude",
    "track_localization",
    "uniform_score",
    "verified_ratio",
    "optical_flow",
    "warp_by_flow",
    "warp_error",
    "warp_into",
    "warp_residuals",
]
