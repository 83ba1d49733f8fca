"""KIVA (RoboWorM): a robot video's kinematic stability, read by a keypoint reader trained on kinematics.

:func:`train_reader` trains a small video-conditioned keypoint reader on the forward-kinematics keypoints
of reference and faithful episodes; :func:`calibrate_reader` sets its rigidity and jerk thresholds from
reference videos; the metrics ``kiva``, ``kiva_rigidity`` and ``kiva_jerk`` (robojudge.metrics) use it.
The measurements themselves are plain numpy (:func:`segment_values`, :func:`judge_segments`). torch is
imported only when a reader is trained, loaded or run. See docs/kiva.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from robojudge.kiva._config import TrainConfig
from robojudge.kiva._data import (
    RENDERED_FAILURES,
    Episode,
    KivaDataError,
    collect_episodes,
    episodes_from_manifest,
)
from robojudge.kiva._links import FINGER_PAIRS, finger_indices, measured_links, resolve_robot
from robojudge.kiva._score import (
    CONFIDENCE_RATIO,
    JERK_WINDOW,
    JERK_WINDOWS,
    MEASURE_VERSION,
    OLDER_RULES,
    SEGMENT,
    STILL_MOTION,
    KivaResult,
    Scales,
    SegmentValues,
    SegmentVerdict,
    Thresholds,
    Tracks,
    apply_scales,
    calibration_version,
    finger_crossing,
    finger_gaps,
    frozen_span,
    held_frames,
    invalid_percentage,
    judge_segments,
    judge_tracks,
    keypoint_jerk,
    older_rules,
    part_scales,
    percentile_thresholds,
    reader_confidence,
    recognition,
    reference_cuts,
    relative_lengths,
    robot_motion,
    segment_values,
    segments,
    worst_part,
)

if TYPE_CHECKING:
    from robojudge.kiva._reader import Reader
    from robojudge.kiva._train import Progress

__all__ = [
    "CONFIDENCE_RATIO",
    "FINGER_PAIRS",
    "JERK_WINDOW",
    "JERK_WINDOWS",
    "MEASURE_VERSION",
    "OLDER_RULES",
    "RENDERED_FAILURES",
    "SEGMENT",
    "STILL_MOTION",
    "Episode",
    "KivaResult",
    "KivaDataError",
    "Scales",
    "SegmentValues",
    "SegmentVerdict",
    "Thresholds",
    "Tracks",
    "TrainConfig",
    "apply_scales",
    "calibrate_reader",
    "collect_episodes",
    "episodes_from_manifest",
    "finger_crossing",
    "finger_gaps",
    "finger_indices",
    "calibration_version",
    "frozen_span",
    "held_frames",
    "invalid_percentage",
    "judge_segments",
    "judge_tracks",
    "keypoint_jerk",
    "load_reader",
    "measured_links",
    "older_rules",
    "part_scales",
    "percentile_thresholds",
    "reader_confidence",
    "recognition",
    "read_frames",
    "reader_checkpoint",
    "record_frame_aspects",
    "reference_cuts",
    "relative_lengths",
    "resolve_robot",
    "robot_motion",
    "segment_values",
    "segments",
    "train_reader",
    "worst_part",
]


def train_reader(
    manifest: str | Path,
    robot: str,
    out: str | Path,
    config: TrainConfig | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train a keypoint reader and save it in ``out`` (see :func:`robojudge.kiva._reader.train`)."""
    from robojudge.kiva._reader import train

    return train(manifest, robot, out, config, progress)


def calibrate_reader(
    reader: str | Path,
    manifest: str | Path,
    percentile: float = 95.0,
    seed: int = 0,
    videos: int | None = None,
    multiview_rollouts: bool = False,
    segment: int = SEGMENT,
) -> dict[str, Any]:
    """Set a reader's thresholds from reference videos (see :func:`robojudge.kiva._reader.calibrate`)."""
    from robojudge.kiva._reader import calibrate

    return calibrate(reader, manifest, percentile, seed, videos, multiview_rollouts, segment)


def load_reader(path: str | Path) -> Reader:
    """Load a reader folder or its ``reader.pt`` (raises ``ValueError`` naming the path when it cannot)."""
    from robojudge.kiva._reader import load_reader as load

    return load(path)


def record_frame_aspects(reader: str | Path) -> tuple[list[float], bool]:
    """Store the training videos' width over height in a reader trained before they were stored (see
    :func:`robojudge.kiva._reader.record_frame_aspects`)."""
    from robojudge.kiva._reader import record_frame_aspects as record

    return record(reader)


def read_frames(reader: Reader, frames: Any, fps: float) -> Tracks:
    """Keypoint tracks of native ``(T, H, W, 3)`` frames, five test-time candidates averaged."""
    from robojudge.kiva._reader import read_frames as read

    return read(reader, frames, fps)


def reader_checkpoint(path: str | Path) -> Path:
    """The checkpoint file of a reader folder (``reader.pt``), or ``path`` when it names a file."""
    p = Path(path)
    return p / "reader.pt" if p.is_dir() else p
