"""Exporting a run's results, with item fields of the manifest as extra columns.

The store writes the table (:func:`robojudge.store.export_results`); this adds what only the run
layer knows: the manifest's items and the groups of set-level rows (see
:func:`robojudge.run._sets.group_column`), so that ``robojudge aggregate scores --by`` can read it.
With the manifest, every export also carries its ``generator``, ``source`` and ``clip_id``
(:data:`robojudge.store.MANIFEST_COLUMNS`) after the standard columns, then the columns marking rows
the manifest does not hold (``outside_suite``) and rows whose inputs changed (``stale``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path
from typing import cast

from robojudge.run._sets import group_column
from robojudge.run._status import installed_version, stale_rows
from robojudge.store import (
    MANIFEST_COLUMNS,
    OUTSIDE_COLUMN,
    STALE_COLUMN,
    ResultRow,
    ResultStore,
    export_results,
    item_columns,
    outside_column,
)
from robojudge.store._export import ExportFormat
from robojudge.suite import load_suite

Cell = Callable[[ResultRow], str | None]
"""An export column: the cell of each row (None: empty)."""


def export_run(
    db: str | os.PathLike[str],
    out: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    metric: str | None = None,
    raw: bool = False,
    by: str | None = None,
    suite: str | os.PathLike[str] | None = None,
    note: Callable[[str], None] | None = None,
    installed_versions: bool = False,
) -> int:
    """Write the current rows of the store at ``db`` to ``out`` (CSV or Parquet), read-only.

    Args:
        db: Result store URL or SQLite path; it must exist.
        out: Destination file.
        fmt: ``"csv"`` or ``"parquet"``; taken from the suffix of ``out`` when ``None``.
        metric: Only this metric.
        raw: CSV text cells exactly as stored (see :func:`robojudge.store.export_results`).
        by: An item field (``generator``, ``task``...) to add as a column, read from ``suite``:
            an item's row gets its item's value (``-`` when unset), a set-level row grouped by
            ``by`` its group, one grouped by another field an empty cell, and a row the suite does
            not hold (an item removed since, a group no item forms) an empty cell too. It comes
            first after the standard columns.
        suite: The manifest the items' fields are read from; with it the export ends with the
            columns :data:`robojudge.store.MANIFEST_COLUMNS` (``generator``, ``source``,
            ``clip_id``: empty when unset), except one that ``by`` already gives, then
            :data:`robojudge.store.OUTSIDE_COLUMN` (``outside`` for a row the suite does not hold:
            :func:`robojudge.store.outside_column`) and :data:`robojudge.store.STALE_COLUMN`.
        note: Receives remarks that are not errors (with ``suite``): how many rows are outside it
            and how many are stale (:func:`robojudge.run.stale_rows`); both are exported. And how many
            rows ``installed_versions`` left out.
        installed_versions: Leave out the rows of a metric stored under another version than this
            robojudge computes (an upgrade changed the metric, and the old rows stay current beside
            the new ones, which ``robojudge aggregate`` never averages together). Judges' rows, and
            those of metrics not registered here, are all kept.

    Returns:
        The number of rows written.

    Raises:
        ValueError: ``by`` without ``suite``, ``by`` not an item field or the name of an export
            column (``item_id``...), or ``metric`` has no row in the store (the message lists the
            store's metrics).
        StoreError: No store at ``db``, an unknown format, or ``out`` cannot be written.
        ManifestError: The manifest cannot be read.
    """
    if by is not None and suite is None:
        raise ValueError("--by and --suite go together: the column is read from the suite (--suite alone "
                         "adds its generator, source and clip_id)")
    with ResultStore(db, read_only=True) as store:
        if metric is not None and store.count(metric=metric) == 0:
            raise ValueError(_unknown_metric(metric, sorted({r.metric for r in store.iter_rows()})))
        columns = None
        outside: list[str] = []
        stale: set[tuple[str, str, str, str]] = set()
        if suite is not None:
            items = load_suite(Path(suite), strict=False, files="optional").items
            marker = outside_column(items)
            columns = {} if by is None else {by: _inside_only(group_column(items, by), marker)}
            columns |= {k: v for k, v in item_columns(items, MANIFEST_COLUMNS).items() if k != by}
            columns[OUTSIDE_COLUMN] = _counted(marker, outside)
            memo: dict[str, str | None] = {}
            written = [r for r in store.rows(metric=metric) if not installed_versions or _installed(r, memo)]
            stale = {_key(r) for r in stale_rows(written, items)}  # (of the rows written: the note's count)
            columns[STALE_COLUMN] = lambda row: "stale" if _key(row) in stale else ""
        left: dict[tuple[str, str], int] = {}
        keep = _installed_only(left) if installed_versions else None
        n = export_results(store, Path(out), cast(ExportFormat | None, fmt), metric=metric, raw=raw,
                           columns=columns, keep=keep)
    if left and note is not None:
        shown = "; ".join(f"{m} version {v} ({k})" for (m, v), k in sorted(left.items()))
        note(f"left out {sum(left.values())} rows of metric versions other than installed: {shown}")
    if stale and note is not None:
        note(f"{len(stale)} of {n} rows are stale: their inputs (video, reference, instruction...) changed "
             f"since they were computed, so their values describe other files; the {STALE_COLUMN!r} column "
             "marks them, and `robojudge aggregate` leaves them out (`robojudge results status` lists them; "
             "the next `robojudge score` or `judge` computes them anew)")
    if outside and note is not None:
        shown = ", ".join(list(dict.fromkeys(outside))[:5])
        cell = f" and their {by} cell is empty" if by is not None else ""
        note(f"{len(outside)} of {n} rows are of items (or groups) that are not in {suite} ({shown}...): "
             f"the {OUTSIDE_COLUMN!r} column marks them 'outside'{cell}, and `robojudge aggregate` leaves "
             "them out, as the report does")
    return n


def _installed(row: ResultRow, versions: dict[str, str | None]) -> bool:
    """Whether ``row`` is of the version of its metric this robojudge computes (or of a judge, or of a
    metric it does not know); ``versions`` remembers the versions looked up."""
    return installed_version(row.metric, versions) in (None, row.version)


def _installed_only(left: dict[tuple[str, str], int]) -> Callable[[ResultRow], bool]:
    """Whether a row is of the version of its metric this robojudge computes (or of a judge, or of a
    metric it does not know); the rows it refuses are counted in ``left`` by (metric, version)."""
    versions: dict[str, str | None] = {}

    def keep(row: ResultRow) -> bool:
        if _installed(row, versions):
            return True
        left[row.metric, row.version] = left.get((row.metric, row.version), 0) + 1
        return False

    return keep


def _key(row: ResultRow) -> tuple[str, str, str, str]:
    return (row.item_id, row.metric, row.config_hash, row.version)


def _unknown_metric(metric: str, stored: list[str]) -> str:
    if not stored:
        return f"--metric {metric!r}: the store holds no rows"
    close = difflib.get_close_matches(metric, stored, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"--metric {metric!r}: no rows of that metric in the store{hint}; its metrics: {', '.join(stored)}"


def _counted(marker: Cell, outside: list[str]) -> Cell:
    """``marker``, noting in ``outside`` the id of each row it marks."""

    def cell(row: ResultRow) -> str | None:
        mark = marker(row)
        if mark:
            outside.append(row.item_id)
        return mark

    return cell


def _inside_only(cell: Cell, marker: Cell) -> Cell:
    """``cell``, empty for a row ``marker`` marks as outside the suite: a set-level group no item forms
    any more (a generator renamed since) stands for no group of the suite, and a removed item's row
    must not join the group of the items without the field (``-``)."""
    return lambda row: None if marker(row) else cell(row)
