"""Leaderboards from stored results and suite items: generators (RoboJudge Table 8) and judges (Table 2).

Scores of an item come from one of three places: the suite's labels (human or planted), a VLM judge's
stored rows (metric ids ``judge:<name>:pa`` and ``judge:<name>:ia``), or the metric-calibrated judge,
an ordinal model from the stored metric values to the labels whose predictions are all out-of-fold
(folds grouped by clip). Where an (item, metric) pair has several ok rows (other configs or versions),
the most recently stored one is used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robojudge.meta import (
    OVERALL,
    AgreementReport,
    CrossValidated,
    Estimate,
    Leaderboard,
    agreement_table,
    cross_validate_ordinal,
    generator_leaderboard,
)
from robojudge.meta._agreement import FloatArray
from robojudge.report._tables import md_escape
from robojudge.store import ResultRow
from robojudge.store._export import SafeCsvWriter
from robojudge.suite import Item

AXES = ("pa", "ia")
#: Name of the metric-calibrated judge in the judges table.
CALIBRATED = "metric-calibrated"
#: Table 2 columns per target: (column name, statistic in the agreement report, higher is better).
JUDGE_COLUMNS = (("r", "pearson", True), ("acc", "exact", True), ("mse", "mse", False))
_JUDGE_PREFIX = "judge:"


def _latest(rows: Sequence[ResultRow], keep: Callable[[str], bool]) -> dict[str, dict[str, float]]:
    """``{metric: {item_id: value}}`` from ok, scored rows, the most recently stored row winning."""
    ordered = sorted((r for r in rows if keep(r.metric) and r.status == "ok" and r.scored),
                     key=lambda r: (r.created_at is not None, r.created_at or 0))
    out: dict[str, dict[str, float]] = {}
    for r in ordered:
        assert r.value is not None
        out.setdefault(r.metric, {})[r.item_id] = r.value
    return out


def _column(values: dict[str, float], items: Sequence[Item]) -> FloatArray:
    return np.array([values.get(it.item_id, math.nan) for it in items], dtype=np.float64)


def label_scores(items: Sequence[Item]) -> dict[str, FloatArray]:
    """The suite's PA and IA labels per item (NaN where absent)."""
    def get(it: Item, axis: str) -> float:
        v = getattr(it.labels, axis, None) if it.labels is not None else None
        return math.nan if v is None else float(v)

    return {a: np.array([get(it, a) for it in items], dtype=np.float64) for a in AXES}


def judge_names(rows: Sequence[ResultRow]) -> list[str]:
    """Names of the judges with at least one PA or IA row, sorted."""
    names = set()
    for r in rows:
        if r.metric.startswith(_JUDGE_PREFIX):
            name, _, rubric = r.metric[len(_JUDGE_PREFIX):].rpartition(":")
            if name and rubric in AXES:
                names.add(name)
    return sorted(names)


def judge_scores(rows: Sequence[ResultRow], items: Sequence[Item], judge: str) -> dict[str, FloatArray]:
    """A judge's stored PA and IA scores per item (NaN where unscored or failed)."""
    wanted = {f"{_JUDGE_PREFIX}{judge}:{a}": a for a in AXES}
    latest = _latest(rows, lambda m: m in wanted)
    if not latest:
        raise ValueError(f"no scored rows of judge {judge!r} (metric ids judge:{judge}:pa / :ia)")
    return {a: _column(latest.get(m, {}), items) for m, a in wanted.items()}


def metric_features(rows: Sequence[ResultRow], items: Sequence[Item],
                    higher_is_better: Callable[[str], bool]) -> tuple[list[str], FloatArray]:
    """The stored (non-judge) metric values as an ``(items, metrics)`` matrix, oriented.

    A lower-is-better metric is negated so that every column grows with quality; the calibrated model
    would learn the sign anyway, but oriented columns make its coefficients easy to read.
    """
    latest = _latest(rows, lambda m: not m.startswith(_JUDGE_PREFIX))
    names = sorted(latest)
    cols = [(1.0 if higher_is_better(m) else -1.0) * _column(latest[m], items) for m in names]
    matrix = np.stack(cols, axis=1) if cols else np.zeros((len(items), 0))
    return names, matrix


def clusters_of(items: Sequence[Item]) -> list[str]:
    """Bootstrap cluster and CV group per item: its clip id, else the item itself."""
    return [it.clip_id or f"item:{it.item_id}" for it in items]


def strata_of(items: Sequence[Item]) -> list[str]:
    """Bootstrap stratum per item: its source corpus ('' where unset)."""
    return [it.source or "" for it in items]


@dataclass(frozen=True)
class CalibratedJudge:
    """Out-of-fold predictions of the metric-calibrated judge.

    Attributes:
        metrics: The metrics used as features, in column order.
        scores: ``scores[axis]``: the held-out expected score of every item.
        folds: ``folds[axis]``: the cross-validation result per axis.
        alpha: L2 penalty.
        prediction: ``"expected"`` (expected score, continuous) or ``"class"`` (most probable score).
    """

    metrics: tuple[str, ...]
    scores: dict[str, FloatArray]
    folds: dict[str, CrossValidated]
    alpha: float
    prediction: str = "expected"


#: Stored metrics the calibrated judge does not learn from by default: the random baseline carries no
#: signal, and the other two read the simulator's own record of the outcome (task solved, collisions),
#: which no video from a real world model comes with; a judge fit on them would not transfer.
NOT_FEATURES: frozenset[str] = frozenset({"uniform_random", "sim_task_success", "cs_collision_count"})


def calibrated_scores(rows: Sequence[ResultRow], items: Sequence[Item],
                      higher_is_better: Callable[[str], bool], *, n_folds: int = 5, alpha: float = 1.0,
                      seed: int = 0, prediction: str = "expected",
                      exclude: frozenset[str] = NOT_FEATURES) -> CalibratedJudge:
    """Fit the metric-calibrated judge per axis by grouped K-fold CV and return held-out scores.

    One ordinal model per axis maps the stored metric values to that axis's labels; each item is
    scored by the model of the fold that held its clip out. Metrics in ``exclude`` are not used
    (:data:`NOT_FEATURES` by default). ``prediction`` picks the score: the
    expected score (continuous; best for r and MSE) or the most probable class (an integer; often
    better exact accuracy when labels cluster at the ends of the scale).

    Raises:
        ValueError: No stored metric values, or no labels on some axis.
    """
    if prediction not in ("expected", "class"):
        raise ValueError(f"prediction must be 'expected' or 'class', got {prediction!r}")
    names, x = metric_features(rows, items, higher_is_better)
    keep = [i for i, n in enumerate(names) if n not in exclude]
    names, x = [names[i] for i in keep], x[:, keep]
    if not names:
        raise ValueError("no stored metric values to calibrate on; run `robojudge score` first")
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
    return CalibratedJudge(tuple(names), scores, folds, alpha, prediction)


def generator_board(items: Sequence[Item], scores: dict[str, FloatArray], *, bootstrap: int = 2000,
                    seed: int | None = 0, level: float = 0.95, sort_by: str = OVERALL) -> Leaderboard:
    """The generator leaderboard of ``scores`` (per axis, aligned with ``items``).

    Clusters are clip ids and strata are sources; items without a generator count as ``"(unset)"``.
    """
    generators = [it.generator or "(unset)" for it in items]
    return generator_leaderboard(scores, generators, clusters_of(items), strata_of(items),
                                 bootstrap=bootstrap, seed=seed, level=level, sort_by=sort_by)


@dataclass(frozen=True)
class JudgeRow:
    """One judge in the layout of RoboJudge Table 2.

    Attributes:
        judge: The judge's name.
        n: Items used per axis.
        cells: ``cells[(target, column)]`` for target in pa, ia, overall and column in r, acc, mse.
        best: The ``(target, column)`` cells where this judge has the best value among all judges.
    """

    judge: str
    n: dict[str, int]
    cells: dict[tuple[str, str], Estimate]
    best: frozenset[tuple[str, str]]


def judge_table(report: AgreementReport) -> list[JudgeRow]:
    """Table 2 rows from an agreement report, marking the best value per column (ties all marked).

    Best is the largest r and accuracy and the smallest MSE, by point estimate; NaN never wins.
    """
    targets = (*report.axes, OVERALL)
    cells = {j: {(t, col): report.cells[j][t].stats[stat] for t in targets for col, stat, _ in JUDGE_COLUMNS}
             for j in report.judges}
    best: dict[str, set[tuple[str, str]]] = {j: set() for j in report.judges}
    for t in targets:
        for col, _, higher in JUDGE_COLUMNS:
            vals = {j: cells[j][t, col].value for j in report.judges}
            vals = {j: v for j, v in vals.items() if not math.isnan(v)}
            if not vals:
                continue
            top = max(vals.values()) if higher else min(vals.values())
            for j, v in vals.items():
                if math.isclose(v, top, rel_tol=1e-12, abs_tol=1e-12):
                    best[j].add((t, col))
    return [JudgeRow(j, {a: report.cells[j][a].n for a in report.axes}, cells[j], frozenset(best[j]))
            for j in report.judges]


def judges_report(rows: Sequence[ResultRow], items: Sequence[Item], higher_is_better: Callable[[str], bool],
                  *, judges: Sequence[str] | None = None, calibrated: bool = True, n_folds: int = 5,
                  alpha: float = 1.0, prediction: str = "expected", bootstrap: int = 2000, seed: int = 0,
                  level: float = 0.95) -> tuple[AgreementReport, list[JudgeRow], CalibratedJudge | None]:
    """Agreement of every stored judge (and the metric-calibrated one) with the suite's labels.

    Args:
        rows: Stored result rows.
        items: Suite items; only labelled ones enter the table.
        higher_is_better: Direction of each stored metric (for the calibrated judge's features).
        judges: Judges to include; every judge in ``rows`` if None.
        calibrated: Add the metric-calibrated judge (skipped quietly when no metric is stored).
        n_folds: Folds of the calibrated judge's grouped cross-validation.
        alpha: L2 penalty of the calibrated judge.
        prediction: The calibrated judge's score, see :func:`calibrated_scores`.
        bootstrap: Cluster-bootstrap replicates for the intervals.
        seed: Seed of the bootstrap and of the fold assignment.
        level: Interval coverage.

    Returns:
        The agreement report, its Table 2 rows and the calibrated judge (None if not added).
    """
    labelled = [it for it in items if it.labels is not None]
    human = label_scores(labelled)
    if not labelled or not any(np.isfinite(v).any() for v in human.values()):
        raise ValueError("the suite has no PA or IA labels to compare judges with")
    pred: dict[str, dict[str, FloatArray]] = {}
    for j in judge_names(rows) if judges is None else judges:
        pred[j] = judge_scores(rows, labelled, j)
    cal: CalibratedJudge | None = None
    if calibrated and set(metric_features(rows, labelled, higher_is_better)[0]) - NOT_FEATURES:
        cal = calibrated_scores(rows, labelled, higher_is_better, n_folds=n_folds, alpha=alpha, seed=seed,
                                prediction=prediction)
        pred[CALIBRATED] = cal.scores
    if not pred:
        raise ValueError("no judge results and no metric values in the store")
    report = agreement_table(pred, human, clusters_of(labelled), strata_of(labelled), bootstrap=bootstrap,
                             seed=seed, level=level, pairs=[], rank_stats=False)
    return report, judge_table(report), cal


# --- writing -----------------------------------------------------------------------------------------

def _f(v: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}"


def _est(e: Estimate, digits: int = 3) -> str:
    if math.isnan(e.value):
        return "n/a"
    if math.isnan(e.low):
        return _f(e.value, digits)
    return f"{_f(e.value, digits)} [{_f(e.low, digits)}, {_f(e.high, digits)}]"


def _title(target: str) -> str:
    return "Overall" if target == OVERALL else target.upper()


def _rank(rank: int | None) -> str:
    return "not ranked" if rank is None else str(rank)


def leaderboard_markdown(board: Leaderboard, *, title: str = "Generator leaderboard") -> str:
    """The leaderboard as Markdown: scores with CIs, ranks with their probability, adjacent pairs."""
    ci = (f"{board.level:.0%} percentile intervals over {board.n_replicates} cluster-bootstrap replicates "
          f"({board.n_clusters} clips in {board.n_strata} {'stratum' if board.n_strata == 1 else 'strata'}, "
          f"seed {board.seed})"
          if board.n_replicates else "no bootstrap")
    head = ("| rank | generator | " + " | ".join(_title(t) for t in board.targets)
            + " | P(rank) | rank range |")
    lines = [f"# {md_escape(title)}", "", f"Overall = (PA + IA) / 2 per generator (RoboJudge Table 8); {ci}. "
             f"Ordered by {_title(board.sort_by)}; P(rank) is the share of replicates in which the "
             "generator holds exactly its rank. A generator without scores on a target is not ranked "
             "on it.", "", head,
             "| ---: | --- | " + " | ".join("---" for _ in board.targets) + " | ---: | --- |"]
    for e in board.entries:
        s = e.standings[board.sort_by]
        cells = " | ".join(_est(e.standings[t].score) for t in board.targets)
        rank_range = f"{s.rank_low}-{s.rank_high}" if s.rank_low else "n/a"
        lines.append(f"| {_rank(s.rank)} | {md_escape(e.generator)} | {cells} | {_f(s.rank_prob, 2)} | "
                     f"{rank_range} |")
    lines += ["", "## Adjacent pairs", "",
              "P(upper > lower): share of replicates in which the upper generator scores higher (ties "
              "count one half).", "", "| target | upper | lower | P(upper > lower) |",
              "| --- | --- | --- | ---: |"]
    lines += [f"| {_title(p.target)} | {md_escape(p.upper)} | {md_escape(p.lower)} | {_f(p.prob, 2)} |"
              for p in board.adjacent]
    return "\n".join(lines) + "\n"


def write_leaderboard(board: Leaderboard, out_dir: str | Path, *, title: str = "Generator leaderboard"
                      ) -> list[Path]:
    """Write ``leaderboard.md`` and ``leaderboard.csv`` (one row per generator) to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields = ["generator", *(f"n_{a}" for a in board.axes)]
    for t in board.targets:
        fields += [t, f"{t}_low", f"{t}_high", *(f"{t}_{k}" for k in ("rank", "rank_prob", "rank_low",
                                                                        "rank_high"))]
    with (out / "leaderboard.csv").open("w", newline="") as f:
        w = SafeCsvWriter(f)
        w.writerow(fields)
        for e in board.entries:
            row: list[object] = [e.generator, *(e.n_items[a] for a in board.axes)]
            for t in board.targets:
                s = e.standings[t]
                row += [s.score.value, s.score.low, s.score.high, s.rank, s.rank_prob, s.rank_low or None,
                        s.rank_high or None]
            w.writerow(["" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in row])
    (out / "leaderboard.md").write_text(leaderboard_markdown(board, title=title))
    return [out / "leaderboard.md", out / "leaderboard.csv"]


def judges_markdown(table: Sequence[JudgeRow], report: AgreementReport, *, title: str = "Judges",
                    note: str = "") -> str:
    """Table 2 layout in Markdown; the best value of each column is bold."""
    targets = (*report.axes, OVERALL)
    ci = (f"{report.level:.0%} percentile intervals over {report.n_replicates} cluster-bootstrap replicates"
          if report.n_replicates else "no bootstrap")
    header = "| judge | " + " | ".join(f"{_title(t)} {name}" for t in targets
                                        for name in ("r ↑", "Acc ↑", "MSE ↓")) + " |"
    lines = [f"# {md_escape(title)}", "", "r: Pearson, Acc: exact-match accuracy, MSE: mean squared error "
             "against the suite's labels; Overall r and MSE pool PA and IA, Overall Acc is the mean of the "
             f"two (RoboJudge Table 2). Best per column in bold; {ci}.", ""]
    if note:
        lines += [md_escape(note), ""]
    lines += [header, "| --- | " + " | ".join("---" for _ in range(3 * len(targets))) + " |"]
    for row in table:
        cells = []
        for t in targets:
            for col, _, _ in JUDGE_COLUMNS:
                text = _est(row.cells[t, col])
                cells.append(f"**{text}**" if (t, col) in row.best else text)
        lines.append(f"| {md_escape(row.judge)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_judges(table: Sequence[JudgeRow], report: AgreementReport, out_dir: str | Path, *,
                 note: str = "") -> list[Path]:
    """Write ``judges.md`` and ``judges.csv``; the CSV has ``<target>_<col>_best`` booleans."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    targets = (*report.axes, OVERALL)
    fields = ["judge", *(f"n_{a}" for a in report.axes)]
    for t in targets:
        for col, _, _ in JUDGE_COLUMNS:
            fields += [f"{t}_{col}", f"{t}_{col}_low", f"{t}_{col}_high", f"{t}_{col}_best"]
    with (out / "judges.csv").open("w", newline="") as f:
        w = SafeCsvWriter(f)
        w.writerow(fields)
        for row in table:
            vals: list[object] = [row.judge, *(row.n[a] for a in report.axes)]
            for t in targets:
                for col, _, _ in JUDGE_COLUMNS:
                    e = row.cells[t, col]
                    vals += [e.value, e.low, e.high, (t, col) in row.best]
            w.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in vals])
    (out / "judges.md").write_text(judges_markdown(table, report, note=note))
    return [out / "judges.md", out / "judges.csv"]
