"""Audits of world-model generators: the acceleration audit and FVD sample-size sensitivity.

A top-level package on the apps layer, like :mod:`robojudge.ablation`: it wires :mod:`robojudge.run`
(scoring), :mod:`robojudge.meta` (the statistics) and :mod:`robojudge.report` (tables, figures, the
page). See docs/audit.md.
"""

from robojudge.audit._standins import (
    DEFAULT_METHODS,
    StandIn,
    chunk_drift,
    drop_and_interpolate,
    low_resolution,
    make_standins,
)

__all__ = [
    "DEFAULT_METHODS",
    "StandIn",
    "chunk_drift",
    "drop_and_interpolate",
    "low_resolution",
    "make_standins",
]
