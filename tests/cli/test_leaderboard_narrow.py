"""A leaderboard on a terminal narrower than its table keeps every column (rich dropped the name column:
at 80 columns the generator board showed ranks and means without the generators; audit s67_scale 5)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from robojudge.cli._leaderboard import _column, _print_table


def _board() -> Table:
    table = Table()
    for col in ("rank", "generator", "PA", "IA", "Overall", "P(rank)", "rank range"):
        _column(table, col, fold=col == "generator")
    table.add_row("1", "cosmos-predict-2.5-14b", *["3.21 [3.10, 3.33]"] * 3, "0.95", "1-2")
    return table


def test_a_narrow_terminal_gets_the_whole_table() -> None:
    buf = io.StringIO()
    _print_table(_board(), Console(file=buf, width=60, force_terminal=True, color_system=None))
    text = buf.getvalue()
    assert "cosmos-predict-2.5-14b" in text and "3.21 [3.10, 3.33]" in text and "rank range" in text
    # rich alone, at that width, drops the name column: what the check above guards against
    plain = io.StringIO()
    Console(file=plain, width=60, force_terminal=True, color_system=None).print(_board())
    assert "cosmos" not in plain.getvalue()


def test_a_wide_terminal_is_untouched() -> None:
    buf = io.StringIO()
    _print_table(_board(), Console(file=buf, width=200, force_terminal=True, color_system=None))
    assert max(len(line) for line in buf.getvalue().splitlines()) <= 200
    assert "cosmos-predict-2.5-14b" in buf.getvalue()
