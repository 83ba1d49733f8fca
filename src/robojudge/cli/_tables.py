"""Printing rich tables whole: no command cuts an id or a number to ``…``.

Rich fits a table to the console's width by shortening its columns, and a word longer than its column
ends in an ellipsis: at 80 columns a judge's ``:pa`` and ``:ia`` rows read alike, at 40 the means did.
:func:`print_table` folds the columns that may wrap (names, prose) and widens the table when even
folded it does not fit, so the terminal wraps its lines instead of rich cutting them.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from robojudge.cli._common import PIPED_WIDTH, console

NAME_FOLD = 20
"""The narrowest a folding column (a name, a sentence) gets so that a row fits the terminal."""
NAME_CAP = 60
"""A folding column's width when the rows are wider than the terminal anyway."""


def add_column(table: Table, header: str, *, fold: bool = False, justify: str = "left") -> None:
    """A number is never wrapped; a name or a sentence (``fold``) wraps at spaces and folds a long word
    onto more lines where the table is too wide, instead of the numbers being cut to ``5.00…``."""
    if fold:
        table.add_column(header, overflow="fold", justify=justify)  # type: ignore[arg-type]
    else:
        table.add_column(header, no_wrap=True, justify=justify)  # type: ignore[arg-type]


def name_table(title: str, name: str, *numbers: str) -> Table:
    """A table whose first column, headed ``name``, holds names (folded where long) and whose other
    columns hold numbers (never wrapped)."""
    table = Table(title=title)
    add_column(table, name, fold=True)
    for header in numbers:
        add_column(table, header)
    return table


def _wide() -> Console:
    """The shared console on a terminal or when already wide; a wide one when piped, so that tables are
    not cut (``COLUMNS`` set narrower, as tests do, still gives at least :data:`PIPED_WIDTH`)."""
    if console.is_terminal or console.width >= PIPED_WIDTH:
        return console
    return Console(soft_wrap=True, width=PIPED_WIDTH, markup=False, emoji=False)


def print_table(table: Table, out: Console | None = None) -> None:
    """Print ``table`` whole on ``out`` (default: standard output).

    A column that would end a long word in ``…`` folds it instead; a ``no_wrap`` column (a number) is
    never shortened. Piped, the table is printed at the width it needs, one line per row. On a terminal,
    the folding columns fold (at :data:`NAME_FOLD` columns or more) where that keeps each row on the
    screen's width; when even that does not fit, the table is printed wider with its folding columns at
    most :data:`NAME_CAP` wide, and the terminal wraps the lines."""
    for column in table.columns:
        if not column.no_wrap and column.overflow == "ellipsis":
            column.overflow = "fold"
    out = out or _wide()
    need = _measure(table)
    if need > out.width and out.is_terminal:
        need = out.width if _measure(table, NAME_FOLD) <= out.width else _measure(table, NAME_CAP)
    if need > out.width:
        out = Console(file=out.file, width=need, soft_wrap=True, markup=False, emoji=False,
                      force_terminal=out.is_terminal)
    out.print(table)


def _measure(table: Table, names: int | None = None) -> int:
    """The width ``table`` needs with its rows on one line each, its folding columns at most ``names``
    wide."""
    wide = Console(width=100_000)
    if names is None:
        return wide.measure(table).maximum
    folding = [c for c in table.columns if c.overflow == "fold"]
    before = [c.max_width for c in folding]
    for c in folding:
        c.max_width = names if c.max_width is None else min(c.max_width, names)
    try:
        return wide.measure(table).maximum
    finally:
        for c, width in zip(folding, before, strict=True):
            c.max_width = width
