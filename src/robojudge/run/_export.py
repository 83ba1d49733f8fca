"""Exporting a run's results, with item fields of the manifest as extra columns.

The store writes the table (:func:`robojudge.store.export_results`); this adds what only the run
layer knows: the manifest's items and the groups of set-level rows (see
:func:`robojudge.run._sets.group_column`), so that ``robojudge aggregate scores --by`` can read it.
With the manifest, every export also carries its ``generator``, ``source`` and ``clip_id``
(:data:`robojudge.store.MANIFEST_COLUMNS`) after the standard columns.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from robojudge.metrics._sets import GROUP_PREFIX, group_items
from robojudge.run._sets import group_column
from robojudge.run._status import stale_rows
from robojudge.store import (
    MANIFEST_COLUMNS,
    STALE_COLUMN,
    ResultRow,
    ResultStore,
    export_results,
    item_columns,
)
from robojudge.store._export import ExportFormat
from robojudge.suite import Item, load_suite


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
) -> int:
    """Write the current rows of the store at ``db`` to ``out`` (CSV or Parquet), read-only.

    Args:
        db: Result store URL or SQLite path; it must exist.
        out: Destination file.
        fmt: ``"csv"`` or ``"parquet"``; taken from the suffix of ``out`` when ``None``.
        metric: Only this metric.
        raw: CSV text cells exactly as stored (see :func:`robojudge.store.export_results`).
        by: An item field (``generator``, ``task``...) to add as a column, read from ``suite``:
            an item's row gets its item's value (``-`` when unset), a row of an item the suite
            does not hold ``-`` too (counted in a ``note``), a set-level row grouped by ``by`` its
            group, one grouped by another field an empty cell. It comes first after the standard
            columns.
        suite: The manifest the items' fields are read from; with it the export ends with the
            columns :data:`robojudge.store.MANIFEST_COLUMNS` (``generator``, ``source``,
            ``clip_id``: empty when unset), except one that ``by`` already gives.
        note: Receives remarks that are not errors: rows of items outside ``suite``, and (with
            ``suite``) how many rows are stale (:func:`robojudge.run.stale_rows`; they are exported).

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
            columns = {} if by is None else {by: _unset_dash(group_column(items, by), items, by, outside)}
            columns |= {k: v for k, v in item_columns(items, MANIFEST_COLUMNS).items() if k != by}
            stale = {_key(r) for r in stale_rows(store.rows(metric=metric), items)}
            columns[STALE_COLUMN] = lambda row: "stale" if _key(row) in stale else ""
        n = export_results(store, Path(out), cast(ExportFormat | None, fmt), metric=metric, raw=raw,
                           columns=columns)
    if stale and note is not None:
        note(f"{len(stale)} of {n} rows are stale: their inputs (video, reference, instruction...) changed "
             f"since they were computed, so their values describe other files; the {STALE_COLUMN!r} column "
             "marks them, and `robojudge aggregate` leaves them out (`robojudge results status` lists them; "
             "the next `robojudge score` or `judge` computes them anew)")
    if outside and note is not None:
        shown = ", ".join(list(dict.fromkeys(outside))[:5])
        note(f"{len(outside)} of {n} rows are of items (or groups) that are not in {suite} ({shown}...): "
             f"their {by} cell is '-', as for an item without the field")
    return n


def _key(row: ResultRow) -> tuple[str, str, str, str]:
    return (row.item_id, row.metric, row.config_hash, row.version)


def _unknown_metric(metric: str, stored: list[str]) -> str:
    if not stored:
        return f"--metric {metric!r}: the store holds no rows"
    close = difflib.get_close_matches(metric, stored, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"--metric {metric!r}: no rows of that metric in the store{hint}; its metrics: {', '.join(stored)}"


def _unset_dash(cell: Callable[[ResultRow], str | None], items: Sequence[Item], by: str,
                outside: list[str]) -> Callable[[ResultRow], str | None]:
    """``cell``, with ``-`` (counted in ``outside``) for a row of an item the suite does not hold.

    A set-level row (an id starting ``group:``) keeps what ``cell`` gives: its group, or an empty cell
    when it is grouped by another field (it has no value for this one); a group no item of the suite
    is in any more (a generator renamed since) gets ``-`` too, rather than standing for a generator the
    suite does not have.
    """
    known = {it.item_id for it in items}
    groups = {g.key for g in group_items(items, by)}

    def wrapped(row: ResultRow) -> str | None:
        value = cell(row)
        if row.item_id.startswith(GROUP_PREFIX):
            if value is not None and value not in groups:
                outside.append(row.item_id)
                return "-"
            return value
        if value is None and row.item_id not in known:
            outside.append(row.item_id)
            return "-"
        return value

    return wrapped
