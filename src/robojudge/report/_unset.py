"""The group of items without a field (no generator, no task...), kept apart from every real value.

Items without a generator are grouped and shown as ``(unset)``. A manifest may spell a real value so
too (a generator named ``(unset)``): the items without one then take the first of ``(unset 2)``,
``(unset 3)``... that no real value is, so the two are never one group, and the report says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from robojudge.suite import UNSET, Item, unset_name

__all__ = ["UNSET", "generator_groups", "generator_of", "unset_name", "unset_note"]


def generator_of(item: Item) -> str | None:
    """The item's generator; None without one (an empty name counts as none)."""
    return item.generator or None


def generator_groups(items: Sequence[Item]) -> list[str]:
    """Each item's generator, and :func:`unset_name` for the items without one."""
    missing = unset_name(map(generator_of, items))
    return [g if (g := generator_of(it)) is not None else missing for it in items]


def unset_note(values: Iterable[str | None], what: str = "generator") -> str:
    """A sentence (with a leading space) saying under which name the items without ``what`` are shown,
    when some real value is spelt :data:`UNSET`; empty otherwise."""
    values = list(values)
    name = unset_name(values)
    if name == UNSET or not any(v is None for v in values):
        return ""
    return (f" Items with no {what} are shown as {name!r}, apart from the {what} named {UNSET!r} in the "
            "manifest.")
