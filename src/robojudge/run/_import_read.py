"""Reading a results file (CSV, JSON Lines, Parquet) into records that know where they came from.

No checking of what the records say happens here (that is :mod:`robojudge.run._import`); this
module only turns a file into ``(location, {column: value})`` pairs, and says clearly when the file
itself cannot be read.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from robojudge._csv import allow_cells_of_any_length
from robojudge._json import loads_noting_repeats
from robojudge.store import SafeCsvWriter

ImportFormat = Literal["csv", "jsonl", "parquet"]

SUFFIXES: dict[str, ImportFormat] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
"""File suffixes :func:`read_records` understands, and the format each one means."""


class UnreadableFileError(ValueError):
    """The file as a whole cannot be read (missing, unknown suffix, no header, broken Parquet)."""


@dataclass(frozen=True)
class Record:
    """One data record of a results file.

    Attributes:
        line: 1-based physical line (CSV: the header is line 1; JSON Lines), else ``None``.
        row: 0-based record index in a Parquet file, else ``None``.
        cells: Column name -> value. CSV cells are text, with empty cells left out and the
            spreadsheet escape of ``results export`` undone (``'=x`` reads as ``=x``); JSON Lines and
            Parquet keep their types (``None`` where a cell is null).
        error: Why the record could not be read (bad JSON, more cells than columns, a key given
            twice); ``cells`` is then empty, but for a key given twice, whose cells are kept as read
            (the last value of the key) to name the item.
        field: The column ``error`` is about (a key given twice, as a dotted path), else ``None``.
    """

    line: int | None
    row: int | None
    cells: dict[str, Any]
    error: str | None = None
    field: str | None = None

    @property
    def location(self) -> str:
        """``"line 7"`` or ``"row 3"``."""
        return f"line {self.line}" if self.line is not None else f"row {self.row}"


def file_format(path: Path) -> ImportFormat:
    """The format of ``path`` from its suffix.

    Raises:
        UnreadableFileError: An unknown suffix.
    """
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(SUFFIXES))
        raise UnreadableFileError(
            f"cannot tell the format of {path.name!r} from its suffix; use one of {known}"
        )
    return fmt


def read_records(path: Path) -> tuple[list[str], list[Record]]:
    """The column names (in file order) and the records of a results file.

    Args:
        path: A ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet``/``.pq`` file.

    Returns:
        ``(columns, records)``. For JSON Lines the columns are the keys seen, in order of appearance.

    Raises:
        UnreadableFileError: The file is missing, has an unknown suffix, or cannot be parsed at all.
    """
    fmt = file_format(path)
    if not path.is_file():
        raise UnreadableFileError(f"{path}: no such file")
    try:
        if fmt == "csv":
            return _read_csv(path)
        if fmt == "jsonl":
            return _read_jsonl(path)
        return _read_parquet(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UnreadableFileError(f"{path}: cannot read: {exc}") from None


def _read_csv(path: Path) -> tuple[list[str], list[Record]]:
    allow_cells_of_any_length()
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise UnreadableFileError(f"{path}: empty file, expected a header line")
        columns = [h.strip() for h in header]
        records: list[Record] = []
        last = reader.line_num
        for cells in reader:
            start, last = last + 1, reader.line_num  # a quoted cell may span several lines
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(columns):
                why = f"{len(cells)} cells but the header has {len(columns)}"
                records.append(Record(start, None, {}, why))
                continue
            # A cell that robojudge's CSV writers escaped for spreadsheets ('=x) reads back as stored.
            filled = {k: SafeCsvWriter.unescape(v) for k, v in zip(columns, cells, strict=False) if v != ""}
            records.append(Record(start, None, filled))
    return columns, records


def _read_jsonl(path: Path) -> tuple[list[str], list[Record]]:
    columns: dict[str, None] = {}
    records: list[Record] = []
    with path.open(encoding="utf-8-sig") as fh:
        for n, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                obj, repeated = loads_noting_repeats(text)
            except json.JSONDecodeError as exc:
                records.append(Record(n, None, {}, f"not valid JSON ({exc.msg} at column {exc.colno})"))
                continue
            if not isinstance(obj, dict):
                records.append(Record(n, None, {}, f"expected a JSON object, got {type(obj).__name__}"))
                continue
            columns.update(dict.fromkeys(str(k) for k in obj))
            cells = {str(k): v for k, v in obj.items()}
            if repeated:
                # json.loads would keep the last value without a word: a value of 0.2 then 0.9 is refused.
                records.append(Record(n, None, cells, "given more than once", repeated[0]))
                continue
            records.append(Record(n, None, cells))
    return list(columns), records


def _read_parquet(path: Path) -> tuple[list[str], list[Record]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UnreadableFileError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid / OSError family for broken files
        raise UnreadableFileError(f"{path}: not a readable Parquet file: {exc}") from None
    return list(table.column_names), [Record(None, i, cells) for i, cells in enumerate(table.to_pylist())]


def cell_value(raw: Any) -> Any:
    """A details cell as stored: CSV text that is an integer or a finite float becomes a number."""
    if not isinstance(raw, str):
        return raw
    for parse in (int, float):
        try:
            value = parse(raw)
        except ValueError:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            return raw
        return value
    return raw

