"""``robojudge audit``: Audits of world-model generators: the speed-quality frontier of acceleration methods."""

from __future__ import annotations

import typer

app = typer.Typer(help="Audits of world-model generators: the speed-quality frontier of acceleration methods.", no_args_is_help=True)
