"""Metrics over several synchronised views of one rollout (RoboWorM's RIGIS; docs/rigis.md).

The pure functions live in :mod:`robojudge.metrics.multiview._rigis` (``rigis_geo``, ``rigis_pose``,
``rigis``); importing this package registers nothing (the registered metrics are in
:mod:`robojudge.metrics.multiview.rigis_metrics`; not named ``rigis``, which would hide the
function of that name on this package once imported).
"""

from robojudge.metrics.multiview._rigis import (
    RigAnalysis,
    RigisParams,
    analyse_rig,
    check_rig,
    rigis,
    rigis_geo,
    rigis_pose,
)

__all__ = ["RigAnalysis", "RigisParams", "analyse_rig", "check_rig", "rigis", "rigis_geo", "rigis_pose"]
