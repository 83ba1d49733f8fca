"""``put_rows``: store rows in one transaction, telling new, unchanged and changed rows apart.

:meth:`ResultStore.add` keeps whatever is stored under a key (but a stored error, which a value of
the same inputs replaces), which is right for computed results (recomputing gives the same value).
Values brought in from outside (``robojudge results import``) need more: a re-import of the same file
must be a no-op, but a *different* value for a stored key must be refused, or take the stored row's
place when the user asks for it (the stored row is kept, marked superseded). ``put_rows`` does that
check and the writes inside one write transaction, so either every row lands or none does. Only
current rows count as stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from robojudge.store._errors import StoreError
from robojudge.store._row import ResultRow, key_problem
from robojudge.store._schema import results_table
from robojudge.store._store import (
    ResultStore,
    RowKey,
    _row_from_record,
    _row_params,
    current_records,
    supersede_ids,
)

SameRow = Callable[[ResultRow, ResultRow], bool]


def same_value(new: ResultRow, old: ResultRow) -> bool:
    """The default :data:`SameRow`: same status and the same value (NaN equals NaN)."""
    if new.status != old.status:
        return False
    a, b = new.value, old.value
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


@dataclass(frozen=True)
class PutOutcome:
    """What :func:`put_rows` did (or, for a dry run, would do), row by row.

    Attributes:
        inserted: Rows whose key was not stored yet.
        unchanged: Rows whose key was stored with the same value; the stored row is kept as it is.
        replaced: Rows that took the place of a stored row with a different value (only with
            ``replace``); the stored row is kept, superseded.
        dry_run: True when nothing was written.
    """

    inserted: list[ResultRow] = field(default_factory=list)
    unchanged: list[ResultRow] = field(default_factory=list)
    replaced: list[ResultRow] = field(default_factory=list)
    dry_run: bool = False


class RowConflictError(StoreError):
    """Rows carry a different value for a key that is already stored, and replacing was not asked for.

    Attributes:
        conflicts: ``(new row, stored row)`` pairs, in the order the new rows were given.
    """

    def __init__(self, conflicts: Sequence[tuple[ResultRow, ResultRow]]) -> None:
        self.conflicts = list(conflicts)
        first_new, first_old = self.conflicts[0]
        more = f" (and {len(self.conflicts) - 1} more)" if len(self.conflicts) > 1 else ""
        super().__init__(
            f"{len(self.conflicts)} row(s) differ from stored results, e.g. item {first_new.item_id!r} "
            f"metric {first_new.metric!r}: stored {first_old.value!r}, new {first_new.value!r}{more}; "
            "nothing was written"
        )


def put_rows(
    store: ResultStore,
    rows: Iterable[ResultRow],
    *,
    replace: bool = False,
    same: SameRow = same_value,
    dry_run: bool = False,
) -> PutOutcome:
    """Insert rows; keep stored rows that ``same`` calls equal; refuse or replace the others.

    All reads and writes happen in one write transaction (``BEGIN IMMEDIATE`` on SQLite, stored rows
    locked ``FOR UPDATE`` on PostgreSQL), so a concurrent writer cannot slip a row in between the
    check and the write, and a failure leaves the store as it was. New rows are inserted without
    ``ON CONFLICT``: if another process stored one of their keys in the meantime the insert fails
    and the whole call is rolled back rather than half-applied.

    Args:
        store: The store to write to.
        rows: The rows; their keys must be distinct.
        replace: Replace stored rows whose value differs: the stored row is marked superseded and
            the new row becomes current (its ``created_at`` says when the value was replaced).
            Without it such rows raise.
        same: Decides whether a new row equals the stored row of its key.
        dry_run: Classify the rows but write nothing.

    Returns:
        A :class:`PutOutcome`.

    Raises:
        ValueError: Two rows share a key, or a part of a key is longer than a store takes
            (:data:`robojudge.store._row.MAX_KEY_BYTES`).
        RowConflictError: Some rows differ from stored ones and ``replace`` is false; nothing is written.
        StoreError: The database cannot be read or written.
    """
    batch = list(rows)
    keys: dict[RowKey, ResultRow] = {}
    for row in batch:
        if row.key in keys:
            raise ValueError(f"put_rows got two rows for the key {row.key}")
        problem = key_problem(row)
        if problem is not None:
            raise ValueError(f"put_rows cannot store a row: {problem}")
        keys[row.key] = row
    outcome = PutOutcome(dry_run=dry_run)
    now = datetime.now(UTC)
    with store._guard("store results in"), store._write() as conn:
        lock = store._dialect == "postgresql"
        records = current_records(conn, keys.keys(), tuple(results_table.c), lock=lock)
        stored = {key: (int(rec["id"]), _row_from_record(rec)) for key, rec in records.items()}
        conflicts: list[tuple[ResultRow, ResultRow]] = []
        stale_ids: list[int] = []
        for row in batch:
            found = stored.get(row.key)
            if found is None:
                outcome.inserted.append(row)
            elif same(row, found[1]):
                outcome.unchanged.append(row)
            elif replace:
                outcome.replaced.append(row)
                stale_ids.append(found[0])
            else:
                conflicts.append((row, found[1]))
        if conflicts:
            raise RowConflictError(conflicts)
        if dry_run:
            return outcome
        supersede_ids(conn, stale_ids, now)
        params = [_row_params(r, now) for r in (*outcome.inserted, *outcome.replaced)]
        if params:
            conn.execute(results_table.insert(), params)
    return outcome

