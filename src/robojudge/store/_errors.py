"""The one exception type the result store raises."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The result store cannot do what was asked.

    Raised for an unreadable or unreachable database, a bad URL, a schema written by a newer
    robojudge, or an export that cannot be written. Messages never contain a database password.
    """
