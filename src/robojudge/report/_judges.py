"""Judges against the suite's labels (RoboJudge Table 2), with each judge's coverage.

A judge is one stored configuration (:func:`robojudge.report._series.judge_series`): two models that
share a judge name, or one judge run with two settings, are two rows. Every row says on how many
labelled items the judge was scored and on how many not (failed, unparsable or never run), and the
best value of a column is marked only among judges scored on the same items, since a judge scored on
the easy half of a suite is not comparable with one scored on all of it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED
from robojudge._files import replacing
from robojudge.meta import (
    DEFAULT_SCALE,
    OVERALL,
    AgreementReport,
    ConfigKey,
    Estimate,
    agreement_table,
    chance_agreement,
)
from robojudge.meta._agreement import FloatArray
from robojudge.report._judge_differences import (
    BEST_NOT_A_TEST,
    difference_csv_rows,
    difference_pairs,
    differences_markdown,
)
from robojudge.report._labels import compared_group
from robojudge.report._leaderboard import (
    AXES,
    CALIBRATED,
    NOT_FEATURES,
    CalibratedJudge,
    Direction,
    calibrated_scores,
    calibration_columns,
    calibration_problem,
    clusters_of,
    column,
    format_estimate,
    label_scores,
    lone_sentences,
    strata_of,
    target_title,
    withheld_notes,
)
from robojudge.report._series import (
    JudgeSeries,
    Series,
    SeriesKey,
    StoredSeries,
    judge_series,
    resolve_judge,
    rubric_owners,
)
from robojudge.report._tables import APPROX_MARK, APPROX_NOTE, is_approximate, is_small, md_escape, md_prose
from robojudge.store import ResultRow, SafeCsvWriter, served_models
from robojudge.suite import Item

#: Table 2 columns per target: (column name, statistic in the agreement report, higher is better).
JUDGE_COLUMNS = (("r", "pearson", True), ("acc", "exact", True), ("mse", "mse", False))

Mask = npt.NDArray[np.bool_]


def judge_names(rows: Sequence[ResultRow]) -> list[str]:
    """Labels of the stored judge configurations with PA or IA rows, sorted (see :mod:`._series`)."""
    return [j.label for j in judge_series(rows)]


def judge_scores(rows: Sequence[ResultRow], items: Sequence[Item], judge: str) -> dict[str, FloatArray]:
    """A judge's stored PA and IA scores per item (NaN where unscored or failed).

    ``judge`` is a label from :func:`judge_names`, or a judge name stored under one configuration.

    Raises:
        ValueError: Unknown judge, a name with several configurations, or no scored row at all.
    """
    j = resolve_judge(judge_series(rows), judge)
    if not j.n_scored:
        metric = f"judge:{j.name}:{min(j.axes, default='pa')}"
        raise ValueError(f"judge {j.label!r} has no scored rows (every request failed or every reply was "
                         f"unparsable); `robojudge results export --metric {metric} -o -` lists its stored "
                         "replies and errors")
    return {a: column(j.values(a), items) for a in AXES}


@dataclass(frozen=True)
class JudgeRow:
    """One judge in the layout of RoboJudge Table 2.

    Attributes:
        judge: The judge's label.
        n: Labelled items scored per axis.
        cells: ``cells[(target, column)]`` for target in pa, ia, overall and column in r, acc, mse.
        best: The ``(target, column)`` cells where this judge has the best value among the judges
            it is compared with.
        n_unscored: Labelled items per axis without a score from this judge (failed, unparsable or
            not run).
        compared: Targets on which this judge takes part in the "best" comparison (it was scored on
            the same items as the other judges compared there).
        small: Targets with few scored items or clips (see :func:`robojudge.report._tables.is_small`).
        stage: The judge's training stage (``base``, ``sft``, ``rl``, ``sft+rl``) when its config
            declares one (RoboJudge Table 3), else None.
        base_model: The model a staged judge was trained from, else None.
        approximate: Targets that are not small but rest on fewer than
            :data:`~robojudge.meta.APPROXIMATE_CLUSTERS` clips
            (:func:`robojudge.report._tables.is_approximate`): their intervals are approximate.
        reference: A row worked out from the labels, not a judge's scores (:func:`chance_row`): never
            compared, never marked best, no interval.
        off_scale: Per axis on which the judge's scores round outside the label scale, their lowest
            and highest score (:func:`off_scale_ranges`): its Acc and within-one there and on the
            Overall are left out (NaN).
    """

    judge: str
    n: dict[str, int]
    cells: dict[tuple[str, str], Estimate]
    best: frozenset[tuple[str, str]]
    n_unscored: dict[str, int] = field(default_factory=dict)
    compared: frozenset[str] = frozenset()
    small: frozenset[str] = frozenset()
    stage: str | None = None
    base_model: str | None = None
    approximate: frozenset[str] = frozenset()
    reference: bool = False
    off_scale: dict[str, tuple[float, float]] = field(default_factory=dict)


#: The label of Table 2's chance row (:func:`chance_row`).
RANDOM_EXPECTED = "random (expected)"


def chance_row(items: Sequence[Item], scale: tuple[int, int] = DEFAULT_SCALE) -> JudgeRow | None:
    """RoboJudge Table 2's Random Baseline row: the expected r, Acc and MSE of a score drawn uniformly from
    the integers of ``scale`` against the labelled items' PA and IA labels
    (:func:`robojudge.meta.chance_agreement`; r 0, Acc 1/5, MSE ``2 + mean((h - 3)^2)`` on 1-5); None
    without labels.

    It is an expectation, not an estimate: no draw was made, so there is nothing to resample and no
    interval, and it is never marked best. The ``uniform_random`` metric is one seeded draw, whose
    agreement scatters around these values.
    """
    human = label_scores([it for it in items if it.labels is not None])
    if not any(np.isfinite(v).any() for v in human.values()):
        return None
    chance = chance_agreement(human, scale)
    cells = {(t, col): Estimate(getattr(chance[t], stat)) for t in (*AXES, OVERALL)
             for col, stat, _ in JUDGE_COLUMNS}
    return JudgeRow(RANDOM_EXPECTED, {a: chance[a].n for a in AXES}, cells, frozenset(),
                    {a: 0 for a in AXES}, reference=True)


def chance_note(table: Sequence[JudgeRow], scale: tuple[int, int] = DEFAULT_SCALE) -> list[str]:
    """The sentence under Table 2 on its chance row, when it has one."""
    if not any(r.reference for r in table):
        return []
    lo, hi = scale
    k = hi - lo + 1
    return [f"{RANDOM_EXPECTED}: what a score drawn uniformly from {lo}-{hi} gets on average against these "
            f"labels (RoboJudge Table 2's Random Baseline): r 0, Acc 1/{k}, MSE {(k * k - 1) / 12:g} + the "
            f"mean of ({(lo + hi) / 2:g} - label)^2, Overall as for a judge. Worked out, not drawn: no "
            "interval (there is no draw to resample) and never marked best; the uniform_random metric is "
            "one seeded draw."]


STAGE_ORDER = ("base", "sft", "rl", "sft+rl")
STAGE_TITLES = {"base": "base", "sft": "+ SFT", "rl": "+ RL", "sft+rl": "+ SFT + RL"}


def judge_stage(judge: JudgeSeries) -> tuple[str, str] | None:
    """``(base model, stage)`` from a judge's stored config (``stage`` and ``base_model`` of its
    :class:`~robojudge.judges.JudgeConfig`), or None when it declares no stage."""
    for s in judge.axes.values():
        cfg = s.config or {}
        if cfg.get("stage"):
            return str(cfg.get("base_model") or cfg.get("model") or judge.name), str(cfg["stage"])
    return None


def judge_table(report: AgreementReport, scored: Mapping[str, Mapping[str, Mask]] | None = None,
                clusters: Sequence[str] | None = None) -> list[JudgeRow]:
    """Table 2 rows from an agreement report, marking the best value per column (ties all marked).

    r is NaN on a target scored on fewer than :data:`~robojudge.meta.MIN_CORRELATION_PAIRS` items, and
    on an Overall whose axes have no r (every axis constant on the judge's or the labels' side), as
    :func:`robojudge.meta.agreement_table` leaves them. Best is the largest r and accuracy and the
    smallest MSE, by point estimate; NaN never wins. With
    ``scored`` (``scored[judge][axis]``: which items the judge was scored on, aligned with the
    report's items), a target's best is marked only among the judges scored on the same items;
    without it, judges with the same number of scored items are taken to share them. ``clusters``
    (per item, with ``scored``) lets rows flag targets with few clips; Overall is flagged when either
    axis is.
    """
    targets = (*report.axes, OVERALL)
    cells = {j: {(t, col): report.cells[j][t].stats[stat] for t in targets for col, stat, _ in JUDGE_COLUMNS}
             for j in report.judges}
    best: dict[str, set[tuple[str, str]]] = {j: set() for j in report.judges}
    compared: dict[str, set[str]] = {j: set() for j in report.judges}
    small = {j: _small_targets(report, j, scored[j] if scored is not None else None,
                               clusters if scored is not None else None) for j in report.judges}
    approximate = {j: _small_targets(report, j, scored[j] if scored is not None else None,
                                     clusters if scored is not None else None, is_approximate) - small[j]
                   for j in report.judges}
    for t in targets:
        axes = report.axes if t == OVERALL else (t,)
        if scored is not None:
            masks = {j: np.concatenate([np.asarray(scored[j][a], dtype=bool) for a in axes])
                     for j in report.judges}
        else:
            masks = {j: np.arange(report.cells[j][t].n + 1) > 0 for j in report.judges}
        group = compared_group(masks)
        for j in group:
            compared[j].add(t)
        for col, _, higher in JUDGE_COLUMNS:
            vals = {j: cells[j][t, col].value for j in group}
            vals = {j: v for j, v in vals.items() if not math.isnan(v)}
            if not vals:
                continue
            top = max(vals.values()) if higher else min(vals.values())
            for j, v in vals.items():
                if math.isclose(v, top, rel_tol=1e-12, abs_tol=1e-12):
                    best[j].add((t, col))
    return [JudgeRow(j, {a: report.cells[j][a].n for a in report.axes}, cells[j], frozenset(best[j]),
                     {a: report.cells[j][a].n_unscored for a in report.axes}, frozenset(compared[j]),
                     frozenset(small[j]), approximate=frozenset(approximate[j]))
            for j in report.judges]


def _small_targets(report: AgreementReport, judge: str, scored: Mapping[str, Mask] | None,
                   clusters: Sequence[str] | None,
                   flag: Callable[[int, int | None], bool] = is_small) -> set[str]:
    """The targets on which ``judge`` rests on few items or clips (``flag``: :func:`is_small`, or
    :func:`is_approximate` for the milder mark).

    Overall pools the axes' items, but its value needs both axes, so it is as rough as its roughest
    axis: it is small when any scored axis is (as the leaderboard's Overall is).
    """
    small = set()
    for a in report.axes:
        n = report.cells[judge][a].n
        n_clusters = None
        if scored is not None and clusters is not None:
            n_clusters = len({clusters[int(i)] for i in np.flatnonzero(np.asarray(scored[a], dtype=bool))})
        if n and flag(n, n_clusters):
            small.add(a)
    if report.cells[judge][OVERALL].n and small:
        small.add(OVERALL)
    return small


def comparison_note(rows: Sequence[JudgeRow], report: AgreementReport) -> str:
    """A sentence on which judges the bold marks compare, when some judge is left out somewhere."""
    targets = (*report.axes, OVERALL)
    parts = []
    for r in rows:
        if r.reference:  # (worked out, never compared)
            continue
        missing = [target_title(t) for t in targets if t not in r.compared]
        if missing:
            where = "" if len(missing) == len(targets) else f" on {', '.join(missing)}"
            scored = "no item" if not any(r.n.values()) else "other items"
            parts.append(f"{r.judge}{where} (scored on {scored})")
    if not parts:
        return ""
    return ("Best is marked only among judges scored on the same items (give or take 5%: a few failed "
            "requests); not compared: " + "; ".join(parts)
            + ".")


def judges_table_note(rows: Sequence[JudgeRow], report: AgreementReport,
                      scale: tuple[int, int] = DEFAULT_SCALE) -> str:
    """The sentences above Table 2: :func:`comparison_note`, the judges whose scores lie off the label
    scale (:func:`off_scale_notes`), and where some clips are their source's only one, that the intervals
    are narrower than they should be (:func:`robojudge.meta.lone_clusters_note`)."""
    return " ".join(s for s in (comparison_note(rows, report), *off_scale_notes(rows, scale),
                                *lone_sentences(report.n_lone_clusters, report.n_clusters)) if s)


#: The statistics that round a judge's scores into the label scale (and clip what rounds outside it).
ROUNDED_STATISTICS = ("exact", "within_one")


def off_scale_ranges(pred: Mapping[str, Mapping[str, FloatArray]], human: Mapping[str, FloatArray],
                     scale: tuple[int, int] = DEFAULT_SCALE) -> dict[str, dict[str, tuple[float, float]]]:
    """``out[judge][axis]``: the lowest and highest of a judge's scores on an axis, where some score of an
    item labelled on that axis rounds (half up) outside ``scale``.

    Acc and within-one round a score into the scale and clip it there, so a 1-10 judge's 10 would count
    as a match with a label of 5; ``meta agreement`` refuses such a file for that reason. A score that
    rounds into the scale (5.4 on 1-5) is not off it: the clip changes nothing.
    """
    lo, hi = scale
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for j, per in pred.items():
        for a, h in human.items():
            if a not in per:
                continue
            x = np.asarray(per[a], dtype=np.float64)
            x = x[np.isfinite(x) & np.isfinite(np.asarray(h, dtype=np.float64))]
            rounded = np.floor(x + 0.5)
            if ((rounded < lo) | (rounded > hi)).any():
                out.setdefault(j, {})[a] = (float(x.min()), float(x.max()))
    return out


def _off_scale_why(ranges: Mapping[str, tuple[float, float]], scale: tuple[int, int]) -> str:
    """Why a judge's Acc and within-one are left out: its range on each axis off the scale."""
    lo, hi = scale
    reach: dict[str, list[str]] = {}  # (axes that reach as far, named together)
    for a, (low, high) in ranges.items():
        if low < lo - 0.5 and high >= hi + 0.5:
            far = f"from {low:g} to {high:g}"
        else:
            far = f"up to {high:g}" if high >= hi + 0.5 else f"down to {low:g}"
        reach.setdefault(far, []).append(target_title(a))
    parts = [f"{far} on {' and '.join(axes)}" for far, axes in reach.items()]
    return f"answers {' and '.join(parts)} on the {lo}-{hi} label scale"


def without_off_scale_accuracy(report: AgreementReport, off: Mapping[str, Mapping[str, tuple[float, float]]],
                               scale: tuple[int, int] = DEFAULT_SCALE) -> AgreementReport:
    """``report`` with the Acc and within-one of every judge in ``off`` (:func:`off_scale_ranges`) left
    out (NaN, the reason in ``why``) on its off-scale axes and on the Overall (the mean of the axes'),
    and so in the paired differences it takes part in. Its correlations and errors stay: they read the
    raw scores."""
    if not off:
        return report
    lo, hi = scale
    why = {j: f"{_off_scale_why(r, scale)}: accuracy would clip its scores into {lo}-{hi} and count them "
              "as matches" for j, r in off.items()}

    def blank(stats: Mapping[str, Estimate], reason: str) -> dict[str, Estimate]:
        return {k: Estimate(math.nan, why=reason) if k in ROUNDED_STATISTICS else e for k, e in stats.items()}

    cells = {j: dict(per) for j, per in report.cells.items()}
    for j, ranges in off.items():
        for t in (*ranges, OVERALL):
            cells[j][t] = replace(cells[j][t], stats=blank(cells[j][t].stats, why[j]))
    differences = {pair: dict(per) for pair, per in report.differences.items()}
    for (a, b), per in differences.items():
        for j in (a, b):
            for t in (*off.get(j, {}), OVERALL) if j in off else ():
                per[t] = blank(per[t], why[j])
    return replace(report, cells=cells, differences=differences)


def off_scale_notes(rows: Sequence[JudgeRow], scale: tuple[int, int] = DEFAULT_SCALE) -> list[str]:
    """One sentence per judge whose scores lie off the label scale (:attr:`JudgeRow.off_scale`)."""
    out = []
    for r in rows:
        if r.off_scale:
            where = ", ".join(target_title(t) for t in (*r.off_scale, OVERALL))
            out.append(f"Judge {r.judge} {_off_scale_why(r.off_scale, scale)}: its Acc and within-one are "
                       f"left out ({where}), since accuracy would clip its scores into the scale and count "
                       "them as matches; its r and MSE stay. Put its scores on the label scale to compare "
                       "them.")
    return out


class JudgesResult(NamedTuple):
    """What :func:`judges_report` gives.

    Attributes:
        report: The agreement of every judge with the labels.
        table: Its Table 2 rows.
        calibrated: The metric-calibrated judge (None if not added).
        scores: ``scores[judge][axis]``: the scores compared, aligned with the labelled items.
    """

    report: AgreementReport
    table: list[JudgeRow]
    calibrated: CalibratedJudge | None
    scores: dict[str, dict[str, FloatArray]]


def judges_report(rows: Sequence[ResultRow], items: Sequence[Item], higher_is_better: Direction,
                  *, judges: Sequence[str] | None = None, calibrated: bool = True, n_folds: int = 5,
                  alpha: float = 1.0, prediction: str = "expected", bootstrap: int = 2000,
                  seed: int = DEFAULT_SEED, level: float = 0.95,
                  stored: StoredSeries | None = None, config_key: ConfigKey | None = None) -> JudgesResult:
    """Agreement of every stored judge (and the metric-calibrated one) with the suite's labels.

    A judge configuration with no scored item stays in the table, with no statistics and its
    coverage, so a judge whose server was down for the whole run is seen, not dropped.

    Args:
        rows: Stored result rows.
        items: Suite items; only labelled ones enter the table.
        higher_is_better: Direction of each stored metric (for the calibrated judge's features).
        judges: Judges to include (labels, or names with one configuration); every judge if None.
        calibrated: Add the metric-calibrated judge (skipped quietly when no metric is stored).
        n_folds: Folds of the calibrated judge's grouped cross-validation.
        alpha: L2 penalty of the calibrated judge.
        prediction: The calibrated judge's score, see :func:`calibrated_scores`.
        bootstrap: Cluster-bootstrap replicates for the intervals.
        seed: Seed of the bootstrap and of the fold assignment.
        level: Interval coverage.
        stored: The rows already split (``StoredSeries.of(rows)``), read instead of ``rows``.
        config_key: What configuration a metric's values are stored under now
            (:func:`robojudge.metric_info.registry_config_key`): the calibrated judge reads a metric
            stored under several versions at the installed one
            (:func:`robojudge.report._leaderboard.one_version`).

    Returns:
        The agreement report (no correlation over fewer than
        :data:`~robojudge.meta.MIN_CORRELATION_PAIRS` items), its Table 2 rows, the calibrated judge
        (None if not added) and the scores of every judge on the labelled items.

    Raises:
        ValueError: No labels, nothing to compare, or an unknown or ambiguous judge in ``judges``.
    """
    labelled = [it for it in items if it.labels is not None]
    human = label_scores(labelled)
    if not labelled or not any(np.isfinite(v).any() for v in human.values()):
        raise ValueError("the suite has no PA or IA labels to compare judges with")
    strata = strata_of(labelled)  # (a clip in two sources is the manifest's error: said before anything)
    known = judge_series(rows) if stored is None else list(stored.judges)
    chosen: list[JudgeSeries] = known if judges is None else [resolve_judge(known, j) for j in judges]
    pred: dict[str, dict[str, FloatArray]] = {j.label: {a: column(j.values(a), labelled) for a in AXES}
                                              for j in chosen}
    cal: CalibratedJudge | None = None
    problem = None
    if calibrated:
        # Built once: both the check that there is something to learn from and the fit read them.
        feats, older = calibration_columns(rows, labelled, higher_is_better, NOT_FEATURES, stored=stored,
                                           config_key=config_key)
        problem = calibration_problem(labelled, n_folds=n_folds, seed=seed) if feats else None
        if feats and problem is None:  # else it is left out (the CLI says why)
            cal = calibrated_scores(rows, labelled, higher_is_better, n_folds=n_folds, alpha=alpha, seed=seed,
                                    prediction=prediction, features=feats, left_out=older)
            pred[CALIBRATED] = cal.scores
    if not pred:
        raise ValueError(f"no judge results to compare, and {problem}" if problem
                         else "no judge results and no metric values in the store")
    clusters = clusters_of(labelled)
    # The pairs' differences are taken on the draws of the judges' own intervals (App. E.1's paired
    # bootstrap).
    report = agreement_table(pred, human, clusters, strata, bootstrap=bootstrap, seed=seed,
                             level=level, pairs=difference_pairs(pred, human), rank_stats=False)
    # A judge scoring on another scale (a rubric file with id pa and score_max 10): its clipped Acc is
    # left out, as `meta agreement` refuses such scores.
    off = off_scale_ranges(pred, human, DEFAULT_SCALE)
    report = without_off_scale_accuracy(report, off, DEFAULT_SCALE)
    scored = {j: {a: np.isfinite(p[a]) & np.isfinite(human[a]) for a in AXES} for j, p in pred.items()}
    stages = {j.label: st for j in chosen if (st := judge_stage(j)) is not None}
    table = [replace(r, base_model=stages[r.judge][0], stage=stages[r.judge][1]) if r.judge in stages else r
             for r in judge_table(report, scored, clusters)]
    table = [replace(r, off_scale=dict(off[r.judge])) if r.judge in off else r for r in table]
    return JudgesResult(report, table, cal, pred)


@dataclass(frozen=True)
class Coverage:
    """What a judge configuration did with one rubric over the suite's items.

    ``stale`` counts items judged before their video or instruction changed: their rows were left out
    (:func:`robojudge.run.stale_rows`), so they are neither scored nor never asked.
    """

    judge: str
    axis: str
    """The rubric: ``pa``, ``ia`` or another rubric's id (``pla_physical_commonsense``)."""
    items: int
    scored: int
    unparsable: int
    failed: int
    not_run: int
    stale: int = 0


def judge_coverage(rows: Sequence[ResultRow], items: Sequence[Item], *, stored: StoredSeries | None = None,
                   stale: Sequence[ResultRow] = ()) -> list[Coverage]:
    """Per judge configuration and rubric: items scored, unparsable (ok rows without a score), failed
    (error rows), stale and never run, over ``items``. ``stored``: the rows already split, read instead;
    ``stale``: the rows left out of ``rows`` because their inputs changed since (counted apart, not as
    never run).

    Every rubric a judge was run with has a line: PA and IA for each PA/IA configuration (a missing one
    as never run), then its other rubrics (``pla_physical_commonsense``, ``sa_vlm1``...), under the
    configuration they share their settings with, else under their own series' label
    (:func:`~robojudge.report._series.rubric_owners`). Only PA and IA were counted, so a rubric that fed
    RoboPhys-3D but was never asked on some items had no line (audit reportdata F3)."""
    ids = {it.item_id for it in items}
    gone: dict[tuple[str, str, str], set[str]] = {}
    for r in stale:
        gone.setdefault((r.metric, r.config_hash, r.version), set()).add(r.item_id)

    def counted(label: str, rubric: str, s: Series | None) -> Coverage:
        scored = len(ids & set(s.values)) if s else 0
        unparsable = len(ids & s.unscored) if s else 0
        failed = len(ids & s.failed) if s else 0
        old = len(ids & gone.get((s.key.metric, s.key.config_hash, s.key.version), set())) if s else 0
        return Coverage(label, rubric, len(ids), scored, unparsable, failed,
                        len(ids) - scored - unparsable - failed - old, old)

    out = []
    judges = judge_series(rows) if stored is None else stored.judges
    seen = {(s.key.metric, s.key.config_hash, s.key.version) for j in judges for s in j.axes.values()}
    labels = {j.label for j in judges}
    others: dict[str, list[tuple[str, Series]]] = {}
    for label, rubric, s in rubric_owners(rows, judges, stored=stored).values():
        if rubric not in AXES:
            others.setdefault(label, []).append((rubric, s))
    for j in judges:
        out += [counted(j.label, a, j.axes.get(a)) for a in AXES]
        out += [counted(j.label, r, s) for r, s in sorted(others.pop(j.label, []), key=lambda rs: rs[0])]
    for label, group in sorted(others.items()):
        out += [counted(label, r, s) for r, s in sorted(group, key=lambda rs: rs[0])]
    # A judge configuration whose every row is stale (the suite changed since it ran) has no series
    # above; it still has a line, all of its items stale, rather than vanishing from the table.
    for j in judge_series(stale) if stale else ():
        keys = {a: (s.key.metric, s.key.config_hash, s.key.version) for a, s in j.axes.items()}
        if not keys or any(k in seen for k in keys.values()):
            continue
        label = j.label if j.label not in labels else f"{j.label} (stale)"
        for a in AXES:
            old = len(ids & gone.get(keys[a], set())) if a in keys else 0
            out.append(Coverage(label, a, len(ids), 0, 0, 0, len(ids) - old, old))
    return out


@dataclass(frozen=True)
class SelfConsistency:
    """A judge configuration's agreement with itself across turns on one rubric (RoboWorM App. D, Tables
    D2-D3), over the stored rows of the suite's items judged with several turns (``--samples``).

    Attributes:
        judge: The judge's label (for PA and IA as in :func:`judge_names`; for another rubric the label of
            the PA/IA configuration it shares its settings with, else its own series' label).
        rubric: The rubric's id (``pa``, ``ia``, ``roboworm_physics``, a rubric file's id).
        items: Items with votes (judged with several turns).
        agree: Of those, items whose turns all gave the same score: the turns that answered, where a
            turn's request failed (a transport error is no disagreement; an unparsable reply is one).
        mean_std: Mean over those items of the population standard deviation of their turns' scores, on
            the rubric's own scale.
        turns: The turn counts seen (one, unless the suite was judged with several ``--samples``).
        latency_per_video_s: Mean over those items of ``details.latency_per_video_s``: every turn's request
            seconds over the seconds of video judged (NaN when no row says).
        scale: ``(lowest, highest)`` score of a built-in rubric the rows were judged with unchanged (its
            digest matches), else None.
        partial: Items with turns whose request failed (their agreement is over the turns answered).
    """

    judge: str
    rubric: str
    items: int
    agree: int
    mean_std: float
    turns: tuple[int, ...]
    latency_per_video_s: float = math.nan
    scale: tuple[float, float] | None = None
    partial: int = 0
    """Items of ``items`` with turns whose request failed, their agreement taken over fewer turns."""

    @property
    def agreement_rate(self) -> float:
        return self.agree / self.items if self.items else math.nan


def _rubric_scale(config: Mapping[str, object] | None) -> tuple[float, float] | None:
    """The score range of the built-in rubric a stored config names, when its digest is the built-in one's
    (a rubric file of the same id may score on another scale)."""
    from robojudge.judges import RUBRICS  # (the rubric files, read only when a voted row is reported)

    rubric = (config or {}).get("rubric")
    if not isinstance(rubric, Mapping) or str(rubric.get("id")) not in RUBRICS:
        return None
    built_in = RUBRICS.get(str(rubric["id"]))
    if rubric.get("digest") != built_in.digest:
        return None
    return built_in.score_min, built_in.score_max


def turn_count(details: dict[str, Any]) -> int:
    """How many turns a voted row asked: ``n_turns``; in rows stored before that key existed, ``turns``
    held this count (where it now holds the turns' records); else the number of votes."""
    for value in (details.get("n_turns"), details.get("turns")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    turns, votes = details.get("turns"), details.get("votes")
    return len(turns) if isinstance(turns, list) else len(votes) if isinstance(votes, list) else 0


def judge_self_consistency(rows: Sequence[ResultRow], items: Sequence[Item], *,
                           stored: StoredSeries | None = None) -> list[SelfConsistency]:
    """Per judge configuration and rubric with voted items (RoboWorM App. D, Table D3): agreement rate,
    mean score std across turns and latency per video second, from the stored rows (every run that judged
    them, not only the last, as the judge command's summary counts).

    Every rubric with votes is covered, not only PA and IA (``roboworm_physics``, the rubric RoboWorM's
    Table D3 measures, scores Bad/Medium/Good as 1-3): each is its own row, never pooled with another, as
    the spread of a 1-3 verdict and of a 1-5 score are not comparable.
    """
    ids = {it.item_id for it in items}
    owner = rubric_owners(rows, judge_series(rows) if stored is None else stored.judges, stored=stored)
    votes: dict[tuple[str, str], list[tuple[bool, float, int, float, bool]]] = {}
    scales: dict[tuple[str, str], tuple[float, float] | None] = {}
    for r in rows:
        who = owner.get(SeriesKey(r.metric, r.config_hash, r.version))
        d = r.details or {}
        if who is None or r.item_id not in ids or "agreement" not in d:
            continue
        latency = d.get("latency_per_video_s")
        timed = float(latency) if isinstance(latency, int | float) else math.nan
        # a turn whose request failed is left out (rows stored before counted it as a disagreement)
        partial = bool(d.get("failed_turns"))
        if partial:
            from robojudge.judges import answered_agreement

            agreed = answered_agreement(d)
        else:
            agreed = bool(d["agreement"])
        votes.setdefault(who[:2], []).append((agreed, float(d.get("std") or 0.0), turn_count(d), timed,
                                              partial))
        scales.setdefault(who[:2], _rubric_scale(who[2].config))
    out = []
    for (label, rubric), v in sorted(votes.items()):
        turns = tuple(sorted({t for _, _, t, _, _ in v}))
        latencies = [t for _, _, _, t, _ in v if math.isfinite(t)]
        out.append(SelfConsistency(label, rubric, len(v), sum(a for a, *_ in v),
                                   float(np.mean([sd for _, sd, *_ in v])), turns,
                                   float(np.mean(latencies)) if latencies else math.nan,
                                   scales[label, rubric], sum(p for *_, p in v)))
    return out


# --- writing -----------------------------------------------------------------------------------------

def judges_markdown(table: Sequence[JudgeRow], report: AgreementReport, *, title: str = "Judges",
                    note: str = "") -> str:
    """Table 2 layout in Markdown, with each judge's scored and unscored counts; best values bold."""
    targets = (*report.axes, OVERALL)
    ci = (f"{report.level:.0%} percentile intervals over {report.n_replicates} cluster-bootstrap replicates"
          if report.n_replicates else "no bootstrap")
    header = "| judge | scored | unscored | " + " | ".join(f"{target_title(t)} {name}" for t in targets
                                                           for name in ("r ↑", "Acc ↑", "MSE ↓")) + " |"
    lines = [f"# {md_escape(title)}", "", "r: Pearson, Acc: exact-match accuracy, MSE: mean squared error "
             "against the suite's labels; Overall r and MSE pool PA and IA, Overall Acc is the mean of the "
             f"two (RoboJudge Table 2). Best per column in bold; {ci}. Scored and unscored count labelled "
             "(item, axis) pairs; † marks fewer than 10 items or 5 clips (Overall: on either axis).", ""]
    for extra in (judges_table_note(table, report), note, BEST_NOT_A_TEST if report.differences else ""):
        if extra:
            lines += [md_prose(extra), ""]
    lines += [header, "| --- | ---: | ---: | " + " | ".join("---" for _ in range(3 * len(targets))) + " |"]
    for row in table:
        cells = []
        for t in targets:
            for col, _, _ in JUDGE_COLUMNS:
                text = format_estimate(row.cells[t, col]) + judge_mark(row, t, col)
                cells.append(f"**{text}**" if (t, col) in row.best else text)
        lines.append(f"| {md_escape(row.judge)} | {sum(row.n.values())} | {sum(row.n_unscored.values())} | "
                     + " | ".join(cells) + " |")
    keys = judge_notes(table, targets, name=md_escape)  # (the judges' names escaped, the rest our own)
    if keys:
        lines += ["", *keys]
    return "\n".join(lines + differences_markdown(report) + stages_lines(table, report)) + "\n"


def judge_mark(row: JudgeRow, target: str, col: str) -> str:
    """The small-n dagger of a cell, else the double dagger of an approximate interval it shows."""
    if target in row.small:
        return " †"
    shown = not math.isnan(row.cells[target, col].low)
    return f" {APPROX_MARK}" if target in row.approximate and shown else ""


def judge_notes(table: Sequence[JudgeRow], targets: Sequence[str],
                name: Callable[[str], str] = str) -> list[str]:
    """The sentences under Table 2: the key to the double dagger where a cell shows it, what the chance row
    is (:func:`chance_note`), and why cells with a value show no interval
    (:func:`robojudge.report._leaderboard.withheld_notes`), each judge named through ``name``
    (``md_escape`` for Markdown)."""
    out = [APPROX_NOTE] if any(judge_mark(r, t, col).endswith(APPROX_MARK) for r in table for t in targets
                               for col, _, _ in JUDGE_COLUMNS) else []
    withheld = withheld_notes((f"{name(r.judge)} {target_title(t)} {col}", r.cells[t, col]) for r in table
                              for t in targets for col, _, _ in JUDGE_COLUMNS)
    return out + chance_note(table) + withheld


def stages_lines(table: Sequence[JudgeRow], report: AgreementReport) -> list[str]:
    """The judges that declare a training stage, by base model then stage (RoboJudge Table 3's layout:
    the base model, + SFT, + SFT + RL); no lines when none does."""
    staged = sorted((r for r in table if r.stage is not None and r.base_model is not None),
                    key=lambda r: (str(r.base_model), STAGE_ORDER.index(str(r.stage))
                                   if r.stage in STAGE_ORDER else len(STAGE_ORDER), r.judge))
    if not staged:
        return []
    targets = (*report.axes, OVERALL)
    lines = ["", "## Training stages", "", "Judges whose config declares a training stage, grouped by the "
             "model they were trained from (RoboJudge Table 3); the values are those of the table above.", "",
             "| base model | stage | judge | " + " | ".join(f"{target_title(t)} {name}" for t in targets
                                                  for name in ("r ↑", "Acc ↑", "MSE ↓")) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in range(3 * len(targets))) + " |"]
    for row in staged:
        cells = [format_estimate(row.cells[t, col]) + judge_mark(row, t, col)
                 for t in targets for col, _, _ in JUDGE_COLUMNS]
        stage = STAGE_TITLES.get(str(row.stage), str(row.stage))
        lines.append(f"| {md_escape(str(row.base_model))} | {stage} | {md_escape(row.judge)} | "
                     + " | ".join(cells) + " |")
    return lines


def write_judges(table: Sequence[JudgeRow], report: AgreementReport, out_dir: str | Path, *,
                 note: str = "", named: bool = True) -> list[Path]:
    """Write ``judges.md``, ``judges.csv`` and ``judge_differences.csv``; the first CSV has
    ``<target>_<col>_best`` booleans, the second the paired differences between judges
    (:mod:`robojudge.report._judge_differences`; a header only without a pair).

    ``named``: as :func:`robojudge.report.write_leaderboard`'s (False: links in ``out_dir`` are followed
    only while they stay inside it).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    targets = (*report.axes, OVERALL)
    fields = ["judge", *(f"n_{a}" for a in report.axes), *(f"unscored_{a}" for a in report.axes)]
    for t in targets:
        fields.append(f"{t}_small_n")
        for col, _, _ in JUDGE_COLUMNS:
            fields += [f"{t}_{col}", f"{t}_{col}_low", f"{t}_{col}_high", f"{t}_{col}_best"]
    fields += ["stage", "base_model"]
    with replacing(out, named=named) as files:  # both whole, or (on an error) the old ones untouched
        with files.open(out / "judges.csv", newline="") as f:
            w = SafeCsvWriter(f)
            w.writerow(fields)
            for row in table:
                vals: list[object] = [row.judge, *(row.n[a] for a in report.axes),
                                      *(row.n_unscored.get(a, "") for a in report.axes)]
                for t in targets:
                    vals.append(t in row.small)
                    for col, _, _ in JUDGE_COLUMNS:
                        e = row.cells[t, col]
                        vals += [e.value, e.low, e.high, (t, col) in row.best]
                vals += [row.stage or "", row.base_model or ""]
                w.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in vals])
        with files.open(out / "judge_differences.csv", newline="") as f:
            dw = SafeCsvWriter(f)
            for line in difference_csv_rows(report):
                dw.writerow(line)
        files.write_text(out / "judges.md", judges_markdown(table, report, note=note))
    return [out / "judges.md", out / "judges.csv", out / "judge_differences.csv"]


def served_model_notes(rows: Iterable[ResultRow], judges: Sequence[JudgeSeries]) -> list[str]:
    """One warning per judge configuration whose current rows were answered by more than one model as the
    server named it (:func:`robojudge.store.served_models`), with the rows of each.

    Which endpoint answered is not part of a judge's identity (docs/judges.md, "Results and cache"): weights
    swapped behind one model name, or a fleet serving two, give rows of one configuration that one table
    row would report as one judge.
    """
    label_of = {s.key: j.label for j in judges for s in j.axes.values()}
    counts: dict[str, Counter[str]] = {}
    for r in rows:
        label = label_of.get(SeriesKey(r.metric, r.config_hash, r.version))
        if label is None or r.status != "ok" or getattr(r, "superseded_at", None) is not None:
            continue
        for model in served_models(r.details):
            counts.setdefault(label, Counter())[model] += 1
    return [f"{label}: its rows were answered by {len(c)} models as the server named them "
            f"({', '.join(f'{m} in {n} rows' for m, n in sorted(c.items()))}); the judge's identity has no "
            "endpoint, so these are reported as one judge although different weights may have answered"
            for label, c in sorted(counts.items()) if len(c) > 1]
