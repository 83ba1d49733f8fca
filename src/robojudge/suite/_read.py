"""Reading manifest files into raw records, one per rollout, without validating them.

Each reader returns :class:`RawRecord` objects that remember where they came from; problems that
belong to one record (a broken JSON line, a bad cell) travel with it, so one bad record never stops
the others from being read. Problems with the file as a whole raise :class:`ManifestError`.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from robojudge._csv import allow_cells_of_any_length
from robojudge._json import loads_noting_repeats
from robojudge.suite._problems import ManifestError, ManifestProblem

SCAN_SUFFIXES = frozenset(
    {".mp4", ".m4v", ".mov", ".mkv", ".webm", ".avi", ".gif", ".mpg", ".mpeg", ".flv", ".wmv", ".ogv"}
)
"""File suffixes read as videos (case-insensitive; ``robojudge suite scan`` picks them up). MPEG-TS
(``.ts``) is left out: in a folder of outputs it is more often TypeScript than video; name such files
in a manifest by hand. A ``.webp`` file is a video when it is animated (``robojudge.video.is_animated_webp``);
a still one is an image of a frame folder."""

SUFFIXES: tuple[str, ...] = (".jsonl", ".ndjson", ".csv", ".parquet", ".json")
"""Manifest file suffixes understood by :func:`read_records` (matched case-insensitively)."""

# Top-level fields holding a free string that tabular tools and JSON writers often emit as a number
# (``clip_id: 17``); integers there are turned into strings instead of being rejected.
_ID_LIKE_FIELDS: frozenset[str] = frozenset(
    {"item_id", "clip_id", "source", "generator", "task", "regime", "prompt_variant", "split"}
)

# Fields whose value is an object; in a CSV or Parquet cell they may be written as a JSON string.
_OBJECT_PATHS: frozenset[tuple[str, ...]] = frozenset(
    {("labels",), ("labels", "checklist"), ("views",), ("meta",)}
)


@dataclass(slots=True)
class RawRecord:
    """One record as read from the file, before schema validation.

    Attributes:
        line: 1-based first physical line of the record (JSONL, CSV), else ``None``.
        row: 0-based record index (Parquet, JSON list), else ``None``.
        data: The record as a nested dict, or ``None`` when it could not be read at all.
        problems: Problems found while reading this record.
    """

    line: int | None
    row: int | None
    data: dict[str, Any] | None
    problems: list[ManifestProblem] = field(default_factory=list)


def file_problem(shown: str, message: str) -> ManifestProblem:
    """A problem with the manifest file as a whole."""
    return ManifestProblem(file=shown, line=None, row=None, item_id=None, field=None, message=message)


def read_records(path: Path, shown: str) -> list[RawRecord]:
    """Every record of a manifest, in file order (see :func:`iter_records`)."""
    return list(iter_records(path, shown))


def iter_records(path: Path, shown: str) -> Iterator[RawRecord]:
    """Read the records of a manifest one by one, choosing the reader by the file suffix.

    JSONL, CSV and Parquet are read as they are consumed (Parquet in record batches), so memory
    does not grow with the file; a JSON list is read whole.

    Args:
        path: The manifest file.
        shown: How to name the file in problems (usually the path as the user gave it).

    Yields:
        The records in file order.

    Raises:
        ManifestError: The file is missing, unreadable, of an unknown format, or structurally broken
            (no CSV header, a Parquet file pyarrow cannot open, a .json file that is not valid JSON).
    """
    if path.is_dir():
        scan = f"`robojudge suite scan {shown}` writes one for the videos in it"
        raise ManifestError([file_problem(shown, f"is a folder, not a manifest; {scan}")])
    suffix = path.suffix.lower()
    readers: dict[str, Callable[[Path, str], Iterator[RawRecord]]] = {
        ".jsonl": _read_jsonl,
        ".ndjson": _read_jsonl,
        ".csv": _read_csv,
        ".parquet": _read_parquet,
        ".json": _read_json,
    }
    reader = readers.get(suffix)
    if reader is None:
        got = f"suffix {suffix!r}" if suffix else "no suffix"
        hint = (f"; a video is not a manifest: `robojudge suite scan {Path(shown).parent}` writes one for "
                "the videos of its folder" if suffix in SCAN_SUFFIXES else "")
        known = ", ".join(SUFFIXES)
        message = f"unknown manifest format ({got}); expected one of {known}{hint}"
        raise ManifestError([file_problem(shown, message)])
    if not path.exists():
        raise ManifestError([file_problem(shown, "manifest file not found")])
    if not path.is_file():
        raise ManifestError([file_problem(shown, "manifest path is not a regular file")])
    if reader is not _read_parquet:
        _refuse_utf16(path, shown)
    try:
        yield from reader(path, shown)
    except OSError as e:
        raise ManifestError([file_problem(shown, f"cannot read manifest: {e}")]) from e


# --------------------------------------------------------------------------------------------- JSON


def _id_like_to_str(data: dict[str, Any]) -> dict[str, Any]:
    """Turn integer values of identifier-like string fields into strings (in place)."""
    for key in _ID_LIKE_FIELDS:
        v = data.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            data[key] = str(v)
    labels = data.get("labels")
    if isinstance(labels, dict):
        rater = labels.get("rater")
        if isinstance(rater, int) and not isinstance(rater, bool):
            labels["rater"] = str(rater)
    return data


def _not_an_object(shown: str, line: int | None, row: int | None, value: Any) -> RawRecord:
    msg = f"record is not a JSON object (got {_json_kind(value)})"
    rec = RawRecord(line=line, row=row, data=None)
    rec.problems.append(ManifestProblem(shown, line, row, None, None, msg))
    return rec


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


_REPEATED = "given more than once"
"""Said of a key that a JSON object gives twice (``labels.pa: given more than once``), as of a CSV column
repeated by a JSON cell and a dotted column: ``json.loads`` would keep the last value without a word."""

_TOO_DEEP = "invalid JSON: nested too deeply"
"""Said for JSON that :func:`json.loads` gives up on with a ``RecursionError`` (a ``meta`` of thousands of
``[``): one bad line or cell, as any other invalid JSON, not a traceback that stops the whole manifest."""


def _read_jsonl(path: Path, shown: str) -> Iterator[RawRecord]:
    with path.open("rb") as fh:
        # A binary file splits on b"\n" only, so that line numbers match what an editor shows even
        # when a JSON string holds characters that str.splitlines() would treat as line breaks.
        for lineno, line in enumerate(fh, start=1):
            chunk = line.rstrip(b"\n").rstrip(b"\r")
            if chunk.startswith(b"\xef\xbb\xbf"):  # the first line's, or a file's joined on (cat a b)
                chunk = chunk[3:]
            if not chunk.strip():
                continue
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as e:
                rec = RawRecord(line=lineno, row=None, data=None)
                rec.problems.append(ManifestProblem(shown, lineno, None, None, None, _bad_byte(chunk, e)))
                yield rec
                continue
            try:
                value, repeated = loads_noting_repeats(text)
            except json.JSONDecodeError as e:
                rec = RawRecord(line=lineno, row=None, data=None)
                msg = f"invalid JSON: {e.msg} (column {e.colno})"
                rec.problems.append(ManifestProblem(shown, lineno, None, None, None, msg))
                yield rec
                continue
            except RecursionError:  # arrays or objects nested past the interpreter's recursion limit
                rec = RawRecord(line=lineno, row=None, data=None)
                rec.problems.append(ManifestProblem(shown, lineno, None, None, None, _TOO_DEEP))
                yield rec
                continue
            if not isinstance(value, dict):
                yield _not_an_object(shown, lineno, None, value)
                continue
            rec = RawRecord(line=lineno, row=None, data=_id_like_to_str(value))
            rec.problems.extend(ManifestProblem(shown, lineno, None, None, p, _REPEATED) for p in repeated)
            yield rec


def _read_json(path: Path, shown: str) -> Iterator[RawRecord]:
    try:
        value, repeated = loads_noting_repeats(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as e:
        raise ManifestError([_not_utf8(path, shown, e)]) from e
    except json.JSONDecodeError as e:
        msg = f"invalid JSON: {e.msg} (column {e.colno})"
        raise ManifestError([ManifestProblem(shown, e.lineno, None, None, None, msg)]) from e
    except RecursionError:
        raise ManifestError([file_problem(shown, _TOO_DEEP)]) from None
    prefix = ""
    if isinstance(value, dict) and isinstance(value.get("items"), list):
        value, prefix = value["items"], "items"
    if not isinstance(value, list):
        raise ManifestError(
            [file_problem(shown, 'a .json manifest must hold a list of objects (or {"items": [...]})')]
        )
    # Repeated keys by record: "[3].labels.pa" (or "items[3].labels.pa") is field labels.pa of row 3.
    by_row: dict[int, list[str]] = {}
    for where in repeated:
        in_list = where.removeprefix(prefix)
        if m := re.fullmatch(r"\[(\d+)\]\.(.+)", in_list, re.DOTALL):
            by_row.setdefault(int(m[1]), []).append(m[2])
        elif not in_list.startswith("["):  # a key of the {"items": [...]} wrapper
            raise ManifestError([file_problem(shown, f"key {where!r} {_REPEATED}")])
        # (else inside an element that is no object, refused as such)
    for i, v in enumerate(value):
        if isinstance(v, dict):
            rec = RawRecord(line=None, row=i, data=_id_like_to_str(v))
            for field_ in by_row.get(i, ()):
                rec.problems.append(ManifestProblem(shown, None, i, None, field_, _REPEATED))
            yield rec
        else:
            yield _not_an_object(shown, None, i, v)


# ----------------------------------------------------------------------------------------- tabular


def _is_absent(value: Any) -> bool:
    """Empty cells, nulls and NaN mean "not given" in CSV and Parquet."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _prune(value: Any) -> Any:
    """Drop absent entries from nested dicts (Parquet structs fill missing keys with nulls)."""
    if isinstance(value, dict):
        out = {k: _prune(v) for k, v in value.items() if not _is_absent(v)}
        # An all-null checklist struct means "no checklist", not "an empty checklist".
        return {k: v for k, v in out.items() if not (k == "checklist" and v == {})}
    return value


def _column_path(column: str) -> tuple[str, ...]:
    """Where a (possibly dotted) column lands in the nested record.

    ``labels.*`` columns nest fully (``labels.checklist.agent_match``); ``views.*`` and ``meta.*``
    split once, so view and meta keys may themselves contain dots; any other column is a top-level
    key as written (an unknown dotted name is then reported as an unknown field).
    """
    head, dot, rest = column.partition(".")
    if not dot or not rest:
        return (column,)
    if head == "labels":
        return tuple(column.split("."))
    if head in ("views", "meta"):
        return (head, rest)
    return (column,)


class _Conflict(Exception):
    pass


def _put(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set ``target[path] = value``, merging objects; raise :class:`_Conflict` on a clash."""
    node = target
    for key in path[:-1]:
        nxt = node.setdefault(key, {})
        if not isinstance(nxt, dict):
            raise _Conflict
        node = nxt
    last = path[-1]
    if last in node:
        if isinstance(node[last], dict) and isinstance(value, dict):
            for k, v in value.items():
                _put(node[last], (k,), v)
            return
        raise _Conflict
    node[last] = value


def _tabular_record(cells: Mapping[str, Any], shown: str, line: int | None, row: int | None) -> RawRecord:
    """Build a nested record from one CSV or Parquet row (dotted columns, JSON cells, nulls)."""
    rec = RawRecord(line=line, row=row, data=None)
    data: dict[str, Any] = {}
    for column, value in cells.items():
        if _is_absent(value):
            continue
        path = _column_path(column)
        if path in _OBJECT_PATHS:
            if isinstance(value, str):
                try:
                    value, repeated = loads_noting_repeats(value)
                except json.JSONDecodeError as e:
                    msg = f"cell is not valid JSON ({e.msg}); expected a JSON object"
                    rec.problems.append(ManifestProblem(shown, line, row, None, column, msg))
                    continue
                except RecursionError:
                    msg = "cell is not valid JSON (nested too deeply); expected a JSON object"
                    rec.problems.append(ManifestProblem(shown, line, row, None, column, msg))
                    continue
                if repeated:
                    for key in repeated:
                        field_ = ".".join((*path, key))
                        rec.problems.append(ManifestProblem(shown, line, row, None, field_, _REPEATED))
                    continue
            elif isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
                value = dict(value)  # a Parquet map column
        value = _prune(value)
        if isinstance(value, dict) and not value and path[0] != "meta":
            continue
        try:
            _put(data, path, value)
        except _Conflict:
            msg = "given more than once (by a JSON object cell and a dotted column, or two columns)"
            rec.problems.append(ManifestProblem(shown, line, row, None, ".".join(path), msg))
    rec.data = _id_like_to_str(data)
    return rec


def _read_csv(path: Path, shown: str) -> Iterator[RawRecord]:
    allow_cells_of_any_length()
    # Bytes that are not UTF-8 become lone surrogates here and are reported with the record that holds
    # them, so one such byte costs that record only, as a bad line of JSON Lines does.
    with path.open(newline="", encoding="utf-8-sig", errors="surrogateescape") as f:
        lines = _Lines(f)
        reader = csv.reader(lines)
        try:
            header = next(reader)
        except StopIteration:
            return  # an empty file: reported as "manifest has no items" by the caller
        if bad := _not_utf8_line(lines.taken, 1):
            raise ManifestError([ManifestProblem(shown, bad[0], None, None, None, bad[1])])
        header = [h.strip() for h in header]
        _check_header(header, shown)
        while True:
            first_line = reader.line_num + 1
            lines.taken.clear()
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                msg = f"cannot parse CSV from this line on: {e}"
                rec = RawRecord(line=first_line, row=None, data=None)
                rec.problems.append(ManifestProblem(shown, first_line, None, None, None, msg))
                yield rec
                break
            if lines.done and _unterminated(lines.taken):
                # The reader takes a quote never closed to run to the end of the file.
                msg = "a quoted cell is never closed (unterminated quote): it runs to the end of the file"
                rec = RawRecord(line=first_line, row=None, data=None)
                rec.problems.append(ManifestProblem(shown, first_line, None, None, None, msg))
                yield rec
                break
            if bad := _not_utf8_line(lines.taken, first_line):
                rec = RawRecord(line=first_line, row=None, data=None)
                rec.problems.append(ManifestProblem(shown, bad[0], None, None, None, bad[1]))
                yield rec
                continue
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                msg = f"record has {len(cells)} cells but the header has {len(header)} columns"
                rec = RawRecord(line=first_line, row=None, data=None)
                at = header.index("item_id") if "item_id" in header else len(cells)  # named, if it has one
                item = cells[at].strip() or None if at < len(cells) else None
                rec.problems.append(ManifestProblem(shown, first_line, None, item, None, msg))
                yield rec
                continue
            yield _tabular_record(dict(zip(header, cells, strict=True)), shown, first_line, None)


def _not_utf8_line(lines: list[str], first: int) -> tuple[int, str] | None:
    """The line number (counting from ``first``) and problem of the first of ``lines`` read with a byte
    that is not UTF-8 (decoded with ``surrogateescape``), or None when every byte was UTF-8."""
    for offset, line in enumerate(lines):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            chunk = line.encode("utf-8", "surrogateescape")
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError as e:
                return first + offset, _bad_byte(chunk, e)
    return None


def _bad_byte(chunk: bytes, error: UnicodeDecodeError) -> str:
    """What is wrong with a line holding a byte that is not UTF-8, its column counted in bytes from 1."""
    return f"not valid UTF-8: byte 0x{chunk[error.start]:02x} at column {error.start + 1} ({error.reason})"


class _Lines:
    """The lines of a text file as the CSV reader takes them, remembering those of the current record
    and whether the file is done."""

    def __init__(self, lines: Iterator[str] | TextIO) -> None:
        self._lines = iter(lines)
        self.taken: list[str] = []
        self.done = False

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._lines)
        except StopIteration:
            self.done = True
            raise
        self.taken.append(line)
        return line


def _unterminated(record: list[str]) -> bool:
    """Whether the text of a CSV record ends inside a quoted cell (read strictly, it cannot end)."""
    try:
        for _ in csv.reader(record, strict=True):
            pass
    except csv.Error as e:
        return "unexpected end of data" in str(e)
    return False


def _refuse_utf16(path: Path, shown: str) -> None:
    """Refuse a UTF-16 text manifest as a whole, saying so: Windows PowerShell 5's ``>`` and ``Out-File``
    write UTF-16 with a byte-order mark, which read as UTF-8 gave a "not valid UTF-8" line and then an
    "invalid JSON" for every other line."""
    try:
        with path.open("rb") as fh:
            head = fh.read(2)
    except OSError:
        return  # (the reader says what is wrong with the file)
    if head in (b"\xff\xfe", b"\xfe\xff"):
        raise ManifestError([file_problem(
            shown, "is UTF-16 (as Windows PowerShell's > and Out-File write it), not UTF-8: save it as UTF-8 "
                   "(PowerShell: Set-Content -Encoding utf8, or Out-File -Encoding utf8)")])


def _not_utf8(path: Path, shown: str, error: UnicodeDecodeError) -> ManifestProblem:
    """The problem of a file that is not UTF-8, at the line of its first bad byte."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return ManifestProblem(shown, lineno, None, None, None, _bad_byte(raw, e))
    return file_problem(shown, f"not valid UTF-8: {error}")


def _check_header(header: list[str], shown: str) -> None:
    if len(header) == 1 and (sep := next((c for c in ";\t|" if c in header[0]), None)):
        # A spreadsheet set to another locale saves "CSV" with semicolons: say so once, not per row.
        raise ManifestError([ManifestProblem(
            shown, 1, None, None, None,
            f"the header is one column, {header[0]!r}: manifest CSV files are separated by commas, and "
            f"this one looks separated by {sep!r} (save it with commas, or as .jsonl)")])
    problems: list[ManifestProblem] = []
    seen: set[str] = set()
    for i, name in enumerate(header, start=1):
        if not name:
            problems.append(ManifestProblem(shown, 1, None, None, None, f"header column {i} has no name"))
        elif name in seen:
            problems.append(ManifestProblem(shown, 1, None, None, name, f"header repeats column {name!r}"))
        seen.add(name)
    if problems:
        raise ManifestError(problems)


PARQUET_BATCH = 4096
"""Rows of a Parquet manifest decoded at a time."""


def _read_parquet(path: Path, shown: str) -> Iterator[RawRecord]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def broken(e: Exception) -> ManifestError:
        return ManifestError([file_problem(shown, f"cannot read Parquet file: {e}")])

    try:
        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
    except (pa.ArrowException, ValueError) as e:
        raise broken(e) from e
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ManifestError([file_problem(shown, f"Parquet file repeats columns {dupes}")])
    row = 0
    batches = pf.iter_batches(batch_size=PARQUET_BATCH)
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, ValueError) as e:
            raise broken(e) from e
        if batch is None:
            return
        for r in batch.to_pylist():
            yield _tabular_record(r, shown, None, row)
            row += 1
