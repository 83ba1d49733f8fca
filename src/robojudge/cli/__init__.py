"""The ``robojudge`` command line: argument parsing and printing over the Python API."""

from __future__ import annotations

import logging

import typer

from robojudge import __version__
from robojudge.cli import (
    _aggregate,
    _demo,
    _judge,
    _meta,
    _metrics,
    _report,
    _results,
    _score,
    _suite,
)

app = typer.Typer(
    name="robojudge",
    help="Evaluate generated robot-manipulation videos and the judges that score them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(_suite.app, name="suite")
app.add_typer(_metrics.app, name="metrics")
app.add_typer(_results.app, name="results")
app.add_typer(_aggregate.app, name="aggregate")
app.add_typer(_meta.app, name="meta")
app.command("score")(_score.score)
app.command("judge")(_judge.judge)
app.command("report")(_report.report)
app.command("demo")(_demo.demo)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"robojudge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug messages."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


def main() -> None:
    app()
