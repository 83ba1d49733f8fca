"""``robojudge select``: Pick rollouts with a judge or a metric (Best-of-N)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Pick rollouts with a judge or a metric (Best-of-N).", no_args_is_help=True)
