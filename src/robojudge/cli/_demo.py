"""``robojudge demo``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from robojudge.cli._common import console, print_summary, scoring_progress


def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", help="Run folder."),
    workers: int = typer.Option(2, "--workers", "-w", min=1, help="Worker processes."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Build the embedded demo suite, score it and write a report under OUT/report."""
    from robojudge.demo import run_demo

    with scoring_progress(progress) as on_result:
        result = run_demo(out, workers=workers, progress=on_result)
    print_summary(result.run.summary)
    table = Table("metric", "generator", "n", "failed", "mean", "95% CI", title="demo summary")
    for s in result.summaries:
        ci = "n/a" if s.n_ok < 2 else f"[{s.ci_low:.2f}, {s.ci_high:.2f}]"
        mean = "n/a" if s.n_ok == 0 else f"{s.mean:.2f}"
        table.add_row(s.metric, s.group, str(s.n_ok), str(s.n_failed), mean, ci)
    console.print(table)
    console.print(f"report: {result.report_dir}  (summary.md, summary.csv, results.csv, errors.csv)")
