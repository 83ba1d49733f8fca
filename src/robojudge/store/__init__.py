"""Result store: one row per (item, metric, config hash, metric version), in SQLite or PostgreSQL.

Only this package talks SQL. ``ResultStore(url)`` opens (and if needed creates) a database; rows
are only ever inserted, never overwritten, so recomputing is a no-op and a new metric config or
version makes new rows. ``export_results`` writes the rows as long CSV or Parquet; ``diff_results``
compares the rows of two stores (or two versions in one) item by item. ``put_rows`` is
the one way to change a stored value: it refuses a different value for a stored key unless told to
replace it, all rows in one transaction (``robojudge results import`` uses it).
"""

from robojudge._csv import ESCAPED_CELL, SafeCsvWriter
from robojudge.store._diff import ResultsDiff, SeriesDiff, diff_results, diff_stores
from robojudge.store._errors import NotAStoreError, StoreError
from robojudge.store._export import (
    EXPORT_COLUMNS,
    MANIFEST_COLUMNS,
    OUTSIDE_COLUMN,
    STALE_COLUMN,
    export_results,
    is_stream,
    item_columns,
    outside_column,
)
from robojudge.store._put import PutOutcome, RowConflictError, put_rows, same_value
from robojudge.store._row import ResultRow, parse_libraries, served_models
from robojudge.store._schema import SCHEMA_VERSION, UTCDateTime
from robojudge.store._store import ResultStore
from robojudge.store._url import default_db_url, display_url, mask_text, parse_url, sqlite_url

__all__ = [
    "ESCAPED_CELL",
    "EXPORT_COLUMNS",
    "MANIFEST_COLUMNS",
    "OUTSIDE_COLUMN",
    "STALE_COLUMN",
    "SCHEMA_VERSION",
    "PutOutcome",
    "ResultRow",
    "ResultsDiff",
    "SeriesDiff",
    "parse_libraries",
    "ResultStore",
    "RowConflictError",
    "SafeCsvWriter",
    "NotAStoreError",
    "StoreError",
    "UTCDateTime",
    "default_db_url",
    "diff_results",
    "diff_stores",
    "display_url",
    "export_results",
    "is_stream",
    "item_columns",
    "mask_text",
    "outside_column",
    "parse_url",
    "put_rows",
    "same_value",
    "sqlite_url",
    "served_models",
]
