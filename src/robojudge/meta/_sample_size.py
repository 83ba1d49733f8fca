"""How a set metric (FVD) and the generator ranking it gives move with the number of windows n.

RoboWorM (App. B, Fig. B3) re-scores dense settings against one fixed reference while varying the
number of video windows n, and finds that matching n across settings changes the ranking of 14 of
24: a Frechet distance from few samples is biased upward by roughly ``1/n`` and noisy, so sets of
different sizes are not comparable. Here, for each generator and each n of a grid:

* ``draws`` random subsets of n of its windows (without replacement by default, a subsample; with
  ``replace=True`` a bootstrap of size n) are scored by the set statistic against the fixed
  reference; the mean, spread and percentile interval of those values are the curve;
* the generator ranking by the mean at n is compared with the ranking by the statistic on all of each
  generator's windows (its own, unmatched size): the **flip share** is the fraction of generator
  pairs whose order differs (a pair tied on one side only counts as flipped);
* the **draw flip share** is the same comparison made draw by draw (the k-th subset of every
  generator against the full-sample ranking), averaged over draws: how often a single evaluation at
  n would order a pair differently.

Everything here is arithmetic on feature arrays; the statistic is passed in (for FVD,
``robojudge.metrics.learned.distribution.frechet_feature_distance`` against reference features).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from robojudge.meta._bootstrap import summarize_replicates

#: A set statistic: ``(n, d)`` features of one set -> one value.
SetStatistic = Callable[[np.ndarray], float]


def ranking_flips(before: Mapping[str, float], after: Mapping[str, float]) -> tuple[int, int]:
    """``(flipped, pairs)`` over the generator pairs with a finite value in both rankings.

    A pair flips when the sign of its difference changes; a tie on one side and not on the other is
    a flip too (the order is no longer the same).

    >>> ranking_flips({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 2.5, "b": 2.0, "c": 3.0})
    (1, 3)
    """
    names = sorted(g for g in before if g in after and math.isfinite(before[g]) and math.isfinite(after[g]))
    flipped = 0
    pairs = 0
    for x, y in combinations(names, 2):
        pairs += 1
        flipped += int(np.sign(before[x] - before[y]) != np.sign(after[x] - after[y]))
    return flipped, pairs


def flip_share(before: Mapping[str, float], after: Mapping[str, float]) -> float:
    """Share of generator pairs ordered differently (NaN when fewer than two generators compare)."""
    flipped, pairs = ranking_flips(before, after)
    return flipped / pairs if pairs else math.nan


@dataclass(frozen=True)
class SizePoint:
    """One generator's set statistic over ``draws`` subsets of ``n`` windows.

    Attributes:
        n: Windows per subset.
        mean: Mean over the draws (NaN: n exceeds the windows and draws are without replacement).
        sd: Standard deviation over the draws.
        low, high: Percentile interval of the draws.
        values: The value of every draw, in draw order.
    """

    n: int
    mean: float
    sd: float
    low: float
    high: float
    values: tuple[float, ...]


@dataclass(frozen=True)
class SampleSizeResult:
    """The curves of every generator and the ranking flips per n.

    Attributes:
        ns: The grid of window counts.
        windows: Generator -> its number of windows.
        full: Generator -> the statistic on all its windows.
        curves: Generator -> one :class:`SizePoint` per n.
        flips: Per n, the share of pairs ordered differently by the mean at n than by ``full``.
        draw_flips: Per n, the mean over draws of the same share with single draws.
        higher_is_better: The statistic's direction (only for presentation: flips do not depend on it).
        pairs: Per n, the generator pairs the flip share is taken over: those of the generators with at
            least n windows (drawn without replacement, a generator with fewer has no value at n), so
            fewer at large n than at small.
    """

    ns: tuple[int, ...]
    windows: dict[str, int]
    full: dict[str, float]
    curves: dict[str, tuple[SizePoint, ...]]
    flips: tuple[float, ...]
    draw_flips: tuple[float, ...]
    higher_is_better: bool = False
    pairs: tuple[int, ...] = ()


def _draw_values(x: np.ndarray, statistic: SetStatistic, n: int, draws: int, rng: np.random.Generator,
                 replace: bool) -> np.ndarray:
    if not replace and n > len(x):
        return np.full(draws, np.nan)
    out = np.empty(draws)
    for k in range(draws):
        idx = rng.choice(len(x), size=n, replace=replace)
        out[k] = statistic(x[idx])
    return out


def sample_size_sensitivity(
    features: Mapping[str, np.ndarray],
    statistic: SetStatistic,
    ns: Sequence[int],
    *,
    draws: int = 100,
    seed: int = 0,
    replace: bool = False,
    level: float = 0.95,
    higher_is_better: bool = False,
) -> SampleSizeResult:
    """Curves of ``statistic`` against n for every generator, and the ranking flips.

    Args:
        features: Generator -> ``(windows, d)`` features of its windows.
        statistic: Set statistic of a ``(n, d)`` subset (e.g. its Frechet distance to fixed reference
            features).
        ns: Window counts, each at least 2.
        draws: Subsets per (generator, n).
        seed: Seed of the subset draws (one generator after another, in sorted name order).
        replace: Draw with replacement (a bootstrap of size n) instead of subsampling.
        level: Coverage of the percentile interval of the draws.
        higher_is_better: The statistic's direction (kept for presentation).

    Raises:
        ValueError: Fewer than two generators, an n below 2, ``draws`` below 1, or a feature array
            that is not 2-D with at least 2 rows (naming the generator).
    """
    if len(features) < 2:
        raise ValueError(f"need at least two generators to rank, got {len(features)}")
    grid = tuple(sorted({int(n) for n in ns}))
    if not grid or grid[0] < 2:
        raise ValueError(f"window counts must be at least 2, got {list(ns)}")
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    arrays = {}
    for g in sorted(features):
        x = np.asarray(features[g], dtype=np.float64)
        if x.ndim != 2 or x.shape[0] < 2:
            raise ValueError(f"generator {g!r}: need (windows >= 2, d) features, got shape {x.shape}")
        arrays[g] = x
    rng = np.random.default_rng(seed)
    full = {g: float(statistic(x)) for g, x in arrays.items()}
    values = {g: [_draw_values(x, statistic, n, draws, rng, replace) for n in grid]
              for g, x in arrays.items()}
    curves = {}
    for g, per_n in values.items():
        pts = []
        for n, v in zip(grid, per_n, strict=True):
            ok = v[~np.isnan(v)]
            lo, hi, _ = summarize_replicates(v[None, :], level)
            pts.append(SizePoint(n, float(ok.mean()) if ok.size else math.nan,
                                 float(ok.std(ddof=1)) if ok.size > 1 else math.nan,
                                 float(lo[0]), float(hi[0]), tuple(float(a) for a in v)))
        curves[g] = tuple(pts)
    flips, draw_flips, pairs = [], [], []
    for i in range(len(grid)):
        flips.append(flip_share(full, {g: curves[g][i].mean for g in curves}))
        pairs.append(ranking_flips(full, {g: curves[g][i].mean for g in curves})[1])
        per_draw = [flip_share(full, {g: values[g][i][k] for g in values}) for k in range(draws)]
        defined = [f for f in per_draw if not math.isnan(f)]
        draw_flips.append(float(np.mean(defined)) if defined else math.nan)
    return SampleSizeResult(grid, {g: len(x) for g, x in arrays.items()}, full, curves, tuple(flips),
                            tuple(draw_flips), higher_is_better, tuple(pairs))
