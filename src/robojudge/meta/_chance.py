"""The agreement a judge reaches by chance: the expected Table 2 statistics of a score drawn uniformly from
the integers of the scale, worked out from the human labels alone (RoboJudge Table 2, "Random Baseline").

RoboJudge's Random Baseline row (r 0.000, Acc 0.200, MSE 3.349 / 3.631 / 3.490) is this expectation on
its 1-5 labels, not one seeded draw: a draw lands around it by sampling noise (the ``uniform_random``
metric is one such draw). For ``U`` uniform on ``lo..hi`` (``K = hi - lo + 1`` values) against a label
``h``, independently of it:

* ``E[(U - h)^2] = Var(U) + (E[U] - h)^2`` with ``Var(U) = (K^2 - 1) / 12`` and ``E[U] = (lo + hi) / 2``
  (on 1-5: ``2 + (3 - h)^2``); the MSE is its mean over the labels, on the raw labels as
  :func:`robojudge.meta.mse` takes them;
* accuracy ``1 / K``: the draw equals the rounded label (inside the scale) with that chance;
* Pearson r 0: ``U`` and its mirror ``lo + hi - U`` are equally likely and give opposite r.

Overall follows :func:`robojudge.meta.overall`: MSE over the pooled (item, axis) pairs, Acc the mean of
the axes', r undefined when no axis has one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import DEFAULT_SCALE, MIN_CORRELATION_PAIRS, as_float_vector
from robojudge.meta._report import OVERALL


@dataclass(frozen=True)
class ChanceStats:
    """The expected statistics of a uniform draw against one axis's labels (or the Overall).

    Attributes:
        n: Labelled items (Overall: labelled (item, axis) pairs).
        pearson: 0, or NaN where r is undefined for any judge: fewer than
            :data:`~robojudge.meta.MIN_CORRELATION_PAIRS` labels, labels all one value, or a scale of one
            value (Overall: no axis with an r).
        exact: ``1 / K``; NaN without labels.
        mse: The mean over the labels of ``Var(U) + (E[U] - h)^2``; NaN without labels.
    """

    n: int
    pearson: float
    exact: float
    mse: float


def chance_agreement(human: Mapping[str, npt.ArrayLike],
                     scale: tuple[int, int] = DEFAULT_SCALE) -> dict[str, ChanceStats]:
    """Expected r, Acc and MSE of a score drawn uniformly from the integers of ``scale`` against each axis's
    labels (NaN: unlabelled), and their Overall under :data:`~robojudge.meta.OVERALL` (see the module
    docstring).

    >>> round(chance_agreement({"pa": [1, 3, 5]})["pa"].mse, 4)  # 2 + (4 + 0 + 4) / 3
    4.6667

    Raises:
        ValueError: A scale whose low end is above its high end, or no axis.
    """
    lo, hi = scale
    if lo > hi:
        raise ValueError(f"scale must be (low, high) with low <= high, got {scale}")
    if not human:
        raise ValueError("chance_agreement needs at least one axis of labels")
    k = hi - lo + 1
    mean_u, var_u = (lo + hi) / 2, (k * k - 1) / 12
    out: dict[str, ChanceStats] = {}
    sums: list[float] = []
    for axis, labels in human.items():
        h = as_float_vector(labels, f"human[{axis!r}]")
        h = h[np.isfinite(h)]
        if not h.size:
            out[axis] = ChanceStats(0, math.nan, math.nan, math.nan)
            continue
        defined = h.size >= MIN_CORRELATION_PAIRS and np.ptp(h) > 0 and k > 1
        squared = var_u + (mean_u - h) ** 2
        sums.append(float(squared.sum()))
        out[axis] = ChanceStats(int(h.size), 0.0 if defined else math.nan, 1 / k, float(squared.mean()))
    axes = [out[a] for a in human]
    n = sum(s.n for s in axes)
    if any(s.n == 0 for s in axes):  # an Overall needs every axis, as overall() has it
        out[OVERALL] = ChanceStats(n, math.nan, math.nan, math.nan)
    else:
        r = 0.0 if any(s.pearson == 0.0 for s in axes) else math.nan
        out[OVERALL] = ChanceStats(n, r, float(np.mean([s.exact for s in axes])), sum(sums) / n)
    return out
