"""``robojudge judge``: one Typer group for judging a suite and reading judges' rows back.

``robojudge judge SUITE [OPTIONS]`` judges a suite (:func:`robojudge.cli._judge.judge`);
``robojudge judge draft|texts|rubrics`` are sub-commands (:mod:`robojudge.cli._judge_draft`). A click
group cannot take a positional argument and sub-commands at once (the group would read ``draft`` as
the SUITE), so the judging command is the group's hidden default: any first argument that is not a
sub-command's name, options included, goes to it. ``robojudge judge --help`` therefore shows the
judging command's options, as it did when ``judge`` was a single command; its text names the
sub-commands.
"""

from __future__ import annotations

from typing import Any

import typer

from robojudge.cli._judge import judge
from robojudge.cli._judge_draft import draft, rubrics, texts
from robojudge.cli._once import OnceCommand, OnceGroup

DEFAULT = "suite"
"""Name of the hidden judging command (never typed: it is put in front of the arguments)."""


class _DefaultContext(typer.Context):
    """The judging command's context: its path is the group's (``robojudge judge``), so usage lines
    and error hints read as if ``judge`` were the command itself."""

    @property
    def command_path(self) -> str:
        path: str = self.parent.command_path if self.parent is not None else super().command_path
        return path


class _DefaultCommand(OnceCommand):
    context_class = _DefaultContext


class _JudgeGroup(OnceGroup):
    """A group whose arguments go to the hidden default command unless they start with a sub-command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        visible = {name for name, cmd in self.commands.items() if not cmd.hidden}
        if not args or args[0] not in visible:
            args = [DEFAULT, *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    name="judge",
    cls=_JudgeGroup,
    help="Judge a suite with a VLM judge (judge SUITE), or read judges' rows back (draft, texts, rubrics).",
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command(DEFAULT, cls=_DefaultCommand, hidden=True)(judge)
app.command("draft")(draft)
app.command("texts")(texts)
app.command("rubrics")(rubrics)
