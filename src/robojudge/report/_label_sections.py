"""Sections of the HTML report about judges, metrics and generators against the suite's labels."""

from __future__ import annotations

import math

import numpy as np

from robojudge import PAPER_REPLICATES
from robojudge.meta import OVERALL, STATISTICS, AgreementReport, Estimate, Leaderboard, kendall_interval
from robojudge.report import _plots
from robojudge.report._judge_differences import (
    BEST_NOT_A_TEST,
    DIFFERENCE_COLUMNS,
    DIFFERENCE_HEADERS,
    differences_intro,
    differs_on,
    shared_text,
)
from robojudge.report._judges import (
    JUDGE_COLUMNS,
    chance_note,
    chance_row,
    judges_report,
    judges_table_note,
    served_model_notes,
)
from robojudge.report._labels import MIN_CORRELATION_ITEMS, label_agreement
from robojudge.report._leaderboard import (
    AXES,
    CALIBRATED,
    approximate_standing,
    calibration_problem,
    clusters_of,
    column,
    generator_board,
    label_scores,
    lone_sentences,
    pair_notes,
    small_standing,
    strata_of,
    withheld_notes,
)
from robojudge.report._sections import ReportInput, Section, estimate_cell
from robojudge.report._series import JudgeSeries
from robojudge.report._tables import SMALL_MARK, Cell, Table, is_small, text
from robojudge.report._unset import generator_of, unset_note
from robojudge.suite import Item

_TITLES = {"pa": "PA", "ia": "IA", OVERALL: "Overall"}
#: Judges drawn in the per-judge figure grids at most (the tables list them all).
MAX_JUDGE_PANELS = 8


def _no_labels(inp: ReportInput) -> str | None:
    if not inp.items:
        return "no suite manifest was given, so there are no human (or planted) labels to compare with"
    if not inp.labelled:
        return "the suite's items carry no PA/IA labels"
    return None


def replicates_note(n: int) -> str:
    """The replicates behind the judges' intervals, measured against RoboJudge App. E.1's 10,000: the
    report draws 2,000 by default, and a reader comparing its intervals with the paper's must know."""
    design = f"{n:,} replicates, clips resampled within sources"
    if n == PAPER_REPLICATES:
        return f"{design}; RoboJudge App. E.1"
    return (f"{design}, as RoboJudge App. E.1 but for the count: App. E.1 uses {PAPER_REPLICATES:,} "
            f"(pass --bootstrap {PAPER_REPLICATES})")


def _scored_anywhere(j: JudgeSeries, items: list[Item]) -> bool:
    ids = {it.item_id for it in items}
    return any(ids & set(j.values(a)) for a in AXES)


def _marked(names: list[str], small: set[str]) -> dict[str, str]:
    """Plot labels: a small-n entry gets the dagger the tables use."""
    return {n: f"{n} {SMALL_MARK}" if n in small else n for n in names}


def judges_section(inp: ReportInput) -> tuple[Section, AgreementReport | None]:
    """Judges (stored VLM judges and the metric-calibrated judge) against the labels: Table 2 and plots."""
    sec = Section("judges", "Judges against the labels")
    why = _no_labels(inp)
    if why:
        sec.skipped = why
        return sec, None
    try:
        report, table_rows, cal, scores = judges_report(inp.item_rows, inp.items, inp.higher_is_better,
                                                        bootstrap=inp.bootstrap, seed=inp.seed,
                                                        stored=inp.stored, config_key=inp.config_key)
    except ValueError as exc:
        sec.skipped = str(exc)
        return sec, None
    labelled = inp.labelled
    stored = {j.label: j for j in inp.stored.judges}
    targets = (*report.axes, OVERALL)
    ci = (f"{report.level:.0%} paired cluster-bootstrap intervals ({replicates_note(report.n_replicates)})"
          if report.n_replicates else "no bootstrap")
    sec.intro = ("r: Pearson, Acc: exact-match accuracy after rounding to the 1-5 scale, MSE: mean squared "
                 "error; Overall pools PA and IA for r and MSE and averages Acc (RoboJudge Table 2). "
                 f"Best value per column in bold; {ci}. Scored and unscored count labelled (item, axis) "
                 "pairs; a judge stored under several configurations has one row per configuration.")
    for warning in served_model_notes(inp.all_item_rows, inp.stored.judges):
        sec.intro += f" Warning: {warning}."
    empty = [j for j in report.judges if j in stored and not _scored_anywhere(stored[j], labelled)]
    if empty:
        sec.intro += (f" {', '.join(empty)}: no scored rows on the labelled items (failed, unparsable or "
                      "not run; see the judge coverage table in the overview), so no statistics.")
    if cal is not None:
        sec.intro += (f" {CALIBRATED}: an ordinal logistic model from the stored metrics "
                      f"({', '.join(cal.metrics)}) to the labels, every score held out by "
                      f"{next(iter(cal.folds.values())).n_folds}-fold cross-validation grouped by clip; "
                      "no VLM. The random baseline and the simulator's own records of the outcome (task "
                      "success, collision count) are not used as features.")
        if cal.left_out:
            sec.intro += (" One version per metric, the installed one where stored; left out: "
                          f"{', '.join(cal.left_out)}.")
    elif inp.stored.metrics:  # (without stored metrics there is nothing to fit, and nothing to say)
        why = calibration_problem(labelled, seed=inp.seed)
        if why:
            sec.intro += f" No {CALIBRATED} judge: {why}."
    stat_cols = [f"{_TITLES[t]} {n}" for t in targets for n in ("r", "Acc", "MSE")]
    cols = ["judge", "scored", "unscored", *stat_cols]
    chance = chance_row(labelled)  # RoboJudge Table 2's Random Baseline, its first row
    listed = [chance, *table_rows] if chance is not None else table_rows
    # Why a cell with a value shows no interval (too few clips, or the same value in every resample).
    withheld = withheld_notes((f"{r.judge} {_TITLES[t]} {col}", r.cells[t, col]) for r in table_rows
                              for t in targets for col, _, _ in JUDGE_COLUMNS)
    table2 = Table("judges", "Judges in the layout of RoboJudge Table 2", cols,
                   note=" ".join(n for n in (judges_table_note(table_rows, report), *chance_note(listed),
                                             *withheld, BEST_NOT_A_TEST if report.differences else "")
                                 if n))
    for row in listed:
        cells = [text(row.judge), text(sum(row.n.values())), text(sum(row.n_unscored.values()))]
        for t in targets:
            for col, _, _ in JUDGE_COLUMNS:
                e = row.cells[t, col]
                cells.append(Cell(e.value, e.low, e.high, best=(t, col) in row.best, small=t in row.small,
                                  approximate=t in row.approximate))
        table2.add(cells)
    human = label_scores(labelled)
    detail = Table("judge_statistics", "Every agreement statistic per judge and target",
                   ["judge", "target", "n", "unscored", *STATISTICS],
                   note="Bias is the mean signed error (judge minus human). Kendall's tau-b intervals come "
                   "from the same cluster-bootstrap draws as the others.")
    clusters, strata = clusters_of(labelled), strata_of(labelled)
    small_of = {r.judge: r.small for r in table_rows}
    approximate_of = {r.judge: r.approximate for r in table_rows}
    for j in report.judges:
        for t in targets:
            c = report.cells[j][t]
            axes = report.axes if t == OVERALL else (t,)
            # Withheld where r is (fewer than MIN_CORRELATION_ITEMS pairs: two points rank +-1 too), and
            # where the point tau is undefined: an Overall needs every axis scored (a judge scored on PA
            # only had its PA tau printed as its Overall).
            undefined = c.n < MIN_CORRELATION_ITEMS or math.isnan(c.stats["kendall"].value)
            tau = Estimate(math.nan) if undefined else kendall_interval(
                np.concatenate([scores[j][a] for a in axes]), np.concatenate([human[a] for a in axes]),
                clusters * len(axes), strata * len(axes), bootstrap=inp.bootstrap, seed=inp.seed,
                level=report.level)
            stats = {**c.stats, "kendall": tau}
            detail.add([text(j), text(_TITLES[t]), text(c.n), text(c.n_unscored),
                         *(estimate_cell(stats[k], small=t in small_of[j], approximate=t in approximate_of[j])
                           for k in STATISTICS)])
    sec.tables += [table2, *_differences_table(report), detail]
    # Figures, of the judges with something to draw.
    drawn = [j for j in report.judges if report.cells[j][OVERALL].n or any(report.cells[j][a].n
                                                                             for a in report.axes)]
    if not drawn:
        sec.intro += " No judge has a scored labelled item, so there are no figures."
        return sec, report
    names = _marked(drawn, {j for j in drawn if OVERALL in small_of[j]})
    ov = {j: (report.cells[j][OVERALL].stats["mse"], report.cells[j][OVERALL].stats["pearson"])
          for j in drawn}
    points = {j: (m.value, m.low, m.high, r.value, r.low, r.high) for j, (m, r) in ov.items()
              if not (math.isnan(m.value) or math.isnan(r.value))}
    unplotted = [f"{j} ({_no_overall(report, j)})" for j in drawn if j not in points]
    if points:
        sec.plots.append(_plots.landscape(
            {names[j]: p for j, p in points.items()}, OVERALL,
            note=f"Not drawn, no Overall r or MSE: {'; '.join(unplotted)}." if unplotted else ""))
    else:  # (an empty frame was drawn, with no word why)
        sec.intro += (" No judge has both an Overall r and MSE, so there is no correlation-vs-MSE figure: "
                      f"{'; '.join(unplotted)}.")
    sec.plots.append(_plots.bias_bars({names[j]: {a: (report.cells[j][a].stats["bias"].value,
                                                      report.cells[j][a].stats["bias"].low,
                                                      report.cells[j][a].stats["bias"].high)
                                                  for a in report.axes} for j in drawn}))
    # The calibrated judge first: it was listed last, so cut first (silently) from the panels.
    ordered = sorted(drawn, key=lambda j: j != CALIBRATED)
    shown, cut = ordered[:MAX_JUDGE_PANELS], ordered[MAX_JUDGE_PANELS:]
    note = (f"Panels for {len(shown)} of {len(ordered)} judges; not drawn (see the tables): {', '.join(cut)}."
            if cut else "")
    sec.plots.append(_plots.judge_scatter({j: scores[j] for j in shown}, human, seed=inp.seed, note=note))
    sec.plots.append(_plots.confusion_grid({j: {a: report.cells[j][a].confusion or [] for a in report.axes}
                                            for j in shown}, note=note))
    sec.tables.append(_confusion_table(report, ordered))
    return sec, report


def _differences_table(report: AgreementReport) -> list[Table]:
    """The paired differences between judges (:mod:`robojudge.report._judge_differences`), none without a
    pair."""
    if not report.differences:
        return []
    table = Table("judge_differences", "Paired differences between judges", list(DIFFERENCE_HEADERS),
                  note=differences_intro(report))
    for (a, b), per in report.differences.items():
        for t in (*report.axes, OVERALL):
            table.add([text(a), text(b), text(_TITLES[t]), text(shared_text(report, a, b, t)),
                       *(estimate_cell(per[t][stat]) for _, stat in DIFFERENCE_COLUMNS),
                       text(differs_on(report, per[t]))])
    return [table]


def _confusion_table(report: AgreementReport, judges: list[str]) -> Table:
    """The confusion matrices' counts as a table (the figure's numbers in words, for every judge drawn,
    also those past the figure's panels): one row per (judge, axis, human score), one column per rounded
    judge score. A (judge, axis) without a scored item has no rows."""
    size = max((len(report.cells[j][a].confusion or []) for j in judges for a in report.axes), default=0)
    scores = [str(v) for v in range(1, size + 1)]
    table = Table("judge_confusion", "Confusion matrices: labelled items per human score and rounded judge "
                  "score", ["judge", "axis", "human", *(f"judge {v}" for v in scores)],
                  note="The counts of the confusion matrices above: one row per human score, one column per "
                  "judge score rounded to the scale.")
    for j in judges:
        for a in report.axes:
            m = report.cells[j][a].confusion or []
            if not any(any(row) for row in m):
                continue
            for human, row in zip(scores, m, strict=False):
                table.add([text(j), text(_TITLES[a]), text(human), *(text(v) for v in row)])
    return table


def _no_overall(report: AgreementReport, judge: str) -> str:
    """Why ``judge`` has no Overall r or MSE: an axis it did not score, else why its r is undefined."""
    unscored = [_TITLES[a] for a in report.axes if not report.cells[judge][a].n]
    if unscored:
        return f"no scores on {', '.join(unscored)}"
    return report.cells[judge][OVERALL].stats["pearson"].why or "too few scored pairs, or constant scores"


def metrics_section(inp: ReportInput) -> Section:
    """Every stored metric configuration against the PA and IA labels (Pearson and Spearman with CIs)."""
    sec = Section("metrics", "Metrics against the labels")
    why = _no_labels(inp)
    if why:
        sec.skipped = why
        return sec
    rows = label_agreement(inp.item_rows, inp.items, inp.higher_is_better, bootstrap=inp.bootstrap,
                           seed=inp.seed, stored=inp.stored)
    if not rows:
        sec.skipped = "no metric values are stored for the labelled items (only judges, or nothing)"
        return sec
    sec.intro = ("Correlations are oriented (a lower-is-better metric is negated, RoboJudge App. B.3), so "
                 "a positive value means the metric ranks rollouts like the labels; intervals are paired "
                 "cluster-bootstrap percentiles. Each configuration of a metric is its own row.")
    unknown = sorted({r.metric for r in rows if not r.oriented})
    if unknown:
        sec.intro += (f" The metric registry does not know the direction of {', '.join(unknown)}: correlated "
                      "as stored (not oriented), and not compared for the best value.")
    table = Table("metric_agreement", "Metrics against the labels",
                  ["metric", "direction", "axis", "n", "Pearson r [95% CI]", "Spearman rho [95% CI]"])
    for r in rows:
        small = is_small(r.n, r.n_clusters)
        table.add([text(r.metric), text("known" if r.oriented else "unknown"), text(r.axis.upper()),
                   text(r.n), Cell(r.pearson, r.pearson_low, r.pearson_high, digits=2, small=small),
                   Cell(r.spearman, r.spearman_low, r.spearman_high, digits=2, small=small)])
    for col in (4, 5):
        for axis in AXES:
            # Best per axis among the rows compared: oriented (a raw correlation's sign means nothing
            # here) and scored on the same items (r over other rollouts is another quantity).
            block = [i for i, r in enumerate(rows) if r.axis == axis and r.compared]
            vals = [table.rows[i][col].value for i in block if not math.isnan(table.rows[i][col].value)]
            if vals:
                top = max(vals)
                for i in block:
                    c = table.rows[i][col]
                    if not math.isnan(c.value) and math.isclose(c.value, top):
                        table.rows[i][col] = Cell(c.value, c.low, c.high, True, None, c.digits, c.small)
    table.note = ("Best per axis in bold, among the oriented metrics scored on the same labelled items, "
                  "give or take 5% (the largest such group); a metric scored on other items is not compared.")
    left = sorted({r.metric for r in rows if r.oriented and not r.compared and not math.isnan(r.pearson)})
    if left:
        table.note += f" Not compared: {', '.join(left)}."
    sec.tables.append(table)
    for axis in AXES:
        pts = [(r.metric + ("" if r.oriented else " (as stored)")
                + (f" {SMALL_MARK}" if is_small(r.n, r.n_clusters) else ""), r.pearson, r.pearson_low,
                r.pearson_high) for r in rows if r.axis == axis]
        if all(math.isnan(v) for _, v, _, _ in pts):  # (no r: empty axes; the table says n/a and why)
            continue
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
    if len(set(inp.groups)) < 2:
        sec.skipped = "the suite has fewer than two generators"
        return sec
    items = list(inp.items)
    extra = ""
    if inp.labelled:
        # Every item, so that a generator without labels is listed (and not ranked), not dropped.
        scores, source = label_scores(items), "the suite's labels"
    else:
        judges = list(inp.stored.judges)
        usable = [j for j in judges if _scored_anywhere(j, items)]
        empty = [j.label for j in judges if j not in usable]
        if not usable:
            sec.skipped = ("the suite has no labels and the store no judge scores to rank generators by"
                           + (f" ({', '.join(empty)}: no scored rows; every request failed or every reply "
                              "was unparsable)" if empty else ""))
            return sec
        source = f"judge {usable[0].label}"
        scores = {a: column(usable[0].values(a), items) for a in AXES}
        if len(judges) > 1:
            extra = (f" The store has {len(judges)} judge configurations; this is the first with scores "
                     "(`robojudge leaderboard generators --scores judge:NAME` ranks by another)."
                     + (f" {', '.join(empty)}: no scored rows." if empty else ""))
    board = generator_board(items, scores, bootstrap=inp.bootstrap, seed=inp.seed)
    sec.intro = (f"Scores from {source}. Overall = (PA + IA) / 2 per generator (RoboJudge Table 8); "
                 f"{board.level:.0%} cluster-bootstrap intervals over {board.n_replicates} replicates; "
                 "P(rank) is the share of replicates in which the generator holds exactly its rank, among "
                 "the replicates that draw every ranked generator." + extra
                 + unset_note(map(generator_of, items)))
    unranked = [e.generator for e in board.entries if e.standings[board.sort_by].rank is None]
    if unranked:
        sec.intro += (f" {', '.join(unranked)}: not ranked, for lack of scores from {source} on "
                      f"{'PA or IA' if board.sort_by == OVERALL else board.sort_by.upper()}.")
    cols = ["rank", "generator", *(_TITLES[t] for t in board.targets), "P(rank)", "rank range"]
    table = Table("leaderboard", f"Generators by {_TITLES[board.sort_by]}", cols,
                  note=" ".join([*withheld_notes((f"{e.generator} {_TITLES[t]}", e.standings[t].score)
                                                 for e in board.entries for t in board.targets),
                                 *lone_sentences(board.n_lone_clusters, board.n_clusters),
                                 *pair_notes(board), *(f"{s}." for s in board.bootstrap_notes())]))
    for e in board.entries:
        s = e.standings[board.sort_by]
        span = f"{s.rank_low}-{s.rank_high}" if s.rank_low else "n/a"
        rank = text("not ranked" if s.rank is None else s.rank)
        scores_of = [estimate_cell(e.standings[t].score, small=small_standing(e, t),
                                   approximate=approximate_standing(e, t)) for t in board.targets]
        table.add([rank, text(e.generator), *scores_of,
                   Cell(s.rank_prob, digits=2), text(span)])
    for k in range(2, 2 + len(board.targets)):
        table.mark_best(k, higher=True)
    sec.tables.append(table)
    if board.pairs():
        sec.tables.append(_pairs_table(board))
    if set(AXES) <= set(board.axes):
        pts = {}
        for e in board.entries:
            pa, ia = e.standings["pa"].score, e.standings["ia"].score
            name = e.generator + (f" {SMALL_MARK}" if small_standing(e, OVERALL) else "")
            pts[name] = (pa.value, pa.low, pa.high, ia.value, ia.low, ia.high)
        sec.plots.append(_plots.generator_plane(pts))
    return sec


def _pairs_table(board: Leaderboard) -> Table:
    """Every pair of generators ranked on a target: P(a > b) and the clips the two share (the Overall:
    the fewer of the axes')."""
    cover = {(c.axis, c.a, c.b): c for c in board.coverage}
    table = Table("leaderboard_pairs", "Pairs of generators", ["target", "a", "b", "P(a > b)", "shared clips",
                                                              "clips of a", "clips of b"],
                  note="P(a > b): share of replicates in which a scores higher (ties count one half), the "
                       "same clip draws for every generator.")
    for t, a, b, p in board.pairs():
        cs = [cover[x, a, b] for x in (board.axes if t == OVERALL else (t,)) if (x, a, b) in cover]
        counts = [text(min(getattr(c, k) for c in cs)) if cs else text("") for k in ("shared", "clips_a",
                                                                                      "clips_b")]
        table.add([text(_TITLES[t]), text(a), text(b), Cell(p, digits=2), *counts])
    return table
