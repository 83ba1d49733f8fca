"""Generator leaderboards (RoboJudge Table 8), the stored metrics as item columns, and the
metric-calibrated judge.

Scores of an item come from one of three places: the suite's labels (human or planted), a VLM judge's
stored rows (:mod:`robojudge.report._judges`), or the metric-calibrated judge, an ordinal model from
the stored metric values to the labels whose predictions are all out-of-fold (folds grouped by clip).
Stored metrics are read per configuration (:mod:`robojudge.report._series`): a metric stored under
two configs or versions gives two columns, never one merged column.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge._files import replacing
from robojudge.meta import (
    OVERALL,
    ConfigKey,
    CrossValidated,
    Estimate,
    Leaderboard,
    LeaderboardEntry,
    PairedDifference,
    coverage_notes,
    cross_validate_ordinal,
    generator_leaderboard,
    grouped_folds,
    lone_clusters_note,
    paired_difference,
)
from robojudge.meta._agreement import FloatArray
from robojudge.metric_info import NOT_VIDEO_QUALITY
from robojudge.report._series import Series, StoredSeries, _started, metric_series
from robojudge.report._tables import (
    APPROX_MARK,
    APPROX_NOTE,
    SMALL_MARK,
    is_approximate,
    is_small,
    md_escape,
    md_prose,
    small_note,
)
from robojudge.report._unset import generator_groups
from robojudge.store import ResultRow, SafeCsvWriter
from robojudge.suite import Item, clip_source_conflicts, source_text

AXES = ("pa", "ia")
#: Name of the metric-calibrated judge in the judges table.
CALIBRATED = "metric-calibrated"
#: Expected scores of the calibrated judge closer than this are one score when generators are ranked or
#: rollouts picked. A fit stops at a gradient of 1e-7, so its last digits are noise: a model that had
#: nothing to learn scored held-out items up to 4e-6 apart (2e-7 at the default alpha of 1), and two
#: generators every human rated alike were ranked 1 and 2 by a difference of 1e-8.
CALIBRATED_TOLERANCE = 1e-4
#: A metric's direction: True if higher is better, False if lower is; an id the lookup does not know
#: raises ``KeyError`` (``robojudge.metric_info.direction`` raises its ``UnknownNameError``).
Direction = Callable[[str], bool]


def known_direction(higher_is_better: Direction, metric: str) -> bool | None:
    """``higher_is_better(metric)``, or None for an id it does not know (an imported column, a plugin
    no longer installed): the report shows that column as stored and says its direction is unknown."""
    try:
        return higher_is_better(metric)
    except KeyError:
        return None


def column(values: dict[str, float], items: Sequence[Item]) -> FloatArray:
    """``values`` (by item id) aligned with ``items``; NaN where an item has none."""
    return np.array([values.get(it.item_id, math.nan) for it in items], dtype=np.float64)


def label_scores(items: Sequence[Item]) -> dict[str, FloatArray]:
    """The suite's PA and IA labels per item (NaN where absent)."""
    def get(it: Item, axis: str) -> float:
        v = getattr(it.labels, axis, None) if it.labels is not None else None
        return math.nan if v is None else float(v)

    return {a: np.array([get(it, a) for it in items], dtype=np.float64) for a in AXES}


def overall_scores(items: Sequence[Item]) -> FloatArray:
    """The items' ``labels.overall`` (NaN where absent): RoboPhys-3D's human score, a 10-point holistic
    rating, or the mean of several raters' (App. D, eq. 11)."""
    return np.array([math.nan if it.labels is None or it.labels.overall is None else float(it.labels.overall)
                     for it in items], dtype=np.float64)


@dataclass(frozen=True)
class Feature:
    """One stored metric configuration as a column over items.

    Attributes:
        series: The stored series (its label names the column).
        direction: True if higher is better, False if lower is, None if unknown.
        values: Raw values aligned with the items (NaN where missing).
    """

    series: Series
    direction: bool | None
    values: FloatArray

    @property
    def label(self) -> str:
        return self.series.label

    @property
    def metric(self) -> str:
        return self.series.metric

    @property
    def oriented(self) -> FloatArray:
        """Values that grow with quality (negated when lower is better; as stored when unknown)."""
        out: FloatArray = -self.values if self.direction is False else self.values
        return out


def metric_columns(rows: Sequence[ResultRow], items: Sequence[Item], higher_is_better: Direction,
                   *, stored: StoredSeries | None = None) -> list[Feature]:
    """Every stored (non-judge) metric configuration with a value on ``items``, as a column, by label.

    Rows of item ids outside ``items`` (set-level results, another suite) are not part of any column;
    a configuration with no value on ``items`` (only failures, say) gives no column. ``stored``: the
    rows already split (``StoredSeries.of(rows)``), read instead of ``rows``.
    """
    series = metric_series(rows) if stored is None else stored.metrics
    out = []
    for s in sorted(series, key=lambda s: s.label):
        values = column(s.values, items)
        if np.isfinite(values).any():
            out.append(Feature(s, known_direction(higher_is_better, s.metric), values))
    return out


def clusters_of(items: Sequence[Item]) -> list[str]:
    """Bootstrap cluster and CV group per item: its clip id, else the item itself."""
    return [it.clip_id or f"item:{it.item_id}" for it in items]


def strata_of(items: Sequence[Item]) -> list[str]:
    """Bootstrap stratum per item: its source corpus ('' where unset).

    Raises:
        ValueError: Two items of one clip have different sources (naming both items and the field):
            a clip is resampled within its source, so it cannot span two.
    """
    conflicts = clip_source_conflicts(items)
    if conflicts:
        seen, it = conflicts[0]
        raise ValueError(
            f"clip {it.clip_id!r} spans two sources: item {seen.item_id!r} has {source_text(seen.source)} "
            f"and item {it.item_id!r} {source_text(it.source)}; the cluster bootstrap resamples a clip "
            "within its source, so give every item of a clip the same source field (`robojudge suite "
            "validate` names them all)")
    return [it.source or "" for it in items]



@dataclass(frozen=True)
class CalibratedJudge:
    """Out-of-fold predictions of the metric-calibrated judge.

    Attributes:
        metrics: The metric configurations used as features (series labels), in column order.
        scores: ``scores[axis]``: the held-out expected score of every item.
        folds: ``folds[axis]``: the cross-validation result per axis.
        alpha: L2 penalty.
        prediction: ``"expected"`` (expected score, continuous) or ``"class"`` (most probable score).
        left_out: Versions of those metrics stored beside the one used (``metric vN``; :func:`one_version`).
    """

    metrics: tuple[str, ...]
    scores: dict[str, FloatArray]
    folds: dict[str, CrossValidated]
    alpha: float
    prediction: str = "expected"
    left_out: tuple[str, ...] = ()


#: Stored metrics the calibrated judge does not learn from by default
#: (:data:`robojudge.metric_info.NOT_VIDEO_QUALITY`): the random baseline carries no signal, and the
#: simulator's own record of the outcome does not come with a video from a real world model, so a judge
#: fit on it would not transfer.
NOT_FEATURES: frozenset[str] = NOT_VIDEO_QUALITY


def calibration_features(rows: Sequence[ResultRow], items: Sequence[Item], higher_is_better: Direction,
                         exclude: frozenset[str] = NOT_FEATURES, *, stored: StoredSeries | None = None,
                         config_key: ConfigKey | None = None) -> list[Feature]:
    """The columns the calibrated judge learns from: the stored configurations of every metric not in
    ``exclude`` (each configuration its own feature), of one version per metric (:func:`one_version`)."""
    feats, _ = calibration_columns(rows, items, higher_is_better, exclude, stored=stored,
                                   config_key=config_key)
    return feats


def calibration_columns(rows: Sequence[ResultRow], items: Sequence[Item], higher_is_better: Direction,
                        exclude: frozenset[str] = NOT_FEATURES, *, stored: StoredSeries | None = None,
                        config_key: ConfigKey | None = None) -> tuple[list[Feature], list[str]]:
    """:func:`calibration_features`, and the versions left out of them (``metric vN``, for the note)."""
    feats = metric_columns(rows, items, higher_is_better, stored=stored)
    return one_version([f for f in feats if f.metric not in exclude], config_key)


def one_version(feats: Sequence[Feature], config_key: ConfigKey | None = None
                ) -> tuple[list[Feature], list[str]]:
    """``feats`` with the columns of one version of each metric, and the versions left out (``metric vN``).

    An upgraded robojudge computes a changed metric again under its new version, and the rows of the
    earlier one stay current beside them: as two features, the metric would weigh twice in the fit (on
    identical values the L2 penalty then gave other scores than a fresh store). Kept, as the RoboPhys-3D
    section reads it: the installed version (``config_key``) where it is stored; without ``config_key``,
    or for a metric it does not know, the version whose rows were written last (a rescore's; the highest
    where the rows do not say). Each configuration of the kept version stays a feature of its own.
    """
    versions: dict[str, dict[str, list[Feature]]] = {}
    for f in feats:
        versions.setdefault(f.metric, {}).setdefault(f.series.key.version, []).append(f)
    chosen: dict[str, str] = {}
    left_out: list[str] = []
    for metric, by_version in versions.items():
        if len(by_version) == 1:
            continue
        installed = None
        if config_key is not None:
            try:
                installed = config_key(metric, None)[1]
            except (KeyError, ValueError):  # a metric this robojudge does not know
                installed = None
        if installed not in by_version:
            installed = max(by_version, key=lambda v: (max(_written(f.series) for f in by_version[v]),
                                                       _version_order(v)))
        chosen[metric] = installed
        left_out += [f"{metric} v{v}" for v in sorted(by_version) if v != installed]
    kept = [f for f in feats if chosen.get(f.metric, f.series.key.version) == f.series.key.version]
    return kept, sorted(left_out)


def _written(s: Series) -> tuple[Any, ...]:
    """When a series was first written, comparable between series (not known: first)."""
    when = _started(s)
    return (0,) if when is None else (1, *when)


def _version_order(version: str) -> tuple[int, int, str]:
    """Versions in the order a metric's come (numbers, as robojudge's are), for rows that do not say when
    they were written."""
    return (1, int(version), "") if version.isdigit() else (0, 0, version)


def calibration_problem(items: Sequence[Item], *, n_folds: int = 5, seed: int = DEFAULT_SEED) -> str | None:
    """Why the calibrated judge cannot score ``items``, or None: it scores each clip with a model fitted
    on the other clips' labels (grouped cross-validation, ``n_folds`` folds dealt with ``seed``), so
    every axis needs labels on 2 clips, and labels of two values or more in some fold's training data.
    A model fitted to one value has no order to learn: it scores every item alike but for its last
    digits, and those ranked generators and picked rollouts."""
    labels = label_scores(items)
    groups = clusters_of(items)
    fold = grouped_folds(groups, n_folds, seed) if items else np.zeros(0, dtype=np.int64)
    for a in AXES:
        y = labels[a]
        ok = np.isfinite(y)
        if not ok.any():
            return f"no {a.upper()} labels in the suite to calibrate on"
        clips = {g for g, has in zip(groups, ok, strict=True) if has}
        if len(clips) < 2:
            return (f"the calibrated judge scores each clip with a model fitted on the other clips' labels "
                    f"(grouped cross-validation), so it needs labelled items of at least 2 clips; the "
                    f"{a.upper()} labels here come from {len(clips)}")
        values = np.unique(y[ok])
        if values.size == 1:
            return (f"every {a.upper()} label is {values[0]:g}, so there is no order for the calibrated "
                    "judge to learn (its scores would differ only by fitting noise)")
        seen = [np.unique(y[ok & (fold != f)]).size for f in np.unique(fold)]
        if max(seen) < 2:
            return (f"the {a.upper()} labels take {values.size} values, but each of the {len(seen)} folds "
                    "of the calibrated judge's cross-validation (grouped by clip) trains on labels of one "
                    "value, so no fold has an order to learn: label more clips")
    return None


def calibrated_scores(rows: Sequence[ResultRow], items: Sequence[Item],
                      higher_is_better: Direction, *, n_folds: int = 5, alpha: float = 1.0,
                      seed: int = DEFAULT_SEED, prediction: str = "expected",
                      exclude: frozenset[str] = NOT_FEATURES,
                      features: Sequence[Feature] | None = None, config_key: ConfigKey | None = None,
                      left_out: Sequence[str] = ()) -> CalibratedJudge:
    """Fit the metric-calibrated judge per axis by grouped K-fold CV and return held-out scores.

    One ordinal model per axis maps the stored metric values to that axis's labels; each item is
    scored by the model of the fold that held its clip out. Metrics in ``exclude`` are not used
    (:data:`NOT_FEATURES` by default); two configurations of one metric are two features, and of a
    metric stored under several versions one version is read (``config_key``: :func:`one_version`).
    ``prediction`` picks the score: the expected score (continuous; best for r and MSE) or the most
    probable class (an integer; often better exact accuracy when labels cluster at the ends of the
    scale). ``features``: the columns :func:`calibration_columns` gives for these rows and items,
    when the caller has them already (``rows`` is then not read), with the versions it left out
    (``left_out``).

    Scores closer than :data:`CALIBRATED_TOLERANCE` are one score to a ranking or a pick.

    Raises:
        ValueError: No stored metric values, labels the judge cannot learn from
            (:func:`calibration_problem`), or ``features`` not aligned with ``items``.
    """
    if prediction not in ("expected", "class"):
        raise ValueError(f"prediction must be 'expected' or 'class', got {prediction!r}")
    if features is None:
        feats, left_out = calibration_columns(rows, items, higher_is_better, exclude, config_key=config_key)
    else:
        feats = [f for f in features if f.metric not in exclude]
        if any(f.values.shape != (len(items),) for f in feats):
            raise ValueError(f"features must be columns over the {len(items)} items given")
    if not feats:
        raise ValueError("no stored metric values to calibrate on; run `robojudge score` first")
    problem = calibration_problem(items, n_folds=n_folds, seed=seed)
    if problem is not None:
        raise ValueError(problem)
    x = np.stack([f.oriented for f in feats], axis=1)
    labels = label_scores(items)
    groups = clusters_of(items)
    scores: dict[str, FloatArray] = {}
    folds: dict[str, CrossValidated] = {}
    for a in AXES:
        if not np.isfinite(labels[a]).any():
            raise ValueError(f"no {a.upper()} labels in the suite to calibrate on")
        cv = cross_validate_ordinal(x, labels[a], groups, n_folds=n_folds, alpha=alpha, seed=seed)
        scores[a] = cv.expected if prediction == "expected" else np.where(
            cv.predicted > 0, cv.predicted.astype(np.float64), np.nan)
        folds[a] = cv
    return CalibratedJudge(tuple(f.label for f in feats), scores, folds, alpha, prediction, tuple(left_out))


def calibration_note(cal: CalibratedJudge | None) -> str:
    """The sentence saying what the calibrated judge was fit on: its penalty, prediction, features (with
    the versions left out) and folds; empty without one. ``leaderboard judges`` and ``leaderboard
    generators --scores calibrated`` write it under their tables."""
    if cal is None:
        return ""
    k = next(iter(cal.folds.values())).n_folds
    older = (" One version per metric, the installed one where stored; left out: "
             f"{', '.join(cal.left_out)}." if cal.left_out else "")
    return (f"{CALIBRATED}: ordinal logistic regression (alpha {cal.alpha:g}, {cal.prediction} score) "
            f"on {', '.join(cal.metrics)}; "
            f"out-of-fold scores from {k}-fold cross-validation grouped by clip, no VLM.{older}")


def small_standing(entry: LeaderboardEntry, target: str) -> bool:
    """Whether a generator's mean on ``target`` rests on few items or clips (Overall: on either axis)."""
    axes = list(entry.n_items) if target == OVERALL else [target]
    return any(entry.n_items[a] > 0 and is_small(entry.n_items[a], entry.n_clusters.get(a)) for a in axes)


def generator_board(items: Sequence[Item], scores: dict[str, FloatArray], *, bootstrap: int = 2000,
                    seed: int | None = DEFAULT_SEED, level: float = 0.95,
                    sort_by: str = OVERALL, tolerance: float = 0.0, matched: bool = False,
                    higher_is_better: bool = True) -> Leaderboard:
    """The generator leaderboard of ``scores`` (per axis, aligned with ``items``).

    Clusters are clip ids and strata are sources; items without a generator are one more group,
    ``"(unset)"`` (kept apart from a generator of that name: :func:`robojudge.report._unset.unset_name`).
    ``tolerance``: means closer than this tie (:data:`CALIBRATED_TOLERANCE` for the calibrated judge's).
    ``matched``: rank on the clips every ranked generator has, each generator by the mean of its clip
    means (:func:`robojudge.meta.generator_leaderboard`). ``higher_is_better``: False for scores where
    lower is better (a stored metric's).
    """
    generators = generator_groups(items)
    return generator_leaderboard(scores, generators, clusters_of(items), strata_of(items),
                                 bootstrap=bootstrap, seed=seed, level=level, sort_by=sort_by,
                                 tolerance=tolerance, matched=matched, higher_is_better=higher_is_better)


def generator_pair(items: Sequence[Item], scores: dict[str, FloatArray], a: str, b: str, *,
                   bootstrap: int = 2000, seed: int | None = DEFAULT_SEED, level: float = 0.95,
                   tolerance: float = 0.0, higher_is_better: bool = True) -> PairedDifference:
    """Generator ``a`` minus generator ``b`` on the clips both were scored on, paired by clip id, with a
    paired cluster-bootstrap interval (:func:`robojudge.meta.paired_difference`). Items without a
    generator are the group ``"(unset)"``, as on the leaderboard."""
    return paired_difference(scores, generator_groups(items), a, b, clusters_of(items), strata_of(items),
                             bootstrap=bootstrap, seed=seed, level=level, tolerance=tolerance,
                             higher_is_better=higher_is_better)


#: Under a leaderboard of scores where lower is better (a stored metric's).
LOWER_NOTE = ("Lower is better: the lowest mean ranks first, and every P(a > b) counts the lower score as "
              "the better.")
#: Under a leaderboard whose generators were scored on different clips: how to compare them alike.
MATCHED_HINT = ("`robojudge leaderboard generators --matched` ranks on the clips every generator has (each "
                "clip weighing alike), and `--pair A,B` gives the paired difference of two generators on the "
                "clips they share.")
#: Under a leaderboard where two generators share no clip (no clip ids, or ids spelled differently).
CLIP_ID_HINT = ("Items of two generators pair only through a shared clip_id: give the rollouts of one "
                "episode the same clip_id in the manifest to compare the generators clip by clip.")


def pair_notes(board: Leaderboard, *, hints: bool = True) -> list[str]:
    """The sentences on the clips behind the board's comparisons (:func:`robojudge.meta.coverage_notes`):
    with ``matched``, which clips the means are over; else one per pair scored on different clips or
    rollout counts, a warning where matching would move more than a small share of a mean or the pair
    shares no clip (:meth:`~robojudge.meta.Leaderboard.unmatched_notes`), a note otherwise, and, with
    ``hints``, how to compare them alike: :data:`MATCHED_HINT` under a warning for a pair that shares
    clips (where none does, ``--matched`` would rank nobody), :data:`CLIP_ID_HINT` where a pair shares
    no clip."""
    if board.matched:
        return [f"{s}." for s in coverage_notes(board)]
    out = [f"{'Warning' if serious else 'Note'}: {s}." for s, serious in board.unmatched_notes()]
    if out and hints:
        unmatched = board.unmatched()
        if any(c.serious and c.shared > 0 for c in unmatched):
            out.append(MATCHED_HINT)
        if any(c.shared == 0 for c in unmatched):
            out.append(CLIP_ID_HINT)
    return out


# --- writing -----------------------------------------------------------------------------------------

def format_number(v: float, digits: int = 3) -> str:
    """``v`` with ``digits`` decimals, or ``n/a`` for NaN."""
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}"


def format_estimate(e: Estimate, digits: int = 3) -> str:
    """``value [low, high]``; the value alone without an interval, ``n/a`` without a value."""
    if math.isnan(e.value):
        return "n/a"
    if math.isnan(e.low):
        return format_number(e.value, digits)
    lo, hi = format_number(e.low, digits), format_number(e.high, digits)
    return f"{format_number(e.value, digits)} [{lo}, {hi}]"


def withheld_notes(cells: Iterable[tuple[str, Estimate]], limit: int = 6) -> list[str]:
    """One sentence per reason a cell with a value shows no interval (``Estimate.why``: too few clips, or
    every resample giving the same value), naming the first ``limit`` cells it holds for."""
    places: dict[str, list[str]] = {}
    for place, e in cells:
        if e.why is not None and not math.isnan(e.value) and math.isnan(e.low):
            places.setdefault(e.why, []).append(place)
    out = []
    for why, named in places.items():
        more = f" and {len(named) - limit} more" if len(named) > limit else ""
        out.append(f"No interval for {', '.join(named[:limit])}{more}: {why}.")
    return out


def lone_sentences(n_lone: int, n_clusters: int) -> list[str]:
    """:func:`robojudge.meta.lone_clusters_note` as a sentence under a table, or none."""
    lone = lone_clusters_note(n_lone, n_clusters)
    return [f"{lone[0].upper()}{lone[1:]}."] if lone else []


def standing_mark(entry: LeaderboardEntry, target: str) -> str:
    """`` †`` on a small-n standing, `` ‡`` on one with an approximate interval, else nothing."""
    if small_standing(entry, target):
        return f" {SMALL_MARK}"
    return f" {APPROX_MARK}" if approximate_standing(entry, target) else ""


def board_notes(board: Leaderboard) -> list[str]:
    """The Markdown key to the double dagger where a standing shows it, why standings with a mean
    show no interval (:func:`withheld_notes`), and the clips behind the comparisons (:func:`pair_notes`)."""
    approx = any(approximate_standing(e, t) for e in board.entries for t in board.targets)
    # Markdown only: a generator's name is the user's, so escaped.
    cells = ((f"{md_escape(e.generator)} {target_title(t)}", e.standings[t].score) for e in board.entries
             for t in board.targets)
    lower = [LOWER_NOTE] if not board.higher_is_better else []
    return ([APPROX_NOTE] if approx else []) + withheld_notes(cells) + lone_sentences(
        board.n_lone_clusters, board.n_clusters) + [md_prose(s) for s in pair_notes(board)] + lower + [
        md_prose(s) + "." for s in board.bootstrap_notes()]


def approximate_standing(entry: LeaderboardEntry, target: str) -> bool:
    """Whether a standing that is not small-n (:func:`small_standing`) rests on fewer than
    :data:`~robojudge.meta.APPROXIMATE_CLUSTERS` clips on some scored axis it needs, and shows an
    interval: it gets the milder mark (:data:`~robojudge.report._tables.APPROX_MARK`)."""
    if small_standing(entry, target) or math.isnan(entry.standings[target].score.low):
        return False
    axes = list(entry.n_items) if target == OVERALL else [target]
    return any(entry.n_items[a] > 0 and is_approximate(entry.n_items[a], entry.n_clusters.get(a))
               for a in axes)


def target_title(target: str) -> str:
    """How a target is named in tables: ``PA``, ``IA``, ``Overall``."""
    return "Overall" if target == OVERALL else target.upper() if target in AXES else target


def overall_text(board: Leaderboard) -> str:
    """What the board's Overall is: Table 8's ``(PA + IA) / 2`` for the two label axes, else the plain mean
    of its axes, or the one axis itself (a stored metric's board)."""
    if set(board.axes) == set(AXES):
        return "Overall = (PA + IA) / 2 per generator (RoboJudge Table 8)"
    if len(board.axes) == 1:
        return f"Overall = the mean of {md_escape(board.axes[0])} itself per generator (one score per item)"
    return f"Overall = the mean of {', '.join(md_escape(a) for a in board.axes)} per generator"


def better(board: Leaderboard) -> str:
    """How a pair's share counts the upper generator: "higher", or "lower (better)" where lower is better."""
    return "higher" if board.higher_is_better else "lower (the better here)"


def _rank(rank: int | None) -> str:
    return "not ranked" if rank is None else str(rank)


def leaderboard_markdown(board: Leaderboard, *, title: str = "Generator leaderboard", note: str = "") -> str:
    """The leaderboard as Markdown: scores with CIs, ranks with their probability, adjacent pairs.

    ``note``: a paragraph under the table, such as what the scores were computed from
    (:func:`calibration_note`)."""
    ci = (f"{board.level:.0%} percentile intervals over {board.n_replicates} cluster-bootstrap replicates "
          f"({board.n_clusters} clips in {board.n_strata} {'stratum' if board.n_strata == 1 else 'strata'}, "
          f"seed {board.seed})"
          if board.n_replicates else "no bootstrap")
    head = ("| rank | generator | " + " | ".join(target_title(t) for t in board.targets)
            + " | P(rank) | rank range |")
    tied = f" Means closer than {board.tolerance:g} tie." if board.tolerance else ""
    lines = [f"# {md_escape(title)}", "", f"{overall_text(board)}; {ci}. "
             f"Ordered by {target_title(board.sort_by)}; P(rank) is the share of replicates in which the "
             "generator holds exactly its rank (among those that draw every ranked generator). A "
             f"generator without scores on a target is not ranked on it.{tied}", "", head,
             "| ---: | --- | " + " | ".join("---" for _ in board.targets) + " | ---: | --- |"]
    for e in board.entries:
        s = e.standings[board.sort_by]
        cells = " | ".join(format_estimate(e.standings[t].score) + standing_mark(e, t) for t in board.targets)
        rank_range = f"{s.rank_low}-{s.rank_high}" if s.rank_low else "n/a"
        prob = format_number(s.rank_prob, 2)
        lines.append(f"| {_rank(s.rank)} | {md_escape(e.generator)} | {cells} | {prob} | {rank_range} |")
    small = [e.standings[t].score for e in board.entries for t in board.targets if small_standing(e, t)]
    if small:
        lines += ["", small_note(any(not math.isnan(s.low) for s in small))]
    lines += ["", *board_notes(board)] if board_notes(board) else []
    lines += ["", md_prose(note)] if note else []
    if board.adjacent:  # (one generator ranked: no pair)
        lines += ["", "## Adjacent pairs", "",
                  "P(upper > lower): share of replicates in which the upper generator scores "
                  f"{better(board)} "
                  "(ties count one half).", "", "| target | upper | lower | P(upper > lower) |",
                  "| --- | --- | --- | ---: |"]
    for p in board.adjacent:
        pair = f"{md_escape(p.upper)} | {md_escape(p.lower)}"
        lines.append(f"| {target_title(p.target)} | {pair} | {format_number(p.prob, 2)} |")
    pairs = board.pairs()
    if len(pairs) > len(board.adjacent):  # (three generators or more: pairs that are not neighbours)
        lines += ["", "## All pairs", "", "P(a > b) for every pair ranked on a target (also in "
                  "`leaderboard_pairs.csv`).", "", "| target | a | b | P(a > b) |",
                  "| --- | --- | --- | ---: |"]
        lines += [f"| {target_title(t)} | {md_escape(a)} | {md_escape(b)} | {format_number(p, 2)} |"
                  for t, a, b, p in pairs]
    return "\n".join(lines) + "\n"


def write_leaderboard(board: Leaderboard, out_dir: str | Path, *, title: str = "Generator leaderboard",
                      named: bool = True, note: str = "") -> list[Path]:
    """Write ``leaderboard.md``, ``leaderboard.csv`` (one row per generator; per target ``T_rank_replicates``
    says how many bootstrap replicates its P(rank) and rank range rest on) and ``leaderboard_pairs.csv``
    (one row per pair of generators ranked on a target: P(a > b) and the clips each was scored on) to
    ``out_dir``.

    ``note``: what the scores were computed from (:func:`calibration_note`), written under the Markdown
    table and, so that the CSV read alone still says it, as its last column ``scores_from``.

    ``named``: ``out_dir`` is a folder the user named (``--out``), whose links to files are followed
    wherever they lead (a ``leaderboard.md`` linked into a paper's folder); False for one the caller chose
    (the demo's ``report/``), where only links staying inside it are (:func:`robojudge._files.replacing`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields = ["generator", *(f"n_{a}" for a in board.axes)]
    for t in board.targets:
        fields += [t, f"{t}_low", f"{t}_high", *(f"{t}_{k}" for k in ("rank", "rank_prob", "rank_low",
                                                                        "rank_high", "rank_replicates",
                                                                        "small_n"))]
    fields += ["scores_from"] if note else []
    # the replicates P(rank) and the rank range rest on (those drawing every ranked generator), so that
    # the CSV read alone says so; empty without a bootstrap or on a target nobody is ranked on
    replicates = {t: board.rank_replicates.get(t, board.n_replicates) for t in board.targets
                  if board.n_replicates and any(e.standings[t].rank is not None for e in board.entries)}
    with replacing(out, named=named) as files:  # both whole, or (on an error) the old ones untouched
        with files.open(out / "leaderboard.csv", newline="") as f:
            w = SafeCsvWriter(f)
            w.writerow(fields)
            for e in board.entries:
                row: list[object] = [e.generator, *(e.n_items[a] for a in board.axes)]
                for t in board.targets:
                    s = e.standings[t]
                    row += [s.score.value, s.score.low, s.score.high, s.rank, s.rank_prob,
                            s.rank_low or None, s.rank_high or None, replicates.get(t), small_standing(e, t)]
                row += [note] if note else []
                w.writerow(["" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in row])
        with files.open(out / "leaderboard_pairs.csv", newline="") as f:
            write_pairs_csv(board, SafeCsvWriter(f))
        files.write_text(out / "leaderboard.md", leaderboard_markdown(board, title=title, note=note))
    return [out / "leaderboard.md", out / "leaderboard.csv", out / "leaderboard_pairs.csv"]


def write_pairs_csv(board: Leaderboard, w: SafeCsvWriter) -> None:
    """Rows ``target, a, b, p_a_over_b, clips_a, clips_b, shared_clips, matched``: every pair ranked on a
    target (:meth:`~robojudge.meta.Leaderboard.pairs`), with the clips each was scored on (the Overall:
    the fewer of the axes'; ``matched``: same clips, rollouts in proportion, on every axis)."""
    cover = {(c.axis, c.a, c.b): c for c in board.coverage}
    w.writerow(["target", "a", "b", "p_a_over_b", "clips_a", "clips_b", "shared_clips", "matched"])
    for t, a, b, p in board.pairs():
        cs = [cover[x, a, b] for x in (board.axes if t == OVERALL else (t,)) if (x, a, b) in cover]
        counts = [min(getattr(c, k) for c in cs) if cs else "" for k in ("clips_a", "clips_b", "shared")]
        w.writerow([t, a, b, "" if math.isnan(p) else p, *counts, all(c.matched for c in cs) if cs else ""])


