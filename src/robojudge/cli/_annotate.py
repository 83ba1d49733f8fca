"""``robojudge annotate``: Human annotation: projects, annotators, assignments, the web app, label export."""

from __future__ import annotations

import typer

app = typer.Typer(help="Human annotation: projects, annotators, assignments, the web app, label export.", no_args_is_help=True)
