"""Exporting a run's results, with item fields of the manifest as extra columns.

The store writes the table (:func:`robojudge.store.export_results`); this adds what only the run
layer knows: the manifest's items and the groups of set-level rows (see
:func:`robojudge.run._sets.group_column`), so that ``robojudge aggregate scores --by`` can read it.
With the manifest, every export also carries its ``generator``, ``source`` and ``clip_id``
(:data:`robojudge.store.MANIFEST_COLUMNS`) after the standard columns.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from robojudge.run._sets import group_column
from robojudge.store import MANIFEST_COLUMNS, ResultStore, export_results, item_columns
from robojudge.store._export import ExportFormat
from robojudge.suite import load_suite


def export_run(
    db: str | os.PathLike[str],
    out: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    metric: str | None = None,
    raw: bool = False,
    by: str | None = None,
    suite: str | os.PathLike[str] | None = None,
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
            ``by`` its group. It comes first after the standard columns.
        suite: The manifest the items' fields are read from; with it the export ends with the
            columns :data:`robojudge.store.MANIFEST_COLUMNS` (``generator``, ``source``,
            ``clip_id``: empty when unset), except one that ``by`` already gives.

    Returns:
        The number of rows written.

    Raises:
        ValueError: ``by`` without ``suite``, ``by`` not an item field or the name of an export
            column (``item_id``...).
        StoreError: No store at ``db``, an unknown format, or ``out`` cannot be written.
        ManifestError: The manifest cannot be read.
    """
    if by is not None and suite is None:
        raise ValueError("--by and --suite go together: the column is read from the suite (--suite alone "
                         "adds its generator, source and clip_id)")
    with ResultStore(db, read_only=True) as store:
        columns = None
        if suite is not None:
            items = load_suite(Path(suite), strict=False).items
            columns = {} if by is None else {by: group_column(items, by)}
            columns |= {k: v for k, v in item_columns(items, MANIFEST_COLUMNS).items() if k != by}
        return export_results(store, Path(out), cast(ExportFormat | None, fmt), metric=metric, raw=raw,
                              columns=columns)
