"""``robojudge demo``."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table

from robojudge.cli._common import (
    building_progress,
    check_settings,
    command_line,
    console,
    err_console,
    fail,
    print_summary,
    print_untested_libraries,
    progress_every_option,
    progress_option,
    says_when_stopped,
    scoring_progress,
)
from robojudge.cli._judge import ENDPOINT_HELP
from robojudge.cli._report import print_html_report, summary_table
from robojudge.cli._tables import add_column, print_table
from robojudge.meta import Estimate
from robojudge.report import stale_note
from robojudge.run import ProgressCallback, RunInterrupted, RunSummary, WorkerStartError
from robojudge.store import StoreError
from robojudge.suite import ManifestError

if TYPE_CHECKING:
    from robojudge.demo import DemoResult


@says_when_stopped("the demo suite (once built whole) and the stored results are kept; no report was written "
                   "from a partial run; rerun the same command to go on")
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Run folder."),
    workers: int = typer.Option(2, "--workers", "-w", min=1, help="Worker processes."),
    suite: str = typer.Option(
        "auto", "--suite", help="auto (simulator suite when installed), sim or synthetic (2D, no extras)."
    ),
    progress: bool = progress_option(),
    progress_every: float = progress_every_option(),
) -> None:
    """Build the embedded demo suite, score it (KIVA too, with torch) and write a report under OUT/report."""
    check_settings(skip=("decode_workers",))  # (the demo judges nothing: no decoder workers)
    where = out / "suite"
    try:  # (importing MuJoCo takes seconds)
        from robojudge.demo import build_demo_suite, check_suite_kind, run_demo
        from robojudge.suite.sim import SimBuildError
    except KeyboardInterrupt:
        err_console.print(f"interrupted before the demo started: {out} is as it was", highlight=False,
                          markup=False)
        raise typer.Exit(130) from None

    if suite not in ("auto", "sim", "synthetic"):
        raise fail(f"--suite must be auto, sim or synthetic, got {suite!r}")
    try:
        check_suite_kind(where, suite)  # type: ignore[arg-type]
    except ValueError as exc:
        raise fail(str(exc)) from None
    try:
        if not (where / "suite.jsonl").exists():
            err_console.print(f"building the demo suite in {where} (once; a few minutes for the simulator "
                              "suite)", highlight=False)
            try:
                with building_progress(progress, progress_every, "building the demo suite"):
                    build_demo_suite(where, suite)  # type: ignore[arg-type]
            except KeyboardInterrupt:  # its manifest comes last, so a partial build is never used
                err_console.print(f"interrupted: {where} holds a partial build and no suite.jsonl; nothing "
                                  "was scored; run the same command again to build it whole", highlight=False,
                                  markup=False)
                raise typer.Exit(130) from None
        with _Steps(progress, progress_every) as steps:
            result = run_demo(out, suite=suite, workers=workers, progress=steps.scoring(),  # type: ignore[arg-type]
                              announce=lambda line: err_console.print(line, highlight=False),
                              command=command_line(), phase=steps)
    except RunInterrupted as exc:  # stopped while scoring: what was scored, and nothing after it
        if isinstance(exc.summary, RunSummary):
            print_summary(exc.summary)
        raise typer.Exit(130) from None
    except (ManifestError, StoreError, ValueError, FileNotFoundError, WorkerStartError, SimBuildError) as exc:
        # as `score` says them: a run folder copied from another project, a store that cannot be opened;
        # MuJoCo that cannot render here, a full disk while the suite is built
        raise fail(str(exc)) from None
    print_summary(result.run.summary)
    print_untested_libraries(result.run.summary.metric_seconds)
    print_table(summary_table(result.summaries, "generator", "demo summary"))
    _print_kiva(result)
    if result.agreement:
        table = _table("metrics against the planted labels (positive = agrees)", "metric", "axis", "n",
                       "Pearson r [95% CI]", "Spearman rho [95% CI]")
        for a in result.agreement:
            table.add_row(a.metric, a.axis, str(a.n), _ci(a.pearson, a.pearson_low, a.pearson_high),
                          _ci(a.spearman, a.spearman_low, a.spearman_high))
        print_table(table)
    if result.leaderboard is not None:
        board = _table("generators by their planted labels (95% cluster-bootstrap CI)", "rank", "generator",
                       "PA", "IA", "Overall", "P(rank)")
        for e in result.leaderboard.entries:
            o = e.standings["overall"]
            means = (_est(e.standings[t].score) for t in ("pa", "ia", "overall"))
            if o.rank is None:  # no labelled item: not ranked (docs/meta.md)
                board.add_row("-", e.generator, *means, "not ranked")
            else:
                board.add_row(str(o.rank), e.generator, *means, f"{o.rank_prob:.2f}")
        print_table(board)
    for row in result.judges:
        cells = {t: row.cells[(t, "r")] for t in ("pa", "ia", "overall")}
        console.print(f"judge {row.judge}: Pearson r  PA {_est(cells['pa'])}  IA {_est(cells['ia'])}  "
                      f"Overall {_est(cells['overall'])}", highlight=False)
    console.print(f"suite: {result.manifest} ({result.suite_kind})", highlight=False)
    if Path("robojudge.toml").exists():
        console.print(
            f"judges: run `robojudge judge {result.manifest} --judge NAME --rubric pa,ia` "
            "with a judge from robojudge.toml", highlight=False,
        )
    else:
        console.print(ENDPOINT_HELP, highlight=False, markup=False)
    console.print(
        f"report: {result.report_dir}  (summary, label_agreement, leaderboard, judges: .md and .csv; "
        "results.csv, errors.csv; tables/ as CSV, Markdown and LaTeX)",
        highlight=False,
    )
    if result.html is not None:
        print_html_report(result.html)
    note = stale_note(result.stale)
    if note:
        err_console.print(f"[yellow]{escape(note)}[/]", markup=True, highlight=False)


class _Steps:
    """The demo's progress, one step at a time: the scoring run's (:func:`scoring_progress`) until
    :func:`robojudge.demo.run_demo` moves on, then each later step's own (a KIVA reader's scoring counts
    its results; training and the report say what they do and the time elapsed), each ending as the
    next starts."""

    def __init__(self, enabled: bool, every: float) -> None:
        self._enabled, self._every = enabled, every
        self._stack = ExitStack()

    def __enter__(self) -> _Steps:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stack.close()

    def scoring(self) -> ProgressCallback | None:
        """The scoring run's progress callback."""
        return self._stack.enter_context(scoring_progress(self._enabled, self._every))

    def __call__(self, what: str, counts: bool) -> ProgressCallback | None:
        self._stack.close()  # the step before: its last line or bar is its last
        if counts:
            return self._stack.enter_context(scoring_progress(self._enabled, self._every, label=what))
        self._stack.enter_context(building_progress(self._enabled, self._every, what))
        return None


def _print_kiva(result: DemoResult) -> None:
    kiva = result.kiva
    if kiva is None:
        return
    if kiva.missing is not None:
        console.print(kiva.missing, highlight=False, markup=False)
        return
    for r in kiva.readers:
        how = f"trained now in {r.seconds:.0f} s" if r.trained else "cached"
        err = r.held_out_error
        held = (f"; held-out keypoint error {err['mean_px']:.2f} px "
                f"({100 * err['fraction_of_diagonal']:.1f}% of the diagonal)" if err.get("keypoints") else "")
        s = r.summary
        console.print(f"KIVA reader for {r.robot} ({r.embodiment}, {r.items} rollouts): {how}, "
                      f"{r.folder}{held}; {s.ok} results scored, {s.failed} failed, {s.skipped} already "
                      "stored", highlight=False, markup=False)
    for line in kiva.skipped:
        console.print(f"KIVA not scored for {line}", highlight=False, markup=False)
    if kiva.groups:
        table = _table("KIVA by generator (percent of 16-frame segments invalid; lower is better)", "robot",
                       "generator", "videos", "mean kiva", "invalid segments")
        for g in kiva.groups:
            table.add_row(g.robot, g.group, str(g.videos), f"{g.mean:.1f}",
                          f"{g.share:.1f}% of {g.segments}" if g.segments else "n/a")
        print_table(table)


def _table(title: str, *headers: str) -> Table:
    """A table whose name columns fold and whose numbers are never cut."""
    table = Table(title=title)
    for header in headers:
        add_column(table, header, fold=header in _NAMES)
    return table


_NAMES = ("metric", "axis", "generator", "robot")


def _ci(v: float, lo: float, hi: float) -> str:
    return "n/a" if v != v else (f"{v:.2f}" if lo != lo else f"{v:.2f} [{lo:.2f}, {hi:.2f}]")


def _est(e: Estimate) -> str:
    return _ci(e.value, e.low, e.high)
