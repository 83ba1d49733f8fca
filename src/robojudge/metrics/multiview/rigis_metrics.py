"""Weights-free RIGIS metrics for calibrated multi-view rollouts: ``rigis``, ``rigis_geo``, ``rigis_pose``.

RoboWorM (paper 001, Fig. 3b; Table D5 for its agreement with people) scores whether the views of one
rollout agree as views of one scene from a fixed rig. This estimator uses the rig's calibration where the
paper uses a reconstruction network; the formulas and their mappings to 0-1 are in
:mod:`robojudge.metrics.multiview._rigis` and docs/rigis.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from robojudge.metrics._derived import derived
from robojudge.metrics._registry import Family, Input, metric
from robojudge.metrics._score import Score
from robojudge.metrics.multiview._item import MOTION_SIDE, item_cameras, timing_frames, view_frames
from robojudge.metrics.multiview._rigis import (
    RigAnalysis,
    RigisParams,
    analyse_rig,
    check_rig,
    rigis,
    rigis_geo,
    rigis_pose,
)
from robojudge.robots import Camera
from robojudge.suite import Item

_CITATION = (
    "RoboWorM: Evaluating Movement Realism, Consistency and Acceleration Affects in Embodied Video World "
    "Models, Fig. 3b (RIGIS: S_geo, S_pose, S); weights-free estimator on the rig calibration (docs/rigis.md)"
)


class RigisConfig(RigisParams):
    """How many instants are read, and how they are measured (:class:`RigisParams`)."""

    instants: int = Field(default=8, le=64, json_schema_extra={"minimum": 2},
                          description="synchronised frame sets spread over the video (at least 2)")

    @field_validator("instants")
    @classmethod
    def _two_or_more(cls, v: int) -> int:
        # One frame per view shows no motion, and a rollout without motion is not scored: with 1, no item
        # could ever be, and each would blame its video.
        if v < 2:
            raise ValueError(f"must be at least 2 (got {v}): RIGIS reads the rollout's motion between "
                             "instants, and one instant shows none, so no item could be scored")
        return v


def _analysis(
    frames: dict[str, np.ndarray], cameras: dict[str, Camera], params: RigisParams,
    timing: dict[str, np.ndarray] | None = None,
) -> RigAnalysis | None:
    """The rig's matches and poses, computed once for the three metrics of an item inside the runner.

    Remembered with the first view's frame array (it and the other views' arrays live and die together in
    the frame cache); ``None`` when the views give nothing to measure.
    """
    if check_rig(frames, cameras, timing) is not None:
        return None
    arrays = list(frames.values())
    key = ("rigis_analysis", tuple(id(a) for a in arrays[1:]), params.model_dump_json(),
           json.dumps({n: c.model_dump() for n, c in cameras.items()}, sort_keys=True))
    return derived(arrays[0], key, lambda: analyse_rig(frames, cameras, params))


def _run(item: Item, config: RigisConfig, fn: Callable[..., tuple[float, dict[str, Any]]]) -> Score:
    frames = view_frames(item, config.instants)
    # Each camera must be for its view's framing: K scaled to a cropped or padded view misreads every ray.
    cameras = item_cameras(item, list(frames), {n: (f.shape[2], f.shape[1]) for n, f in frames.items()})
    params = RigisParams.model_validate(config.model_dump(exclude={"instants"}))
    timing = timing_frames(item)
    # Only S_geo reads the moving parts; rigis_pose skips the second decode.
    motion = timing_frames(item, MOTION_SIDE) if fn is not rigis_pose and params.move else None
    value, details = fn(frames, cameras, params, analysis=_analysis(frames, cameras, params, timing),
                        timing=timing, motion=motion)
    details = {"views": list(frames), **details}
    if "unscored_reason" in details:
        return Score.unscored(details.pop("unscored_reason"), **details)
    return Score(value=value, details=details)


@metric(
    "rigis",
    family=Family.multiview,
    inputs={Input.views},
    higher_is_better=True,
    native_range=(0.0, 1.0),
    # 2: rigis_pose reads each camera's stillness in its own view too (docs/rigis.md).
    # 3: rigis_geo times S_move, the moving parts checked across views.
    # 4: an essential-matrix fit that finds no model or raises (OpenCV 5.1) counts no inliers.
    # 5: views at different frame rates are an error row; a part of weight 0 (geo_weight 0 or 1) that
    # cannot be measured no longer leaves S unscored.
    # 6: a view of another aspect ratio than its calibration's size is an error row (before: K scaled per
    # axis to it, so a cropped view read as a rig out of calibration).
    # 7: a view of noise (its consecutive frames do not correspond) leaves the item unscored, and a rig
    # whose views only change brightness is still (before: scored); details.views_read.
    version="7",
    citation=_CITATION,
    description=(
        "Multi-view consistency of a calibrated rig, 0-1: the mean of rigis_geo (matches obey the "
        "calibrated epipolar geometry, what moves in one view moves in the others) and rigis_pose (the "
        "cameras stay as calibrated: relative poses estimated across views, and each view's static scene "
        "over time)."
    ),
    config=RigisConfig,
)
def rigis_metric(item: Item, config: RigisConfig) -> Score:
    """RIGIS ``S = w S_geo + (1 - w) S_pose`` of the item's views (:func:`~._rigis.rigis`)."""
    return _run(item, config, rigis)


@metric(
    "rigis_geo",
    family=Family.multiview,
    inputs={Input.views},
    higher_is_better=True,
    native_range=(0.0, 1.0),
    # 2: times S_move (a view's moving pixels must move along their rays in the other views too).
    # 3: an essential-matrix fit that finds no model or raises (OpenCV 5.1) counts no inliers.
    # 4: views at different frame rates are an error row.
    # 5: a view of another aspect ratio than its calibration's size is an error row (K no longer scaled
    # per axis to a cropped view).
    # 6: a view of noise (its consecutive frames do not correspond) leaves the item unscored, and a rig
    # whose views only change brightness is still (before: scored); details.views_read.
    version="6",
    citation=_CITATION,
    description=(
        "Share of cross-view SIFT matches within tau of the calibrated epipolar geometry (Sampson "
        "distance), against the most any pose estimated from the same matches explains, mean over view "
        "pairs; times the view lag factor and the share of moving pixels the other views show moving too."
    ),
    config=RigisConfig,
)
def rigis_geo_metric(item: Item, config: RigisConfig) -> Score:
    """RIGIS ``S_geo`` of the item's views (:func:`~._rigis.rigis_geo`)."""
    return _run(item, config, rigis_geo)


@metric(
    "rigis_pose",
    family=Family.multiview,
    inputs={Input.views},
    higher_is_better=True,
    native_range=(0.0, 1.0),
    # 2: times S_still, each camera's stillness read in its own view; scored on flat scenes too.
    # 3: an essential-matrix fit that finds no model or raises (OpenCV 5.1) gives no candidate pose.
    # 4: views at different frame rates are an error row.
    # 5: a view of another aspect ratio than its calibration's size is an error row (K no longer scaled
    # per axis to a cropped view).
    # 6: a view of noise (its consecutive frames do not correspond) leaves the item unscored, and a rig
    # whose views only change brightness is still (before: scored); details.views_read.
    version="6",
    citation=_CITATION,
    description=(
        "Whether the rig's cameras stay as calibrated, 0-1: relative poses of view pairs estimated from "
        "their matches against the calibration and over time (S_rel), times how far each camera turns "
        "in its own view's static scene (S_still); either alone where the other cannot be read."
    ),
    config=RigisConfig,
)
def rigis_pose_metric(item: Item, config: RigisConfig) -> Score:
    """RIGIS ``S_pose`` of the item's views (:func:`~._rigis.rigis_pose`)."""
    return _run(item, config, rigis_pose)
