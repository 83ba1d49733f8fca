"""Generator leaderboard: mean PA, IA and Overall per generator with cluster-bootstrap uncertainty.

Follows RoboJudge Sec. 5.6 / Table 8: a generator's score on an axis is the mean of its items' scores
on that axis, and its Overall is the plain average of its PA and IA means (``(PA + IA) / 2``), not a
pooled mean over items. The scores may be human labels, planted labels or a judge's predictions.

Uncertainty comes from the stratified cluster bootstrap of :class:`ClusterBootstrap`: clips are
redrawn within each source, and every generator's items of a drawn clip come along, so generators
that share clips are compared on the same draw. Each replicate yields a ranking, from which we
report how often each generator keeps its point-estimate rank and how often one generator
outranks another.

Generators scored on different clips, or with rollout counts per clip out of proportion, are ranked
on different items; :attr:`Leaderboard.coverage` says so per pair (:mod:`._coverage`), and
``matched=True`` ranks each generator by the mean of its clip means over the clips every ranked
generator has.

Only data ranks: a generator with no scored item on an axis (for example one without labels) has no
mean there, so it gets no rank, no rank probability and no place among the adjacent pairs on that
axis, nor on the Overall, which needs both axes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED
from robojudge.meta._agreement import FloatArray, as_float_vector
from robojudge.meta._bootstrap import (
    CONSTANT_WHYS,
    constant_replicates,
    group_bootstrap,
    independent_groups,
    interval_gate,
    summarize_replicates,
)
from robojudge.meta._coverage import PairCoverage, clip_counts, matched_weights, pair_coverage
from robojudge.meta._means import group_codes, group_sums, ratio
from robojudge.meta._report import OVERALL, Estimate

#: How a bootstrap cluster that is one item, not a clip, is named (an item without ``clip_id``):
#: ``item:<item_id>``.
ITEM_CLUSTER_PREFIX = "item:"


@dataclass(frozen=True)
class Standing:
    """One generator on one target (an axis or the Overall).

    Attributes:
        score: Mean score with its percentile interval and bootstrap standard error.
        rank: Competition rank of the point estimate (1 = best; tied means share a rank) among the
            generators with a score on this target; None for a generator without one.
        rank_prob: Share of replicates in which the generator has exactly this rank, among the
            replicates that give every generator ranked on this target a mean (NaN when not ranked,
            without bootstrap, or when fewer than half of the replicates do:
            :attr:`Leaderboard.rank_replicates`).
        rank_low: Lower end of the central ``level`` range of the replicate ranks, over the same
            replicates (0: none).
        rank_high: Upper end of that range (0: none).
    """

    score: Estimate
    rank: int | None
    rank_prob: float = math.nan
    rank_low: int = 0
    rank_high: int = 0


@dataclass(frozen=True)
class LeaderboardEntry:
    """A generator's row: scored items (and their distinct clusters) per axis, a :class:`Standing` per
    target."""

    generator: str
    n_items: dict[str, int]
    standings: dict[str, Standing]
    n_clusters: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AdjacentPair:
    """Two generators next to each other in the ranking on ``target``.

    ``prob`` is the share of replicates in which ``upper`` scores above ``lower``, counting a tie
    as one half (so two indistinguishable generators give 0.5).
    """

    target: str
    upper: str
    lower: str
    prob: float


@dataclass(frozen=True)
class Leaderboard:
    """Output of :func:`generator_leaderboard`.

    Attributes:
        entries: One entry per generator, ordered by rank on ``sort_by`` (ties by name), the
            generators not ranked on it last (by name).
        adjacent: Consecutive pairs in the ranking of each target (ranked generators only).
        outrank: ``outrank[target][i, j]``: share of replicates in which ``generators[i]`` scores
            above ``generators[j]`` (ties count one half), over the replicates where both have a
            mean; NaN when either is not ranked on ``target``. ``generators`` follows ``entries``.
        tolerance: Means closer than this tie (see :func:`generator_leaderboard`).
        n_lone_clusters: Clips alone in their stratum (source) while others share theirs
            (:attr:`~robojudge.meta.ClusterBootstrap.n_lone_clusters`): the intervals are narrower than
            they should be (:func:`~robojudge.meta.lone_clusters_note`).
        coverage: Per axis, every pair of generators with scores on it (in leaderboard order): the
            clips each was scored on and how many they share (:class:`PairCoverage`), of the data as
            given (before ``matched`` leaves clips out).
        matched: The means are means of clip means over the clips every ranked generator has
            (:func:`generator_leaderboard`'s ``matched``).
        matched_clips: With ``matched``, the shared clips per axis.
        higher_is_better: False for scores where lower is better (a metric such as an error): the best
            generator has the lowest mean, and ``outrank`` and the adjacent pairs' ``prob`` count the
            lower mean as the better one.
        rank_replicates: Per target, the replicates that draw every generator ranked on it: those behind
            every P(rank) and rank range there. Under half of :attr:`n_replicates`, P(rank) and the rank
            ranges on that target are withheld (:meth:`bootstrap_notes`), as an interval is.
        unpaired: No clip holds items of two generators, so each generator's clips were resampled
            among its own, within each source where every one of its sources holds two clips or more
            (:func:`~robojudge.meta.group_bootstrap`): the generators are independent samples.
            :attr:`n_strata` and :attr:`n_lone_clusters` still count the sources given.
    """

    axes: tuple[str, ...]
    sort_by: str
    entries: tuple[LeaderboardEntry, ...]
    adjacent: tuple[AdjacentPair, ...]
    n_replicates: int
    seed: int | None
    level: float
    n_clusters: int
    n_strata: int
    outrank: dict[str, FloatArray] = field(default_factory=dict, repr=False)
    tolerance: float = 0.0
    n_lone_clusters: int = 0
    coverage: tuple[PairCoverage, ...] = ()
    matched: bool = False
    matched_clips: dict[str, int] = field(default_factory=dict)
    higher_is_better: bool = True
    rank_replicates: dict[str, int] = field(default_factory=dict)
    unpaired: bool = False

    @property
    def targets(self) -> tuple[str, ...]:
        """The axes followed by ``"overall"``."""
        return (*self.axes, OVERALL)

    @property
    def generators(self) -> tuple[str, ...]:
        """Generator names in leaderboard order."""
        return tuple(e.generator for e in self.entries)

    def pairs(self) -> list[tuple[str, str, str, float]]:
        """Every pair of generators ranked on a target, in leaderboard order: ``(target, a, b, P(a > b))``
        from :attr:`outrank` (NaN where either has no interval)."""
        out = []
        for t in self.targets:
            ranked = [i for i, e in enumerate(self.entries) if e.standings[t].rank is not None]
            for k, i in enumerate(ranked):
                for j in ranked[k + 1:]:
                    m = self.outrank.get(t)
                    p = math.nan if m is None else float(m[i, j])
                    out.append((t, self.entries[i].generator, self.entries[j].generator, p))
        return out

    def unmatched(self) -> list[PairCoverage]:
        """The pairs of :attr:`coverage` not scored on the same clips with rollouts in proportion."""
        return [c for c in self.coverage if not c.matched]

    def unmatched_notes(self) -> list[tuple[str, bool]]:
        """:func:`coverage_notes` of a board that is not :attr:`matched`, each with whether it is a
        warning: the pair shares no clip, or matching would move more than
        :data:`~robojudge.meta._coverage.MATCHING_NOTE_SHARE` of a mean on some axis
        (:attr:`PairCoverage.serious`); else a note."""
        return [] if self.matched else _pair_notes(self)

    def bootstrap_notes(self) -> list[str]:
        """Sentences on what the bootstrap columns rest on: that the generators were resampled apart
        (:attr:`unpaired`); per target, the replicates behind P(rank) and the rank ranges where fewer than
        all (withheld under half); and every ranked generator whose rank lies outside its own rank range.
        Empty without bootstrap or when none applies."""
        if not self.n_replicates:
            return []
        out = []
        if self.unpaired:
            out.append("No clip holds items of two generators, so the generators are independent samples: "
                       "each one's clips (or items, without clip_id) were resampled among its own, within "
                       "their source where each of its sources holds two or more")
        for t in self.targets:
            n = self.rank_replicates.get(t, self.n_replicates)
            if n >= self.n_replicates or not any(e.standings[t].rank is not None for e in self.entries):
                continue
            title = t.upper() if t != OVERALL else "Overall"
            if n * 2 < self.n_replicates:
                out.append(f"No P(rank) or rank range on {title}: only {n} of {self.n_replicates} replicates "
                           "draw every ranked generator (a replicate that misses one ranks nobody, since "
                           "every generator below it would move up), and they need half")
            else:
                out.append(f"P(rank) and rank ranges on {title} rest on the {n} of {self.n_replicates} "
                           "replicates that draw every ranked generator")
        outside = []
        for e in self.entries:
            for t in self.targets:
                s = e.standings[t]
                if s.rank is not None and s.rank_low and not s.rank_low <= s.rank <= s.rank_high:
                    title = t.upper() if t != OVERALL else "Overall"
                    outside.append(f"{e.generator} {title} rank {s.rank} (range {s.rank_low}-{s.rank_high})")
        if outside:
            more = f" and {len(outside) - 6} more" if len(outside) > 6 else ""
            out.append(f"Rank outside its own rank range: {', '.join(outside[:6])}{more}; the point-estimate "
                       "rank is rare among the replicates, whose means move past close neighbours")
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary; NaN becomes None, and so does a rank range of 0 (none), as the CSV
        leaves it empty."""
        def num(v: float) -> float | None:
            return None if math.isnan(v) else v

        return {
            "axes": list(self.axes), "sort_by": self.sort_by, "tolerance": self.tolerance,
            "higher_is_better": self.higher_is_better,
            "bootstrap": {"replicates": self.n_replicates, "seed": self.seed, "level": self.level,
                          "clusters": self.n_clusters, "strata": self.n_strata,
                          "lone_clusters": self.n_lone_clusters, "unpaired": self.unpaired,
                          "rank_replicates": self.rank_replicates if self.n_replicates else None},
            "entries": [{"generator": e.generator, "n_items": e.n_items, "n_clusters": e.n_clusters,
                         "targets": {t: {"score": num(s.score.value), "low": num(s.score.low),
                                         "high": num(s.score.high), "se": num(s.score.se),
                                         "rank": s.rank, "rank_prob": num(s.rank_prob),
                                         "rank_low": s.rank_low or None, "rank_high": s.rank_high or None}
                                     for t, s in e.standings.items()}} for e in self.entries],
            "adjacent": [{"target": p.target, "upper": p.upper, "lower": p.lower, "prob": num(p.prob)}
                         for p in self.adjacent],
            "pairs": [{"target": t, "a": a, "b": b, "prob": num(p)} for t, a, b, p in self.pairs()],
            "matched": self.matched, "matched_clips": self.matched_clips if self.matched else None,
            "coverage": [c.to_dict() for c in self.coverage],
            "coverage_notes": coverage_notes(self),
            "bootstrap_notes": self.bootstrap_notes(),
        }


def competition_ranks(values: FloatArray, tolerance: float = 0.0) -> npt.NDArray[np.int64]:
    """Ranks along the last axis, 1 for the highest; equal values share the best rank (1, 1, 3).

    NaN counts as below every number (all NaN entries share the last rank). Values within
    ``tolerance`` of each other (absolute) count as equal; float rounding always does.
    """
    v = np.where(np.isnan(values), -np.inf, values)
    # rank = 1 + number of strictly greater entries in the same row (beyond float rounding: two means
    # equal as fractions, such as (1 + 5/3) / 2 and (4/3 + 4/3) / 2, tie).
    greater = _above(v[..., None, :], v[..., :, None], tolerance).sum(axis=-1)
    out: npt.NDArray[np.int64] = (greater + 1).astype(np.int64)
    return out


def generator_leaderboard(scores: Mapping[str, npt.ArrayLike], generators: Sequence[str],
                          clusters: npt.ArrayLike | None = None, strata: npt.ArrayLike | None = None,
                          bootstrap: int = 2000, seed: int | None = DEFAULT_SEED, level: float = 0.95,
                          sort_by: str = OVERALL, tolerance: float = 0.0,
                          matched: bool = False, higher_is_better: bool = True) -> Leaderboard:
    """Rank generators by their mean score per axis and by the Overall, with bootstrap uncertainty.

    Args:
        scores: ``scores[axis]`` is the score of each item on ``axis`` (NaN = not scored).
        generators: Generator name per item.
        clusters: Cluster per item (source clip); each item is its own cluster if None.
        strata: Stratum per item (source corpus); one stratum if None.
        bootstrap: Replicates ``B``; 0 gives point estimates and ranks only.
        seed: Seed of the cluster draws (default :data:`robojudge.DEFAULT_SEED`: the same call gives
            the same intervals; None: fresh draws).
        level: Coverage of the score intervals and of the rank ranges.
        sort_by: Target that orders the entries: an axis name or ``"overall"``.
        tolerance: Means closer than this (absolute) tie, in the ranks, the rank spreads and the
            pairwise shares: for scores that carry noise of their own, such as the metric-calibrated
            judge's expected scores (a fit's last digits). 0: only float rounding ties.
        matched: Rank on the clips every generator with scores on the axis has: a generator's mean
            is then the mean of its clip means over those clips (each clip weighs alike, however many
            rollouts it has), and its other items are left out. False: the mean of all its scored items
            (Table 8), whatever clips they come from (:attr:`Leaderboard.coverage` says where those differ).
        higher_is_better: False: a lower mean ranks higher (scores such as a stored metric where lower
            is better); the means and intervals are as the scores are.

    Returns:
        A :class:`Leaderboard`. A generator with no scored item on an axis has a NaN mean there and
        a NaN Overall, and is not ranked on either; with ``matched``, neither is any generator on an
        axis where no clip is shared by all.
    """
    axes = tuple(scores)
    if not axes:
        raise ValueError("need at least one axis")
    if sort_by not in (*axes, OVERALL):
        raise ValueError(f"sort_by must be one of {(*axes, OVERALL)}, got {sort_by!r}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    values = np.stack([as_float_vector(scores[a], f"scores[{a}]") for a in axes], axis=1)  # (n, A)
    # Ranked as higher-is-better throughout; the means are turned back before they are reported.
    sign = 1.0 if higher_is_better else -1.0
    values = sign * values
    n = values.shape[0]
    gen_arr = np.asarray(generators, dtype=object)
    if gen_arr.shape != (n,):
        raise ValueError(f"generators must have one entry per item ({n}), got shape {gen_arr.shape}")
    names, code = group_codes([str(g) for g in gen_arr], n)
    g_count, a_count = len(names), len(axes)
    ok = np.isfinite(values)

    cl = np.asarray(np.arange(n) if clusters is None else clusters)
    if cl.shape != (n,):
        raise ValueError(f"clusters must have one entry per item ({n}), got shape {cl.shape}")
    # No clip holding items of two generators (items without clip_id are each a cluster of their own):
    # nothing is paired, and the generators are independent samples, each resampled among its own clips
    # (group_bootstrap, as the report's overview does), so each generator keeps its own number of clips in
    # every replicate; drawn from one pool, a generator's count would vary from replicate to replicate
    # (Binomial), widening its interval, and a replicate could miss a generator altogether.
    # (by name, as group_means passes them: the same names give the same draws)
    gen_names = [names[g] for g in code.tolist()]
    boot, unpaired = (group_bootstrap(cl, gen_names, strata, bootstrap, seed) if bootstrap > 0
                      else (None, independent_groups(cl, gen_names)))
    clip_names, clip_inv = np.unique(cl.astype(str), return_inverse=True)
    clip = clip_inv.reshape(-1).astype(np.intp)
    counts = [clip_counts(ok[:, ai], code, g_count, clip, clip_names.size) for ai in range(a_count)]
    weights = None
    matched_clips: dict[str, int] = {}
    if matched:
        weights = np.zeros_like(values)
        for ai, a in enumerate(axes):
            weights[:, ai], shared = matched_weights(counts[ai], code, clip, ok[:, ai])
            matched_clips[a] = int(shared.sum())
        ok = ok & (weights > 0)
    # (sum, count) per generator and axis, on the sample and on every replicate, one generator at a time.
    point_sums = np.zeros((g_count, a_count, 2))
    rep_sums = np.zeros((bootstrap, g_count, a_count, 2)) if boot is not None else None
    for g, sums in enumerate(group_sums(values, code, g_count, boot, weights)):
        point_sums[g] = sums.point
        if rep_sums is not None and sums.replicates is not None:
            rep_sums[:, g] = sums.replicates
    point = _means(point_sums)  # (G, T)
    # Scored items behind each mean (with ``matched``, those in the shared clips).
    n_items = np.stack([np.bincount(code[ok[:, ai]], minlength=g_count) for ai in range(a_count)], axis=1)
    t_count = a_count + 1
    low = np.full((g_count, t_count), np.nan)
    high, se, prob = low.copy(), low.copy(), low.copy()
    rank_low = np.zeros((g_count, t_count), dtype=np.int64)
    rank_high = rank_low.copy()
    outrank = np.full((t_count, g_count, g_count), np.nan)
    ranked = np.isfinite(point)  # (G, T): only a generator with a mean takes part in a ranking
    # NaN ranks below every number, so the ranks among the ranked generators do not depend on the rest.
    point_rank = np.where(ranked, competition_ranks(point.T, tolerance).T, 0)  # (G, T), 0 = not ranked
    # Clusters behind each mean: an axis's scored items, and for the Overall the thinnest axis.
    n_clusters = np.zeros((g_count, t_count), dtype=np.int64)
    for g in range(g_count):
        for ai in range(a_count):
            n_clusters[g, ai] = len(set(cl[(code == g) & ok[:, ai]].tolist()))
        n_clusters[g, a_count] = n_clusters[g, :a_count].min()
    why = np.full((g_count, t_count), None, dtype=object)
    used = why.copy()
    rank_n = np.zeros(t_count, dtype=np.int64)
    if rep_sums is not None:
        reps = _means(rep_sums)  # (B, G, T); NaN where none of the items was drawn
        low, high, se = summarize_replicates(np.moveaxis(reps, 0, -1), level)
        prob, rank_low, rank_high, rank_n = _rank_spread(reps, point_rank, ranked, level, tolerance)
        outrank = _outrank(reps, ranked, tolerance)
        # Too few clusters (or replicates) to resample: no interval and no rank spread, with the reason.
        # A mean the same in every replicate (every item at the top of the scale) has no interval either,
        # but its rank spread stands: the other generators' means still move around it.
        flat = constant_replicates(np.moveaxis(reps, 0, -1))
        keep, why, used = interval_gate(np.isfinite(reps).sum(axis=0), n_clusters, bootstrap, constant=flat,
                                        one_per_stratum=boot is not None and boot.one_per_stratum)
        keep &= np.isfinite(point)
        why[~np.isfinite(point)] = None  # no mean: nothing to say about its interval
        low, high, se = (np.where(keep, x, np.nan) for x in (low, high, se))
        keep |= flat & np.isin(why, CONSTANT_WHYS)
        # P(rank) and the rank range need half of the replicates to draw every ranked generator, as an
        # interval needs half to give a value (interval_gate): a few complete replicates give shares
        # such as 0.2 and ranges that miss the generator's own rank.
        spread = keep & (rank_n[None, :] * 2 >= bootstrap)
        prob = np.where(spread, prob, np.nan)
        rank_low, rank_high = (np.where(spread, r, 0) for r in (rank_low, rank_high))
        pair_kept = keep.T[:, :, None] & keep.T[:, None, :]  # (T, G, G): both sides resample
        outrank = np.where(pair_kept, outrank, np.nan)

    targets = (*axes, OVERALL)
    order = _order(point_rank[:, targets.index(sort_by)], names)
    entries = []
    for g in order:
        score = [_as_scored(Estimate(float(point[g, ti]), float(low[g, ti]), float(high[g, ti]),
                                     float(se[g, ti]), why[g, ti], used[g, ti]), sign)
                 for ti in range(t_count)]
        standings = {t: Standing(score[ti],
                                 int(point_rank[g, ti]) if ranked[g, ti] else None, float(prob[g, ti]),
                                 int(rank_low[g, ti]), int(rank_high[g, ti]))
                     for ti, t in enumerate(targets)}
        clusters_of = {a: int(n_clusters[g, ai]) for ai, a in enumerate(axes)}
        entries.append(LeaderboardEntry(names[g], {a: int(n_items[g, ai]) for ai, a in enumerate(axes)},
                                        standings, clusters_of))
    adjacent = []
    for ti, t in enumerate(targets):
        by_t = [g for g in _order(point_rank[:, ti], names) if ranked[g, ti]]
        for up, down in zip(by_t, by_t[1:], strict=False):
            adjacent.append(AdjacentPair(t, names[up], names[down], float(outrank[ti, up, down])))
    perm = np.array(order, dtype=np.intp)
    out = {t: outrank[ti][np.ix_(perm, perm)] for ti, t in enumerate(targets)}
    coverage = []
    # Clusters that are items (no clip_id: robojudge.report.clusters_of names them "item:<id>").
    lone = np.char.startswith(clip_names.astype(str), ITEM_CLUSTER_PREFIX)
    for ai, a in enumerate(axes):
        scored = [g for g in order if counts[ai][g].any()]
        for k, g in enumerate(scored):
            for h in scored[k + 1:]:
                either = (counts[ai][g] > 0) | (counts[ai][h] > 0)
                unit = "items" if bool(lone[either].all()) else "clips"
                coverage.append(pair_coverage(a, names[g], names[h], counts[ai][g], counts[ai][h], unit))
    return Leaderboard(axes, sort_by, tuple(entries), tuple(adjacent), bootstrap, seed, level,
                       boot.n_clusters if boot else 0, boot.n_strata if boot else 0, out, tolerance,
                       boot.n_lone_clusters if boot else 0, tuple(coverage), matched, matched_clips,
                       higher_is_better, {t: int(rank_n[ti]) for ti, t in enumerate(targets)} if boot else {},
                       unpaired)


def _as_scored(e: Estimate, sign: float) -> Estimate:
    """An estimate of means ranked as ``sign`` times the scores, turned back into the scores' own units."""
    if sign > 0:
        return e
    return replace(e, value=-e.value, low=-e.high, high=-e.low)


def coverage_notes(board: Leaderboard) -> list[str]:
    """Sentences on the clips behind the board's comparisons: with ``matched``, which clips the means
    are over; else one per pair of generators scored on different clips or with rollout counts out of
    proportion (:meth:`PairCoverage.sentence`, per axis where the axes differ). Empty when every pair
    was scored alike."""
    if board.matched:
        clips = ", ".join(f"{a.upper()} {board.matched_clips.get(a, 0)}" for a in board.axes)
        out = [f"Matched: each generator's mean is the mean of its clip means over the clips every ranked "
               f"generator was scored on (clips: {clips}); its other items are left out"]
        out += [f"No clip is shared by every generator with scores on {a.upper()}, so none is ranked there"
                for a in board.axes if board.matched_clips.get(a, 0) == 0]
        return out
    return [s for s, _ in _pair_notes(board)]


def _pair_notes(board: Leaderboard) -> list[tuple[str, bool]]:
    """One sentence per pair of generators not scored alike (per axis where the axes differ), and
    whether any of its axes is :attr:`PairCoverage.serious`."""
    by_pair: dict[tuple[str, str], dict[str, str]] = {}
    serious: dict[tuple[str, str], bool] = {}
    for c in board.unmatched():
        by_pair.setdefault((c.a, c.b), {})[c.axis] = c.sentence()
        serious[(c.a, c.b)] = serious.get((c.a, c.b), False) or c.serious
    out = []
    for pair, said in by_pair.items():
        if len(said) == len(board.axes) and len(set(said.values())) == 1:
            out.append((next(iter(said.values())), serious[pair]))
        else:
            out.append(("; ".join(f"on {a.upper()}, {s}" for a, s in said.items()), serious[pair]))
    return out


def _order(ranks: npt.NDArray[np.int64], names: Sequence[str]) -> list[int]:
    """Indices sorted by rank, ties by name; rank 0 (not ranked) goes last."""
    return sorted(range(len(names)), key=lambda g: (int(ranks[g]) == 0, int(ranks[g]), names[g]))


def _rank_spread(reps: FloatArray, point_rank: npt.NDArray[np.int64], ranked: npt.NDArray[np.bool_],
                 level: float, tolerance: float = 0.0
                 ) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(rank_prob, rank_low, rank_high, n)``: the first three ``(G, T)`` from replicate means
    ``(B, G, T)``, and ``n`` ``(T,)`` the replicates behind them on each target.

    A rank is a place among all the generators ranked on a target, so a replicate that drew none of
    one ranked generator's items ranks nobody on that target: with that generator gone, every
    generator below it would move up a place. Such replicates are left out of every generator's
    share and range on that target. Generators not ranked on a target get NaN and 0.
    """
    ranks = np.moveaxis(competition_ranks(np.moveaxis(reps, 1, -1), tolerance), -1, 1)  # (B, G, T)
    # (B, T): every ranked generator has a mean.
    complete: npt.NDArray[np.bool_] = np.all(np.isfinite(reps) | ~ranked[None], axis=1)
    valid = complete[:, None, :] & ranked[None]
    n_valid = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = np.where(n_valid > 0, ((ranks == point_rank[None]) & valid).sum(axis=0) / n_valid, np.nan)
    masked = np.where(valid, ranks, np.nan)
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    g_count, t_count = point_rank.shape
    low = np.zeros((g_count, t_count), dtype=np.int64)
    high = low.copy()
    for g, t in zip(*np.nonzero(n_valid > 0), strict=True):
        col = masked[:, g, t]
        col = col[np.isfinite(col)]
        low[g, t] = int(np.quantile(col, lo_q, method="lower"))
        high[g, t] = int(np.quantile(col, hi_q, method="higher"))
    return prob, low, high, complete.sum(axis=0).astype(np.int64)


def _outrank(reps: FloatArray, ranked: npt.NDArray[np.bool_], tolerance: float = 0.0) -> FloatArray:
    """``(T, G, G)`` share of replicates where generator i scores above j (ties, within ``tolerance``,
    one half).

    Counted over the replicates where both have a mean; NaN for a pair with an unranked generator.
    """
    r = np.moveaxis(reps, -1, 1)  # (B, T, G)
    both = np.isfinite(r[..., :, None]) & np.isfinite(r[..., None, :])  # (B, T, G, G)
    over = _above(r[..., :, None], r[..., None, :], tolerance)
    under = _above(r[..., None, :], r[..., :, None], tolerance)
    above = (over & both).sum(axis=0)
    tied = (~over & ~under & both).sum(axis=0)
    n = both.sum(axis=0)
    rk = ranked.T  # (T, G)
    keep = rk[:, :, None] & rk[:, None, :] & (n > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(keep, (above + 0.5 * tied) / n, np.nan)
    return out


def _above(a: FloatArray, b: FloatArray, tolerance: float = 0.0) -> npt.NDArray[np.bool_]:
    """``a > b`` by more than float rounding (a relative 1e-9, as ``math.isclose``) and by more than
    ``tolerance``; -inf is below every number, and NaN is above nothing."""
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.abs(a), np.abs(b))
        margin = np.maximum(1e-9 * np.where(np.isfinite(scale), scale, 0.0), tolerance)
        out: npt.NDArray[np.bool_] = (a - b) > margin
    return out


def share_above(a: FloatArray, b: FloatArray, tolerance: float = 0.0) -> FloatArray:
    """Over the last axis, the share of replicates where ``a`` is above ``b`` (:func:`_above`), ties
    counting one half, among those where both are finite (NaN where none is): P(a > b) of a bootstrap,
    as the leaderboard, the paired difference and ``aggregate --diff`` say it."""
    valid = np.isfinite(a) & np.isfinite(b)
    over, under = _above(a, b, tolerance) & valid, _above(b, a, tolerance) & valid
    with np.errstate(invalid="ignore", divide="ignore"):
        ties = (valid & ~over & ~under).sum(axis=-1)
        out: FloatArray = (over.sum(axis=-1) + 0.5 * ties) / valid.sum(axis=-1)
    return out


def _means(sums: FloatArray) -> FloatArray:
    """``(..., G, A, 2)`` sums and counts to ``(..., G, A + 1)`` means, the last being Overall."""
    axis_means = ratio(sums)
    overall = axis_means.mean(axis=-1, keepdims=True)  # NaN if any axis is NaN
    return np.concatenate([axis_means, overall], axis=-1)
