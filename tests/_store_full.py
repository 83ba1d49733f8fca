"""A SQLite store that starts refusing rows as a full disk does, for the tests of runs that must stop."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from robojudge.store import ResultStore


def fill_after(db: Path, rows: int) -> None:
    """Make the SQLite store refuse every insert once it holds ``rows`` results, with SQLite's own
    full-disk message: the store's writes fail from then on as on a full disk."""
    ResultStore(db).close()
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TRIGGER disk_full BEFORE INSERT ON robojudge_results "
            f"WHEN (SELECT COUNT(*) FROM robojudge_results) >= {rows} "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
