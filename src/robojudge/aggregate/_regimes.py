"""Macro-averaging over task regimes and retention relative to the ground-truth substrate."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class MacroAverage:
    """Equal-weight mean over regimes of the per-regime means.

    Attributes:
        value: Mean of ``per_regime``.
        per_regime: Regime -> mean of its values, in first-seen order.
    """

    value: float
    per_regime: dict[Hashable, float]


def macro_average(values: ArrayLike, regimes: Sequence[Hashable], *, skipna: bool = False) -> MacroAverage:
    """Average within each task regime, then average the regimes with equal weight (Sec. 4.2).

    A regime with many rows thus weighs as much as one with few rows.

    Args:
        values: One score per row.
        regimes: The regime label of each row.
        skipna: Leave NaN values (and then NaN regimes) out instead of letting them make the result NaN;
            leaving a regime out re-weights the others, so this is off by default.

    Returns:
        A :class:`MacroAverage`.

    Raises:
        ValueError: ``values`` and ``regimes`` differ in length.
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size != len(regimes):
        raise ValueError(f"{x.size} values but {len(regimes)} regime labels")
    groups: dict[Hashable, list[float]] = {}
    for v, g in zip(x.tolist(), regimes, strict=True):
        groups.setdefault(g, []).append(v)
    per = {g: _mean(vs, skipna) for g, vs in groups.items()}
    return MacroAverage(value=_mean(list(per.values()), skipna), per_regime=per)


def _mean(vs: Sequence[float], skipna: bool) -> float:
    ok = [v for v in vs if not math.isnan(v)] if skipna else list(vs)
    return math.fsum(ok) / len(ok) if ok else math.nan


def retention(values_by_substrate: Mapping[str, float], gt: str = "GT") -> dict[str, float]:
    """Each substrate's score as a fraction of the ground-truth substrate's score (Sec. 3.4, Tables 3-4).

    Generated rollouts are scored against their reconstruction-matched ground truth, so a substrate's
    retention is ``value / value[gt]``; the ground truth itself maps to 1.

    Args:
        values_by_substrate: Substrate name (e.g. GT, VGGT, 4DGS) -> score.
        gt: Name of the ground-truth (raw video) substrate.

    Returns:
        Substrate -> retention, in the input order.

    Raises:
        KeyError: ``gt`` is missing.
        ValueError: The ground-truth score is zero or not finite.
    """
    if gt not in values_by_substrate:
        raise KeyError(f"no ground-truth substrate {gt!r}; have {', '.join(map(str, values_by_substrate))}")
    ref = float(values_by_substrate[gt])
    if ref == 0 or not math.isfinite(ref):
        raise ValueError(f"ground-truth score is {ref}; retention is undefined")
    return {k: float(v) / ref for k, v in values_by_substrate.items()}
