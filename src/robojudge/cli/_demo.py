"""``robojudge demo``."""

from __future__ import annotations

from pathlib import Path

import typer

from robojudge.cli._common import console, print_summary, scoring_progress
from robojudge.cli._report import summary_table


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
    console.print(summary_table(result.summaries, "generator", "demo summary"))
    console.print(f"report: {result.report_dir}  (summary.md, summary.csv, results.csv, errors.csv)")
