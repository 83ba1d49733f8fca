"""RIGIS with VGGT-1B standing in for RoboWorM's VGGT-Omega (``rigis_vggt``, ``_geo``, ``_pose``).

RoboWorM (paper 001, Fig. 3b) reconstructs each synchronised frame set with VGGT-Omega and scores the
reconstruction's cross-view consistency (``S_geo``) and the stability over time of the rig's estimated
relative poses (``S_pose``). VGGT-Omega is not VGGT: RoboPhys-3D (paper 002, Table 10) lists them as two
networks (1.14 B and 1.26 B parameters), and they score differently there. robojudge has no port of
VGGT-Omega. It runs its own port of VGGT-1B (:mod:`robojudge.models._vggt`) in its place, so these values
are not those of the paper's network. The reconstruction is scored exactly as the Depth Anything 3
variant scores its own (:mod:`robojudge.metrics.multiview._da3`: same sampling, same formulas, same
defaults), so the two differ only in the network. Unverified on the real checkpoint: the port matches
the publisher's code on tiny networks, but no value from the published file has been computed here
(docs/rigis.md, "VGGT").

VGGT's input is its own: each frame resized to width ``process_res`` (518, the trained size) with the
height that keeps the aspect ratio (a multiple of 14, centre-cropped to 518 rows if taller). Its depth
and camera poses come out in one arbitrary scale per instant, with the first view's camera as the world
frame, which the scoring does not depend on.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from robojudge.metrics.multiview._da3 import Da3RigisConfig, Estimator, score_rig_item
from robojudge.metrics.multiview._rig_metrics import register_rig_metrics

VGGT_IDS = ("rigis_vggt", "rigis_vggt_geo", "rigis_vggt_pose")
"""The metric ids of the VGGT variant: combined score, ``S_geo``, ``S_pose``."""


class VggtRigisConfig(Da3RigisConfig):
    """The DA3 variant's settings, with VGGT's input size."""

    process_res: int = Field(default=518, ge=14, description="VGGT input: width in pixels (crop mode)")


def vggt_estimator(frames: np.ndarray, *, process_res: int, metric: str) -> Any:
    """VGGT-1B on all ``frames`` jointly (:func:`robojudge.models.vggt_geometry`).

    Raises:
        MissingWeightsError: When the ``vggt_1b`` weights are not on this machine (names ``metric``).
    """
    from robojudge.models import VGGT_1B, load_vggt, vggt_geometry

    net = load_vggt(VGGT_1B, metric=metric)
    return vggt_geometry(net, frames, target=process_res)


#: The reconstruction network (VGGT-1B by default); replace it to plug in another one (tests do).
ESTIMATOR: Estimator = vggt_estimator


def score_item(item: Any, cfg: Da3RigisConfig, metric: str) -> Any:
    """The :class:`~robojudge.metrics._score.Score` of ``metric`` (one of :data:`VGGT_IDS`) for ``item``."""
    return score_rig_item(item, cfg, metric, estimator=ESTIMATOR, ids=VGGT_IDS)


def _register() -> None:
    from robojudge.models import VGGT_1B

    register_rig_metrics(
        VGGT_IDS,
        network="VGGT",
        common=("VGGT-1B (robojudge's port; a stand-in for RoboWorM's VGGT-Omega, another network) "
                "reconstructs each synchronised frame set "
                "(one frame per view, 4 fps, at most 16 instants, width 518); unverified on the real "
                "checkpoint (the port matches the publisher's code on tiny networks only). "),
        citation="RoboWorM (paper 001), Fig. 3b, with VGGT-1B (Wang et al., CVPR 2025) in place of the "
                 "paper's VGGT-Omega (two networks: RoboPhys-3D, Table 10)",
        config=VggtRigisConfig,
        weights=(VGGT_1B.name,),
        score=score_item,
        # v1: without main_view, the first view listed went first (now the view whose file is video)
        version="2",
    )


_register()
