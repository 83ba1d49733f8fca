"""A small named registry with did-you-mean errors, shared by judge backends and rubrics.

It mirrors :mod:`robojudge.metrics._registry` (register once, look up by name, suggest close names on a
typo) without importing it, so the judge layer stays independent of the metric layer.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """A name that is not registered; the message lists close matches and how to see all names."""

    def __init__(self, kind: str, name: str, known: list[str], hint: str = "") -> None:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = f" Known: {', '.join(known)}." if known else ""
        self.kind = kind
        self.name = name
        super().__init__(f"unknown {kind} {name!r}.{suggestion}{listing}{hint}")

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Generic[T]):
    """Objects of one kind keyed by name.

    Args:
        kind: What is registered, for messages ("judge backend", "rubric").
        loader: Called once before the first lookup, to register the built-ins.
    """

    def __init__(self, kind: str, loader: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._loader = loader
        self._loaded = loader is None

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            assert self._loader is not None
            self._loader()

    def add(self, name: str, obj: T, *, replace: bool = False) -> T:
        """Register ``obj`` under ``name``; a second registration of a name fails unless ``replace``."""
        if not name:
            raise ValueError(f"a {self.kind} needs a non-empty name")
        if name in self._items and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj
        return obj

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(obj: T) -> T:
            return self.add(name, obj)

        return deco

    def get(self, name: str) -> T:
        """The object registered as ``name``; raises :class:`UnknownNameError` with suggestions."""
        self._load()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def names(self) -> list[str]:
        """Registered names, sorted."""
        self._load()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
