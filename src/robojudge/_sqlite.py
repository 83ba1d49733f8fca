"""Switching an SQLite database to WAL when several processes may open it at the same moment.

``PRAGMA journal_mode = WAL`` can fail at once with "database is locked" while another connection is
switching the same new file or setting up its shared-memory index: SQLite does not always call the busy
handler there, so the connection's ``timeout`` does not help. Ray workers or parallel runs that open
one fresh cache or store together hit it (measured: 5 of 15 trials of six processes opening a new file
at once). :func:`enable_wal` retries the switch with a short backoff until ``timeout_s`` has passed.
Stdlib only, so every layer can use it.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

_RETRYABLE = ("locked", "busy")


def enable_wal(cursor: Any, timeout_s: float) -> None:
    """Run ``PRAGMA journal_mode = WAL`` on ``cursor`` (an sqlite3 connection or cursor), retrying
    while SQLite reports the database locked or busy, for up to ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    delay = 0.002
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            message = str(exc).lower()
            if not any(word in message for word in _RETRYABLE) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
