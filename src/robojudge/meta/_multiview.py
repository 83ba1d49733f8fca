"""Video-level agreement per embodiment, averaged over embodiments (RoboWorM App. D, Table D5).

RoboWorM validates RIGIS and the VLM judges against human multi-view ratings: per embodiment, Spearman's
rho and the pairwise rank accuracy (the share of human-ordered video pairs the method orders the same way,
a tie of the method counting as an error) between the human labels and each method's scores, then the
mean over the embodiments. :func:`embodiment_agreement` does that for one method's scores.

Scores are oriented so that higher means better (a lower-is-better metric is negated), the labels'
direction (a 1-5 rating: higher is better). A video the method leaves unscored (NaN) is left out of that
method's statistics and counted (``unscored``); the table says so beside the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import spearman, why_no_correlation
from robojudge.meta._ranking import pairwise_rank_accuracy


@dataclass(frozen=True)
class GroupAgreement:
    """One embodiment's agreement.

    Attributes:
        rho: Spearman's rho (NaN with fewer than three scored videos or a constant side).
        rank_accuracy: Pairwise rank accuracy, ties of the scores as errors (NaN without a
            human-ordered pair).
        n: Videos scored.
        unscored: Videos without a score (left out).
        why: Why ``rho`` is NaN (``"scores are constant"``, ``"fewer than 3 videos"``); None when it is
            defined.
    """

    rho: float
    rank_accuracy: float
    n: int
    unscored: int
    why: str | None = None


@dataclass(frozen=True)
class EmbodimentAgreement:
    """Agreement per embodiment and its mean over embodiments.

    Attributes:
        groups: Per embodiment.
        rho: Mean of the embodiments' rho over those where it is defined (NaN when none is).
        rank_accuracy: The same mean of the rank accuracies (a constant score has no rho but a rank
            accuracy, 0, so this mean may cover more embodiments than ``rho``).
        defined: Embodiments whose rho entered the mean.
        defined_accuracy: Embodiments whose rank accuracy entered its mean.
    """

    groups: dict[str, GroupAgreement] = field(default_factory=dict)
    rho: float = math.nan
    rank_accuracy: float = math.nan
    defined: int = 0
    defined_accuracy: int = 0


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


def embodiment_agreement(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    groups: Sequence[str],
    *,
    higher_is_better: bool = True,
) -> EmbodimentAgreement:
    """Spearman's rho and pairwise rank accuracy per embodiment, and their means (Table D5).

    Args:
        scores: One score per video (NaN: unscored).
        labels: The reference rating per video (higher is better), for example the planted multi-view
            score of the simulator suite (``robojudge.suite.sim.multiview_labels``) or a human rating.
        groups: The embodiment of each video.
        higher_is_better: The scores' direction; lower-is-better scores are negated first.

    Raises:
        ValueError: When the three differ in length or a label is not finite.
    """
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if not (x.shape == y.shape == (len(groups),)):
        raise ValueError(f"scores, labels and groups differ in length: {x.shape}, {y.shape}, {len(groups)}")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise ValueError(f"label of video {int(bad[0])} is not finite ({y[bad[0]]})")
    if not higher_is_better:
        x = -x
    g = np.asarray(groups, dtype=object)
    out: dict[str, GroupAgreement] = {}
    for name in sorted(set(groups)):
        m = g == name
        xs, ys = x[m], y[m]
        scored = np.isfinite(xs)
        out[name] = GroupAgreement(
            rho=spearman(xs, ys),
            rank_accuracy=pairwise_rank_accuracy(xs, ys),
            n=int(scored.sum()),
            unscored=int((~scored).sum()),
            why=why_no_correlation(xs, ys, ("scores", "labels"), "videos"),
        )
    rhos = [a.rho for a in out.values()]
    accuracies = [a.rank_accuracy for a in out.values()]
    return EmbodimentAgreement(
        groups=out,
        rho=_mean(rhos),
        rank_accuracy=_mean(accuracies),
        defined=sum(not math.isnan(r) for r in rhos),
        defined_accuracy=sum(not math.isnan(a) for a in accuracies),
    )


def embodiment_table(
    columns: Mapping[str, tuple[npt.ArrayLike, bool]], labels: npt.ArrayLike, groups: Sequence[str]
) -> dict[str, EmbodimentAgreement]:
    """:func:`embodiment_agreement` of every column (``{name: (scores, higher_is_better)}``)."""
    return {name: embodiment_agreement(s, labels, groups, higher_is_better=hib)
            for name, (s, hib) in columns.items()}
