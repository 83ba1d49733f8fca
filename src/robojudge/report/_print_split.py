"""A table too wide for a printed page, printed as several tables of its columns.

Printed, the report sets tables in 7 pt with cells that wrap, which fits a table of a few dozen columns
on the paper; the overview of 30 generators has 95 (a mean per generator, then its counts), which laid
out 1,093 px wide on a 718 px page, its cells broken one character a line and 33 columns past the
paper's edge. Such a table is printed as parts instead: each holds its row headers (the metric) and as
many of the other columns as fit, in order. The parts are in the page only for print (``print-only``)
and the table itself only for the screen (``screen-only``); the CSS of the page hides the one or the
other, so a screen reader meets the table once.
"""

from __future__ import annotations

import html

from robojudge.report._tables import Table

#: The width a printed part may take, in CSS px: A4 at 96 px per inch less Chromium's default margins
#: (718 px), less a little for a font wider than the estimate.
PRINT_WIDTH = 680
#: The estimated width of one character at the printed tables' 7 pt (Chromium's sans-serif: 4.6 px in
#: "2.37 [2.08, 2.67]", 5.4 px in a bold "failed gen_27"), and of a cell's padding and border.
_CHAR = 5.6
_PADDING = 7.0
#: A cell longer than this many characters wraps, printed: wider columns are not needed to read it.
_LONGEST = 24


def _width(table: Table, k: int) -> float:
    """The printed width column ``k`` takes with each cell and its header on one line (up to
    :data:`_LONGEST` characters). A table wider than the page shrinks every column that would wrap, the
    numbers' too ("2.37 [2.08," over "2.67]"), so a part holds columns of this width at most."""
    text = max([len(table.columns[k]), *(len(r[k].marked()) for r in table.rows)])
    return min(text, _LONGEST) * _CHAR + _PADDING


def print_parts(table: Table, *, width: float = PRINT_WIDTH) -> list[Table]:
    """The tables ``table`` is printed as: none when it fits ``width``, else parts of its columns, each
    with the row headers (:meth:`Table.row_headers`) first and as many other columns as fit, in order."""
    need = [_width(table, k) for k in range(len(table.columns))]
    if sum(need) <= width:
        return []
    keys = sorted(table.row_headers())
    if len(keys) == len(table.columns):  # (nothing to split)
        return []
    room = max(width - sum(need[k] for k in keys), 0.0)
    slices: list[list[int]] = [[]]
    used = 0.0
    for k in (k for k in range(len(table.columns)) if k not in keys):
        if slices[-1] and used + need[k] > room:
            slices.append([])
            used = 0.0
        slices[-1].append(k)
        used += need[k]
    parts = []
    for n, cols in enumerate(slices, 1):
        # (the caption names no column: a 163-character generator name in it, one word, widened the part
        # past the paper)
        part = Table(f"{table.name}-print-{n}", f"{table.title} (part {n} of {len(slices)})",
                     [table.columns[k] for k in (*keys, *cols)],
                     labels=tuple(table.columns[k] for k in keys))
        for r in table.rows:
            part.add([r[k] for k in (*keys, *cols)])
        parts.append(part)
    return parts


def table_html(table: Table) -> str:
    """``table`` as HTML for the page: the table alone, or, when it is too wide for a printed page, the
    table for the screen and its parts for print."""
    parts = print_parts(table)
    if not parts:
        return table.to_html()
    return (f'<div class="screen-only">{table.to_html()}</div><div class="print-only" '
            f'data-table="{html.escape(table.name, quote=True)}">{"".join(p.to_html() for p in parts)}</div>')
