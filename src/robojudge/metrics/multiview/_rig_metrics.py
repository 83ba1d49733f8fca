"""Registration of the three RIGIS ids of one reconstruction network (Depth Anything 3, VGGT).

The network-backed RIGIS variants differ only in the network that reconstructs each synchronised frame
set; their ids, texts, inputs and ranges follow one pattern, registered here for the module that
supplies the score (:mod:`robojudge.metrics.multiview._da3`, :mod:`robojudge.metrics.multiview._vggt`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robojudge.metrics.multiview._da3 import Da3RigisConfig


# The version of every network's three ids (one scoring code, so one history):
# 2: a calibration without a camera for one of the views (or naming it in another case) is an error row, as
# for the weights-free RIGIS (before: that view's pairs lost their accuracy term, so a view that disagreed
# with the calibration could score 1); a grid item is read, cut into its named views (before: unscored,
# "the item has 0" views).
VERSION = "2"


def register_rig_metrics(ids: tuple[str, str, str], *, network: str, common: str, citation: str,
                         config: type[Da3RigisConfig], weights: tuple[str, ...],
                         score: Callable[[Any, Any, str], Any], version: str = VERSION) -> None:
    """Register the three RIGIS ids of one reconstruction network (``network`` names it in the texts)."""
    from robojudge.metrics._registry import Family, Input, Provider, metric

    texts = {
        ids[1]: "S_geo: 1 - share of a view's reconstructed points lying in another view's free "
                "space (5% depth slack), over view pairs and instants. 1 is consistent.",
        ids[2]: "S_pose: stability over time of the estimated relative pose of each view pair "
                "(median angle error against the medoid, exp(-max(0, e - 5) / 10)); with a "
                "calibration, averaged with the accuracy against it. 1 is a fixed rig.",
        ids[0]: f"S = 0.5 S_geo + 0.5 S_pose of the {network} reconstruction. 1 is consistent.",
    }
    for mid in (ids[1], ids[2], ids[0]):
        def fn(item: Any, config: Any, _mid: str = mid) -> Any:
            return score(item, config, _mid)

        # The metric belongs to the module that supplies its score (and calls this), not to this one.
        fn.__name__ = fn.__qualname__ = mid
        fn.__module__ = score.__module__
        metric(
            mid,
            family=Family.multiview,
            inputs={Input.views},
            higher_is_better=True,
            native_range=(0.0, 1.0),
            version=version,
            citation=citation,
            description=common + texts[mid],
            config=config,
            provider=Provider.model,
            weights=weights,
        )(fn)
