"""Best-of-N: pick one rollout per group by a score, and what that pick is worth against the labels.

Pure functions over arrays; reading scores from a store is :mod:`robojudge.select._sources`.

Rules (docs/selection.md says the same):

* **Pick.** The candidate with the highest score; items without a score (NaN: unscored, failed,
  never run) are never picked. Ties go to the smallest item id (string order), so a rerun picks
  the same rollout. A source whose scores carry noise of their own (the metric-calibrated judge's)
  gives a tolerance: candidates within it of the top score tie.
* **Evaluated groups.** A group enters the comparison when it has at least two candidates, a pick,
  and a label on every candidate (the random pick and the oracle range over all of them, so an
  unlabelled candidate would make both unknown). The others are counted, by reason.
* **Random pick.** A uniform draw among the group's candidates, taken in expectation, exactly: its
  label is the group's mean label and its top-1 rate the share of candidates at the best label.
* **Oracle.** The best label in the group. **Regret** is oracle minus the pick's label (0 at best);
  **top-1** is 1 when the pick's label equals the oracle's (any of several tied best counts).
* **Intervals.** Percentile intervals of a bootstrap over the clips of the evaluated groups
  (:class:`robojudge.meta.ClusterBootstrap`): groups inside one clip (``--group clip_id,prompt``) share
  the clip's quality, so a resample draws a clip with all of its groups; a group whose candidates lie in
  several clips (or have no clip) is a cluster of its own. Differences (pick minus random) are paired.
  Fewer than :data:`robojudge.meta.MIN_CLUSTERS` clusters get no interval
  (:func:`robojudge.meta.interval_gate`): a resample of one or two can only recombine them, and its
  interval is (nearly) a point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED
from robojudge.meta import (
    ClusterBootstrap,
    Estimate,
    constant_replicates,
    interval_gate,
    summarize_replicates,
)

FloatArray = npt.NDArray[np.float64]

#: Reasons a group is left out of the comparison, in the order they are checked.
SKIP_REASONS = ("one candidate", "no candidate scored", "unlabelled candidate")


def _top(s: FloatArray, tolerance: float) -> npt.NDArray[np.intp]:
    """Positions of the finite scores within ``tolerance`` of the highest (those equal to it for 0)."""
    ok = np.flatnonzero(np.isfinite(s))
    if ok.size == 0:
        return ok
    out: npt.NDArray[np.intp] = ok[s[ok] >= s[ok].max() - tolerance]
    return out


def pick_index(item_ids: Sequence[str], scores: npt.ArrayLike, tolerance: float = 0.0) -> int | None:
    """The position of the best-scored candidate (ties, within ``tolerance`` of the best score: smallest
    item id), or None when none has a score."""
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (len(item_ids),):
        raise ValueError(f"scores must have one entry per candidate ({len(item_ids)}), got shape {s.shape}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    tied = _top(s, tolerance)
    return None if tied.size == 0 else min((int(i) for i in tied), key=lambda i: item_ids[i])


@dataclass(frozen=True)
class GroupPick:
    """The pick in one group and, when the group is evaluated, how it compares.

    Attributes:
        group: The group's key values, in the order of the grouping fields.
        n: Candidates in the group.
        n_scored: Candidates with a score.
        item_id: The picked rollout (None when no candidate has a score).
        score: Its score, oriented so that higher is better (see :attr:`BestOfN.sign`).
        tied: Candidates sharing the top score, within the source's tolerance (1: no tie).
        label: The pick's label (NaN when unlabelled).
        random_label: Expected label of a uniform random pick (NaN unless evaluated).
        oracle_label: Best label of the group (NaN unless evaluated).
        regret: ``oracle_label - label``.
        top1: 1.0 when the pick is at the best label, else 0.0.
        random_top1: Share of candidates at the best label (a random pick's top-1 rate).
        skipped: Why the group is not evaluated ("" when it is).
    """

    group: tuple[str, ...]
    n: int
    n_scored: int
    item_id: str | None
    score: float
    tied: int
    label: float
    random_label: float
    oracle_label: float
    regret: float
    top1: float
    random_top1: float
    skipped: str = ""

    @property
    def evaluated(self) -> bool:
        return not self.skipped


def pick_group(group: tuple[str, ...], item_ids: Sequence[str], scores: npt.ArrayLike,
               labels: npt.ArrayLike | None = None, tolerance: float = 0.0) -> GroupPick:
    """Pick the best candidate of one group and compare it with a random pick and the oracle.

    Args:
        group: The group's key.
        item_ids: Its candidates.
        scores: Their scores, higher is better (NaN: no score).
        labels: Their labels (NaN: unlabelled); None when there are none.
        tolerance: Scores within this of the best tie (see :func:`pick_index`).
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.full(len(item_ids), math.nan) if labels is None else np.asarray(labels, dtype=np.float64)
    if y.shape != (len(item_ids),):
        raise ValueError(f"labels must have one entry per candidate ({len(item_ids)}), got shape {y.shape}")
    i = pick_index(item_ids, s, tolerance)
    n_scored = int(np.isfinite(s).sum())
    nan = math.nan
    if i is None:
        return GroupPick(group, len(item_ids), 0, None, nan, 0, nan, nan, nan, nan, nan, nan,
                         "one candidate" if len(item_ids) < 2 else "no candidate scored")
    tied = int(_top(s, tolerance).size)
    label = float(y[i])
    if len(item_ids) < 2:
        skipped = "one candidate"
    elif not np.isfinite(y).all():
        skipped = "unlabelled candidate"
    else:
        best = float(y.max())
        return GroupPick(group, len(item_ids), n_scored, item_ids[i], float(s[i]), tied, label,
                         float(y.mean()), best, best - label, float(label == best),
                         float((y == best).mean()))
    return GroupPick(group, len(item_ids), n_scored, item_ids[i], float(s[i]), tied, label,
                     nan, nan, nan, nan, nan, skipped)


#: The summary's statistics: name, and how a group's value is read from its pick.
STATISTICS: tuple[tuple[str, str], ...] = (
    ("selected", "mean label of the picked rollouts"),
    ("random", "mean label of a uniform random pick (expected value)"),
    ("oracle", "mean of each group's best label"),
    ("gain", "selected minus random"),
    ("regret", "oracle minus selected"),
    ("random_regret", "oracle minus random"),
    ("top1", "share of groups where the pick is at the best label"),
    ("random_top1", "the same for a random pick (expected value)"),
)


def _per_group(p: GroupPick) -> list[float]:
    return [p.label, p.random_label, p.oracle_label, p.label - p.random_label, p.regret,
            p.oracle_label - p.random_label, p.top1, p.random_top1]


@dataclass(frozen=True)
class BestOfNSummary:
    """The comparison over evaluated groups.

    Attributes:
        groups: Groups in all.
        evaluated: Groups compared.
        skipped: Groups left out, by reason (:data:`SKIP_REASONS`).
        mean_n: Mean candidates per evaluated group.
        ties: Evaluated groups whose pick was decided by the tie rule.
        stats: Each of :data:`STATISTICS` with its interval (NaN when nothing was evaluated).
        level: Interval coverage.
        n_replicates: Bootstrap replicates (0: no intervals).
        resampled: What a bootstrap replicate draws (:data:`RESAMPLED`): ``clips`` where every evaluated
            group lies in one clip, ``groups`` where none does (each group a cluster of its own), ``clips
            and groups`` for a mix ("" where nothing was evaluated).
        n_clusters: Clusters the evaluated groups lie in (clips, plus groups that are clusters of their
            own); the interval gate counts these, not the groups.
    """

    groups: int
    evaluated: int
    skipped: dict[str, int]
    mean_n: float
    ties: int
    stats: dict[str, Estimate]
    level: float
    n_replicates: int
    resampled: str = ""
    n_clusters: int = 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["stats"] = {k: _finite(asdict(v)) for k, v in self.stats.items()}
        return _finite(out)


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    """NaN as None (JSON has no NaN)."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in d.items()}


#: What a best-of-N bootstrap replicate draws (:attr:`BestOfNSummary.resampled`).
RESAMPLED = ("clips", "groups", "clips and groups")


def group_clusters(clips: Sequence[str | None]) -> tuple[npt.NDArray[np.intp], str]:
    """The bootstrap cluster of each group, and what that resamples (:data:`RESAMPLED`).

    ``clips`` holds, per group, the clip all of its candidates lie in, or None where they lie in several
    clips or have none. Groups of one clip share its cluster; a None is a cluster of its own. Clusters
    are numbered in the order they first appear, so where every group is its own cluster the numbers
    are ``0, 1, ...`` and the draws those of a bootstrap over groups."""
    codes: dict[str, int] = {}
    out = np.empty(len(clips), dtype=np.intp)
    alone = 0
    for i, clip in enumerate(clips):
        if clip is None:
            out[i] = len(codes) + alone
            alone += 1
        else:
            out[i] = codes.setdefault(clip, len(codes) + alone)
    kind = "groups" if not codes else "clips" if not alone else "clips and groups"
    return out, kind


def summarize(picks: Sequence[GroupPick], *, clips: Sequence[str | None] | None = None,
              bootstrap: int = 2000, seed: int = DEFAULT_SEED, level: float = 0.95) -> BestOfNSummary:
    """Means of :data:`STATISTICS` over the evaluated groups, with bootstrap percentile intervals where
    :func:`robojudge.meta.interval_gate` allows them (``Estimate.why`` says why not).

    Args:
        picks: One per group.
        clips: Per pick, the clip all of the group's candidates lie in, or None (several clips, or none
            known). A replicate draws clips, each with all of its groups (:func:`group_clusters`);
            without ``clips`` every group is a cluster of its own.
        bootstrap: Replicates (0: no intervals).
        seed: Seed of the draws.
        level: Interval coverage.
    """
    if clips is not None and len(clips) != len(picks):
        raise ValueError(f"clips must have one entry per pick ({len(picks)}), got {len(clips)}")
    done = [k for k, p in enumerate(picks) if p.evaluated]
    skipped = {r: sum(p.skipped == r for p in picks) for r in SKIP_REASONS}
    if not done:
        stats = {name: Estimate(math.nan) for name, _ in STATISTICS}
        return BestOfNSummary(len(picks), 0, skipped, math.nan, 0, stats, level, 0)
    cluster, resampled = group_clusters([None if clips is None else clips[k] for k in done])
    n_clusters = int(cluster.max()) + 1
    values = np.array([_per_group(picks[k]) for k in done], dtype=np.float64)  # (groups, statistics)
    means = values.mean(axis=0)
    lows = highs = ses = np.full(len(STATISTICS), math.nan)
    why: list[str | None] = [None] * len(STATISTICS)
    if bootstrap > 0:
        boot = ClusterBootstrap(cluster, n_replicates=bootstrap, seed=seed)
        weights = boot.item_weights(boot.counts)  # (B, groups): each group drawn as often as its cluster
        reps = weights @ values / weights.sum(axis=1, keepdims=True)  # (B, statistics)
        lows, highs, ses = summarize_replicates(reps.T, level)
        # One or two clusters: the replicates only recombine them, so no interval (robojudge.meta's rule).
        keep, reasons, _ = interval_gate(np.isfinite(reps).sum(axis=0), np.array(n_clusters), bootstrap,
                                         constant=constant_replicates(reps.T))
        lows, highs, ses = (np.where(keep, x, math.nan) for x in (lows, highs, ses))
        why = list(reasons)
    stats = {name: Estimate(float(means[k]), float(lows[k]), float(highs[k]), float(ses[k]), why[k])
             for k, (name, _) in enumerate(STATISTICS)}
    return BestOfNSummary(len(picks), len(done), skipped, float(np.mean([picks[k].n for k in done])),
                          sum(picks[k].tied > 1 for k in done), stats, level, bootstrap, resampled,
                          n_clusters)
