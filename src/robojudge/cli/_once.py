"""An option that takes one value is refused when given twice, in every command.

Click (typer carries its own copy) keeps the last value of a repeated option and drops the others
without a word, so ``judge SUITE --judge a --judge b`` judged with ``b`` only and ``meta agreement
--pred a --pred b`` compared ``b`` only. Its parser records every option it reads, in order, so a
command can tell a repeated option from one given once: :class:`OnceCommand` and :class:`OnceGroup`
(the classes of every command and group, set by :func:`refuse_repeats`) refuse the repeat before
anything runs. Options that collect several values (``multiple``, like ``--base-url``) and flags
(``--progress/--no-progress``, where the last one wins as usual) are not affected."""

from __future__ import annotations

from collections import Counter
from typing import Any, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

_C = TypeVar("_C", TyperCommand, TyperGroup)


def check_repeats(command: TyperCommand | TyperGroup, ctx: Any, args: list[str]) -> None:
    """Refuse ``args`` when they give an option of ``command`` that takes one value more than once.

    Raises:
        typer.Exit: Code 2, after an ``error:`` line naming the option and how often it was given.
    """
    if ctx.resilient_parsing:  # (shell completion: nothing runs)
        return
    try:
        _, _, order = command.make_parser(ctx).parse_args(args=list(args))
    except Exception:  # noqa: BLE001 (a usage error, which parse_args itself reports; or a click/typer
        return  # whose parser differs: this check is a courtesy and never stops a command line)
    single = [p for p in order if isinstance(p, TyperOption) and not (p.multiple or p.count or p.is_flag)]
    times = Counter(id(p) for p in single)
    repeated = next((p for p in single if times[id(p)] > 1), None)
    if repeated is not None:
        from robojudge.cli._common import fail

        name = next((o for o in repeated.opts if o.startswith("--")), repeated.opts[0])
        raise fail(f"{name} given {times[id(repeated)]} times: it takes one value, and all but the last "
                   f"would be silently dropped; give it once (where {name} takes a comma-separated list, "
                   f"as -m and --rubric do, list the values in one: {name} a,b; see --help)")


def plain_flags(params: list[Any]) -> list[Any]:
    """``params``, their flags shown without a value type: typer (0.2x) lists ``--deep <bool>``, and
    ``--deep true`` is then an unexpected argument."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag:
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
    return params


def usage_pieces(command: TyperCommand | TyperGroup, ctx: Any) -> list[str]:
    """The usage line's pieces with arguments named as the help text names them, ``SUITE`` (and
    ``[NAME]`` when optional), where typer writes ``{suite}``."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = param.metavar or (param.name or "").upper()
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


class OnceCommand(TyperCommand):
    """A command that refuses a repeated single-value option (:func:`check_repeats`), with plain help
    (:func:`plain_flags`, :func:`usage_pieces`)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_flags(super().get_params(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        check_repeats(self, ctx, args)
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return usage_pieces(self, ctx)


class OnceGroup(TyperGroup):
    """A group that refuses a repeated single-value option of its own (:func:`check_repeats`)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_flags(super().get_params(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        check_repeats(self, ctx, args)
        return super().parse_args(ctx, args)


def _once(cls: Any, once: type[_C], plain: type[_C]) -> type[_C]:
    """``once`` in place of a default class; a class of a command's own must derive from ``once``."""
    if not isinstance(cls, type) or cls is plain:  # (None, or typer's placeholder for "not given")
        return once
    if not issubclass(cls, once):
        raise TypeError(f"{cls.__qualname__}: a command class of robojudge derives from "
                        f"robojudge.cli._once.{once.__name__}, so that it refuses repeated options")
    return cls


def refuse_repeats(app: typer.Typer) -> None:
    """Give every command and group of ``app`` (sub-apps included) the class that refuses a repeated
    single-value option; idempotent."""
    app.info.cls = _once(app.info.cls, OnceGroup, TyperGroup)
    for command in app.registered_commands:
        command.cls = _once(command.cls, OnceCommand, TyperCommand)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            refuse_repeats(group.typer_instance)
