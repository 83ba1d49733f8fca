"""Resume planning shared by metric scoring and judging: what is still missing from the store."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from robojudge.store import ResultStore
from robojudge.suite import Item

W = TypeVar("W")
StoreKey = tuple[str, str, str]
"""(metric id, config hash, version): with the item id, the key of a stored result."""


def pending_per_item(
    items: Sequence[Item],
    work: Sequence[W],
    key: Callable[[W], StoreKey],
    store: ResultStore,
    *,
    retry_errors: bool = False,
) -> tuple[list[tuple[Item, tuple[W, ...]]], int]:
    """For each item, the units of ``work`` the store has no row for; and how many pairs it has.

    With ``retry_errors`` the stored failures of ``work`` are deleted first, so they count as missing.
    """
    done: dict[StoreKey, set[str]] = {}
    for w in work:
        k = key(w)
        if retry_errors:
            store.clear_errors(*k)
        done[k] = store.done_item_ids(*k)
    todo: list[tuple[Item, tuple[W, ...]]] = []
    skipped = 0
    for item in items:
        pending = tuple(w for w in work if item.item_id not in done[key(w)])
        skipped += len(work) - len(pending)
        if pending:
            todo.append((item, pending))
    return todo, skipped
