"""Audits of world-model generators: the acceleration audit and FVD sample-size sensitivity.

A top-level package on the apps layer, like :mod:`robojudge.ablation`: it wires :mod:`robojudge.run`
(scoring), :mod:`robojudge.meta` (the statistics) and :mod:`robojudge.report` (tables, figures, the
page). See docs/audit.md.
"""

from robojudge.audit._acceleration import (
    AccelerationRun,
    acceleration_json,
    audit_acceleration,
    audited_note,
    not_quality_note,
    write_acceleration,
)
from robojudge.audit._sample_size import (
    FEATURES,
    SampleSizeRun,
    audit_sample_size,
    default_grid,
    thumb_features,
    video_windows,
    write_sample_size,
)
from robojudge.audit._standins import (
    DEFAULT_METHODS,
    StandIn,
    chunk_drift,
    drop_and_interpolate,
    low_resolution,
    make_standins,
)
from robojudge.audit._timing import TimingError, TimingRow, read_timing, timing_costs

__all__ = [
    "DEFAULT_METHODS",
    "FEATURES",
    "AccelerationRun",
    "SampleSizeRun",
    "StandIn",
    "TimingError",
    "TimingRow",
    "acceleration_json",
    "audit_acceleration",
    "audit_sample_size",
    "audited_note",
    "chunk_drift",
    "default_grid",
    "drop_and_interpolate",
    "low_resolution",
    "make_standins",
    "not_quality_note",
    "read_timing",
    "thumb_features",
    "timing_costs",
    "video_windows",
    "write_acceleration",
    "write_sample_size",
]
