"""Text cells a spreadsheet would run as a formula, escaped in every CSV robojudge writes, and read back
as they were by its readers (OWASP CSV injection; docs/external.md, "Spreadsheet escape in CSV files").

In the base layer so that every layer's writers use it (set-level rows, audit timing files, exports).
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["ESCAPED_CELL", "FORMULA_STARTS", "SafeCsvWriter", "allow_cells_of_any_length", "csv_safe"]

#: First characters that make a spreadsheet read a cell as a formula or a command (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number (or inf / nan) is data, not a formula: "-0.5" must stay a number.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)", re.IGNORECASE)


def _escaped(value: str) -> bool:
    """Whether ``value`` reads as escaped by :func:`csv_safe`: quotes, then a formula's first character."""
    bare = value.lstrip("'")
    return len(bare) < len(value) and bare.startswith(FORMULA_STARTS)


#: A regular expression matching the cells :meth:`SafeCsvWriter.unescape` changes (for pandas' ``str.match``).
ESCAPED_CELL = r"'+[=+\-@\t\r]"


def csv_safe(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text that a spreadsheet would run as a formula.

    Text starting with ``= + - @``, a tab or a carriage return gets the quote; a plain number written
    as text (``-0.5``, ``+3``, ``1e-05``), a lone ``-`` (what ``--by`` writes for an item without the
    field) and every non-text value are returned unchanged, so numeric columns still read back as
    numbers and groups keep their names. Text that already reads as escaped (quotes, then one of those
    characters: an id ``'-take1``) gets one more quote, so that :meth:`SafeCsvWriter.unescape` gives
    every value back as it was: without it ``'-take1`` and ``-take1`` were written alike.

    >>> [csv_safe(v) for v in ("-take1", "'-take1", "-0.5", "'-0.5", "'abc", "-")]
    ["'-take1", "''-take1", '-0.5', "''-0.5", "'abc", '-']
    """
    if not isinstance(value, str):
        return value
    # A lone dash (the group of items without the field) is no formula.
    if _escaped(value) or (value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value)
                           and value != "-"):
        return "'" + value
    return value


def _has_break(cells: list[Any]) -> bool:
    for c in cells:  # noqa: SIM110 - faster than any() over a generator; runs for every row written
        if isinstance(c, str) and ("\r" in c or "\n" in c):
            return True
    return False


class SafeCsvWriter:
    """A ``csv.writer`` whose cells pass through :func:`csv_safe` first (unless ``raw``).

    A text cell holding a line break is quoted whatever the line terminator: ``csv`` quotes only the
    characters of its own terminator, so with ``lineterminator="\\n"`` a ``\\r`` would go out bare
    and every reader would end the row there. Such a row is written as with ``"\\r\\n"``, then given this
    writer's terminator; other rows are written as ``csv.writer`` writes them.

    >>> import io
    >>> buf = io.StringIO()
    >>> SafeCsvWriter(buf, lineterminator="\\n").writerows([["over\\rwrite", 1], ["plain", 2]])
    >>> buf.getvalue()
    '"over\\rwrite",1\\nplain,2\\n'
    """

    def __init__(self, fh: Any, *, raw: bool = False, **fmt: Any) -> None:
        self._w = csv.writer(fh, **fmt)
        self._fh = fh
        self._raw = raw
        self._end = self._w.dialect.lineterminator
        # Writes a row holding a line break into _buf; None when this writer's terminator quotes both.
        self._buf = io.StringIO()
        self._breaks: Any = (None if {"\r", "\n"} <= set(self._end)
                             else csv.writer(self._buf, **{**fmt, "lineterminator": "\r\n"}))

    def writerow(self, row: Iterable[Any]) -> None:
        cells = list(row) if self._raw else [csv_safe(c) for c in row]
        if self._breaks is None or not _has_break(cells):
            self._w.writerow(cells)
            return
        self._buf.seek(0)
        self._buf.truncate()
        self._breaks.writerow(cells)
        self._fh.write(self._buf.getvalue()[:-2] + self._end)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)

    @staticmethod
    def unescape(value: Any) -> Any:
        """``value`` as it was before :func:`csv_safe`: robojudge's readers call this on CSV text cells.

        Exactly that escape is undone: of text that is quotes followed by ``= + - @``, a tab or a
        carriage return, the first quote is removed (``'-take1`` -> ``-take1``, ``''-take1`` ->
        ``'-take1``). Other text (a lone ``'``, ``'abc``) and non-text values are returned as they are.

        >>> all(SafeCsvWriter.unescape(csv_safe(v)) == v for v in ("-a", "'-a", "''=b", "'c", "'", "+1"))
        True
        """
        if isinstance(value, str) and _escaped(value):
            return value[1:]
        return value


def allow_cells_of_any_length() -> None:
    """Let ``csv.reader`` take a cell of any length: its limit is raised to the largest the platform allows.

    Python's ``csv`` refuses a cell over ``csv.field_size_limit()`` characters (131,072 by default), and a
    reader that meets one cannot go on at the right place: every later row is lost. A manifest's
    instruction or ``meta`` cell (a per-frame trajectory) can be longer, and JSON Lines and Parquet read
    the same data whole, so robojudge's readers of manifests, side tables and imported results call this
    before they read.

    The limit belongs to the whole process, not to one reader, and cannot be set for one read only:
    raising it and putting the old value back around each read would race with another thread reading
    at the same time. So it is raised and left raised (never lowered): other CSV reading in the process
    then also takes long cells, which only makes it more lenient (the limit guards memory against
    a runaway cell, and such a cell is at most as long as the file it is read from). A program that lowers
    the limit itself gets it raised again at robojudge's next read.

    >>> allow_cells_of_any_length()
    >>> csv.field_size_limit() >= 2**31 - 1
    True
    """
    try:
        csv.field_size_limit(sys.maxsize)
    except OverflowError:  # the limit is a C long, of 32 bits on Windows
        csv.field_size_limit(2**31 - 1)
