"""Sections of the HTML report about judges, metrics and generators against the suite's labels.

Each builder returns a :class:`Section`: its tables and figures, or the reason it is left out
(no labels, no judge, too few items...), so the page always says why a part is missing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from robojudge.meta import OVERALL, STATISTICS, AgreementReport, Estimate, kendall_interval
from robojudge.report import _plots
from robojudge.report._labels import label_agreement
from robojudge.report._leaderboard import (
    AXES,
    CALIBRATED,
    JUDGE_COLUMNS,
    clusters_of,
    generator_board,
    judge_names,
    judge_scores,
    judges_report,
    label_scores,
    strata_of,
)
from robojudge.report._summary import GroupSummary, summarize
from robojudge.report._tables import Cell, Table, text
from robojudge.store import ResultRow
from robojudge.suite import Item

_TITLES = {"pa": "PA", "ia": "IA", OVERALL: "Overall"}
#: Judges drawn in the per-judge figure grids at most (the tables list them all).
MAX_JUDGE_PANELS = 8


@dataclass
class Section:
    """One part of the report.

    Attributes:
        key: HTML id and file-name stem.
        title: Heading.
        intro: What the numbers are and how they were made (plain text).
        tables: Tables, also written as CSV, Markdown and LaTeX.
        plots: Inline SVG figures.
        skipped: Why the section has no content (None when it has).
    """

    key: str
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    skipped: str | None = None


@dataclass(frozen=True)
class ReportInput:
    """What every section builder reads.

    Attributes:
        rows: Stored result rows.
        items: Suite items (empty when only a store was given).
        higher_is_better: Direction of each stored metric.
        bootstrap: Cluster-bootstrap replicates for intervals.
        seed: Seed of the bootstrap and of the calibrated judge's folds.
    """

    rows: Sequence[ResultRow]
    items: Sequence[Item]
    higher_is_better: Callable[[str], bool]
    bootstrap: int = 2000
    seed: int = 0

    @property
    def labelled(self) -> list[Item]:
        return [it for it in self.items if it.labels is not None]


def _est(e: Estimate, digits: int = 3) -> Cell:
    return Cell(e.value, e.low, e.high, digits=digits)


def overview_section(inp: ReportInput) -> Section:
    """Counts and the per-generator mean of every stored metric (t-intervals)."""
    sec = Section("overview", "Overview")
    rows = inp.rows
    if not rows:
        sec.skipped = "the result store holds no rows; run `robojudge score` or `robojudge judge` first"
        return sec
    n_err = sum(r.status != "ok" for r in rows)
    metrics = sorted({r.metric for r in rows})
    group_of = {it.item_id: it.generator or "(unset)" for it in inp.items}
    label = "generator" if inp.items else "group"
    sec.intro = (f"{len(rows)} stored results ({n_err} failed) over {len({r.item_id for r in rows})} items "
                 f"and {len(metrics)} metrics or judge rubrics; {len(inp.labelled)} items carry PA/IA "
                 "labels. "
                 + ("Means per generator with 95% t-intervals." if inp.items else
                    "No suite manifest was given, so items have no generator or labels: one group."))
    summaries = summarize(rows, group_of if inp.items else {})
    groups = sorted({s.group for s in summaries})
    table = Table("summary", f"Mean of every stored metric per {label} [95% t-interval]",
                  ["metric", "n", "failed", *groups])
    by_metric: dict[str, dict[str, GroupSummary]] = {}
    for s in summaries:
        # Several configs of one metric: the one with the most results is shown (all are in results.csv).
        best = by_metric.setdefault(s.metric, {}).get(s.group)
        if best is None or s.n_ok > best.n_ok:
            by_metric[s.metric][s.group] = s
    for m, per in by_metric.items():
        n_ok, n_failed = sum(s.n_ok for s in per.values()), sum(s.n_failed for s in per.values())
        table.add([text(m), text(n_ok), text(n_failed),
                   *(Cell(per[g].mean, per[g].ci_low, per[g].ci_high, digits=2) if g in per else text("")
                     for g in groups)])
    sec.tables.append(table)
    return sec


def _no_labels(inp: ReportInput) -> str | None:
    if not inp.items:
        return "no suite manifest was given, so there are no human (or planted) labels to compare with"
    if not inp.labelled:
        return "the suite's items carry no PA/IA labels"
    return None


def judges_section(inp: ReportInput) -> tuple[Section, AgreementReport | None]:
    """Judges (stored VLM judges and the metric-calibrated judge) against the labels: Table 2 and plots."""
    sec = Section("judges", "Judges against the labels")
    why = _no_labels(inp)
    if why:
        sec.skipped = why
        return sec, None
    try:
        report, table_rows, cal = judges_report(inp.rows, inp.items, inp.higher_is_better,
                                                bootstrap=inp.bootstrap, seed=inp.seed)
    except ValueError as exc:
        sec.skipped = str(exc)
        return sec, None
    labelled = inp.labelled
    targets = (*report.axes, OVERALL)
    ci = (f"{report.level:.0%} paired cluster-bootstrap intervals ({report.n_replicates} replicates, clips "
          "resampled within sources; RoboJudge App. E.1)" if report.n_replicates else "no bootstrap")
    sec.intro = ("r: Pearson, Acc: exact-match accuracy after rounding to the 1-5 scale, MSE: mean squared "
                 "error; Overall pools PA and IA for r and MSE and averages Acc (RoboJudge Table 2). "
                 f"Best value per column in bold; {ci}.")
    if cal is not None:
        sec.intro += (f" {CALIBRATED}: an ordinal logistic model from the stored metrics "
                      f"({', '.join(cal.metrics)}) to the labels, every score held out by "
                      f"{next(iter(cal.folds.values())).n_folds}-fold cross-validation grouped by clip; "
                      "no VLM. The random baseline and the simulator's own records of the outcome (task "
                      "success, collision count) are not used as features.")
    cols = ["judge"] + [f"{_TITLES[t]} {n}" for t in targets for n in ("r", "Acc", "MSE")]
    table2 = Table("judges", "Judges in the layout of RoboJudge Table 2", cols)
    for row in table_rows:
        cells = [text(row.judge)]
        for t in targets:
            for col, _, _ in JUDGE_COLUMNS:
                e = row.cells[t, col]
                cells.append(Cell(e.value, e.low, e.high, best=(t, col) in row.best))
        table2.add(cells)
    scores = {j: cal.scores if (j == CALIBRATED and cal is not None) else judge_scores(inp.rows, labelled, j)
              for j in report.judges}
    human = label_scores(labelled)
    detail = Table("judge_statistics", "Every agreement statistic per judge and target",
                   ["judge", "target", "n", *STATISTICS],
                   note="Bias is the mean signed error (judge minus human). Kendall's tau-b intervals come "
                   "from the same cluster-bootstrap draws as the others.")
    clusters, strata = clusters_of(labelled), strata_of(labelled)
    for j in report.judges:
        for t in targets:
            c = report.cells[j][t]
            axes = report.axes if t == OVERALL else (t,)
            tau = kendall_interval(np.concatenate([scores[j][a] for a in axes]),
                                   np.concatenate([human[a] for a in axes]), clusters * len(axes),
                                   strata * len(axes), bootstrap=inp.bootstrap, seed=inp.seed,
                                   level=report.level)
            stats = {**c.stats, "kendall": tau}
            detail.add([text(j), text(_TITLES[t]), text(c.n), *(_est(stats[k]) for k in STATISTICS)])
    sec.tables += [table2, detail]
    # Figures.
    ov = {j: (report.cells[j][OVERALL].stats["mse"], report.cells[j][OVERALL].stats["pearson"])
          for j in report.judges}
    sec.plots.append(_plots.landscape({j: (m.value, m.low, m.high, r.value, r.low, r.high)
                                       for j, (m, r) in ov.items()}, OVERALL))
    sec.plots.append(_plots.bias_bars({j: {a: (report.cells[j][a].stats["bias"].value,
                                               report.cells[j][a].stats["bias"].low,
                                               report.cells[j][a].stats["bias"].high) for a in report.axes}
                                       for j in report.judges}))
    shown = list(report.judges)[:MAX_JUDGE_PANELS]
    sec.plots.append(_plots.judge_scatter({j: scores[j] for j in shown}, human, seed=inp.seed))
    sec.plots.append(_plots.confusion_grid({j: {a: report.cells[j][a].confusion or [] for a in report.axes}
                                            for j in shown}))
    return sec, report


def metrics_section(inp: ReportInput) -> Section:
    """Every stored metric against the PA and IA labels (oriented Pearson and Spearman with CIs)."""
    sec = Section("metrics", "Metrics against the labels")
    why = _no_labels(inp)
    if why:
        sec.skipped = why
        return sec
    rows = label_agreement(inp.rows, inp.items, inp.higher_is_better, bootstrap=inp.bootstrap, seed=inp.seed)
    if not rows:
        sec.skipped = "no metric values are stored for the labelled items (only judges, or nothing)"
        return sec
    sec.intro = ("Correlations are oriented (a lower-is-better metric is negated, RoboJudge App. B.3), so "
                 "a positive value means the metric ranks rollouts like the labels; intervals are paired "
                 "cluster-bootstrap percentiles.")
    table = Table("metric_agreement", "Metrics against the labels",
                  ["metric", "axis", "n", "Pearson r [95% CI]", "Spearman rho [95% CI]"])
    for r in rows:
        table.add([text(r.metric), text(r.axis.upper()), text(r.n),
                   Cell(r.pearson, r.pearson_low, r.pearson_high, digits=2),
                   Cell(r.spearman, r.spearman_low, r.spearman_high, digits=2)])
    for col in (3, 4):
        for axis in AXES:
            # Best per axis: mark inside each axis block separately.
            block = [i for i, r in enumerate(rows) if r.axis == axis]
            vals = [table.rows[i][col].value for i in block if not math.isnan(table.rows[i][col].value)]
            if vals:
                top = max(vals)
                for i in block:
                    c = table.rows[i][col]
                    if not math.isnan(c.value) and math.isclose(c.value, top):
                        table.rows[i][col] = Cell(c.value, c.low, c.high, True, None, c.digits)
    table.note = "Best per axis in bold."
    sec.tables.append(table)
    for axis in AXES:
        pts = [(r.metric, r.pearson, r.pearson_low, r.pearson_high) for r in rows if r.axis == axis]
        sec.plots.append(_plots.forest(pts, xlabel=f"oriented Pearson r with {axis.upper()} labels",
                                       name=f"metric-forest-{axis}",
                                       title=f"Metrics vs. {axis.upper()} labels (95% CI)"))
    return sec


def generators_section(inp: ReportInput) -> Section:
    """The generator leaderboard (RoboJudge Table 8) and the PA-IA plane, from labels or a judge."""
    sec = Section("generators", "Generator leaderboard")
    if not inp.items:
        sec.skipped = "no suite manifest was given, so items have no generator"
        return sec
    if len({it.generator for it in inp.items}) < 2:
        sec.skipped = "the suite has fewer than two generators"
        return sec
    if inp.labelled:
        # Every item, so that a generator without labels is listed (and not ranked), not dropped.
        items, scores, source = list(inp.items), label_scores(inp.items), "the suite's labels"
    else:
        names = judge_names(inp.rows)
        if not names:
            sec.skipped = "the suite has no labels and the store no judge scores to rank generators by"
            return sec
        items, source = list(inp.items), f"judge {names[0]}"
        scores = judge_scores(inp.rows, items, names[0])
    board = generator_board(items, scores, bootstrap=inp.bootstrap, seed=inp.seed)
    sec.intro = (f"Scores from {source}. Overall = (PA + IA) / 2 per generator (RoboJudge Table 8); "
                 f"{board.level:.0%} cluster-bootstrap intervals over {board.n_replicates} replicates; "
                 "P(rank) is the share of replicates in which the generator holds exactly its rank.")
    unranked = [e.generator for e in board.entries if e.standings[board.sort_by].rank is None]
    if unranked:
        sec.intro += (f" {', '.join(unranked)}: not ranked, for lack of scores from {source} on "
                      f"{'PA or IA' if board.sort_by == OVERALL else board.sort_by.upper()}.")
    cols = ["rank", "generator", *(_TITLES[t] for t in board.targets), "P(rank)", "rank range"]
    table = Table("leaderboard", f"Generators by {_TITLES[board.sort_by]}", cols)
    for e in board.entries:
        s = e.standings[board.sort_by]
        span = f"{s.rank_low}-{s.rank_high}" if s.rank_low else "n/a"
        rank = text("not ranked" if s.rank is None else s.rank)
        table.add([rank, text(e.generator), *(_est(e.standings[t].score) for t in board.targets),
                   Cell(s.rank_prob, digits=2), text(span)])
    for k in range(2, 2 + len(board.targets)):
        table.mark_best(k, higher=True)
    sec.tables.append(table)
    if set(AXES) <= set(board.axes):
        pts = {}
        for e in board.entries:
            pa, ia = e.standings["pa"].score, e.standings["ia"].score
            pts[e.generator] = (pa.value, pa.low, pa.high, ia.value, ia.low, ia.high)
        sec.plots.append(_plots.generator_plane(pts))
    return sec
