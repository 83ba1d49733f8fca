"""The paired difference between two generators on the clips both were scored on.

The leaderboard says how often one generator outranks another; this says by how much, and how sure.
On each axis, every clip both generators have gives a difference of their clip means (a clip's mean
over its scored rollouts, so a clip weighs alike however many it has); the estimate is the mean of
those differences, the same as the difference of the two means of :func:`generator_leaderboard` with
``matched=True`` when only these two are ranked. The Overall difference is the mean of the axis
differences, as the Overall is the mean of the axis means (RoboJudge Table 8).

The interval is a paired cluster bootstrap: the shared clips are redrawn within their source, each
drawn clip bringing both generators' rollouts, so what the clip itself adds (an easy task, a hard
one) cancels out of every replicate. P(a > b) is the share of replicates whose difference is above 0
(a tie, within ``tolerance``, counts one half).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED
from robojudge.meta._agreement import as_float_vector
from robojudge.meta._bootstrap import (
    CONSTANT_WHYS,
    ClusterBootstrap,
    constant_replicates,
    interval_gate,
    summarize_replicates,
)
from robojudge.meta._coverage import PairCoverage, clip_counts, pair_coverage
from robojudge.meta._leaderboard import share_above
from robojudge.meta._report import OVERALL, Estimate


@dataclass(frozen=True)
class PairedDifference:
    """Output of :func:`paired_difference`: generator ``a`` minus generator ``b``.

    Attributes:
        a: The first generator.
        b: The second.
        axes: The axes (the targets are these and ``"overall"``).
        difference: Per target, the mean over the shared clips of ``a``'s clip mean minus ``b``'s, with
            its paired cluster-bootstrap interval (none, with the reason, where the bootstrap cannot
            give one, and a NaN value where the two share no clip).
        prob: Per target, the share of replicates in which ``a`` scores better than ``b`` (above it; below
            it where ``higher_is_better`` is False), ties counting one half; NaN without an interval.
        n_clips: Per target, the shared clips the difference is over (Overall: the fewer of the axes').
        coverage: Per axis, the clips each was scored on (:class:`PairCoverage`).
        n_replicates: Bootstrap replicates (0: none).
        seed: Seed of the draws.
        level: Coverage of the intervals.
        higher_is_better: Whether a higher score is the better (the difference is in the scores' own
            units either way).
    """

    a: str
    b: str
    axes: tuple[str, ...]
    difference: dict[str, Estimate]
    prob: dict[str, float]
    n_clips: dict[str, int]
    coverage: tuple[PairCoverage, ...]
    n_replicates: int
    seed: int | None
    level: float
    higher_is_better: bool = True

    @property
    def targets(self) -> tuple[str, ...]:
        """The axes followed by ``"overall"``."""
        return (*self.axes, OVERALL)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (NaN becomes None)."""
        def num(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {"a": self.a, "b": self.b, "higher_is_better": self.higher_is_better,
                "bootstrap": {"replicates": self.n_replicates, "seed": self.seed, "level": self.level},
                "targets": {t: {"difference": num(d.value), "low": num(d.low), "high": num(d.high),
                                "se": num(d.se), "why": d.why, "prob": num(self.prob[t]),
                                "clips": self.n_clips[t]} for t, d in self.difference.items()},
                "coverage": [c.to_dict() for c in self.coverage]}


def paired_difference(scores: Mapping[str, npt.ArrayLike], generators: Sequence[str], a: str, b: str,
                      clusters: npt.ArrayLike | None = None, strata: npt.ArrayLike | None = None,
                      bootstrap: int = 2000, seed: int | None = DEFAULT_SEED, level: float = 0.95,
                      tolerance: float = 0.0, higher_is_better: bool = True) -> PairedDifference:
    """Generator ``a`` minus generator ``b`` on the clips both were scored on, per axis and Overall.

    Args:
        scores: ``scores[axis]`` is the score of each item on ``axis`` (NaN = not scored).
        generators: Generator name per item.
        a: The generator whose mean comes first.
        b: The one subtracted.
        clusters: Cluster per item (source clip); each item its own if None, and then the two share
            nothing to pair on.
        strata: Stratum per item (source); one stratum if None.
        bootstrap: Replicates; 0 gives the point differences only.
        seed: Seed of the clip draws.
        level: Coverage of the intervals.
        tolerance: Differences within this (absolute) count as ties in ``prob``.
        higher_is_better: False where a lower score is the better (``prob`` then counts ``a`` below
            ``b``); the difference stays ``a - b`` in the scores' units.

    Returns:
        A :class:`PairedDifference`.

    Raises:
        ValueError: ``a`` or ``b`` is no generator of the items, ``a`` is ``b``, or the inputs are not
            one entry per item.
    """
    axes = tuple(scores)
    if not axes:
        raise ValueError("need at least one axis")
    values = np.stack([as_float_vector(scores[x], f"scores[{x}]") for x in axes], axis=1)  # (n, A)
    sign = 1.0 if higher_is_better else -1.0  # worked out as higher-is-better, turned back at the end
    values = sign * values
    n = values.shape[0]
    gen = np.asarray([str(g) for g in generators], dtype=object)
    if gen.shape != (n,):
        raise ValueError(f"generators must have one entry per item ({n}), got shape {gen.shape}")
    known = sorted(set(gen.tolist()))
    for name in (a, b):
        if name not in known:
            raise ValueError(f"no generator {name!r} among the items; generators: {', '.join(known)}")
    if a == b:
        raise ValueError(f"a generator compared with itself ({a!r}): name two generators")
    cl = np.asarray(np.arange(n) if clusters is None else clusters)
    if cl.shape != (n,):
        raise ValueError(f"clusters must have one entry per item ({n}), got shape {cl.shape}")
    st = None if strata is None else np.asarray(strata, dtype=object)
    if st is not None and st.shape != (n,):
        raise ValueError(f"strata must have one entry per item ({n}), got shape {st.shape}")

    mine = (gen == a) | (gen == b)
    values, cl, code = values[mine], cl[mine], (gen[mine] == b).astype(np.intp)  # a: 0, b: 1
    st = None if st is None else st[mine]
    clip_names, inverse = np.unique(cl.astype(str), return_inverse=True)
    clip = inverse.reshape(-1).astype(np.intp)
    ok = np.isfinite(values)
    filled = np.where(ok, values, 0.0)
    a_count, c_count = len(axes), clip_names.size
    diffs = np.full((a_count, c_count), np.nan)  # a's clip mean minus b's, on the shared clips
    coverage = []
    for ai, x in enumerate(axes):
        counts = clip_counts(ok[:, ai], code, 2, clip, c_count)
        sums = np.zeros((2, c_count))
        np.add.at(sums, (code, clip), filled[:, ai])
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / counts
        both = (counts > 0).all(axis=0)
        diffs[ai, both] = means[0, both] - means[1, both]
        coverage.append(pair_coverage(x, a, b, counts[0], counts[1]))
    shared = np.isfinite(diffs)  # (A, C)
    n_clips = {x: int(shared[ai].sum()) for ai, x in enumerate(axes)}
    n_clips[OVERALL] = min(n_clips.values())
    point = np.array([diffs[ai, shared[ai]].mean() if shared[ai].any() else math.nan
                      for ai in range(a_count)])
    point = np.append(point, point.mean())  # the Overall: NaN if any axis has no shared clip
    targets = (*axes, OVERALL)
    low = np.full(len(targets), np.nan)
    high, se, prob = low.copy(), low.copy(), low.copy()
    why: list[str | None] = [None] * len(targets)
    used: list[int | None] = [None] * len(targets)
    paired = shared.any(axis=0)  # clips shared on some axis: the clips to redraw
    if bootstrap > 0 and paired.any():
        keep_clip = paired[clip]
        sub_strata = None if st is None else st[keep_clip]
        boot = ClusterBootstrap(clip[keep_clip], sub_strata, bootstrap, seed)
        # The bootstrap's clusters are the paired clips in sorted order, as np.unique numbered them.
        drawn = boot.counts.astype(np.float64)  # (B, paired clips)
        d = np.where(shared[:, paired], diffs[:, paired], 0.0)  # (A, P)
        w = shared[:, paired].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (drawn @ d.T) / (drawn @ w.T)  # (B, A); NaN where no shared clip was drawn
        reps = np.concatenate([reps, reps.mean(axis=1, keepdims=True)], axis=1).T  # (T, B)
        low, high, se = summarize_replicates(reps, level)
        valid = np.isfinite(reps)
        prob = share_above(reps, np.zeros_like(reps), tolerance)
        flat = constant_replicates(reps)
        clips_behind = np.array([n_clips[t] for t in targets])
        keep, whys, useds = interval_gate(valid.sum(axis=1), clips_behind, bootstrap, constant=flat,
                                          one_per_stratum=boot.one_per_stratum)
        keep &= np.isfinite(point)
        low, high, se = (np.where(keep, v, np.nan) for v in (low, high, se))
        # A difference the same in every replicate (two generators alike on every clip) has no interval,
        # but its P stands (a certain order, or a certain tie), as the leaderboard keeps a rank spread.
        prob = np.where(keep | (flat & np.isin(whys, CONSTANT_WHYS)), prob, np.nan)
        why = [None if not math.isfinite(point[i]) else whys[i] for i in range(len(targets))]
        used = list(useds)
    difference = {t: Estimate(float(point[i]), float(low[i]), float(high[i]), float(se[i]), why[i], used[i])
                  for i, t in enumerate(targets)}
    if sign < 0:
        difference = {t: replace(e, value=-e.value, low=-e.high, high=-e.low) for t, e in difference.items()}
    return PairedDifference(a, b, axes, difference, {t: float(prob[i]) for i, t in enumerate(targets)},
                            n_clips, tuple(coverage), bootstrap, seed, level, higher_is_better)
