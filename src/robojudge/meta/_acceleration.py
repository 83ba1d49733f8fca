"""The acceleration audit's statistics: speedup, per-metric retention, aggregate retention Q, frontier.

RoboWorM (Fig. 5, Figs. C2-C3) audits acceleration methods (caching, sparse attention, token
pruning...) against the dense rollouts of the same world model: each method is a point on a
speed-quality plane, speedup over the dense run on one axis and an aggregate retention ``Q`` (``Q = 1``
for dense, above 1 when the accelerated variant scores better) on the other. The paper reports ``Q``
without a formula; robojudge's definition, stated in docs/audit.md:

* **retention of one metric** on the clips both generators rendered: the ratio of the mean scores,
  oriented so that above 1 means better than dense: ``mean(accelerated) / mean(dense)`` for a metric
  where higher is better, ``mean(dense) / mean(accelerated)`` where lower is better. A ratio of means
  is a retention only for non-negative scores with a non-zero denominator; otherwise it is NaN with
  the reason;
* **Q**: the arithmetic mean of the per-metric retentions that are defined. For the dense generator
  against itself every ratio is ``m / m = 1`` exactly, so ``Q = 1``.

Intervals come from the paired cluster bootstrap of :mod:`robojudge.meta._bootstrap`: one draw of
clips serves every metric of a method (and ``Q``), and a drawn clip brings both its dense and its
accelerated score, so the interval is that of a paired comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from robojudge.meta._agreement import FloatArray
from robojudge.meta._bootstrap import (
    ClusterBootstrap,
    constant_replicates,
    interval_gate,
    summarize_replicates,
)
from robojudge.meta._report import Estimate

#: Metric -> clip -> value, the scores of one generator on the clips it rendered.
Scores = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class GenerationCost:
    """What one rollout of a generator costs (means over the rollouts that were timed).

    Attributes:
        seconds: Wall-clock generation time per rollout (None: not known).
        steps: Denoising steps (or network evaluations) per rollout (None: not known).
        source: Where the numbers come from (a timing file, the manifest...), shown in tables.
    """

    seconds: float | None = None
    steps: float | None = None
    source: str = ""


def speedup(dense: GenerationCost, accelerated: GenerationCost) -> tuple[float, str]:
    """Speedup of ``accelerated`` over ``dense`` and what it rests on.

    Wall time when both have it (``dense.seconds / accelerated.seconds``), else denoising steps (a
    proxy: it ignores any per-step cost change); ``(nan, "unknown")`` when neither pair is known or a
    denominator is not positive.

    >>> speedup(GenerationCost(seconds=12.0), GenerationCost(seconds=4.0))
    (3.0, 'seconds')
    >>> speedup(GenerationCost(steps=50), GenerationCost(seconds=1.0, steps=25))
    (2.0, 'steps')
    """
    for basis in ("seconds", "steps"):
        d, a = getattr(dense, basis), getattr(accelerated, basis)
        if d is not None and a is not None:
            ok = math.isfinite(d) and math.isfinite(a) and d > 0 and a > 0
            return (d / a if ok else math.nan), basis
    return math.nan, "unknown"


def retention_ratio(dense: Sequence[float], accelerated: Sequence[float], higher_is_better: bool
                    ) -> tuple[float, str | None]:
    """Oriented ratio of means of paired scores, and why it is undefined (None when it is defined).

    >>> retention_ratio([2.0, 4.0], [1.0, 2.0], higher_is_better=True)
    (0.5, None)
    >>> retention_ratio([2.0, 4.0], [1.0, 2.0], higher_is_better=False)
    (2.0, None)
    """
    d, a = np.asarray(dense, np.float64), np.asarray(accelerated, np.float64)
    if d.shape != a.shape or d.ndim != 1:
        raise ValueError(f"paired scores must be two 1-D arrays of one length, got {d.shape} and {a.shape}")
    reason = _undefined(d, a)
    if reason:
        return math.nan, reason
    num, den = (a.mean(), d.mean()) if higher_is_better else (d.mean(), a.mean())
    if den == 0:
        return math.nan, "the mean in the denominator is 0"
    return float(num / den), None


def _undefined(d: FloatArray, a: FloatArray) -> str | None:
    if d.size == 0:
        return "no clip scored by both generators"
    if not (np.isfinite(d).all() and np.isfinite(a).all()):
        return "non-finite scores"
    if (d < 0).any() or (a < 0).any():
        return "negative scores: a ratio of means is not a retention"
    return None


@dataclass(frozen=True)
class Retention:
    """One metric's retention for one method.

    Attributes:
        metric: The metric (its stored label).
        higher_is_better: Its direction.
        n: Clips scored by both the dense and the accelerated generator.
        dense_mean: Mean dense score over those clips.
        accelerated_mean: Mean accelerated score over them.
        retention: Oriented ratio with its paired-bootstrap interval (NaN when undefined).
        reason: Why the retention is undefined (None when defined).
    """

    metric: str
    higher_is_better: bool
    n: int
    dense_mean: float
    accelerated_mean: float
    retention: Estimate
    reason: str | None = None


@dataclass(frozen=True)
class MethodAudit:
    """One accelerated generator (or the dense one, against itself).

    Attributes:
        name: Generator name.
        speedup: Dense time over this generator's time (1 for dense).
        basis: What the speedup rests on (``seconds``, ``steps``, ``unknown``).
        clips: Clips matched with the dense generator (any metric).
        retentions: Per metric, in the order the metrics were given.
        q: Aggregate retention with its interval (NaN when no retention is defined).
        cost: This generator's cost.
    """

    name: str
    speedup: float
    basis: str
    clips: int
    retentions: tuple[Retention, ...]
    q: Estimate
    cost: GenerationCost = field(default_factory=GenerationCost)


def method_audit(
    name: str,
    dense: Scores,
    accelerated: Scores,
    higher_is_better: Mapping[str, bool],
    *,
    costs: tuple[GenerationCost, GenerationCost] = (GenerationCost(), GenerationCost()),
    strata: Mapping[str, str] | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> MethodAudit:
    """Retention of every metric of ``higher_is_better`` and Q for one method, paired over clips.

    Args:
        name: The method's (accelerated generator's) name.
        dense: Metric -> clip -> dense score.
        accelerated: Metric -> clip -> accelerated score (the same clip ids: the matching key).
        higher_is_better: The metrics to audit, with their directions (order kept).
        costs: (dense, accelerated) cost, for the speedup.
        strata: Clip -> stratum for the bootstrap (clips resampled within strata); None: one.
        bootstrap: Replicates (0: no intervals).
        seed: Seed of the clip draw.
        level: Interval coverage.
    """
    metrics = list(higher_is_better)
    clips = sorted({c for m in metrics for c in dense.get(m, {}) if c in accelerated.get(m, {})})
    n = len(clips)
    d = np.full((n, len(metrics)), np.nan)
    a = np.full((n, len(metrics)), np.nan)
    for j, m in enumerate(metrics):
        dm, am = dense.get(m, {}), accelerated.get(m, {})
        for i, c in enumerate(clips):
            if c in dm and c in am and math.isfinite(dm[c]) and math.isfinite(am[c]):
                d[i, j], a[i, j] = dm[c], am[c]
    mask = ~np.isnan(d)
    points, reasons = [], []
    for j, m in enumerate(metrics):
        ratio, reason = retention_ratio(d[mask[:, j], j], a[mask[:, j], j], higher_is_better[m])
        points.append(ratio)
        reasons.append(reason)
    defined = [j for j, p in enumerate(points) if not math.isnan(p)]
    q_point = float(np.mean([points[j] for j in defined])) if defined else math.nan
    lows = highs = ses = np.full(len(metrics) + 1, np.nan)
    keep = np.zeros(len(metrics) + 1, dtype=bool)
    why = np.full(len(metrics) + 1, None, dtype=object)
    if bootstrap and n:
        reps = _replicates(d, a, mask, [higher_is_better[m] for m in metrics], defined, clips,
                           strata, bootstrap, seed)
        lows, highs, ses = summarize_replicates(reps, level)
        # The rule of every interval here (interval_gate): at least MIN_CLUSTERS clips (each clip is its
        # own cluster; one or two can only be recombined) and a value in at least half the replicates.
        in_q = mask[:, defined].any(axis=1) if defined else np.zeros(n, dtype=bool)
        n_clips = np.array([*mask.sum(axis=0), in_q.sum()])
        one_per_stratum = strata is not None and len({strata.get(c, "") for c in clips}) == len(clips)
        keep, why, _ = interval_gate(np.isfinite(reps).sum(axis=1), n_clips, bootstrap,
                                     constant=constant_replicates(reps), one_per_stratum=one_per_stratum)

    def estimate(j: int, point: float) -> Estimate:
        if keep[j]:
            return Estimate(point, float(lows[j]), float(highs[j]), float(ses[j]))
        return Estimate(point, why=why[j])

    retentions = []
    for j, m in enumerate(metrics):
        k = int(mask[:, j].sum())
        d_mean = float(d[mask[:, j], j].mean()) if k else math.nan
        a_mean = float(a[mask[:, j], j].mean()) if k else math.nan
        est = estimate(j, points[j]) if j in defined else Estimate(math.nan)
        retentions.append(Retention(m, higher_is_better[m], k, d_mean, a_mean, est, reasons[j]))
    q = estimate(len(metrics), q_point) if defined else Estimate(math.nan)
    ratio, basis = speedup(*costs)
    return MethodAudit(name, ratio, basis, n, tuple(retentions), q, costs[1])


def _replicates(d: FloatArray, a: FloatArray, mask: np.ndarray, higher: list[bool], defined: list[int],
                clips: list[str], strata: Mapping[str, str] | None, bootstrap: int, seed: int) -> FloatArray:
    """``(metrics + 1, B)`` replicate retentions, the last row Q (NaN where a defined one is not)."""
    boot = ClusterBootstrap(clips, None if strata is None else [strata.get(c, "") for c in clips],
                            n_replicates=bootstrap, seed=seed)
    w = boot.item_weights(boot.counts)  # (B, clips): each clip is its own cluster
    sd = w @ np.where(mask, d, 0.0)
    sa = w @ np.where(mask, a, 0.0)
    num = np.where(higher, sa, sd)
    den = np.where(higher, sd, sa)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den > 0, num / den, np.nan)  # a draw without the metric's clips: undefined
    q = ratio[:, defined].mean(axis=1) if defined else np.full(bootstrap, np.nan)
    return np.concatenate([ratio, q[:, None]], axis=1).T


def pareto_frontier(points: Mapping[str, tuple[float, float]]) -> list[str]:
    """Names of the points no other point dominates (at least as fast and as good, better in one),
    by increasing speedup. Points with a NaN coordinate are left out.

    >>> pareto_frontier({"dense": (1.0, 1.0), "a": (2.0, 0.9), "b": (1.5, 0.8), "c": (3.0, 0.5)})
    ['dense', 'a', 'c']
    """
    ok = {k: p for k, p in points.items() if not (math.isnan(p[0]) or math.isnan(p[1]))}
    front = [k for k, (s, q) in ok.items()
             if not any(s2 >= s and q2 >= q and (s2 > s or q2 > q) for k2, (s2, q2) in ok.items() if k2 != k)]
    return sorted(front, key=lambda k: (ok[k][0], -ok[k][1], k))


def best_speedup(points: Mapping[str, tuple[float, float]], level: float) -> str | None:
    """The name with the largest speedup among those with ``Q >= level`` (ties: the higher Q, then the
    name); None when none qualifies.

    >>> best_speedup({"dense": (1.0, 1.0), "a": (2.0, 0.97), "b": (3.0, 0.9)}, 0.95)
    'a'
    """
    ok = [(s, q, k) for k, (s, q) in points.items() if not math.isnan(s) and not math.isnan(q) and q >= level]
    if not ok:
        return None
    return min(ok, key=lambda t: (-t[0], -t[1], t[2]))[2]


@dataclass(frozen=True)
class AccelerationAudit:
    """Every method of one world model against its dense generator.

    Attributes:
        dense: The dense generator's name.
        methods: The dense generator first (speedup 1, Q 1), then each accelerated one as given.
        level: The Q level asked for.
        best: The method with the largest speedup whose Q reaches ``level`` (None: none).
        frontier: Methods on the speed-quality Pareto frontier, fastest last.
        ci: The coverage of the intervals (of Q and of each retention).
        bootstrap: The paired clip-bootstrap replicates the intervals come from (0: none).
        seed: The bootstrap's seed.
    """

    dense: str
    methods: tuple[MethodAudit, ...]
    level: float
    best: str | None
    frontier: tuple[str, ...]
    ci: float = 0.95
    bootstrap: int = 0
    seed: int = 0

    @property
    def metrics(self) -> list[str]:
        return [r.metric for r in self.methods[0].retentions] if self.methods else []


def acceleration_audit(
    dense: str,
    scores: Mapping[str, Scores],
    higher_is_better: Mapping[str, bool],
    costs: Mapping[str, GenerationCost],
    accelerated: Sequence[str],
    *,
    level: float = 0.95,
    strata: Mapping[str, str] | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> AccelerationAudit:
    """The audit of ``accelerated`` generators against ``dense``.

    Args:
        dense: The dense generator.
        scores: Generator -> metric -> clip -> score, for the dense one and every accelerated one.
        higher_is_better: The audited metrics and their directions.
        costs: Generator -> cost (missing: unknown, so the speedup is NaN).
        accelerated: The accelerated generators, in table order.
        level: The Q a method must reach to count for :attr:`AccelerationAudit.best`.
        strata, bootstrap, seed: As in :func:`method_audit`; every method uses the same seed.
        ci: Interval coverage.

    Raises:
        ValueError: No metric, ``dense`` among ``accelerated``, or a generator without scores.
    """
    if not higher_is_better:
        raise ValueError("no metric to audit")
    if dense in accelerated:
        raise ValueError(f"the dense generator {dense!r} is also listed as accelerated")
    missing = [g for g in (dense, *accelerated) if g not in scores]
    if missing:
        raise ValueError(f"no scores for generator(s) {', '.join(missing)}")
    dense_cost = costs.get(dense, GenerationCost())
    out = []
    for name in (dense, *accelerated):
        m = method_audit(name, scores[dense], scores[name], higher_is_better,
                         costs=(dense_cost, costs.get(name, GenerationCost())), strata=strata,
                         bootstrap=bootstrap, seed=seed, level=ci)
        # Dense against itself is the unit of both axes, whether or not its time is known.
        out.append(replace(m, speedup=1.0, basis="dense") if name == dense else m)
    points = {m.name: (m.speedup, m.q.value) for m in out}
    return AccelerationAudit(dense, tuple(out), level, best_speedup(points, level),
                             tuple(pareto_frontier(points)), ci=ci, bootstrap=bootstrap, seed=seed)
