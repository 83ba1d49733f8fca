"""``export_results``: the store's rows as a long CSV or Parquet table, one row per result."""

from __future__ import annotations

import errno
import math
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO

from robojudge._csv import SafeCsvWriter
from robojudge._files import replacing
from robojudge.store._errors import StoreError
from robojudge.store._row import ResultRow
from robojudge.store._store import ResultStore, dumps_json

ExportFormat = Literal["csv", "parquet"]

EXPORT_COLUMNS: tuple[str, ...] = (
    "item_id",
    "metric",
    "value",
    "status",
    "error",
    "config_hash",
    "version",
    "duration_s",
    "created_at",
    "details",
    "config",
    "fingerprint",
)
"""Columns of an export, in order. ``details`` and ``config`` are JSON text; ``fingerprint`` is the
hash of the inputs the result read (empty when unknown)."""

ExtraColumns = Mapping[str, Callable[[ResultRow], str | None]]
"""Columns appended after :data:`EXPORT_COLUMNS`: name -> the cell of a row (``None`` = empty)."""

MANIFEST_COLUMNS: tuple[str, ...] = ("generator", "source", "clip_id")
"""Item fields an export adds after the standard columns when the suite is known (:func:`item_columns`)."""
STALE_COLUMN = "stale"
"""The export column (with a manifest) marking rows whose inputs changed since they were computed."""
OUTSIDE_COLUMN = "outside_suite"
"""The export column (with a manifest) marking rows the manifest does not hold (:func:`outside_column`)."""


def item_columns(items: Iterable[Any], fields: Sequence[str] = MANIFEST_COLUMNS) -> dict[str, Callable[
        [ResultRow], str | None]]:
    """Export columns holding, per row, a field of the row's item (``None``: unset or not an item).

    ``items`` are the suite's items (anything with ``item_id`` and the fields). A row of an id that
    is no item gets the group of a set-level result grouped by that field (``config["group_by"]``,
    ``details["group"]``), so an FVD per generator carries its generator; a group no item of the suite
    is in any more (a generator renamed since) gets ``None``, not a generator the suite does not have.
    """
    values = {f: {it.item_id: _text(getattr(it, f, None)) for it in items} for f in fields}

    def column(name: str) -> Callable[[ResultRow], str | None]:
        known = values[name]
        # The groups the suite's items form (an unset field is the group "-", as group_items names it).
        groups = {v if v is not None else "-" for v in known.values()}

        def cell(row: ResultRow) -> str | None:
            if row.item_id in known:
                return known[row.item_id]
            config, details = row.config or {}, row.details or {}
            if config.get("group_by") != name or "group" not in details:
                return None
            group = str(details["group"])
            return group if group in groups else None

        return cell

    return {f: column(f) for f in fields}


def outside_column(items: Iterable[Any]) -> Callable[[ResultRow], str | None]:
    """The cell of :data:`OUTSIDE_COLUMN`: ``outside`` for a row the suite's ``items`` do not hold, else
    empty.

    A row is outside when its id is no item's, unless it is a set-level result of a group the items
    form (``config["group_by"]`` and ``details["group"]``; the unset field is the group ``-``, a result
    over all items, ``group_by`` None, is the suite's). An item removed from the manifest, or a
    generator renamed since, leaves its rows outside.
    """
    items = list(items)
    ids = {it.item_id for it in items}
    groups: dict[str, set[str]] = {}

    def cell(row: ResultRow) -> str | None:
        if row.item_id in ids:
            return ""
        config, details = row.config or {}, row.details or {}
        if "group_by" not in config:
            return "outside"
        field = config["group_by"]
        if field is None:
            return ""
        if field not in groups:
            values = (_text(getattr(it, field, None)) for it in items)
            groups[field] = {v if v is not None else "-" for v in values}
        return "" if str(details.get("group")) in groups[field] else "outside"

    return cell


def _text(value: Any) -> str | None:
    return None if value is None else str(getattr(value, "value", value))

_SUFFIXES: dict[str, ExportFormat] = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
_BATCH = 10_000


def export_results(
    store: ResultStore, out: Path, fmt: ExportFormat | None = None, *, metric: str | None = None,
    raw: bool = False, columns: ExtraColumns | None = None, keep: Callable[[ResultRow], bool] | None = None,
    root: str | os.PathLike[str] | None = None, named: bool = False,
    rows: Iterable[ResultRow] | None = None,
) -> int:
    """Write the store's rows to ``out`` as one long table.

    Missing values are empty cells in CSV and nulls in Parquet: ``value`` is missing both for
    failures (``status == "error"``) and for ok-but-unscored results (NaN in Python), so
    ``status`` tells them apart. The file is written next to ``out`` and renamed into place,
    so a killed export never leaves a half-written file under the final name. ``-`` is standard
    output, and a destination that is not a regular file (``/dev/stdout``, a named pipe) is written
    in place (:func:`is_stream`); either takes CSV only.

    In CSV, a text cell that a spreadsheet would run as a formula (it starts with ``= + - @``, a tab
    or a carriage return and is not a plain number) gets a leading ``'`` unless ``raw`` is set; see
    :func:`csv_safe`. Parquet is always written as stored.

    Args:
        store: The store to read.
        out: Destination file; its folder is created if needed.
        fmt: ``"csv"`` or ``"parquet"``; taken from the suffix of ``out`` when ``None``.
        metric: Export only this metric.
        raw: Write CSV text cells exactly as stored (no formula neutralising).
        columns: Extra text columns after the standard ones (e.g. the manifest's ``generator``).
        keep: Write only the rows for which it is true (all when ``None``).
        root: The output folder ``out`` is written into (a report's), if any: a link there is
            followed only inside it (:func:`robojudge._files.replacing`), and is never taken for a stream.
        named: The user named ``root`` (``--out``): a link there is followed wherever it leads.
        rows: The store's current rows, read already (a report writes the rows its summary counts, not
            a second read, which a run writing meanwhile would make longer); else they are read here.

    Returns:
        The number of rows written.

    Raises:
        StoreError: Unknown format, or the file cannot be written.
        ValueError: An extra column has the name of one of :data:`EXPORT_COLUMNS`.
    """
    if clash := sorted(set(columns or {}) & set(EXPORT_COLUMNS)):
        raise ValueError(f"extra column {clash[0]!r} has the name of an export column; choose another")
    out = Path(out)
    if is_stream(out) and (root is None or not out.is_symlink()):
        return _export_to_stream(store, out, fmt, metric, raw, dict(columns or {}), keep, rows)
    fmt = _resolve_format(out, fmt)
    tmp: Path | None = None
    try:
        with replacing(root, named=named) as files:  # the whole new file or the old one (link, mode kept)
            tmp = files.path(out)
            chosen = _chosen(store, metric, keep, rows)
            extra = dict(columns or {})
            n = _write_csv(chosen, tmp, raw, extra) if fmt == "csv" else _write_parquet(chosen, tmp, extra)
    except OSError as exc:
        # Named as the file asked for: the hidden temporary name means nothing to the user (pyarrow's
        # message names the file it opened).
        reason = exc.strerror or str(exc)
        if tmp is not None:
            reason = reason.replace(str(tmp), str(out))
        blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:  # (mkdir says "File exists" of a file on the way)
            reason = f"{os.strerror(errno.ENOTDIR)}: {blocker} is a file"
        raise StoreError(f"cannot write {out}: {reason}") from exc
    return n


def is_stream(out: str | os.PathLike[str]) -> bool:
    """Whether ``out`` is standard output (``-``) or an existing file that is not a regular one (a
    terminal, a pipe, ``/dev/stdout``): written as it goes, since nothing can be renamed onto it."""
    if str(out) == "-":
        return True
    try:
        mode = os.stat(out).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _export_to_stream(store: ResultStore, out: Path, fmt: str | None, metric: str | None, raw: bool,
                      extra: dict[str, Callable[[ResultRow], str | None]],
                      keep: Callable[[ResultRow], bool] | None, given: Iterable[ResultRow] | None) -> int:
    where = "standard output" if str(out) == "-" else str(out)
    if fmt not in (None, "csv"):
        if fmt != "parquet":
            raise StoreError(f"unknown export format {fmt!r}: use csv or parquet")
        # a Parquet file is binary and ends with its index: no use on a terminal or to a reader of a pipe
        raise StoreError(f"cannot write Parquet to {where}, which is not a file: give --out FILE.parquet, "
                         "or --format csv")
    rows = _chosen(store, metric, keep, given)
    try:
        if str(out) == "-":
            n = _csv_rows(rows, sys.stdout, raw, extra)
            sys.stdout.flush()
            return n
        with out.open("w", newline="", encoding="utf-8") as fh:
            return _csv_rows(rows, fh, raw, extra)
    except BrokenPipeError:
        raise  # the reader went away (`| head`): the command line's own handling
    except OSError as exc:
        raise StoreError(f"cannot write {where}: {exc.strerror or exc}") from exc


def _chosen(store: ResultStore, metric: str | None, keep: Callable[[ResultRow], bool] | None,
            given: Iterable[ResultRow] | None) -> Iterator[ResultRow]:
    """The rows an export writes: ``given`` (read already) or the store's, of ``metric``, that ``keep``
    keeps."""
    rows = store.iter_rows(metric=metric) if given is None else iter(given)
    if given is not None and metric is not None:
        rows = (row for row in rows if row.metric == metric)
    return rows if keep is None else (row for row in rows if keep(row))


def _resolve_format(out: Path, fmt: str | None) -> ExportFormat:
    if fmt is None:
        found = _SUFFIXES.get(out.suffix.lower())
        if found is None:
            raise StoreError(f"cannot tell the export format from {out.name!r}: use --format csv or parquet")
        return found
    if fmt not in ("csv", "parquet"):
        raise StoreError(f"unknown export format {fmt!r}: use csv or parquet")
    return "csv" if fmt == "csv" else "parquet"


def _record(row: ResultRow, extra: ExtraColumns) -> dict[str, Any]:
    value = row.value
    if value is not None and math.isnan(value):
        value = None
    return {**{name: cell(row) for name, cell in extra.items()},
        "item_id": row.item_id,
        "metric": row.metric,
        "value": value,
        "status": row.status,
        "error": row.error,
        "config_hash": row.config_hash,
        "version": row.version,
        "duration_s": row.duration_s,
        "created_at": row.created_at,
        "details": None if row.details is None else dumps_json(row.details),
        "config": None if row.config is None else dumps_json(row.config),
        "fingerprint": row.fingerprint,
    }


def _write_csv(rows: Iterator[ResultRow], path: Path, raw: bool, extra: ExtraColumns) -> int:
    with path.open("w", newline="", encoding="utf-8") as fh:
        return _csv_rows(rows, fh, raw, extra)


def _csv_rows(rows: Iterator[ResultRow], fh: TextIO, raw: bool, extra: ExtraColumns) -> int:
    n = 0
    names = (*EXPORT_COLUMNS, *extra)
    writer = SafeCsvWriter(fh, raw=raw)
    writer.writerow(names)
    for row in rows:
        rec = _record(row, extra)
        rec["value"] = "" if rec["value"] is None else repr(rec["value"])
        rec["duration_s"] = repr(rec["duration_s"])
        rec["created_at"] = "" if rec["created_at"] is None else rec["created_at"].isoformat()
        writer.writerow("" if rec[col] is None else rec[col] for col in names)
        n += 1
    return n


def _write_parquet(rows: Iterator[ResultRow], path: Path, extra: ExtraColumns) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            pa.field("item_id", pa.string(), nullable=False),
            pa.field("metric", pa.string(), nullable=False),
            pa.field("value", pa.float64(), nullable=True),
            pa.field("status", pa.string(), nullable=False),
            pa.field("error", pa.string(), nullable=True),
            pa.field("config_hash", pa.string(), nullable=False),
            pa.field("version", pa.string(), nullable=False),
            pa.field("duration_s", pa.float64(), nullable=False),
            pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=True),
            pa.field("details", pa.string(), nullable=True),
            pa.field("config", pa.string(), nullable=True),
            pa.field("fingerprint", pa.string(), nullable=False),
            *(pa.field(name, pa.string(), nullable=True) for name in extra),
        ]
    )
    n = 0
    with pq.ParquetWriter(path, schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(_record(row, extra))
            if len(batch) >= _BATCH:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                n += len(batch)
                batch = []
        if batch or n == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            n += len(batch)
    return n
