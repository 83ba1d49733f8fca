"""Exporting a run's results, with an item field of the manifest as an extra column.

The store writes the table (:func:`robojudge.store.export_results`); this adds what only the run
layer knows: the manifest's items and the groups of set-level rows (see
:func:`robojudge.run._sets.group_column`), so that ``robojudge aggregate scores --by`` can read it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from robojudge.run._sets import group_column
from robojudge.store import ResultStore, export_results
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
            an item's row gets its item's value, a set-level row grouped by ``by`` its group.
        suite: The manifest ``by`` is read from; given together with ``by``.

    Returns:
        The number of rows written.

    Raises:
        ValueError: ``by`` without ``suite`` or the other way round, ``by`` not an item field or
            the name of an export column (``item_id``...).
        StoreError: No store at ``db``, an unknown format, or ``out`` cannot be written.
        ManifestError: The manifest cannot be read.
    """
    if (by is None) != (suite is None):
        raise ValueError("by and suite go together (--by and --suite): the column is read from the suite")
    with ResultStore(db, read_only=True) as store:
        columns = None
        if by is not None and suite is not None:
            columns = {by: group_column(load_suite(Path(suite), strict=False).items, by)}
        return export_results(store, Path(out), cast(ExportFormat | None, fmt), metric=metric, raw=raw,
                              columns=columns)
