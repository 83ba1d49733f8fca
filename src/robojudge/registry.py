"""One registry mechanism for everything robojudge looks up by name.

Metrics, set metrics, trackers, judge backends, rubrics, specialized judges and network weights are
each a :class:`Registry`: entries keyed by name, registered once, looked up with a did-you-mean error on
a typo, listed sorted. An entry is either the object itself or a lazy ``"module:attr"`` string, imported
the first time the entry is asked for, so a heavy framework stays unloaded until something uses it.

Which modules register built-in entries is written down in one place, :data:`BUILTIN_MODULES`: a
registry imports its kind's modules before its first lookup. Nothing registers through a hidden
import (a package ``__init__`` or a bottom-of-file import pulling in a sibling). Entries that are not
Python objects (rubric TOML files shipped as package data) come from a ``loader`` the registry calls
once at the same moment. Third-party packages add entries through an entry-point group
(``robojudge.metrics``, ``robojudge.trackers``, ``robojudge.judge_backends``, ...), whose values are
modules to import (``package.module``) or objects (``package.module:attr``), or through the modules
named in ``ROBOJUDGE_PLUGINS``.

A plugin that cannot be loaded (its module fails to import or registers a name already taken, or its
lazy entry takes a name already registered) raises :class:`PluginError`, which names the module or
entry and where it was declared. Inside :func:`skipping_broken_plugins` (the commands that only read
stored results) such a plugin is left out with a :class:`PluginSkippedWarning` instead.

This module is the bottom layer: it imports only the standard library.
"""

from __future__ import annotations

import difflib
import importlib
import itertools
import os
import threading
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

__all__ = [
    "BUILTIN_MODULES",
    "PluginError",
    "PluginSkippedWarning",
    "Registry",
    "UnknownNameError",
    "generation",
    "load_object",
    "skipping_broken_plugins",
]

T = TypeVar("T")

# The modules whose import registers built-in entries, per registry kind, imported in this order: a
# module comes after the listed modules it imports helpers from (hf_aesthetic after hf_consistency),
# so that each import registers only the module's own entries.
# Set metrics have no key: set_metric() registers into both the "metric" and the "set metric"
# registries, so the set registry loads the metric one (Registry(loaded_by=...)). The RoboPhys-3D
# catalog registers the taxonomy ids nothing here computes (judge and external ones); it is last so
# that an id it wrongly claimed fails as a duplicate of the module that computes it, named there.
# Neither have trackers (the built-in lk_flow is a lazy entry added where TRACKERS is made) nor
# rubrics (TOML files in robojudge/data/rubrics, read by RUBRICS' loader).
BUILTIN_MODULES: dict[str, tuple[str, ...]] = {
    "metric": (
        "robojudge.metrics.baseline",
        "robojudge.metrics.flow",
        "robojudge.metrics.pixel",
        "robojudge.metrics.robophys.reference",
        "robojudge.metrics.robophys.motion",
        "robojudge.metrics.robophys.state",
        "robojudge.metrics.robophys.geometry",
        "robojudge.metrics.robophys.text",
        "robojudge.metrics.robophys.tracking",
        "robojudge.metrics.learned.hf_consistency",
        "robojudge.metrics.learned.hf_aesthetic",
        "robojudge.metrics.learned.hf_depth",
        "robojudge.metrics.learned.hf_hpsv3",
        "robojudge.metrics.learned.hf_vjepa",
        "robojudge.metrics.learned.hf_text",
        "robojudge.metrics.learned.tv_clipiqa",
        "robojudge.metrics.learned.tv_viclip",
        "robojudge.metrics.learned.tv",
        "robojudge.metrics.learned.tv_sets",
        "robojudge.metrics.learned.kiva",
        "robojudge.metrics.robophys.rbg_reprojection",
        "robojudge.metrics.multiview.rigis_metrics",
        "robojudge.metrics.multiview._da3",
        "robojudge.metrics.multiview._vggt",
        "robojudge.metrics.robophys.catalog",
    ),
    "weights": ("robojudge.models._specs",),
    "judge backend": (
        "robojudge.judges._openai",
        "robojudge.judges._hf",
        "robojudge.judges._mock",
    ),
    "specialized judge": ("robojudge.judges._specialized",),
}


_changes = itertools.count()
_generation = next(_changes)


def generation() -> int:
    """A number that changes whenever an entry of any registry is added, replaced or removed.

    Caches of what entries say (a metric's direction, its range) key on it, so they never answer for
    an entry that is gone or replaced, nor keep "unknown" for a name registered since.
    """
    return _generation


def _changed() -> None:
    global _generation
    _generation = next(_changes)


class PluginError(ImportError):
    """A plugin (a module named in ``ROBOJUDGE_PLUGINS`` or by an entry point, or an entry point's lazy
    object) that cannot be loaded; the message names it, where it was declared and what to do."""


class PluginSkippedWarning(UserWarning):
    """A broken plugin left out inside :func:`skipping_broken_plugins`; the text is a
    :class:`PluginError`'s."""


_skip_broken = False


@contextmanager
def skipping_broken_plugins() -> Iterator[None]:
    """Within the block, a plugin that cannot be loaded is left out with a :class:`PluginSkippedWarning`
    instead of raising :class:`PluginError`; the registries load the rest.

    For commands that read what is stored (a report, an export, a listing), which must not be held up
    by a plugin they do not need. A registry loads once: one loaded inside the block stays without the
    broken plugin for the rest of the process.
    """
    global _skip_broken
    before, _skip_broken = _skip_broken, True
    try:
        yield
    finally:
        _skip_broken = before


def _refuse_plugin(message: str) -> None:
    if _skip_broken:
        warnings.warn(PluginSkippedWarning(f"{message}; left out"), stacklevel=2)
    else:
        raise PluginError(message)


class _Declared:
    """Where a plugin module or lazy entry was declared, for messages."""

    def __init__(self, where: str, fix: str) -> None:
        self.where = where
        self.fix = fix


def _entry_point_origin(ep: Any, group: str) -> _Declared:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    if name:
        version = getattr(dist, "version", "")
        where = f"entry point {ep.name!r} of the installed distribution {name} {version}".rstrip()
        return _Declared(f"{where} (group {group})", f"fix or uninstall {name}")
    return _Declared(f"entry point {ep.name!r} (group {group})",
                     "fix or uninstall the package that declares it")


def _where_it_failed(exc: BaseException) -> str:
    """``FILE:LINE`` of the innermost frame of ``exc``'s traceback outside robojudge and the import
    machinery: the plugin's own line (its failing import, its clashing decorator), or ""."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    skipped = tuple(os.path.dirname(os.path.abspath(f)) + os.sep
                    for f in (importlib.__file__ or "", __file__))
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not frame.filename.startswith("<") and not os.path.abspath(frame.filename).startswith(skipped):
            return f"{frame.filename}:{frame.lineno}"
    return ""


class UnknownNameError(KeyError):
    """A name that is not registered; the message suggests close names and how to see them all."""

    def __init__(self, kind: str, name: str, known: list[str], hint: str = "") -> None:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = f" Known: {', '.join(known)}." if known and len(known) <= 20 else ""
        self.kind = kind
        self.name = name
        super().__init__(f"unknown {kind} {name!r}.{suggestion}{listing}{hint}")

    def __str__(self) -> str:
        return str(self.args[0])


def load_object(ref: str, what: str = "entry") -> object:
    """Import ``"package.module:attr"`` (``attr`` may be dotted) and return the object.

    Raises:
        ImportError: When the module or attribute cannot be loaded; the message names ``what``.
    """
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ImportError(f"{what}: {ref!r} is not of the form 'package.module:attr'")
    try:
        obj: object = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"{what}: cannot load {ref!r}: {exc}") from exc
    return obj


class Registry(Generic[T]):
    """Entries of one kind keyed by name.

    Args:
        kind: What is registered, for messages ("metric", "judge backend"); also the key of
            :data:`BUILTIN_MODULES` naming the modules that register the built-ins.
        entry_point_group: Entry-point group through which installed packages add entries: a value
            ``package.module`` is imported (it registers on import), ``package.module:attr`` is added
            lazily under the entry point's name.
        extra_modules: Called at load time for more module names to import (the plugins named in
            ``ROBOJUDGE_PLUGINS``); evaluated then, so it sees the environment of the process that loads.
        extra_modules_from: Where ``extra_modules`` come from, for messages.
        hint: Appended to unknown-name errors ("Run `robojudge metrics list` to see all.").
        check: Called with ``(name, obj)`` when an entry is added or a lazy one resolved; returns the
            object to store or raises to refuse it.
        loader: Called once at load time, after the modules, to add entries that are not Python
            objects (the rubric TOML files shipped as package data).
        loaded_by: Another registry whose modules also register this one's entries (``set_metric``
            fills the metric and the set-metric registries); it is loaded first.
    """

    def __init__(
        self,
        kind: str,
        *,
        entry_point_group: str | None = None,
        extra_modules: Callable[[], Iterable[str]] | None = None,
        extra_modules_from: str = "ROBOJUDGE_PLUGINS",
        hint: str = "",
        check: Callable[[str, T], T] | None = None,
        loader: Callable[[], None] | None = None,
        loaded_by: Registry[Any] | None = None,
    ) -> None:
        self.kind = kind
        self._entry_point_group = entry_point_group
        self._extra_modules = extra_modules
        self._extra_modules_from = extra_modules_from
        self._hint = hint
        self._check = check
        self._loader = loader
        self._loaded_by = loaded_by
        self._items: dict[str, T | str] = {}
        self._loaded = False
        # True while this registry's modules are being imported, read only by the thread holding the
        # lock: a module that looks an entry up while it registers gets what is there so far, while
        # another thread waits on the lock until every module is in.
        self._loading = False
        self._lock = threading.RLock()

    # -- loading -----------------------------------------------------------------------------------

    def load(self) -> None:
        """Import the modules that register this kind's entries (once; later calls return at once)."""
        if self._loaded:
            return
        if self._loaded_by is not None:
            # Before taking this lock: the other registry's modules add entries here, and taking the
            # two locks in both orders could deadlock two threads that load at once.
            self._loaded_by.load()
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                self._import_modules()
            finally:
                self._loading = False
            self._loaded = True

    def _import_modules(self) -> None:
        for mod in BUILTIN_MODULES.get(self.kind, ()):
            try:
                importlib.import_module(mod)
            except ImportError as exc:
                raise ImportError(f"cannot import {self.kind} module {mod!r}: {exc}") from exc
        plugins: list[tuple[str, _Declared]] = []
        lazy: dict[str, tuple[str, _Declared]] = {}
        if self._entry_point_group:
            for ep in entry_points(group=self._entry_point_group):
                origin = _entry_point_origin(ep, self._entry_point_group)
                if ":" not in ep.value:
                    plugins.append((ep.value, origin))
                elif ep.name in lazy:
                    # Two installed packages claim one name: neither silently wins.
                    first_ref, first = lazy.pop(ep.name)
                    _refuse_plugin(f"{self.kind} {ep.name!r} is declared twice: {first_ref} by "
                                   f"{first.where}, and {ep.value} by {origin.where}; keep one (uninstall "
                                   "or fix the other)")
                else:
                    lazy[ep.name] = (ep.value, origin)
        if self._extra_modules is not None:
            named_in = self._extra_modules_from
            plugins += [(m, _Declared(f"named in {named_in}", f"fix it or remove it from {named_in}"))
                        for m in self._extra_modules() if m]
        for mod, origin in plugins:
            self._import_plugin(mod, origin)
        if self._loader is not None:
            self._loader()
        for name, (ref, origin) in lazy.items():
            if name in self._items:
                # As the decorator refuses a name that is taken, so is an entry point's lazy object.
                _refuse_plugin(f"{self.kind} {name!r} of {origin.where} ({ref}) is already registered"
                               f"{self._origin(name)}; {origin.fix}")
            else:
                self._items[name] = ref
        _changed()

    def _import_plugin(self, module: str, origin: _Declared) -> None:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 (any failure of a plugin's code is the plugin's, said as one)
            at = _where_it_failed(exc)
            _refuse_plugin(f"cannot load {self.kind} plugin module {module!r} ({origin.where}): "
                           f"{type(exc).__name__}: {exc}{f' (at {at})' if at else ''}; {origin.fix}")

    # -- registering -------------------------------------------------------------------------------

    def add(self, name: str, obj: T | str, *, replace: bool = False) -> T | str:
        """Register ``obj`` (or a lazy ``"module:attr"`` string) under ``name``.

        Raises:
            ValueError: For an empty name, or a name already registered (unless ``replace``).
        """
        if not name:
            raise ValueError(f"a {self.kind} needs a non-empty name")
        with self._lock:
            if name in self._items and not replace:
                raise ValueError(f"{self.kind} {name!r} is already registered{self._origin(name)}")
            if not isinstance(obj, str) and self._check is not None:
                obj = self._check(name, obj)
            self._items[name] = obj
            _changed()
        return obj

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(obj: T) -> T:
            self.add(name, obj)
            return obj

        return deco

    def remove(self, name: str) -> None:
        """Drop an entry (plugins under test use it to clean up); unknown names are ignored."""
        with self._lock:
            if self._items.pop(name, None) is not None:
                _changed()

    @contextmanager
    def scratch(self) -> Iterator[None]:
        """Load the built-ins, then undo on exit whatever is added, replaced or removed inside.

        Tests register throwaway entries in it without them leaking into later tests.
        """
        self.load()
        with self._lock:
            saved = dict(self._items)
        try:
            yield
        finally:
            with self._lock:
                self._items = saved
                _changed()

    def _origin(self, name: str) -> str:
        obj = self._items.get(name)
        # An entry that wraps a function (a metric's spec) was registered by the function's module, not
        # by the module of the wrapper's class.
        module = (obj.partition(":")[0] if isinstance(obj, str)
                  else getattr(getattr(obj, "fn", obj), "__module__", None))
        return f" (by {module})" if module else ""

    # -- looking up --------------------------------------------------------------------------------

    def get(self, name: str) -> T:
        """The entry registered as ``name``, importing it if it is lazy.

        Raises:
            UnknownNameError: For a name not registered; the message suggests close names.
            ImportError: When a lazy entry cannot be imported.
        """
        self.load()
        try:
            obj = self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names(), self._hint) from None
        if isinstance(obj, str):
            loaded = load_object(obj, f"{self.kind} {name!r}")
            resolved: T = loaded  # type: ignore[assignment]
            if self._check is not None:
                resolved = self._check(name, resolved)
            with self._lock:
                self._items[name] = resolved
            return resolved
        return obj

    def names(self) -> list[str]:
        """Registered names, sorted (lazy entries included, without importing them)."""
        self.load()
        return sorted(self._items)

    def values(self) -> list[T]:
        """Every entry sorted by name, lazy ones imported."""
        return [self.get(name) for name in self.names()]

    def is_registered(self, name: str) -> bool:
        """Whether ``name`` is registered now, without loading the built-ins first."""
        return name in self._items

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._items)} entries)"
