"""``robojudge results ...``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from robojudge.cli._common import console, fail
from robojudge.store import ResultStore, StoreError, export_results

app = typer.Typer(help="Work with stored results.", no_args_is_help=True)


@app.command("export")
def export_cmd(
    db: str = typer.Option(..., "--db", help="Result store URL or SQLite path."),
    out: Path = typer.Option(..., "--out", "-o", help="Output file."),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="csv or parquet [default: from the --out suffix]."
    ),
    metric: str | None = typer.Option(None, "--metric", help="Only this metric."),
) -> None:
    """Write stored results as long rows (one per item, metric and config)."""
    if fmt is not None and fmt not in ("csv", "parquet"):
        raise fail(f"--format must be csv or parquet, got {fmt!r}")
    chosen: Literal["csv", "parquet"] | None = fmt  # type: ignore[assignment]
    if not Path(db).exists() and "://" not in db:
        raise fail(f"no result store at {db}")
    try:
        with ResultStore(db) as store:
            n = export_results(store, out, chosen, metric=metric)
    except (StoreError, ValueError) as exc:
        raise fail(str(exc)) from None
    console.print(f"wrote {n} rows to {out}", highlight=False)
