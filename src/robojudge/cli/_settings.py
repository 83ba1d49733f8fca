"""``robojudge settings``: the environment variables as this process uses them."""

from __future__ import annotations

import dataclasses
import json

import typer
from rich.table import Table

from robojudge import settings
from robojudge.cli._common import console
from robojudge.cli._tables import add_column, print_table


def settings_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Every environment variable robojudge reads: the value in force, and whether it comes from the
    environment or is the default (README.md, "Environment variables"). A value that cannot be used is
    said beside it; a ROBOJUDGE_* variable that robojudge does not read is listed after the table."""
    rows = settings.in_force()
    unknown = settings.unknown_variables()
    if as_json:
        typer.echo(json.dumps({
            "variables": [dataclasses.asdict(r) for r in rows],
            "unknown": [{"name": name, "did_you_mean": meant} for name, meant in unknown],
        }, indent=2))
        return
    table = Table()
    for header in ("variable", "value", "from"):
        add_column(table, header, fold=header != "variable")
    for r in rows:
        value = f"({r.default})" if r.value is None else r.value
        shown = value if r.problem is None else f"{value}: cannot be used: {r.problem}"
        table.add_row(r.name, shown, r.source)
    print_table(table)
    for name, meant in unknown:
        hint = f" (did you mean {meant}?)" if meant else ""
        console.print(f"not read: {name}{hint}", highlight=False, markup=False)
