"""The exception types the result store raises: :class:`StoreError`, and one case of it."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The result store cannot do what was asked.

    Raised for an unreadable or unreachable database, a bad URL, a schema written by a newer
    robojudge, or an export that cannot be written. Messages never contain a database password.
    """


class NotAStoreError(StoreError):
    """The database holds no robojudge tables (opened read-only: it is not a result store, or a new one)."""
