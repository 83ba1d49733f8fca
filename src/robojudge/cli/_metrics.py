"""``robojudge metrics ...``."""

from __future__ import annotations

import json

import typer
from rich.table import Column, Table

from robojudge.cli._common import console
from robojudge.metrics import list_metrics

app = typer.Typer(help="Browse the metric registry.", no_args_is_help=True)


@app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """List registered metrics; --json adds version, citation, description, config and taxonomy place."""
    specs = list_metrics()
    if as_json:
        typer.echo(json.dumps([s.describe() for s in specs], indent=2))
        return
    table = Table(
        Column("id", no_wrap=True),
        Column("family", no_wrap=True),
        Column("provider", no_wrap=True),
        Column("place", no_wrap=True),
        Column("better", no_wrap=True),
        Column("range", no_wrap=True),
        Column("inputs", min_width=6),
    )
    for s in specs:
        lo, hi = s.native_range
        table.add_row(
            s.id,
            s.family.value,
            s.provider.value,
            f"L{s.taxonomy.level} {s.taxonomy.subdim}" if s.taxonomy else "-",
            "higher" if s.higher_is_better else "lower",
            f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]",
            ",".join(sorted(i.value for i in s.inputs)) or "-",
        )
    console.print(table)
