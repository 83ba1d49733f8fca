"""Segment-level agreement of a score with ordinal verdicts (RoboWorM Table D4, Fig. D3).

The truth here is a verdict per 16-frame segment (``Good``, ``Medium``, ``Bad``), mapped to a level
that grows with how bad the segment is (:data:`VERDICT_LEVELS`: Good 0, Medium 1, Bad 2). Scores are
taken **oriented so that higher means worse** (a lower-is-better metric as it is, a higher-is-better
one negated; :func:`orient`), so a useful score correlates positively with the level.

* :func:`segment_spearman`: Spearman's rho per group (embodiment), their mean (macro) and rho over all
  segments pooled (micro). Unscored segments (NaN) are left out and counted.
* :func:`three_band_agreement`: the paper's calibrated overlap. A video's level is the level of its worst
  segment. Each draw takes ``per_level`` videos of every level as calibration videos, chooses the two cut
  points that band the most of their segments at the right level (:func:`best_cuts`), bands every segment
  of the other videos, and records the share whose band equals its level; an unscored segment counts as a
  miss. Mean and percentile interval over the draws.
* :func:`pool_bands`: macro and micro overlap of several groups' draws, draw by draw.
* :func:`verdict_overlap`: the overlap of a judge that answers in the three levels itself (a VLM's
  majority verdict), taken as it is, as Table D4 takes a VLM's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import stats

from robojudge.meta._agreement import FloatArray

#: Level of each planted (or human) segment verdict: higher is worse.
VERDICT_LEVELS: dict[str, int] = {"Good": 0, "Medium": 1, "Bad": 2}
#: Frames per segment (RoboWorM and docs/sim_suite.md).
SEGMENT_FRAMES = 16


def verdict_levels(verdicts: Sequence[str], where: Sequence[str] | None = None) -> npt.NDArray[np.int64]:
    """Levels of ``verdicts``, in any case (``good`` as robojudge's annotation stores it, ``Good`` as the
    planted ones); an unknown verdict raises ``ValueError`` naming its position (or ``where``)."""
    levels = {name.casefold(): level for name, level in VERDICT_LEVELS.items()}
    out = np.empty(len(verdicts), dtype=np.int64)
    for i, v in enumerate(verdicts):
        level = levels.get(v.casefold())
        if level is None:
            at = where[i] if where is not None else f"segment {i}"
            raise ValueError(f"{at}: verdict {v!r} is not one of {sorted(VERDICT_LEVELS)} (in any case)")
        out[i] = level
    return out


def orient(values: npt.ArrayLike, higher_is_better: bool) -> FloatArray:
    """Values turned so that higher means worse (negated when the metric's higher is better)."""
    x = np.asarray(values, dtype=np.float64)
    return -x if higher_is_better else x


def segment_spans(n_frames: int, length: int = SEGMENT_FRAMES) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` spans of ``length`` frames from frame 0; a remainder is a shorter span.

    A video shorter than ``length`` has one span, the whole video: the caller scores it or records why not
    (:func:`too_short_reason`), never drops it.
    """
    if n_frames < 0 or length < 1:
        raise ValueError(f"need n_frames >= 0 and length >= 1, got {n_frames} and {length}")
    return [(s, min(s + length, n_frames)) for s in range(0, n_frames, length)]


def too_short_reason(start: int, stop: int, minimum: int) -> str | None:
    """Why a segment cannot be scored because it is short (None when it has at least ``minimum`` frames)."""
    n = stop - start
    if n >= minimum:
        return None
    return f"segment [{start}, {stop}) has {n} frames; scoring needs at least {minimum}"


@dataclass(frozen=True)
class Rho:
    """Spearman's rho of one group of segments.

    Attributes:
        rho: Spearman's rho (NaN when fewer than 3 scored segments or either side is constant).
        n: Segments scored.
        unscored: Segments with no score (left out).
    """

    rho: float
    n: int
    unscored: int


@dataclass(frozen=True)
class SegmentRho:
    """Spearman's rho per group, macro (mean of the groups' rho) and micro (all segments pooled)."""

    groups: dict[str, Rho]
    macro: float
    micro: Rho


def _rho(scores: FloatArray, levels: FloatArray) -> Rho:
    ok = np.isfinite(scores)
    x, y = scores[ok], levels[ok]
    n = int(ok.sum())
    if n < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return Rho(math.nan, n, int((~ok).sum()))
    return Rho(float(stats.spearmanr(x, y).statistic), n, int((~ok).sum()))


def segment_spearman(scores: npt.ArrayLike, levels: npt.ArrayLike, groups: Sequence[str]) -> SegmentRho:
    """Spearman's rho of oriented ``scores`` (higher = worse) against verdict ``levels``, per group.

    Macro is the mean of the groups' rho over groups where it is defined (NaN when none is).
    """
    s = np.asarray(scores, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    if s.shape != lv.shape or s.ndim != 1 or len(groups) != s.size:
        raise ValueError(f"scores, levels and groups differ in length: {s.shape}, {lv.shape}, {len(groups)}")
    g = np.asarray(groups, dtype=object)
    per = {name: _rho(s[g == name], lv[g == name]) for name in sorted(set(groups))}
    defined = [r.rho for r in per.values() if not math.isnan(r.rho)]
    macro = float(np.mean(defined)) if defined else math.nan
    return SegmentRho(per, macro, _rho(s, lv))


def best_cuts(scores: npt.ArrayLike, levels: npt.ArrayLike) -> tuple[float, float]:
    """Two cuts on oriented scores that band the most segments at their level (0, 1, 2).

    A score below the first cut is banded 0, at or above the second 2, else 1. Cuts lie halfway between
    consecutive distinct scores (or at +-inf, an empty band), so tied scores are never split. Ties in the
    count go to the pair with the higher balanced accuracy (mean share right per level present), then to
    the lowest pair. NaN scores are ignored.
    """
    s = np.asarray(scores, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.int64)
    ok = np.isfinite(s)
    s, lv = s[ok], lv[ok]
    if s.size == 0:
        raise ValueError("best_cuts needs at least one scored segment")
    if np.any((lv < 0) | (lv > 2)):
        raise ValueError("levels must be 0, 1 or 2")
    distinct = np.unique(s)
    candidates = np.concatenate([[-np.inf], (distinct[:-1] + distinct[1:]) / 2.0, [np.inf]])
    # below[c, k]: segments of level k scoring below candidate c.
    below = np.stack([(s[None, :] < candidates[:, None]) & (lv[None, :] == k) for k in range(3)],
                     axis=2).sum(axis=1).astype(np.float64)
    total = np.array([(lv == k).sum() for k in range(3)], dtype=np.float64)
    # Pair (i, j), i <= j: right = level-0 below c_i + level-1 in [c_i, c_j) + level-2 at or above c_j.
    right0 = below[:, 0][:, None]
    right1 = below[:, 1][None, :] - below[:, 1][:, None]
    right2 = total[2] - below[:, 2][None, :]
    count = right0 + right1 + right2
    present = total > 0
    shares = [right0 / max(total[0], 1), right1 / max(total[1], 1), right2 / max(total[2], 1)]
    balanced = sum(sh for sh, p in zip(shares, present, strict=True) if p) / present.sum()
    valid = np.triu(np.ones((candidates.size, candidates.size), dtype=bool))
    key_count = np.where(valid, count, -1.0)
    top = key_count == key_count.max()
    key_bal = np.where(top, balanced, -1.0)
    i, j = np.argwhere(key_bal == key_bal.max())[0]  # row-major: the lowest pair among the best
    return float(candidates[i]), float(candidates[j])


def apply_cuts(scores: npt.ArrayLike, cuts: tuple[float, float]) -> FloatArray:
    """Bands 0, 1, 2 of oriented scores for ``cuts`` (see :func:`best_cuts`); NaN scores give NaN."""
    s = np.asarray(scores, dtype=np.float64)
    band = (s >= cuts[0]).astype(np.float64) + (s >= cuts[1])
    return np.where(np.isfinite(s), band, np.nan)


@dataclass(frozen=True)
class BandAgreement:
    """The calibrated three-band overlap of one group of videos.

    Attributes:
        overlap: Mean over the draws of the share of evaluation segments banded at their level.
        low: Lower end of the percentile interval of the draws' shares.
        high: Upper end.
        draws: Each draw's share (``(n_draws,)``).
        right: Each draw's count of evaluation segments banded right.
        evaluated: Each draw's count of evaluation segments (unscored ones included, as misses).
        mean_cuts: Mean of the draws' two cuts (oriented score units; +-inf cuts left out, NaN if all were).
        videos_per_level: Videos of each level (0, 1, 2).
    """

    overlap: float
    low: float
    high: float
    draws: FloatArray
    right: npt.NDArray[np.int64]
    evaluated: npt.NDArray[np.int64]
    mean_cuts: tuple[float, float]
    videos_per_level: tuple[int, int, int]


def video_levels(levels: npt.ArrayLike, videos: Sequence[str]) -> dict[str, int]:
    """Each video's level: that of its worst segment."""
    out: dict[str, int] = {}
    for v, lv in zip(videos, np.asarray(levels, dtype=np.int64).tolist(), strict=True):
        out[v] = max(out.get(v, 0), int(lv))
    return out


def _interval(draws: FloatArray, level: float) -> tuple[float, float]:
    ok = draws[np.isfinite(draws)]
    if ok.size == 0:
        return math.nan, math.nan
    q = np.quantile(ok, [(1 - level) / 2, (1 + level) / 2])
    return float(q[0]), float(q[1])


def three_band_agreement(scores: npt.ArrayLike, levels: npt.ArrayLike, videos: Sequence[str], *,
                         per_level: int = 3, draws: int = 1000, seed: int | Sequence[int] = 0,
                         level: float = 0.95) -> BandAgreement:
    """RoboWorM's calibrated three-band overlap of oriented ``scores`` with segment ``levels``.

    Each draw takes ``per_level`` videos of every level as calibration videos, fits two cuts on their
    segments with :func:`best_cuts`, bands the segments of every other video with :func:`apply_cuts`,
    and records the share banded at their level. Table D4 says only that the cuts are "calibrated on nine
    videos per embodiment (three per quality level)"; this is one of robojudge's two readings of it, and
    :func:`robojudge.meta.band_calibration` the other. They differ in two places and give different
    overlaps on the same data (docs/meta.md, "Two band overlaps"):

    * a video's level: here its **worst** segment's (:func:`video_levels`: a kinematic failure lasts a few
      frames, so most segments of a failed rollout are Good and their most frequent verdict would call
      nearly every video Good); there its **most frequent** label;
    * the cuts: here the **pair that bands the most calibration segments right** (:func:`best_cuts`, what
      the overlap then counts on the other videos); there the **midpoints of the level medians**.

    Args:
        scores: Oriented score per segment (higher = worse); NaN where the metric gave none.
        levels: Level per segment (0 Good, 1 Medium, 2 Bad).
        videos: The video each segment belongs to.
        per_level: Calibration videos drawn per level.
        draws: Random calibration draws.
        seed: Seed of the draws (``numpy.random.default_rng``); the same seed gives the same result.
        level: Coverage of the percentile interval.

    Raises:
        ValueError: A level has ``per_level`` videos or fewer (nothing of it would be left to evaluate), or
            the inputs differ in length.
    """
    s = np.asarray(scores, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.int64)
    if s.shape != lv.shape or s.ndim != 1 or len(videos) != s.size:
        raise ValueError(f"scores, levels and videos differ in length: {s.shape}, {lv.shape}, {len(videos)}")
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    of_video = video_levels(lv, videos)
    names = sorted(of_video)
    index = {v: i for i, v in enumerate(names)}
    vid = np.array([index[v] for v in videos], dtype=np.intp)
    pools = [np.array([index[v] for v in names if of_video[v] == k], dtype=np.intp) for k in range(3)]
    for k, pool in enumerate(pools):
        if pool.size <= per_level:
            verdict = next(n for n, x in VERDICT_LEVELS.items() if x == k)
            videos = "1 video has" if pool.size == 1 else f"{pool.size} videos have"
            raise ValueError(f"{videos} worst verdict {verdict}; the draw needs more than {per_level} of "
                             "each level")
    rng = np.random.default_rng(seed)
    shares = np.empty(draws)
    right = np.empty(draws, dtype=np.int64)
    evaluated = np.empty(draws, dtype=np.int64)
    cuts = np.empty((draws, 2))
    for d in range(draws):
        chosen = np.zeros(len(names), dtype=bool)
        for pool in pools:
            chosen[rng.choice(pool, size=per_level, replace=False)] = True
        calib = chosen[vid]
        if np.isfinite(s[calib]).any():
            cuts[d] = best_cuts(s[calib], lv[calib])
            band = apply_cuts(s[~calib], (float(cuts[d, 0]), float(cuts[d, 1])))
        else:
            cuts[d] = np.nan
            band = np.full(int((~calib).sum()), np.nan)
        right[d] = int(np.sum(band == lv[~calib]))
        evaluated[d] = int((~calib).sum())
        shares[d] = right[d] / evaluated[d]
    finite = [cuts[:, c][np.isfinite(cuts[:, c])] for c in range(2)]
    mean_cuts = (float(finite[0].mean()) if finite[0].size else math.nan,
                 float(finite[1].mean()) if finite[1].size else math.nan)
    low, high = _interval(shares, level)
    counts = (int(pools[0].size), int(pools[1].size), int(pools[2].size))
    return BandAgreement(float(shares.mean()), low, high, shares, right, evaluated, mean_cuts, counts)


@dataclass(frozen=True)
class PooledBands:
    """Macro (mean of the groups' shares, draw by draw) and micro (segments pooled) overlap.

    Each is ``(mean, low, high)`` over the draws; draw ``d`` of every group is paired.
    """

    macro: tuple[float, float, float]
    micro: tuple[float, float, float]


def pool_bands(groups: Mapping[str, BandAgreement], level: float = 0.95) -> PooledBands:
    """Macro and micro overlap of several groups' :func:`three_band_agreement` (same number of draws)."""
    if not groups:
        raise ValueError("pool_bands needs at least one group")
    sizes = {g.draws.size for g in groups.values()}
    if len(sizes) != 1:
        raise ValueError(f"groups have different numbers of draws: {sorted(sizes)}")
    macro = np.mean(np.stack([g.draws for g in groups.values()]), axis=0)
    micro = (np.sum(np.stack([g.right for g in groups.values()]), axis=0)
             / np.sum(np.stack([g.evaluated for g in groups.values()]), axis=0))
    return PooledBands((float(macro.mean()), *_interval(macro, level)),
                       (float(micro.mean()), *_interval(micro, level)))


def group_bands(scores: npt.ArrayLike, levels: npt.ArrayLike, groups: Sequence[str], videos: Sequence[str], *,
                draws: int = 1000, seed: int = 0, level: float = 0.95
                ) -> tuple[dict[str, BandAgreement | str], PooledBands | None]:
    """:func:`three_band_agreement` per group (seeded by :func:`group_seed`), pooled by :func:`pool_bands`.

    A group where no segment has a score, or with too few videos of a level, gets the reason instead of a
    result (a metric that measured nothing is not a 0% overlap); pooling needs every group's result, else
    it is None.
    """
    s = np.asarray(scores, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.int64)
    g = np.asarray(groups, dtype=object)
    v = np.asarray(videos, dtype=object)
    per: dict[str, BandAgreement | str] = {}
    for name in sorted(set(groups)):
        m = g == name
        if np.all(np.isnan(s[m])):
            per[name] = "no segment has a value"
            continue
        try:
            per[name] = three_band_agreement(s[m], lv[m], list(v[m]), draws=draws,
                                             seed=group_seed(seed, name), level=level)
        except ValueError as exc:
            per[name] = str(exc)
    done = {k: b for k, b in per.items() if isinstance(b, BandAgreement)}
    return per, (pool_bands(done, level) if done and len(done) == len(per) else None)


@dataclass(frozen=True)
class VerdictOverlap:
    """Share of segments whose verdict is the human one, with no calibration (a VLM's in RoboWorM Table D4).

    Attributes:
        groups: Per group, the share (a segment with no verdict counts as a miss; NaN for an empty group).
        macro: Mean of the groups' shares.
        micro: Share over all segments pooled.
    """

    groups: dict[str, float]
    macro: float
    micro: float


def verdict_overlap(verdicts: npt.ArrayLike, levels: npt.ArrayLike, groups: Sequence[str]) -> VerdictOverlap:
    """Overlap of a judge's own verdict levels (0 Good, 1 Medium, 2 Bad; NaN: none) with segment ``levels``.

    RoboWorM Table D4 takes a VLM's majority verdict over its turns as it is: a VLM answers in the three
    levels, so it has no cuts to calibrate, unlike a continuous score (:func:`three_band_agreement`).
    """
    v = np.asarray(verdicts, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    if v.shape != lv.shape or v.ndim != 1 or len(groups) != v.size:
        raise ValueError(f"verdicts, levels and groups differ in length: {v.shape}, {lv.shape}, "
                         f"{len(groups)}")
    right = v == lv  # NaN never equals: a segment the judge left without a verdict is a miss
    g = np.asarray(groups, dtype=object)
    per = {name: float(right[g == name].mean()) for name in sorted(set(groups))}
    macro = float(np.mean(list(per.values()))) if per else math.nan
    return VerdictOverlap(per, macro, float(right.mean()) if right.size else math.nan)


def group_seed(seed: int, name: str) -> list[int]:
    """A seed for one group's draws that depends on the group's name, not on which other groups there are."""
    return [seed, *name.encode("utf-8")]


# -- intervals of rho: a paired, stratified cluster bootstrap ------------------------------------------


@dataclass(frozen=True)
class RhoInterval:
    """Spearman's rho (or a difference of two) with its bootstrap percentile interval.

    Attributes:
        rho: The point value on the segments as they are (NaN where undefined).
        low: Lower end of the percentile interval over the replicates where it is defined.
        high: Upper end.
        n: Segments scored (for a difference, those both metrics scored).
        replicates: Replicates in which the value is defined (a resample may leave one side constant).
        draws: The value in every replicate, NaN where undefined.
        why: Why ``rho`` is undefined (fewer than 3 scored segments, one verdict or one score throughout,
            no group to average), or why it has no interval: its segments lie in fewer than
            :data:`robojudge.meta.MIN_CLUSTERS` clusters, or it is defined in fewer than half of the
            replicates (None otherwise).
    """

    rho: float
    low: float
    high: float
    n: int
    replicates: int
    draws: FloatArray = field(repr=False)
    why: str | None = None


@dataclass(frozen=True)
class SegmentRhoIntervals:
    """:class:`RhoInterval` per group, of the macro mean of the groups' rho, and of pooled (micro) rho.

    ``macro_groups`` names the groups the macro averages: those where the rho (of a difference: both
    rhos) is defined.
    """

    groups: dict[str, RhoInterval]
    macro: RhoInterval
    micro: RhoInterval
    macro_groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class SegmentRhoBootstrap:
    """Result of :func:`segment_spearman_bootstrap`.

    Attributes:
        metrics: Intervals of each metric's rho.
        differences: With a ``reference``, each other metric's rho minus the reference's on the segments
            both scored, replicate by replicate (the same resample serves both, so the interval is of a
            paired difference); the macro difference averages the groups where both rhos are defined.
        reference: The metric the differences are taken against, or None.
        replicates: Resamples drawn.
        clusters: Clusters per group (what each replicate redraws within the group).
    """

    metrics: dict[str, SegmentRhoIntervals]
    differences: dict[str, SegmentRhoIntervals]
    reference: str | None
    replicates: int
    clusters: dict[str, int]


def _undefined_rho_reason(scores: npt.ArrayLike, levels: npt.ArrayLike) -> str | None:
    """Why Spearman's rho of these segments is undefined, as :class:`Rho` leaves it (None if it is not)."""
    s = np.asarray(scores, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    ok = np.isfinite(s)
    n = int(ok.sum())
    if n == 0:
        return "no segment has a score"
    if n < 3:
        return f"{n} scored segment(s); rho needs at least 3"
    y = lv[ok]
    if np.all(y == y[0]):
        name = next((k for k, v in VERDICT_LEVELS.items() if v == y[0]), f"level {y[0]:g}")
        return f"every scored segment's verdict is {name}"
    if np.all(s[ok] == s[ok][0]):
        return "the score takes one value on every scored segment"
    return None


def _rho_replicates(s: FloatArray, lv: FloatArray, where: npt.NDArray[np.bool_],
                    weights: FloatArray) -> tuple[float, FloatArray, int]:
    """Point rho, per-replicate rho and segments scored, over the segments ``where`` that have a score."""
    from robojudge.meta._weighted import RankCorrelation

    idx = np.flatnonzero(where & np.isfinite(s))
    point = _rho(s[where], lv[where]).rho
    if idx.size < 3:
        return point, np.full(weights.shape[0], math.nan), int(idx.size)
    rank = RankCorrelation([(np.arange(idx.size), s[idx], lv[idx])], int(idx.size))
    reps = rank(weights[:, idx])
    # A resample with fewer than 3 distinct segments has no rho, as the point estimate would not.
    reps[(weights[:, idx] > 0).sum(axis=1) < 3] = math.nan
    return point, reps, int(idx.size)


@dataclass(frozen=True)
class _Cell:
    """One rho (or difference) before its interval: point, replicates, segments, clusters, why undefined."""

    point: float
    reps: FloatArray
    n: int
    clusters: int
    why: str | None


def _summary(c: _Cell, level: float) -> RhoInterval:
    from robojudge.meta._bootstrap import interval_gate, summarize_replicates

    ok = np.isfinite(c.reps)
    if math.isnan(c.point):
        return RhoInterval(c.point, math.nan, math.nan, c.n, int(ok.sum()), c.reps, c.why)
    keep, why, _ = interval_gate(np.array(int(ok.sum())), np.array(c.clusters), c.reps.size)
    if not keep:
        return RhoInterval(c.point, math.nan, math.nan, c.n, int(ok.sum()), c.reps, str(why[()]))
    low, high, _ = summarize_replicates(c.reps[None, :], level)
    return RhoInterval(c.point, float(low[0]), float(high[0]), c.n, int(ok.sum()), c.reps)


def _macro(per: Mapping[str, _Cell], replicates: int, none: str) -> tuple[_Cell, tuple[str, ...]]:
    """The mean of the groups' cells where defined (in a replicate, NaN where any of them is), and those
    groups; it is only as well resampled as its thinnest group."""
    defined = tuple(grp for grp, c in per.items() if not math.isnan(c.point))
    if not defined:
        return _Cell(math.nan, np.full(replicates, math.nan), 0, 0, none), ()
    cells = [per[grp] for grp in defined]
    return _Cell(float(np.mean([c.point for c in cells])), np.mean(np.stack([c.reps for c in cells]), axis=0),
                 sum(c.n for c in cells), min(c.clusters for c in cells), None), defined


def segment_spearman_bootstrap(scores: Mapping[str, npt.ArrayLike], levels: npt.ArrayLike,
                               groups: Sequence[str], clusters: Sequence[str], *,
                               reference: str | None = None, replicates: int = 2000, seed: int = 0,
                               level: float = 0.95) -> SegmentRhoBootstrap:
    """Intervals of several metrics' :func:`segment_spearman`, from one paired cluster bootstrap.

    Segments of one clip are not independent (the same scene, robot motion and planted failure run
    through its rollouts and their segments), so a replicate redraws whole ``clusters`` (clips, say),
    with replacement, as many in each group (embodiment) as the group has, and keeps every segment of a
    drawn cluster as often as it was drawn (:class:`robojudge.meta.ClusterBootstrap`, the design of
    RoboJudge App. E.1's judge intervals). Rho of a replicate is computed exactly on the resample, ties
    included (:class:`robojudge.meta.RankCorrelation`). Every metric sees the same replicates. A metric's
    rho uses the segments it scored (NaN left out, as in :func:`segment_spearman`); macro is the mean over
    the groups whose rho is defined on the full data, undefined in a replicate where one of them is.

    A difference (``reference``) is paired in every part: per group and micro, both rhos are taken on the
    segments both metrics scored, and the macro difference averages the groups where both are defined,
    so a metric that cannot rank one group is not credited with the reference's failure there.

    Args:
        scores: Oriented scores per metric (higher = worse, :func:`orient`), one per segment.
        levels: Verdict level per segment (0 Good, 1 Medium, 2 Bad).
        groups: Group (embodiment) per segment; the strata of the bootstrap.
        clusters: Cluster per segment, named within its group (the same name in two groups is two clusters).
        reference: A key of ``scores``: also report every other metric's rho minus its rho.
        replicates: Bootstrap replicates.
        seed: Seed of the draw (``numpy.random.default_rng``).
        level: Coverage of the percentile intervals.

    Raises:
        ValueError: Inputs differ in length, no metric is given, ``reference`` is not among them, or
            ``replicates`` is below 1.
    """
    from robojudge.meta._bootstrap import ClusterBootstrap

    lv = np.asarray(levels, dtype=np.float64)
    n = lv.size
    if lv.ndim != 1 or len(groups) != n or len(clusters) != n:
        raise ValueError(f"levels, groups and clusters differ in length: {lv.shape}, {len(groups)}, "
                         f"{len(clusters)}")
    if not scores:
        raise ValueError("segment_spearman_bootstrap needs at least one metric's scores")
    if reference is not None and reference not in scores:
        raise ValueError(f"reference {reference!r} is not one of the metrics: {sorted(scores)}")
    arrays = {}
    for name, values in scores.items():
        s = np.asarray(values, dtype=np.float64)
        if s.shape != (n,):
            raise ValueError(f"scores of {name!r} have shape {s.shape}; expected one per segment ({n})")
        arrays[name] = s
    g = np.asarray(groups, dtype=object)
    keys = [f"{grp}\x00{c}" for grp, c in zip(groups, clusters, strict=True)]
    boot = ClusterBootstrap(keys, strata=list(groups), n_replicates=replicates, seed=seed)
    weights = boot.item_weights(boot.counts)
    names = sorted(set(groups))
    everything = np.ones(n, dtype=bool)

    def cell(s: FloatArray, where: npt.NDArray[np.bool_]) -> _Cell:
        point, reps, scored = _rho_replicates(s, lv, where, weights)
        used = where & np.isfinite(s)
        why = _undefined_rho_reason(s[where], lv[where]) if math.isnan(point) else None
        return _Cell(point, reps, scored, int(np.unique(boot.item_cluster[used]).size), why)

    def intervals(per: dict[str, _Cell], micro: _Cell, none: str) -> SegmentRhoIntervals:
        macro, averaged = _macro(per, replicates, none)
        return SegmentRhoIntervals({grp: _summary(per[grp], level) for grp in names}, _summary(macro, level),
                                   _summary(micro, level), averaged)

    metrics = {metric: intervals({grp: cell(s, g == grp) for grp in names}, cell(s, everything),
                                 "no group has a defined rho")
               for metric, s in arrays.items()}
    differences = {}
    if reference is not None:
        ref = arrays[reference]

        def minus(metric: str, where: npt.NDArray[np.bool_]) -> _Cell:
            a, b = cell(arrays[metric], where), cell(ref, where)
            why = None
            if not a.n:
                why = "no segment scored by both"
            elif a.why is not None and a.why == b.why:
                why = f"on the segments both scored, both rhos are undefined: {a.why}"
            elif math.isnan(a.point) or math.isnan(b.point):
                why = "; ".join(f"on the segments both scored, {k}'s rho is undefined: {c.why}"
                                for k, c in ((metric, a), (reference, b)) if c.why)
            return _Cell(a.point - b.point, a.reps - b.reps, a.n, a.clusters, why)

        for metric, s in arrays.items():
            if metric == reference:
                continue
            both = np.isfinite(s) & np.isfinite(ref)
            differences[metric] = intervals({grp: minus(metric, (g == grp) & both) for grp in names},
                                            minus(metric, both), "no group where both rhos are defined")
    per_group = {grp: len({k for k, x in zip(keys, groups, strict=True) if x == grp}) for grp in names}
    return SegmentRhoBootstrap(metrics, differences, reference, replicates, per_group)
