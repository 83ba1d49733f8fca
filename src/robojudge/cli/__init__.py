"""The ``robojudge`` command line: argument parsing and printing over the Python API.

Each command lives in its own module and is imported only when it runs (``robojudge score`` never
loads pandas or the judge backends), which keeps start-up fast. ``robojudge --help`` imports them all.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any

import typer

from robojudge import __version__
from robojudge._lifeline import terminate_as_interrupt

# command name -> (module in robojudge.cli, attribute, "group" for a sub-app or "command")
COMMANDS: dict[str, tuple[str, str, str]] = {
    "suite": ("_suite", "app", "group"),
    "score": ("_score", "score", "command"),
    "judge": ("_judge", "judge", "command"),
    "report": ("_report", "report", "command"),
    "results": ("_results", "app", "group"),
    "metrics": ("_metrics", "app", "group"),
    "weights": ("_weights", "app", "group"),
    "meta": ("_meta", "app", "group"),
    "aggregate": ("_aggregate", "app", "group"),
    "leaderboard": ("_leaderboard", "app", "group"),
    "demo": ("_demo", "demo", "command"),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"robojudge {__version__}")
        raise typer.Exit()


def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug messages."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate generated robot-manipulation videos and the judges that score them."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


def build_app(only: str | None = None) -> typer.Typer:
    """The typer app with every command, or with just ``only`` (what ``main`` uses to start fast)."""
    app = typer.Typer(
        name="robojudge",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.callback()(_root)
    for name, (module, attr, kind) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(f"robojudge.cli.{module}"), attr)
        if kind == "group":
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # the full app, for documentation tools and tests
        return build_app()
    raise AttributeError(name)


_ROOT_FLAGS = frozenset({"-v", "--verbose", "--version"})


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # `kill PID` (SIGTERM) stops a run as Ctrl-C does: committed results stay, workers are stopped.
    terminate_as_interrupt()
    command = next((a for a in args if not a.startswith("-")), None)
    at = args.index(command) if command is not None else -1
    root = args[:at]
    if (
        command == "judge"
        and args[at + 1 : at + 2] in (["draft"], ["texts"], ["rubrics"])
        and all(a in _ROOT_FLAGS for a in root)  # else the full parser reports the bad option
    ):
        # `judge` is one command taking a SUITE, so its sub-commands are dispatched here; the root
        # options given before them still apply.
        if "--version" in root:
            typer.echo(f"robojudge {__version__}")
            return
        _root(verbose=any(a in ("-v", "--verbose") for a in root), version=False)
        from robojudge.cli._judge_draft import app as judge_rows_app

        judge_rows_app(args[at + 1 :], prog_name="robojudge judge")
        return
    if command in COMMANDS:
        only: str | None = command
    elif command is None and args and "--help" not in args:
        only = ""  # root options only (--version): no command module needs loading
    else:
        only = None  # help, or an unknown command: the full app lists what exists
    build_app(only)(args)
