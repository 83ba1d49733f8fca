"""``robojudge audit acceleration|standins|sample-size``: audits of world-model generators (docs/audit.md)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from robojudge.cli._common import (
    DB_HELP,
    check_out_folder,
    check_settings,
    console,
    err_console,
    fail,
    parse_settings,
    print_summary,
    progress_every_option,
    progress_option,
    says_when_stopped,
    scoring_progress,
)

#: ``audit acceleration``'s defaults: the Q a method must reach (``--min-q``) and the interval coverage
#: (``--level``), as :func:`robojudge.audit.audit_acceleration`'s ``level`` and ``ci``.
DEFAULT_MIN_Q = 0.95
DEFAULT_COVERAGE = 0.95

app = typer.Typer(help="Audits of world-model generators: the speed-quality frontier of acceleration "
                  "methods, FVD sample-size sensitivity.", no_args_is_help=True)


def _names(text: str, option: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise fail(f"{option} is empty")
    return names


def _f(v: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(v) else f"{v:.{digits}f}"


def _interval(e: Any) -> str:
    """``value [low, high]``, or the value and why it has no interval (too few clips)."""
    if not math.isnan(e.low):
        return f"{_f(e.value)} [{_f(e.low)}, {_f(e.high)}]"
    return f"{_f(e.value)} (no interval: {e.why})" if e.why and not math.isnan(e.value) else _f(e.value)


@app.command("acceleration")
@says_when_stopped("the results scored are stored and --out's files are as they were (they are replaced only "
                   "once all are written whole); rerun the same command: it resumes from the stored results")
def acceleration_cmd(
    suite: Path = typer.Argument(..., help="Suite manifest holding the dense and the accelerated rollouts."),
    dense: str = typer.Option(..., "--dense", help="The dense generator (speedup 1, Q 1)."),
    accelerated: str = typer.Option(..., "--accelerated", help="Comma-separated accelerated generators."),
    metrics: str | None = typer.Option(
        None, "--metrics", "-m", help="Comma-separated metric ids to score first (stored results are reused; "
        "an external metric's imported values are read, not scored) and audit \\[default: every metric "
        "already stored for these generators]."),
    settings: list[str] = typer.Option([], "--set", help="Metric setting METRIC.KEY=VALUE (repeatable): the "
                                       "configuration scored and audited (without --metrics: the stored one "
                                       "audited) \\[default: the metric's default configuration]."),
    timing: Path | None = typer.Option(
        None, "--timing", help="Timing file (CSV or JSON: generator, item, seconds, steps, rollouts; "
        "docs/audit.md) \\[default: the items' meta.generation_seconds / meta.denoising_steps]."),
    store: str | None = typer.Option(
        None, "--store", "--db",
        help=DB_HELP),
    min_q: float | None = typer.Option(
        None, "--min-q", help="The aggregate retention Q a method must reach to count for the largest "
        "speedup (formerly --level) \\[default: 0.95]."),
    level: float | None = typer.Option(
        None, "--level", help="Interval coverage, 0.5 to 0.999, as in leaderboard, select and meta "
        "(it used to be the Q threshold, now --min-q) \\[default: 0.95]."),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0,
                                  help="Paired clip-bootstrap replicates (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    workers: int = typer.Option(1, "--workers", "-w", min=1, help="Scoring worker processes."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="With --metrics: recompute stored "
                                      "failures (as `robojudge score --retry-errors`); refused without it."),
    out: Path | None = typer.Option(
        None, "--out", "-o",
        help="Folder for acceleration.json, tables/*.csv|md|tex, frontier.svg and index.html."),
    progress: bool = progress_option(" while scoring"),
    progress_every: float = progress_every_option(),
) -> None:
    """Speedup, per-metric retention and aggregate retention Q of accelerated generators against dense."""
    from robojudge.audit import TimingError, audit_acceleration, audited_note, not_quality_note
    from robojudge.metrics import UnknownMetricError
    from robojudge.report import stale_note
    from robojudge.run import RunInterrupted, RunSummary
    from robojudge.store import StoreError
    from robojudge.suite import ManifestError

    check_settings(skip=("decode_workers",))  # (only judges decode in worker processes)
    q_level = DEFAULT_MIN_Q if min_q is None else min_q
    coverage = DEFAULT_COVERAGE if level is None else level
    if not math.isfinite(q_level):
        raise fail(f"--min-q must be a finite number, got {min_q}")
    if level is not None and not 0.5 <= level <= 0.999:  # (NaN too) checked here to name --min-q
        old = f" (--min-q {level:g} asks what --level {level:g} asked)" if math.isfinite(level) else ""
        raise fail(f"--level {level:g}: the interval coverage must be between 0.5 and 0.999; the Q threshold "
                   f"that --level set before is --min-q now{old}")
    if retry_errors and metrics is None:  # as report's flags that do nothing: said, not silently ignored
        raise fail("--retry-errors recomputes stored failures while scoring, and without --metrics nothing "
                   "is scored (the audit reads the store): name the metrics to retry with --metrics")
    if level is not None and min_q is None and level != DEFAULT_COVERAGE:
        # A script written when --level was the Q threshold now gets other intervals, same threshold: say so.
        err_console.print(f"[yellow]note:[/] --level {level:g} sets the interval coverage "
                          f"({level * 100:g}%), as in leaderboard, select and meta; the Q threshold is "
                          f"--min-q (here {q_level:g}), which --level set before", markup=True,
                          highlight=False)
    if out is not None:
        check_out_folder(out)
    try:
        with scoring_progress(progress and metrics is not None, progress_every) as on_result:
            run = audit_acceleration(
                suite, dense, _names(accelerated, "--accelerated"),
                metrics=_names(metrics, "--metrics") if metrics is not None else None,
                configs=parse_settings(settings), timing=timing, db=store, level=q_level, ci=coverage,
                bootstrap=bootstrap, seed=seed, workers=workers, out_dir=out, progress=on_result,
                retry_errors=retry_errors)
    except RunInterrupted as exc:  # stopped while scoring: what was scored, and no audit of part of it
        if isinstance(exc.summary, RunSummary):
            print_summary(exc.summary)
        raise typer.Exit(130) from None
    except (UnknownMetricError, ManifestError, StoreError, TimingError, ValueError,
            FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    if run.scored is not None:
        print_summary(run.scored)
    left_stale = stale_note(run.stale)
    if left_stale:
        err_console.print(f"[yellow]{escape(left_stale)}[/]", markup=True, highlight=False)
    a = run.audit
    for m in a.methods:
        mark = " (frontier)" if m.name in a.frontier else ""
        console.print(f"{m.name}: speedup {_f(m.speedup, 2)} ({m.basis}), Q {_interval(m.q)} "
                      f"over {m.clips} clips{mark}", highlight=False, markup=False)
        for r in m.retentions if m.name != a.dense else ():
            why = f" ({r.reason})" if r.reason else ""
            console.print(f"  {r.metric}: retention {_interval(r.retention)}, n={r.n}{why}", highlight=False,
                          markup=False)
    console.print(f"largest speedup with Q >= {q_level:g}: {a.best or 'none'}", highlight=False, markup=False)
    if bootstrap:
        console.print(f"intervals: {coverage * 100:g}% paired clip bootstrap, {bootstrap} replicates "
                      f"(seed {seed})", highlight=False, markup=False)
    if run.scores.unmatched:
        console.print(f"not matched (no clip_id or initial_frame): {', '.join(run.scores.unmatched)}",
                      highlight=False, markup=False)
    if run.skipped_metrics:
        console.print(f"left out (direction unknown): {', '.join(run.skipped_metrics)}", highlight=False,
                      markup=False)
    if run.not_quality_left_out:
        console.print(not_quality_note(run.not_quality_left_out), highlight=False, markup=False)
    if run.not_quality_named:
        console.print(f"in Q as named with --metrics, although they do not measure the video: "
                      f"{', '.join(run.not_quality_named)}", highlight=False, markup=False)
    for note in run.config_notes:  # one configuration per metric: what was read, what was left out
        console.print(note, highlight=False, markup=False)
    if said := audited_note(run.audited):
        console.print(said, highlight=False, markup=False)
    if out is not None:
        console.print(f"written: {out}/index.html, acceleration.json, tables/, frontier.svg", highlight=False)
    if run.scored is not None and run.scored.measured_nothing:
        console.print("[bold red]nothing was measured:[/] every scoring task of this audit that reads an "
                      "input failed (exit status 1)", markup=True, highlight=False)
        raise typer.Exit(1)


@app.command("standins")
def standins_cmd(
    suite: Path = typer.Argument(..., help="Suite manifest with the dense rollouts."),
    dense: str = typer.Option(..., "--dense", help="The generator whose rollouts are post-processed."),
    out: Path = typer.Option(..., "--out", "-o",
                             help="Folder for the new suite.jsonl, videos and timing.csv."),
    methods: str = typer.Option(",".join(("interp2", "interp4", "lowres2", "lowres4", "chunk8")), "--methods",
                                help="Comma-separated stand-ins: interp<k>, lowres<f>, chunk<c>."),
    drift: float = typer.Option(2.0, "--drift", help="Pixels a chunk<c> stand-in drifts per chunk."),
) -> None:
    """Write stand-in accelerated generators of a dense generator, with nominal costs (docs/audit.md)."""
    from robojudge.audit import make_standins
    from robojudge.suite import ManifestError
    from robojudge.video import VideoError

    if not math.isfinite(drift):
        raise fail(f"--drift must be a finite number of pixels, got {drift}")
    check_out_folder(out)
    try:
        path = make_standins(suite, dense, out, _names(methods, "--methods"), drift=drift)
    except (ManifestError, VideoError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    console.print(f"stand-in suite: {path} (timing: {path.parent / 'timing.csv'})", highlight=False)


@app.command("sample-size")
def sample_size_cmd(
    suite: Path = typer.Argument(..., help="Suite manifest; items' reference videos are the reference set."),
    generators: str | None = typer.Option(None, "--generators", help="Comma-separated generators "
                                          "\\[default: all]."),
    ns: str | None = typer.Option(None, "--n", help="Comma-separated window counts \\[default: 4, 8, 16, ... "
                                  "up to the largest generator's windows]."),
    window: int = typer.Option(16, "--window", min=2, help="Frames per window."),
    stride: int | None = typer.Option(None, "--stride", min=1, help="Frames between window starts "
                                      "\\[default: --window]."),
    draws: int = typer.Option(100, "--draws", min=1, help="Random subsets per generator and n."),
    seed: int = typer.Option(0, "--seed", help="Seed of the subsets."),
    replace: bool = typer.Option(False, "--replace", help="Draw with replacement (bootstrap) instead of "
                                 "subsampling."),
    features: str = typer.Option("thumb", "--features", help="Window features: thumb (weights-free) or i3d "
                                 "(FVD's network; needs its weights)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Folder for sample_size.json, tables/, "
                                    "sample_size.svg and index.html."),
) -> None:
    """Frechet distance of each generator's windows to the reference windows against n; ranking flips."""
    from robojudge.audit import audit_sample_size
    from robojudge.models import MissingWeightsError
    from robojudge.suite import ManifestError

    try:
        grid = [int(n) for n in _names(ns, "--n")] if ns is not None else None
    except ValueError:
        raise fail(f"--n must be comma-separated whole numbers, got {ns!r}") from None
    if out is not None:
        check_out_folder(out)
    try:
        names = _names(generators, "--generators") if generators else None
        run = audit_sample_size(suite, generators=names, ns=grid, window=window, stride=stride, draws=draws,
                                seed=seed, replace=replace, features=features, out_dir=out)
    except (ManifestError, MissingWeightsError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    r = run.result
    console.print(f"reference: {run.reference_windows} windows; n = {', '.join(map(str, r.ns))}",
                  highlight=False)
    for g, pts in r.curves.items():
        vals = ", ".join(_f(p.mean) for p in pts)
        console.print(f"{g} ({r.windows[g]} windows, all: {_f(r.full[g])}): {vals}", highlight=False,
                      markup=False)
    console.print(f"flip share: {', '.join(_f(f, 2) for f in r.flips)}; per draw: "
                  f"{', '.join(_f(f, 2) for f in r.draw_flips)}; generator pairs compared: "
                  f"{', '.join(map(str, r.pairs))}", highlight=False)
    if len(set(r.pairs)) > 1:
        console.print("note: the flip shares at larger n compare fewer pairs (a generator with fewer than n "
                      "windows has no value there)", highlight=False)
    for what, why in run.skipped.items():
        console.print(f"[yellow]left out[/] {escape(what)}: {escape(why)}", markup=True, highlight=False)
    if out is not None:
        console.print(f"written: {out}/index.html, sample_size.json, tables/, sample_size.svg",
                      highlight=False)
