"""``robojudge train``: Train judges: export labelled requests, SFT and GRPO on TRL."""

from __future__ import annotations

import typer

app = typer.Typer(help="Train judges: export labelled requests, SFT and GRPO on TRL.", no_args_is_help=True)
