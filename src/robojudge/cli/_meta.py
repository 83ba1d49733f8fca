"""``robojudge meta ...``: agreement of judges with human scores, linear-fit comparison of scores,
segment-level agreement of scores with Good/Medium/Bad verdicts, and video-level rank agreement per
embodiment (RoboWorM Table D5)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.cells import cell_len
from rich.markup import escape
from rich.table import Table

from robojudge import DEFAULT_SEED, PAPER_REPLICATES
from robojudge.cli._common import check_out_folder, console, err_console, fail
from robojudge.cli._tables import add_column, print_table
from robojudge.meta import (
    APPROXIMATE_CLUSTERS,
    DISPUTED_CHOICES,
    OVERALL,
    AgreementReport,
    EmbodimentAgreement,
    Estimate,
    MultiviewTable,
    ScoreTableError,
    agreement_from_csv,
    fit_from_csv,
    lone_clusters_note,
    multiview_from_csv,
    segments_from_csv,
)

if TYPE_CHECKING:
    from robojudge.report import Table as ReportTable

app = typer.Typer(help="Meta-evaluation: how well judges and scores agree with human ratings.",
                  no_args_is_help=True)


def _parse_pair(text: str | None, option: str) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise fail(f"{option} expects LOW,HIGH, got {text!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise fail(f"{option} expects two finite numbers, got {text!r}")
    if not hi > lo:
        raise fail(f"{option}: HIGH must exceed LOW, got {text!r}")
    return lo, hi


def _num(v: float) -> float | None:
    return None if math.isnan(v) else v


def _fmt(e: Estimate, digits: int = 3) -> str:
    if math.isnan(e.value):
        return "-"
    out = f"{e.value:.{digits}f}"
    if not math.isnan(e.low):
        out += f" [{e.low:.{digits}f}, {e.high:.{digits}f}]"
    elif e.why is not None:
        out += " [n/a]"  # the notes under the tables say why
    return out


def _warn(message: str) -> None:
    err_console.print(f"warning: {message}", highlight=False, markup=False)


@app.command("agreement")
def agreement(
    pred: Path = typer.Option(..., "--pred", help="Judge scores: item_id, axis, score[, judge]."),
    human: Path = typer.Option(..., "--human", help="Human scores: item_id, axis, score[, clip_id, source]."),
    bootstrap: int = typer.Option(PAPER_REPLICATES, "--bootstrap", min=0,
                                  help="Bootstrap replicates (0: none; RoboJudge App. E.1: 10000)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the cluster draws."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Interval coverage."),
    scale: str = typer.Option("1,5", "--scale", help="Inclusive score scale LOW,HIGH for rounding."),
    spearman: bool = typer.Option(True, "--spearman/--no-spearman",
                                  help="Bootstrap Spearman's rho too (slower for continuous scores)."),
    disputed: str = typer.Option(
        "drop", "--disputed",
        help="Items whose 'disputed' cell in HUMAN is set (awaiting an adjudication, as `annotate export -f "
        "scores` marks them): drop (compare with final labels only), keep (their primary labels too: for "
        "the raters.csv of that export) or only; the rows left out are counted on stderr."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Per-judge, per-axis and Overall agreement with human scores, with cluster-bootstrap CIs.

    Clusters are clip_id (else item_id) and strata are source (else one stratum). A blank judge
    score is an unscored item; an item or axis in PRED without a human score is an error.
    """
    if disputed not in DISPUTED_CHOICES:
        raise fail(f"--disputed {disputed!r}: use {', '.join(DISPUTED_CHOICES)}")
    sc = _parse_pair(scale, "--scale")
    assert sc is not None
    if sc != (int(sc[0]), int(sc[1])):
        raise fail(f"--scale must be two integers, got {scale!r}")
    scale_int = (int(sc[0]), int(sc[1]))
    try:
        report = agreement_from_csv(pred, human, bootstrap=bootstrap, seed=seed, level=level, scale=scale_int,
                                    rank_stats=spearman, disputed=disputed, warn=_warn)
    except ScoreTableError as exc:
        raise fail(str(exc)) from None
    if as_json:
        out: dict[str, Any] = {"pred": str(pred), "human": str(human), "scale": list(scale_int),
                               "disputed": disputed, **report.to_dict()}
        typer.echo(json.dumps(out, indent=2))
        return
    _print_report(report)


def _interval_notes(report: AgreementReport) -> list[str]:
    """Why a cell shows no value or no interval, and the cells whose interval rests on fewer replicates than
    drawn."""
    notes: dict[str, dict[str, list[str]]] = {}
    cells = [(f"{j} {t}", c.stats) for j, per in report.cells.items() for t, c in per.items()]
    cells += [(f"{a} - {b} {t}", st) for (a, b), per in report.differences.items() for t, st in per.items()]
    for where, stats in cells:
        for name, e in stats.items():
            if e.why is not None:
                text = f"undefined ({e.why})" if math.isnan(e.value) else f"no interval ({e.why})"
            elif e.replicates is not None:
                text = (f"interval from {e.replicates} of {report.n_replicates} replicates (the others leave "
                        "it undefined)")
            else:
                continue
            notes.setdefault(text, {}).setdefault(where, []).append(name)
    out = []
    for text, places in notes.items():
        shown = [f"{w} ({', '.join(names)})" for w, names in list(places.items())[:6]]
        more = f" and {len(places) - 6} more" if len(places) > 6 else ""
        out.append(f"{text}: {'; '.join(shown)}{more}")
    return out


def _shared(report: AgreementReport, a: str, b: str, target: str) -> str:
    """The items a pair's difference rests on, and each judge's own where that is more."""
    n, na, nb = report.shared[a, b][target], report.cells[a][target].n, report.cells[b][target].n
    return str(n) if n == na == nb else f"{n} ({na}/{nb})"


#: The statistics of an agreement table: column header and key in the report's stats.
_STATS = (("pearson", "pearson"), ("spearman", "spearman"), ("kendall", "kendall"), ("acc", "exact"),
          ("within 1", "within_one"), ("mse", "mse"), ("mae", "mae"), ("bias", "bias"))
#: The statistics of the table of paired differences between judges.
_DIFFERENCES = (("pearson", "pearson"), ("acc", "exact"), ("mse", "mse"))


def _table_width(columns: list[list[str]]) -> int:
    """Columns a table of these columns (header first, then cells) takes at its natural width: each
    column its widest cell, two spaces of padding and a border, and the border that closes the row."""
    return sum(max(map(cell_len, col)) + 3 for col in columns) + 1


def _table(title: str, keys: list[list[str]], stats: list[list[str]]) -> Table:
    """A table of ``keys`` columns that tell its rows apart (never wrapped or shrunk) and ``stats`` columns,
    whose cells break at the space before the interval on a console too narrow for them."""
    table = Table(title=title, title_justify="left")
    for col in keys:
        table.add_column(col[0], no_wrap=True, min_width=max(map(cell_len, col)))
    for col in stats:
        table.add_column(col[0], min_width=len(col[0]))
    for row in zip(*(col[1:] for col in (*keys, *stats)), strict=True):
        table.add_row(*row)
    return table


def _fitted(title: str, keys: list[list[str]], stats: list[list[str]], width: int,
            repeat: int | None = None) -> list[Table]:
    """One table, or on a console narrower than it (``width`` columns) several, each with the first
    ``repeat`` key columns (default all) and as many statistics as fit beside them; the first table has
    every key column."""
    if _table_width([*keys, *stats]) <= width or not stats:
        return [_table(title, keys, stats)]
    tables: list[Table] = []
    left = list(stats)
    while left:
        head = keys if not tables else keys[:repeat]
        take = 1
        while take < len(left) and _table_width([*head, *left[:take + 1]]) <= width:
            take += 1
        tables.append(_table(title if not tables else f"{title} (continued)", head, left[:take]))
        left = left[take:]
    return tables


def _print_report(report: AgreementReport) -> None:
    ci = f", {report.level:.0%} CI over {report.n_replicates} replicates" if report.n_replicates else ""
    width = console.width
    for target in (*report.axes, OVERALL):
        cells = [report.cells[j][target] for j in report.judges]
        keys = [["judge", *report.judges], ["n", *(str(c.n) for c in cells)],
                ["unscored", *(str(c.n_unscored) for c in cells)]]
        stats = [[col, *(_fmt(c.stats[key]) for c in cells)] for col, key in _STATS]
        for table in _fitted(f"{target}{ci}", keys, stats, width, repeat=1):
            console.print(table)
    if report.differences and report.n_replicates:
        pairs = [(a, b, t, st) for (a, b), per in report.differences.items() for t, st in per.items()]
        shared = [_shared(report, a, b, t) for a, b, t, _ in pairs]
        keys = [["a", *(a for a, _, _, _ in pairs)], ["b", *(b for _, b, _, _ in pairs)],
                ["target", *(t for _, _, t, _ in pairs)], ["n", *shared]]
        stats = [[col, *(_fmt(st[key]) for _, _, _, st in pairs)] for col, key in _DIFFERENCES]
        for table in _fitted(f"paired differences (a - b){ci}", keys, stats, width):
            console.print(table)
        if any(" " in x for x in shared):
            console.print("note: differences are taken on the n items both judges scored; (a/b): each "
                          "judge's own", highlight=False, markup=False)
    for note in _interval_notes(report):
        console.print(f"note: {note}", highlight=False, markup=False)
    if report.n_replicates and 0 < report.n_clusters < APPROXIMATE_CLUSTERS:
        console.print(f"note: {_approximate_note(report.n_clusters)}", highlight=False, markup=False)
    if report.n_replicates and (lone := lone_clusters_note(report.n_lone_clusters, report.n_clusters)):
        console.print(f"note: {lone}", highlight=False, markup=False)


def _approximate_note(n_clusters: int) -> str:
    """The milder warning of an agreement table over fewer than APPROXIMATE_CLUSTERS clusters."""
    return (f"intervals over {n_clusters} clusters (fewer than {APPROXIMATE_CLUSTERS}) are approximate: in "
            "simulation, nominal 95% percentile cluster-bootstrap intervals held the true value 88-91% of "
            "the time at 10-20 clusters for the median statistic, MSE and within-one only 79-87%, and MSE "
            "65-78% over 10 one-item clusters (docs/meta.md, \"How far to trust an interval\")")


@app.command("compare")
def compare(
    path: Path = typer.Option(..., "--in", help="CSV with one row per sample."),
    score: str = typer.Option(..., "--score", help="Column with the automatic score."),
    target: str = typer.Option(..., "--target", help="Column with the reference (human or task success)."),
    score_range: str | None = typer.Option(None, "--score-range",
                                           help="LOW,HIGH theoretical score range for mae_rescaled."),
    target_range: str | None = typer.Option(None, "--target-range",
                                            help="LOW,HIGH theoretical target range for mae_rescaled."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Pearson, Spearman, R^2, mae_fit and mae_rescaled of a score against a target.

    mae_fit is the mean absolute residual of the least-squares line target ~ a + b * score (what
    RoboPhys-3D Tables 18-19 call MAE). mae_rescaled is the mean |score' - target'| after mapping each
    to [0, 1] by its range (the given one, else its observed min and max). Rows with a blank value are
    dropped and counted.
    """
    ranges = _parse_pair(score_range, "--score-range"), _parse_pair(target_range, "--target-range")
    try:
        table_fit = fit_from_csv(path, score, target, *ranges)
    except ScoreTableError as exc:
        raise fail(str(exc)) from None
    res, dropped = table_fit.fit, table_fit.dropped
    if res.why is not None:  # (scores: the --score column, targets: the --target column)
        err_console.print(f"[yellow]warning:[/] {escape(score)} vs {escape(target)}: the correlations and "
                          f"the fit are undefined: {escape(res.why)} ({res.n} complete rows in "
                          f"{escape(str(path))})", markup=True, highlight=False)
    values = {"n": res.n, "dropped": dropped, "pearson": res.pearson, "spearman": res.spearman, "r2": res.r2,
              "slope": res.slope, "intercept": res.intercept, "mae_fit": res.mae_fit,
              "mae_rescaled": res.mae_rescaled}
    if as_json:
        typer.echo(json.dumps({"file": str(path), "score": score, "target": target,
                               **{k: v if isinstance(v, int) else _num(v) for k, v in values.items()},
                               **({"why": res.why} if res.why is not None else {})}, indent=2))
        return
    table = Table(title=f"{score} vs {target}", title_justify="left")
    add_column(table, "statistic", fold=True)
    add_column(table, "value", justify="right")
    for k, v in values.items():
        table.add_row(k, str(v) if isinstance(v, int) else ("-" if math.isnan(v) else f"{v:.4f}"))
    print_table(table)


#: Suffix of a ``--score`` column whose higher values are better (it is negated before the statistics).
HIGHER_BETTER = ":higher-better"


def _span(rho: float, low: float, high: float, why: str | None = None) -> str:
    if math.isnan(rho):
        return "-"
    return f"{rho:.3f}" + (f" [{low:.3f}, {high:.3f}]" if not math.isnan(low) else " [n/a]" if why else "")


def _rho_notes(title: str, data: dict[str, Any], groups: list[str], replicates: int) -> list[str]:
    """Why a rho is undefined or has no interval, the intervals that rest on fewer replicates than drawn,
    and the macros that average fewer groups than the table has."""
    notes: dict[str, list[str]] = {}
    for name, x in data.items():
        for part, p in (*((g, x.groups[g]) for g in groups), ("macro", x.macro), ("micro", x.micro)):
            if p.why is not None:
                what = "no rho" if math.isnan(p.rho) else "no interval"
                notes.setdefault(f"{what} ({p.why})", []).append(f"{name} {part}")
            elif not math.isnan(p.low) and p.replicates < replicates:
                notes.setdefault("interval from fewer replicates than drawn (the others leave rho undefined)",
                                 []).append(f"{name} {part} {p.replicates} of {replicates}")
        if 0 < len(x.macro_groups) < len(groups):
            notes.setdefault(f"macro averages fewer than the {len(groups)} groups", []).append(
                f"{name} over {', '.join(x.macro_groups)}")
    return [f"{title}: {text}: {', '.join(where)}" for text, where in notes.items()]


@app.command("segments")
def segments(
    path: Path = typer.Option(..., "--in", help="CSV with one row per segment."),
    score: list[str] = typer.Option(..., "--score", help=(
        f"Score column (repeatable); higher means worse, as KIVA's, unless it ends in {HIGHER_BETTER}.")),
    verdict: str = typer.Option("verdict", "--verdict", help="Column of Good, Medium or Bad."),
    group: str | None = typer.Option(None, "--group", help="Column of the group (embodiment)."),
    clip: str | None = typer.Option(None, "--clip", help="Column of the bootstrap cluster (else --video)."),
    video: str | None = typer.Option(None, "--video", help="Column of the video: adds the band overlap."),
    reference: str | None = typer.Option(None, "--reference", help="Score to take differences against."),
    replicates: int = typer.Option(2000, "--bootstrap", "--replicates", min=1, help=(
        "Cluster-bootstrap replicates of rho (RoboJudge App. E.1's design; it uses 10000).")),
    draws: int = typer.Option(1000, "--draws", min=1, help="Calibration draws of the three-band overlap."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and of the band-overlap draws."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Interval coverage."),
    turn_mean: list[str] = typer.Option([], "--turn-mean", help=(
        "SCORE=COLUMN (repeatable): SCORE is a voted judge's majority verdict (Bad 1, Medium 2, Good 3), "
        "COLUMN its mean level over turns; its rho is taken on the mean, its overlap on the majority "
        "verdict as it is (RoboWorM Table D4).")),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Spearman's rho of scores against per-segment verdicts, with cluster-bootstrap intervals (RoboWorM
    Table D4, docs/meta.md).

    Per group, macro (mean of the groups) and micro (pooled). Segments are resampled by clip (or video),
    so one clip's segments move together. With --reference, each other score's rho minus the
    reference's on the same replicates. With --video, the calibrated three-band overlap too (3 videos
    per level drawn for calibration, the rest banded). A blank score is a segment it did not measure; a
    blank clip is a clip of its own (its video, else the segment), and a blank group or video an error.
    A voted judge (--turn-mean) is ranked by its mean level over turns and its majority verdict is
    compared with the human one as it is, as RoboWorM Table D4 does for a VLM.
    """
    scores: dict[str, bool] = {}
    for s in score:
        name = s.removesuffix(HIGHER_BETTER)
        if name in scores:
            given = ", ".join(x for x in score if x.removesuffix(HIGHER_BETTER) == name)
            raise fail(f"--score {name!r} is given more than once ({given}); give each score column once, "
                       f"with {HIGHER_BETTER} when its higher values are better")
        scores[name] = s.endswith(HIGHER_BETTER)
    means: dict[str, str] = {}
    for spec in turn_mean:
        name, eq, column = (part.strip() for part in spec.partition("="))
        if not (eq and name and column):
            raise fail(f"--turn-mean {spec!r}: give SCORE=COLUMN, the voted judge's score column and the "
                       "column of its mean level over turns")
        if name in means:
            raise fail(f"--turn-mean names {name!r} twice ({means[name]!r} and {column!r}); give it once")
        means[name] = column
    try:
        table = segments_from_csv(path, scores, verdict=verdict, group=group, clip=clip, video=video,
                                  reference=reference, replicates=replicates, draws=draws, seed=seed,
                                  level=level, turn_means=means, warn=_warn)
    except ScoreTableError as exc:
        raise fail(str(exc)) from None
    rho = table.rho
    groups = list(table.segments)

    def cells(x: Any) -> dict[str, Any]:
        parts = {**x.groups, "macro": x.macro, "micro": x.micro}
        out = {k: {"rho": _num(v.rho), "low": _num(v.low), "high": _num(v.high), "n": v.n,
                   "replicates": v.replicates, **({"why": v.why} if v.why else {})}
               for k, v in parts.items()}
        out["macro"]["groups"] = list(x.macro_groups)
        return out

    def band(b: Any) -> Any:
        if isinstance(b, str):
            return b
        return {"overlap": b.overlap, "low": b.low, "high": b.high}

    if as_json:
        out = {"file": str(path), "segments": table.segments, "verdicts": table.verdicts,
               "clusters_from": table.clusters_from, "clusters": rho.clusters, "replicates": rho.replicates,
               "bootstrap": {"replicates": rho.replicates, "seed": seed, "level": level,
                             "clusters": rho.clusters},
               "draws": draws if table.bands else None,
               "higher_better": scores, "rho": {k: cells(v) for k, v in rho.metrics.items()},
               "minus_reference": {k: cells(v) for k, v in rho.differences.items()}, "reference": reference,
               "overlap": {k: {g: band(b) for g, b in per.items()} for k, per in table.bands.items()},
               "overlap_pooled": {k: None if p is None else {"macro": list(p.macro), "micro": list(p.micro)}
                                  for k, p in table.pooled.items()},
               "turn_mean": table.turn_means,
               "majority_overlap": {k: {**v.groups, "macro": _num(v.macro), "micro": _num(v.micro)}
                                    for k, v in table.voted.items()}}
        typer.echo(json.dumps(out, indent=2))
        return
    ci = f"{level:.0%} intervals, {rho.replicates} replicates over {table.clusters_from} clusters"
    for title, data in ((f"Spearman's rho ({ci})", rho.metrics),
                        (f"rho minus {reference}'s ({ci})", rho.differences)):
        if not data:
            continue
        t = Table(title=title, title_justify="left")
        for col in ("score", *groups, "macro", "micro"):
            add_column(t, col, fold=col == "score")
        for name, x in data.items():
            parts = [x.groups[g] for g in groups] + [x.macro, x.micro]
            t.add_row(name, *(_span(p.rho, p.low, p.high, p.why) for p in parts))
        print_table(t)
        for note in _rho_notes(title.split(" (")[0], data, groups, rho.replicates):
            console.print(f"note: {note}", highlight=False, markup=False)
    for name, column in table.turn_means.items():
        console.print(f"note: {name}'s rho is on its mean level over turns (column {column}), as RoboWorM "
                      "Table D4 ranks a VLM; its overlap is on its majority verdict", highlight=False,
                      markup=False)
    if table.voted:
        t = Table(title="majority-verdict overlap (a voted judge's verdict as it is, RoboWorM Table D4)",
                  title_justify="left")
        for col in ("score", *groups, "macro", "micro"):
            add_column(t, col, fold=col == "score")
        for name, v in table.voted.items():
            t.add_row(name, *(f"{x:.3f}" if not math.isnan(x) else "-"
                              for x in (*(v.groups[g] for g in groups), v.macro, v.micro)))
        print_table(t)
    if table.bands:
        t = Table(title=f"calibrated three-band overlap ({draws} draws)", title_justify="left")
        for col in ("score", *groups, "macro", "micro"):
            add_column(t, col, fold=col == "score")
        for name, per in table.bands.items():
            row = [(b if isinstance(b, str) else _span(b.overlap, b.low, b.high)) for b in per.values()]
            p = table.pooled[name]
            row += ["-", "-"] if p is None else [_span(*p.macro), _span(*p.micro)]
            t.add_row(name, *row)
        print_table(t)


#: Suffix of a ``meta multiview --score`` column whose lower values are better (it is negated first).
LOWER_BETTER = ":lower-better"


def _multiview_scores(specs: list[str]) -> dict[str, bool]:
    """``--score`` values (repeatable, each a comma-separated list) as {column: higher_is_better}."""
    scores: dict[str, bool] = {}
    for spec in specs:
        for part in spec.split(","):
            s = part.strip()
            name = s.removesuffix(LOWER_BETTER).strip()
            if not name:
                raise fail(f"--score {spec!r}: an empty column name; give COL[,COL...], each optionally "
                           f"ending in {LOWER_BETTER}")
            if name in scores:
                raise fail(f"--score {name!r} is given more than once; give each score column once")
            scores[name] = not s.endswith(LOWER_BETTER)
    return scores


def _multiview_report(result: MultiviewTable, target: str) -> ReportTable:
    """The Table D5 layout of ``result`` as a report table (written as CSV, Markdown and LaTeX):
    one row per score, rho and rank accuracy per group, then their means; best per column bold."""
    from robojudge.report import Cell, Table

    groups = result.groups
    by = result.group_column or "group"
    cols = ["method"] + [f"{g} {s}" for g in groups for s in ("rho", "RankAcc")] + ["mean rho",
                                                                                    "mean RankAcc"]
    note = (f"Per {by}: Spearman's rho and pairwise rank accuracy (a pair the method ties counts as an "
            f"error) against {target}, then the mean over the {len(groups)} group(s) where defined. "
            "Videos per group: " + ", ".join(f"{g} {result.videos[g]}" for g in groups) + ".")
    table = Table("multiview", f"Agreement with {target} per {by} (RoboWorM Table D5)", cols, note=note)
    for name, agreement in result.scores.items():
        cells = [Cell(text=name)]
        for g in groups:
            a = agreement.groups[g]
            cells += [Cell(a.rho), Cell(a.rank_accuracy)]
        table.add([*cells, Cell(agreement.rho), Cell(agreement.rank_accuracy)])
    if len(table.rows) > 1:
        for k in range(1, len(cols)):
            table.mark_best(k, higher=True)
    return table


def _multiview_notes(result: MultiviewTable) -> list[str]:
    """Unscored videos, undefined values and means over fewer groups than the table has."""
    notes = []
    if result.unlabelled:
        notes.append(f"{result.unlabelled} row(s) without a reference rating left out")
    for name, agreement in result.scores.items():
        unscored = [f"{g} {a.unscored}" for g, a in agreement.groups.items() if a.unscored]
        if unscored:
            notes.append(f"{name}: videos without a score, left out: {', '.join(unscored)}")
        why = [f"{g} ({a.why})" for g, a in agreement.groups.items() if a.why is not None]
        if why:
            notes.append(f"{name}: no rho for {', '.join(why)}")
        n = len(agreement.groups)
        if 0 < agreement.defined < n or 0 < agreement.defined_accuracy < n:
            notes.append(f"{name}: mean rho over {agreement.defined} and mean RankAcc over "
                         f"{agreement.defined_accuracy} of the {n} groups")
    return notes


def _multiview_json(a: EmbodimentAgreement) -> dict[str, Any]:
    """One score's agreement for ``--json``: the means, how many groups each averages, and per group."""
    groups = {g: {"rho": _num(x.rho), "rank_accuracy": _num(x.rank_accuracy), "n": x.n,
                  "unscored": x.unscored, **({"why": x.why} if x.why else {})}
              for g, x in a.groups.items()}
    return {"rho": _num(a.rho), "rank_accuracy": _num(a.rank_accuracy), "groups_rho": a.defined,
            "groups_rank_accuracy": a.defined_accuracy, "groups": groups}


@app.command("multiview")
def multiview(
    path: Path = typer.Option(..., "--in", help="CSV with one row per video."),
    score: list[str] = typer.Option(..., "--score", help=(
        "Score column(s): COL[,COL...] or repeated; higher means better (RIGIS; a VLM's majority verdict, "
        f"Bad 1, Medium 2, Good 3, or the words) unless it ends in {LOWER_BETTER}.")),
    target: str = typer.Option(..., "--target", help="Column of the reference rating (human, or planted); "
                               "numbers, or Bad/Medium/Good."),
    group: str | None = typer.Option(None, "--group", help="Column of the group (embodiment) \\[default: "
                                     "one group]."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write multiview.{csv,md,tex} here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Spearman's rho and pairwise rank accuracy of scores against a video-level rating, per group and
    averaged over groups (RoboWorM Table D5, docs/meta.md).

    A pair the method ties counts as an error of its rank accuracy, as the paper counts it: a VLM's
    three-level verdict ties many pairs. A blank score is a video that method did not score; a row with
    a blank target is left out and counted.
    """
    scores = _multiview_scores(score)
    if out is not None:
        check_out_folder(out)
    try:
        result = multiview_from_csv(path, scores, target=target, group=group)
    except ScoreTableError as exc:
        raise fail(str(exc)) from None
    if as_json:
        body = {"file": str(path), "target": target, "group": group, "unlabelled": result.unlabelled,
                "videos": result.videos,
                "scores": {name: {"higher_is_better": result.higher_is_better[name], **_multiview_json(a)}
                           for name, a in result.scores.items()}}
        typer.echo(json.dumps(body, indent=2))
    else:
        table = _multiview_report(result, target)
        t = Table(title=escape(table.title), title_justify="left")
        for k, col in enumerate(table.columns):
            add_column(t, col, fold=k == 0)
        for row in table.rows:
            t.add_row(*(c.formatted() if c.is_number else escape(c.formatted()) for c in row))
        print_table(t)
        console.print(f"note: {table.note}", highlight=False, markup=False)
        for note in _multiview_notes(result):
            console.print(f"note: {note}", highlight=False, markup=False)
    if out is not None:
        paths = _multiview_report(result, target).write(out)
        (err_console if as_json else console).print(f"wrote {', '.join(str(p) for p in paths)}",
                                                    highlight=False, markup=False)
@app.command("segments-table")
def segments_table(
    suite: Path = typer.Option(..., "--suite", help="Suite manifest: the items, their videos' frame rates, "
                               "embodiment (the group) and clip id (the cluster)."),
    db: str | None = typer.Option(None, "--db", help="Result store URL, SQLite path or run folder "
                                  "\\[default: --suite's store, as `robojudge score` finds it]."),
    metric: str = typer.Option("kiva", "--metric", help="A metric that stores per-segment values "
                               "(details.segments: kiva, kiva_rigidity, kiva_jerk)."),
    labels: Path | None = typer.Option(None, "--labels", help="Labelled manifest (`robojudge annotate export "
                                       "--format manifest`) with the segment verdicts \\[default: --suite's "
                                       "own meta.annotation]."),
    value: str = typer.Option("score", "--value", help="Key of details.segments[] to take (KIVA: score, "
                              "the larger ratio of a part to its threshold; or rigidity, jerk)."),
    human_segment: float | None = typer.Option(None, "--human-segment", min=0.001, help=(
        "Seconds per human segment, for labels that do not store it (meta.annotation.segment_s).")),
    config: str | None = typer.Option(None, "--config", help="HASH\\[@VERSION] (a hash prefix): the rows to "
                                      "use where the metric is stored under several configurations."),
    out: Path = typer.Option(..., "--out", "-o", help="CSV to write (one row per metric segment)."),
) -> None:
    """The per-segment CSV `meta segments` reads, from stored per-segment values and human segment
    verdicts (RoboWorM Table D4, docs/meta.md).

    A metric segment of frames [start, stop) covers seconds [start/fps, stop/fps) at its own video's frame
    rate; human segment k covers [k*S, (k+1)*S). Each metric segment gets the verdict of the human segment
    with a verdict that overlaps it longest (the earlier on a tie); one that none overlaps is left out and
    counted. Then: `robojudge meta segments --in OUT --score kiva --group group --clip clip --video video`.
    """
    from robojudge.meta import segment_table, write_segment_table
    from robojudge.run import suite_store_url
    from robojudge.store import StoreError

    def note(m: str) -> None:
        err_console.print(f"note: {m}", highlight=False, markup=False)

    try:
        url = suite_store_url(suite, db)
        build = segment_table(suite, url, metric, labels=labels, value=value, segment_s=human_segment,
                              config=config, note=note)
        write_segment_table(build, out)
    except (ScoreTableError, StoreError) as exc:
        raise fail(str(exc)) from None
    for why, ids in build.skipped.items():
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        note(f"{len(ids)} item(s) left out, {why}: {shown}")
    if build.no_verdict:
        note(f"{build.no_verdict} {metric} segment(s) left out: no human segment verdict overlaps them")
    rates = ", ".join(f"{fps:g} fps ({n} items)" for fps, n in build.frame_rates.items()) or "none"
    items = len({r.item_id for r in build.rows})
    console.print(f"wrote {len(build.rows)} segments of {items} items to {out} (frame rates: {rates})",
                  highlight=False, markup=False)
