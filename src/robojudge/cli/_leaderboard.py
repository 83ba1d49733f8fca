"""``robojudge leaderboard generators|judges|fps-ablation``: RoboJudge Tables 8, 2 and 9."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from robojudge import DEFAULT_SEED
from robojudge.cli._common import (
    CACHE_DIR_HELP,
    DB_HELP,
    E1_HELP,
    check_out_folder,
    console,
    err_console,
    fail,
    load_results,
    progress_every_option,
    progress_option,
    says_when_stopped,
)
from robojudge.cli._tables import add_column, print_table
from robojudge.meta import CONSTANT_WHYS, OVERALL, Estimate, Leaderboard, PairedDifference
from robojudge.metric_info import direction, registry_config_key
from robojudge.report import (
    CALIBRATED,
    CALIBRATED_TOLERANCE,
    CalibratedJudge,
    JudgeRow,
    UnknownScoreSource,
    generator_board,
    generator_pair,
    judge_series,
    judges_report,
    leaderboard_scores,
    mixed_libraries,
    mixed_library_note,
    mixed_size_note,
    mixed_sizes,
    pair_notes,
    score_direction,
    source_metrics,
    write_judges,
    write_leaderboard,
)
from robojudge.report._judges import JUDGE_COLUMNS, chance_row, judge_mark, judge_notes, judges_table_note
from robojudge.report._leaderboard import (
    LOWER_NOTE,
    approximate_standing,
    better,
    calibrated_scores,
    calibration_note,
    calibration_problem,
    lone_sentences,
    small_standing,
    standing_mark,
    target_title,
)
from robojudge.report._tables import APPROX_NOTE, small_note
from robojudge.report._unset import generator_groups, generator_of, unset_note
from robojudge.store import StoreError
from robojudge.suite import ManifestError

if TYPE_CHECKING:
    from robojudge.run import JudgeRunSummary
    from robojudge.store import ResultRow
    from robojudge.suite import Item

app = typer.Typer(help="Leaderboards of generators (Table 8) and of judges (Table 2).", no_args_is_help=True)

BEST_MARK = "\u25b2"
"""Follows the best value of each column of a judges table, which is also green where colour is on (a file,
a pipe or ``NO_COLOR`` has none)."""
BEST_LEGEND = f"best per column marked {BEST_MARK}"
_DB_HELP = DB_HELP


def _est(e: Estimate, digits: int = 2) -> str:
    if math.isnan(e.value):
        return "-"
    ci = "" if math.isnan(e.low) else f" [{e.low:.{digits}f}, {e.high:.{digits}f}]"
    return f"{e.value:.{digits}f}{ci}"


def _title(target: str) -> str:
    return target_title(target)


def _print_board(board: Leaderboard, heading: str) -> None:
    table = Table(title=heading, title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("rank", "generator", *(_title(t) for t in board.targets), "P(rank)", "rank range"):
        add_column(table, col, fold=col == "generator")
    for e in board.entries:
        s = e.standings[board.sort_by]
        prob = "-" if math.isnan(s.rank_prob) else f"{s.rank_prob:.2f}"
        span = f"{s.rank_low}-{s.rank_high}" if s.rank_low else "-"
        scores = [_est(e.standings[t].score) + standing_mark(e, t) for t in board.targets]
        table.add_row("-" if s.rank is None else str(s.rank), e.generator, *scores, prob, span)
    print_table(table)
    small = [e.standings[t].score for e in board.entries for t in board.targets if small_standing(e, t)]
    if small:
        console.print(small_note(any(not math.isnan(s.low) for s in small)), highlight=False, markup=False)
    if any(approximate_standing(e, t) for e in board.entries for t in board.targets):
        console.print(APPROX_NOTE, highlight=False, markup=False)
    whys = dict.fromkeys(w for e in board.entries for t in board.targets if (w := e.standings[t].score.why))
    for why in whys:
        spread = "" if why in CONSTANT_WHYS else " or rank spread"  # (a constant mean keeps its rank spread)
        console.print(f"no interval{spread} where {why}", highlight=False, markup=False)
    for line in lone_sentences(board.n_lone_clusters, board.n_clusters):
        console.print(line, highlight=False, markup=False)
    if board.tolerance:
        console.print(f"means closer than {board.tolerance:g} tie", highlight=False, markup=False)
    if not board.higher_is_better:
        console.print(LOWER_NOTE, highlight=False, markup=False)
    for line in board.bootstrap_notes():  # the replicates behind P(rank) and the rank ranges
        console.print(line, highlight=False, markup=False)
    for line in pair_notes(board):  # generators scored on different clips, or the matched mode's clips
        style = "yellow" if line.startswith("Warning:") else None
        console.print(line, style=style, highlight=False, markup=False)
    if not board.adjacent:  # (fewer than two generators ranked: no pair to show)
        return
    pairs = Table(title=f"adjacent pairs: P(upper scores {better(board)}), ties count 1/2",
                  title_justify="left",
                  box=box.SIMPLE_HEAD)
    for col in ("target", "upper", "lower", "P"):
        add_column(pairs, col, fold=col in ("upper", "lower"))
    for p in board.adjacent:
        prob = "-" if math.isnan(p.prob) else f"{p.prob:.2f}"
        pairs.add_row(_title(p.target), p.upper, p.lower, prob)
    print_table(pairs)


def _pair_names(text: str) -> tuple[str, str]:
    """``A,B`` of ``--pair`` as two generator names."""
    names = [p.strip() for p in text.split(",")]
    if len(names) != 2 or not all(names):
        raise fail(f"--pair must name two generators as A,B (e.g. --pair new,old), got {text!r}")
    if names[0] == names[1]:
        raise fail(f"--pair {text}: name two different generators")
    return names[0], names[1]


def _print_paired(diffs: list[PairedDifference], level: float) -> None:
    table = Table(title=f"paired differences a - b on the clips both were scored on ({level:.0%} CI, paired "
                  "clip bootstrap); P(a > b), ties count 1/2", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("a", "b", "target", "a - b", "clips", "P(a > b)"):
        add_column(table, col, fold=col in ("a", "b"))
    for d in diffs:
        for t in d.targets:
            e, p = d.difference[t], d.prob[t]
            prob = "-" if math.isnan(p) else f"{p:.2f}"
            table.add_row(d.a, d.b, _title(t), _est(e, 3), str(d.n_clips[t]), prob)
    print_table(table)
    whys = dict.fromkeys(w for d in diffs for t in d.targets if (w := d.difference[t].why))
    for why in whys:
        console.print(f"no interval where {why}", highlight=False, markup=False)
    for d in diffs:
        if d.n_clips[OVERALL] == 0:
            console.print(f"{d.a} and {d.b} share no scored clip, so there is no paired difference; "
                          "give the rollouts of one episode the same clip_id to pair them", style="yellow",
                          highlight=False, markup=False)


@app.command("generators")
def generators(
    suite: Path = typer.Argument(..., help="Suite manifest the results belong to, or a run folder (its "
                                 "store, and the manifests in it or scored into it)."),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    scores: str = typer.Option("labels", "--scores",
                               help="labels, judge:NAME (a stored VLM judge), calibrated"
                               " (the metric-calibrated judge) or metric:ID (a stored metric, ranked by its"
                               " direction)."),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help=E1_HELP),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap and folds."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Interval coverage."),
    sort_by: str = typer.Option(OVERALL, "--sort", help="Order by pa, ia or overall."),
    folds: int = typer.Option(5, "--folds", min=2, help="Folds of the calibrated judge."),
    alpha: float = typer.Option(1.0, "--alpha", min=0.0, help="L2 penalty of the calibrated judge."),
    predict: str = typer.Option("expected", "--predict", help="Calibrated score: expected or class."),
    matched: bool = typer.Option(False, "--matched",
                                 help="Rank on the clips every ranked generator was scored on: each "
                                 "generator's mean is the mean of its clip means over those clips."),
    pair: list[str] = typer.Option([], "--pair",
                                   help="A,B: the paired difference A - B on the clips both were scored on, "
                                   "with its interval and P(A > B) (repeatable)."),
    out: Path | None = typer.Option(None, "--out", "-o",
                                    help="Write leaderboard.md, leaderboard.csv and leaderboard_pairs.csv "
                                    "here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Generators by mean PA, IA and Overall = (PA + IA) / 2, with CIs and rank probabilities.

    Clips are the bootstrap clusters (all generators' items of a drawn clip come along) and sources
    the strata. Generators scored on different clips, or with rollout counts per clip out of
    proportion, are named under the table: --matched ranks them on the clips all share, and --pair
    gives the paired difference of two.
    """
    if sort_by not in ("pa", "ia", OVERALL):  # told as the option, before any result is read
        raise fail(f"--sort must be pa, ia or {OVERALL}, got {sort_by!r}")
    if predict not in ("expected", "class"):
        raise fail(f"--predict must be expected or class, got {predict!r}")
    pairs = [_pair_names(p) for p in pair]
    if out is not None:
        check_out_folder(out)
    # Only the rows the scores are computed from: none for the labels, one judge's or metric's series.
    rows, items = load_results(suite, db, lambda stored: source_metrics(scores, stored))
    cal: CalibratedJudge | None = None
    try:
        if scores == "calibrated":  # (fit here, as the source does, to say below what it was fit on)
            cal = calibrated_scores(rows, items, direction, n_folds=folds, alpha=alpha, seed=seed,
                                    prediction=predict, config_key=registry_config_key)
            per_axis = cal.scores
        else:
            per_axis = leaderboard_scores(scores, rows, items, direction, n_folds=folds, alpha=alpha,
                                          seed=seed, prediction=predict)
        tolerance = CALIBRATED_TOLERANCE if scores == "calibrated" else 0.0  # (its fit's last digits)
        higher = score_direction(scores, per_axis, direction)  # (a metric where lower is better: False)
        board = generator_board(items, per_axis, bootstrap=bootstrap, seed=seed, level=level, sort_by=sort_by,
                                tolerance=tolerance, matched=matched, higher_is_better=higher)
        diffs = []
        for a, b in pairs:
            try:
                diffs.append(generator_pair(items, per_axis, a, b, bootstrap=bootstrap, seed=seed,
                                            level=level, tolerance=tolerance, higher_is_better=higher))
            except ValueError as exc:
                raise fail(f"--pair {a},{b}: {exc}") from None
    except UnknownScoreSource as exc:
        raise fail(f"--scores must be {exc.choices}, got {scores!r}") from None
    except ValueError as exc:
        raise fail(str(exc)) from None
    # The calibrated judge scores items from stored metrics: say when those were read at several sizes
    # or computed with different library versions.
    group_of = dict(zip((it.item_id for it in items), generator_groups(items), strict=True))
    size_note = ""
    if scores == "calibrated":
        size_note = (mixed_size_note(mixed_sizes(rows, group_of))
                     + mixed_library_note(mixed_libraries(rows, group_of)))
    version_note = _metric_version_note(scores, rows, items)
    note = calibration_note(cal) + version_note
    if as_json:
        fitted = {} if cal is None else {"calibrated": {
            "metrics": list(cal.metrics), "left_out": list(cal.left_out), "alpha": cal.alpha, "folds": folds,
            "prediction": cal.prediction, "note": note}}
        paired = {"paired": [d.to_dict() for d in diffs]} if diffs else {}
        typer.echo(json.dumps({"suite": str(suite), "scores": scores, **board.to_dict(), **fitted, **paired,
                               "notes": pair_notes(board),
                               **({"warning": size_note.strip()} if size_note else {}),
                               **({"version_note": version_note} if version_note else {})}, indent=2))
    else:
        matched_says = ", matched clips" if matched else ""
        _print_board(board, f"generators by {_title(sort_by)} (scores: {scores}{matched_says}, "
                            f"{level:.0%} CI, {bootstrap} replicates)")
        if diffs:
            _print_paired(diffs, level)
        if note:
            console.print(note, highlight=False, markup=False)
        if size_note:
            err_console.print(f"[yellow]{escape(size_note.strip())}[/]", markup=True, highlight=False)
        if renamed := unset_note(map(generator_of, items)).strip():
            console.print(renamed, highlight=False, markup=False)
    if out is not None:
        paths = write_leaderboard(board, out, title=f"Generator leaderboard ({scores})", note=note)
        (err_console if as_json else console).print(f"wrote {', '.join(str(p) for p in paths)}",
                                                    highlight=False)


def _metric_version_note(scores: str, rows: list[ResultRow], items: list[Item]) -> str:
    """With ``--scores metric:ID``: the version the metric's rows were read at, where it is not the one
    installed (the only version stored; two are refused by name); empty otherwise."""
    metric = scores.removeprefix("metric:") if scores.startswith("metric:") else None
    if metric is None:
        return ""
    ids = {it.item_id for it in items}
    stored = {r.version for r in rows if r.metric == metric and r.item_id in ids}
    try:
        _, installed = registry_config_key(metric, None)
    except (KeyError, ValueError):  # a metric this robojudge does not know: nothing to compare with
        return ""
    if len(stored) != 1 or installed in stored:
        return ""
    (was,) = stored
    return (f"{metric} read at version {was}, the only one stored; this robojudge computes version "
            f"{installed}: `robojudge score` adds its rows (a version bump changes values on some inputs).")


def _print_judges(table_rows: list[JudgeRow], targets: tuple[str, ...], heading: str,
                  note: str = "") -> None:
    table = Table(title=heading, title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("judge", "scored", "unscored"):
        add_column(table, name, fold=name == "judge")
    for t in targets:
        for name in ("r", "Acc", "MSE"):
            add_column(table, f"{_title(t)} {name}")
    for row in table_rows:
        cells = []
        for t in targets:
            for col in ("r", "acc", "mse"):
                text = _est(row.cells[t, col]) + judge_mark(row, t, col)
                best = (t, col) in row.best
                cells.append(Text(f"{text} {BEST_MARK}", style="bold green") if best else text)
        table.add_row(row.judge, str(sum(row.n.values())), str(sum(row.n_unscored.values())), *cells)
    print_table(table)
    if any(row.small for row in table_rows):
        console.print("\u2020 small n: fewer than 10 items or 5 clips.", highlight=False)
    for line in judge_notes(table_rows, targets):  # the double dagger's key, and withheld intervals
        console.print(line, highlight=False, markup=False)
    if note:
        console.print(note, highlight=False)


def _split_items(items: list[Item], split_of: str) -> list[Item]:
    """The items of ``items`` in the export split ``split_of`` names (``--split-of EXPORT_DIR:SPLIT``)."""
    from robojudge.train import ExportError, parse_split_of, split_items

    try:
        wanted = split_items(*parse_split_of(split_of))
    except ExportError as exc:
        raise fail(str(exc)) from None
    chosen = [it for it in items if it.item_id in wanted]
    if not chosen:
        raise fail(f"--split-of {split_of}: none of the suite's {len(items)} items is among its "
                   f"{len(wanted)} items (a split of another suite's export?)")
    missing = len(set(wanted) - {it.item_id for it in chosen})
    if missing:
        err_console.print(f"[yellow]warning:[/] --split-of {escape(split_of)}: {missing} of its "
                          f"{len(set(wanted))} items are not in this suite; compared on the {len(chosen)} "
                          "that are", markup=True, highlight=False)
    return chosen


def _trained_on_notes(rows: list[ResultRow], items: list[Item], chosen: list[str]) -> list[str]:
    """A warning for each judge compared whose model is a checkpoint ``robojudge train`` wrote and that
    was trained on labelled items it is compared on (their agreement is no held-out measure)."""
    labelled = {it.item_id for it in items if it.labels is not None}
    out = []
    for j in judge_series(rows):
        if chosen and j.label not in chosen and j.name not in chosen:
            continue
        models = {str(m) for s in j.axes.values() if (m := (s.config or {}).get("model"))}
        local = [m for m in sorted(models) if Path(m).is_dir()]
        if not local:
            continue
        from robojudge.train import trained_on

        judged = sorted(labelled & {i for a in j.axes for i in j.values(a)})
        for m in local:
            if (seen := trained_on(j.label, m, judged)) is not None:
                out.append(seen.message())
    return out


@app.command("judges")
def judges(
    suite: Path = typer.Argument(..., help="Suite manifest (with PA/IA labels) the results belong to, or a "
                                 "run folder (its store, and the manifests in it or scored into it)."),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    judge: list[str] = typer.Option([], "--judge", help="Judge to include (repeatable; default: all)."),
    calibrated: bool = typer.Option(True, "--calibrated/--no-calibrated",
                                    help="Add the metric-calibrated judge fitted on the stored metrics."),
    folds: int = typer.Option(5, "--folds", min=2, help="Cross-validation folds of the calibrated judge."),
    alpha: float = typer.Option(1.0, "--alpha", min=0.0, help="L2 penalty of the calibrated judge."),
    predict: str = typer.Option("expected", "--predict",
                                help="Calibrated judge's score: expected (continuous) or class."),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help=E1_HELP),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap and of the folds."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Interval coverage."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write judges.md, judges.csv and "
                                    "judge_differences.csv here."),
    random: bool = typer.Option(True, "--random/--no-random",
                                help="Add the random (expected) row: the chance level of Table 2's Random "
                                "Baseline, worked out from the labels."),
    as_json: bool = typer.Option(False, "--json", help="Print the agreement report as JSON."),
    split_of: str | None = typer.Option(
        None, "--split-of", help="EXPORT_DIR:SPLIT: compare on the items of one split of a `robojudge train "
        "export` only (e.g. runs/judge-data:test, a trained judge's held-out items; docs/training.md)."),
) -> None:
    """Judges against the suite's labels in the layout of RoboJudge Table 2, best per column marked,
    and the paired differences between judges (every pair, or past 6 judges each against the one with
    the largest Overall r).

    Without any stored VLM judge the table still holds the metric-calibrated judge, whose scores are
    all held out (cross-validation grouped by clip).
    """
    if predict not in ("expected", "class"):
        raise fail(f"--predict must be expected or class, got {predict!r}")
    if out is not None:
        check_out_folder(out)
    rows, items = load_results(suite, db)
    if split_of is not None:
        items = _split_items(items, split_of)
    trained_notes = _trained_on_notes(rows, items, judge)
    for line in trained_notes:
        err_console.print(f"[yellow]warning:[/] {escape(line)}", markup=True, highlight=False)
    try:
        report, table_rows, cal, _ = judges_report(
            rows, items, direction, judges=judge or None, calibrated=calibrated, n_folds=folds,
            alpha=alpha, prediction=predict, bootstrap=bootstrap, seed=seed, level=level,
            config_key=registry_config_key)
    except ValueError as exc:
        raise fail(str(exc)) from None
    note = calibration_note(cal)
    if calibrated and cal is None:
        why = calibration_problem([it for it in items if it.labels is not None], n_folds=folds, seed=seed)
        note = f"{CALIBRATED} left out: {why or 'no stored metric values to calibrate on'}"
    if split_of is not None:
        note = " ".join(filter(None, [note, f"Items: the {len(items)} of {split_of} (--split-of)."]))
    if trained_notes:  # kept with the table written (judges.md): the warning is the table's caveat
        note = " ".join(filter(None, [note, *(f"Warning: {t}." for t in trained_notes)]))
    chance = chance_row(items) if random else None
    if chance is not None:  # (RoboJudge Table 2 lists its Random Baseline first)
        table_rows = [chance, *table_rows]
    if as_json:
        data = report.to_dict()
        data["best"] = {r.judge: sorted(f"{t}.{c}" for t, c in r.best) for r in table_rows if not r.reference}
        if chance is not None:
            data["random_expected"] = {t: {col: None if math.isnan(v := chance.cells[t, col].value) else v
                                           for col, _, _ in JUDGE_COLUMNS} for t in (*report.axes, OVERALL)}
        typer.echo(json.dumps({"suite": str(suite), "calibrated_metrics": list(cal.metrics) if cal else [],
                               **data}, indent=2))
    else:
        _print_judges(table_rows, (*report.axes, OVERALL),
                      f"judges vs labels ({report.n_items} items, {level:.0%} CI, {bootstrap} replicates; "
                      f"{BEST_LEGEND}; scored and unscored count labelled (item, axis) pairs)",
                      judges_table_note(table_rows, report))
        if note:
            console.print(note, highlight=False)
        if report.differences:  # App. E.1's paired differences: what the marks above do not test
            from robojudge.report._judge_differences import (
                BEST_NOT_A_TEST,
                DIFFERENCE_HEADERS,
                difference_rows,
                differences_intro,
            )

            console.print(BEST_NOT_A_TEST, highlight=False, markup=False)
            diff = Table(title="paired differences between judges", title_justify="left", box=box.SIMPLE_HEAD)
            for name in DIFFERENCE_HEADERS:
                add_column(diff, name, fold=name in ("a", "b"))
            for cells in difference_rows(report):
                diff.add_row(*(Text(c) for c in cells))
            print_table(diff)
            console.print(differences_intro(report), highlight=False, markup=False)
    if out is not None:
        paths = write_judges(table_rows, report, out, note=note)
        wrote = ", ".join(str(p) for p in paths)
        (err_console if as_json else console).print(f"wrote {wrote}", highlight=False)


def _rates(text: str) -> list[float | None]:
    out: list[float | None] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part == "native":
            out.append(None)
            continue
        try:
            v = float(part)
        except ValueError:
            raise fail(f"--fps: {part!r} is not a number or 'native'") from None
        if not (math.isfinite(v) and v > 0):  # NaN passed "v <= 0" and was judged at every item
            raise fail(f"--fps: rates must be positive numbers, got {part}")
        if v in out:
            raise fail(f"--fps: {part} is given twice")
        out.append(v)
    if not out:
        raise fail("--fps: give at least one rate, e.g. --fps 2,4,8")
    return out


@app.command("fps-ablation")
@says_when_stopped("the judgments stored so far are kept, and --out is written only at the end (its files "
                   "are as they were); rerun the same command to resume")
def fps_ablation(
    suite: Path = typer.Argument(..., help="Suite manifest with PA/IA labels."),
    judge_name: str | None = typer.Option(None, "--judge", "-j", help="Judge name from the judges file."),
    judges_file: Path | None = typer.Option(None, "--judges", help="TOML file declaring judges \\[default: "
                                            "robojudge.toml in the current folder]."),
    backend: str | None = typer.Option(None, "--backend", help="Inline judge: openai, hf or mock."),
    model: str | None = typer.Option(None, "--model", help="Model name (inline or override)."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint."),
    rubric: str = typer.Option("pa,ia", "--rubric", "-r", help="Comma-separated built-in rubrics."),
    fps: str = typer.Option("2,4,8", "--fps",
                            help="Comma-separated rates (Table 9's: 2,4,8); 'native' = every frame."),
    max_frames: int = typer.Option(32, "--max-frames", min=1, help="Most frames per video at every rate."),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help=CACHE_DIR_HELP),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the response cache."),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help=E1_HELP),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write fps_ablation.{csv,md,tex} here."),
    progress: bool = progress_option(" for each rate's run"),
    progress_every: float = progress_every_option(),
) -> None:
    """Run one judge at several frame rates and compare their agreement with the labels (RoboJudge Table 9).

    Each rate is stored as judge ``<name>-fps<rate>`` and resumes like ``robojudge judge``.
    """
    from robojudge.ablation import NoRateScoredError, NothingJudgedError, fps_ablation_suite
    from robojudge.cli._judge import cache_open_error, judging_progress, resolve_judge, resolve_rubrics
    from robojudge.judges import (
        JudgeConfigError,
        ResponseCache,
        ResponseCacheError,
        RubricError,
        UnknownNameError,
    )
    from robojudge.run import OpenFilesError

    rates = _rates(fps)
    if out is not None:
        check_out_folder(out)
    try:
        cfg = resolve_judge(judge_name, judges_file, backend, {"model": model, "base_url": base_url})
        rubrics = resolve_rubrics(rubric, [])
        cache = ResponseCache(cache_dir, enabled=not no_cache)
    except ResponseCacheError as exc:
        raise fail(cache_open_error(exc, "--cache-dir")) from None
    except (JudgeConfigError, RubricError, UnknownNameError, OSError) as exc:
        raise fail(str(exc)) from None
    other = [r.id for r in rubrics if r.id not in ("pa", "ia")]
    if other:  # refused before any request: every rate was judged, then nothing could be compared
        raise fail(f"--rubric {','.join(other)}: the ablation compares judge scores with the labels' pa "
                   "and ia; use --rubric pa, ia or pa,ia")
    try:
        with cache, judging_progress(progress, progress_every) as on_event:
            result = fps_ablation_suite(suite, cfg, rubrics, rates, db=db, max_frames=max_frames, cache=cache,
                                        bootstrap=bootstrap, seed=seed, progress=on_event)
    except NothingJudgedError as exc:  # as `robojudge judge` says it, and with its status
        _print_rates(exc.runs)
        raise _judged_nothing() from None
    except NoRateScoredError as exc:  # replies came, none parsed: data, not a bad command line (exit 1)
        _print_rates(exc.runs)
        err_console.print(f"[bold red]nothing to compare:[/] {escape(str(exc))}", markup=True,
                          highlight=False)
        raise typer.Exit(1) from None
    except (ManifestError, StoreError, ValueError, OSError, OpenFilesError) as exc:
        raise fail(str(exc)) from None
    _print_rates(result.runs)
    if result.left_out:  # as `robojudge judge` counts an all-unparsable run and exits 0: the others shown
        err_console.print(f"[yellow]note: left out of the table, with no scored judgment (every reply "
                          f"unparsable or every request failed): {escape(', '.join(result.left_out))}; "
                          f"`robojudge results export --metric "
                          f"judge:{escape(result.left_out[0])}:{rubrics[0].id} -o -` "
                          "lists such a rate's stored replies and errors[/]", markup=True, highlight=False)
    if cfg.backend == "mock":
        err_console.print("[yellow]note: the mock backend replays scripted replies; these are not "
                          "judgments.[/]", markup=True)
    _print_judges(list(result.rows), (*result.report.axes, OVERALL),
                  f"judge {cfg.name} by frame rate vs labels ({bootstrap} replicates; {BEST_LEGEND})",
                  judges_table_note(list(result.rows), result.report))
    if out is not None:
        paths = result.table().write(out)
        console.print(f"wrote {', '.join(str(p) for p in paths)}", highlight=False)
    if all(s.judged_nothing for s in result.runs.values()):  # the table is of judgments stored earlier
        raise _judged_nothing()


def _print_rates(runs: dict[str, JudgeRunSummary]) -> None:
    for name, s in runs.items():
        console.print(f"{name}: {s.scored} scored, {s.unscored} unparsable, {s.failed} failed, "
                      f"{s.skipped} already stored", highlight=False)


def _judged_nothing() -> typer.Exit:
    """The line and the exit (status 1, as ``robojudge judge``'s) of an ablation without one reply."""
    err_console.print("[bold red]nothing was judged:[/] every request at every frame rate failed (a server "
                      "down, a wrong key: `robojudge results export` lists the error rows; exit status 1)",
                      markup=True, highlight=False)
    return typer.Exit(1)
