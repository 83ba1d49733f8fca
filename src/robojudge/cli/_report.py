"""``robojudge report``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from robojudge.cli._common import console, fail
from robojudge.report import GROUP_FIELDS, GroupSummary, report_suite
from robojudge.run import default_run_dir
from robojudge.store import StoreError, default_db_url
from robojudge.suite import ManifestError


def summary_table(summaries: list[GroupSummary], group_label: str, title: str) -> Table:
    """Summaries as a rich table: one row per (metric, group)."""
    table = Table("metric", group_label, "n", "failed", "mean", "95% CI", title=title)
    for s in summaries:
        ci = "n/a" if s.n_ok < 2 else f"[{s.ci_low:.2f}, {s.ci_high:.2f}]"
        mean = "n/a" if s.n_ok == 0 else f"{s.mean:.2f}"
        table.add_row(s.metric, s.group, str(s.n_ok), str(s.n_failed), mean, ci)
    return table


def report(
    suite: Path = typer.Argument(..., help="Suite manifest the results belong to."),
    db: str | None = typer.Option(
        None, "--db", help="Result store [default: runs/<manifest name>/results.sqlite]."
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help="Report folder [default: next to the store]."),
    by: str = typer.Option("generator", "--by", help=f"Group by one of: {', '.join(GROUP_FIELDS)}."),
) -> None:
    """Summarize stored results per group (mean, std, 95% t-interval) into a report folder."""
    run_dir = default_run_dir(suite)
    url = db or default_db_url(run_dir)
    if db is None and not (run_dir / "results.sqlite").exists():
        where = run_dir / "results.sqlite"
        raise fail(f"no result store at {where}; pass --db or run `robojudge score` first")
    folder = out or run_dir / "report"
    try:
        summaries = report_suite(suite, url, folder, by=by)
    except (ManifestError, StoreError, ValueError) as exc:
        raise fail(str(exc)) from None
    console.print(summary_table(summaries, by, f"results by {by}"))
    console.print(f"report: {folder}  (summary.md, summary.csv, results.csv, errors.csv)")
