"""The ``judge`` command group mounted alone, as the judge CLI tests invoke it with ``CliRunner``."""

from __future__ import annotations

import typer

from robojudge.cli._judge_app import app as judge_app

app = typer.Typer()
app.add_typer(judge_app, name="judge")
