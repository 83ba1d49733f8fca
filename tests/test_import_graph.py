"""The import graph of ``src/robojudge`` follows the layers of docs/architecture.md.

The modules are read with :mod:`ast`, never imported, so the test is fast and sees every import:
those run when a module loads, those inside functions (a lazy import is still a dependency), and
those only for type checkers (``if TYPE_CHECKING:``). Three rules:

* nothing runs upward: a module imports only from its own unit (package or top-level module) or
  from a lower layer, and two units that share a layer never import each other;
* no cycles: none among the imports that run when a module loads (Python would meet a half-built
  module), and none even through lazy imports (a circle that only works because one side waits);
* a package's private modules (``robojudge.models._torch``) stay inside it; the pairs that still
  cross today are listed in ``KNOWN_PRIVATE`` and may only shrink.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "robojudge"
DOC = ROOT / "docs" / "architecture.md"

# Lowest first. A unit is a package folder ("video/") or a top-level module ("registry.py"); the
# package's own __init__.py is the unit "__init__.py". The same table is in docs/architecture.md
# (test_doc_table_matches checks it).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("__init__.py", "_activity.py", "_aio.py", "_chars.py", "_csv.py", "_files.py", "_json.py",
              "_lifeline.py", "_machine.py", "_raised.py", "_sqlite.py", "_tested.py", "registry.py",
              "settings.py", "taxonomy.py")),
    ("video, robots", ("video/", "robots/")),
    ("suite", ("suite/",)),
    ("models, kiva", ("models/", "kiva/")),
    ("metrics, judges", ("metrics/", "judges/")),
    ("metric info", ("metric_info.py",)),
    ("store", ("store/",)),
    ("run", ("run/",)),
    ("meta", ("meta/",)),
    ("aggregate", ("aggregate/",)),
    ("report", ("report/",)),
    ("annotation", ("annotate/",)),
    ("apps", ("demo.py", "ablation.py", "train/", "audit/", "select/")),
    ("cli", ("cli/",)),
    ("entry point", ("__main__.py",)),
)

# Private modules imported from outside their top-level package today, as (importing unit, package
# whose private module it imports). Debt, not design: the list may only shrink. robojudge.models is
# not here and never may be: metrics and everything else use only its public API.
KNOWN_PRIVATE: frozenset[tuple[str, str]] = frozenset(
    {
        ("cli/", "metrics/"),
        ("cli/", "report/"),
        ("cli/", "run/"),
        ("demo.py", "suite/"),
        ("metrics/", "suite/"),
        ("report/", "meta/"),
        ("report/", "suite/"),
        ("run/", "judges/"),
        ("run/", "metrics/"),
        ("run/", "store/"),
        ("run/", "video/"),
    }
)
NEVER_PRIVATE = ("models/",)

# The optional extras' frameworks: imported inside the function that needs them, never at load time.
HEAVY = frozenset(
    {"torch", "torchvision", "transformers", "huggingface_hub", "lpips", "pyiqa", "timm", "ray",
     "mujoco", "gymnasium", "gymnasium_robotics", "fastapi", "uvicorn", "psycopg", "depth_anything_3"}
)


@dataclass(frozen=True)
class Edge:
    """One import of a robojudge module by another."""

    source: str
    target: str
    line: int
    kind: str  # "load" (runs when the module loads), "lazy" (inside a function), "typing"

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


@cache
def unit_of(module: str) -> str:
    """The layer unit a module belongs to: its top-level package folder or top-level module file."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__.py"
    path = _modules().get(".".join(parts[:2]))
    is_package = path is not None and path.name == "__init__.py"
    return f"{parts[1]}/" if is_package or len(parts) > 2 else f"{parts[1]}.py"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with its kind, walking into functions and TYPE_CHECKING blocks."""

    def walk(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, kind
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from walk(child, "typing" if kind == "typing" else "lazy")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), "typing")
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), kind)
            else:
                yield from walk(child, kind)

    yield from walk(tree, "load")


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The robojudge modules an import statement names (``from pkg import sub`` names ``pkg.sub``)."""
    modules = _modules()
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    if node.level:
        is_package = modules[module].name == "__init__.py"
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        name = ".".join([*base, *([node.module] if node.module else [])])
    else:
        name = node.module or ""
    if name.split(".")[0] != PACKAGE:
        return []
    found = [f"{name}.{a.name}" if f"{name}.{a.name}" in modules else name for a in node.names]
    return list(dict.fromkeys(found))


@cache
def _statements() -> tuple[tuple[str, ast.Import | ast.ImportFrom, str], ...]:
    """(module, import statement, kind) of every import in the package, each file parsed once."""
    found: list[tuple[str, ast.Import | ast.ImportFrom, str]] = []
    for module, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend((module, node, kind) for node, kind in _imports(tree))
    return tuple(found)


@cache
def _all_edges() -> tuple[Edge, ...]:
    found: list[Edge] = []
    for module, node, kind in _statements():
        found.extend(Edge(module, t, node.lineno, kind) for t in _targets(module, node) if t != module)
    return tuple(found)


def edges() -> tuple[Edge, ...]:
    """Imports of robojudge modules that exist (see test_imports_name_existing_modules for others)."""
    return tuple(e for e in _all_edges() if e.target in _modules())


def _layer_index() -> dict[str, int]:
    return {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles of the graph, each found then broken at its closing edge, until none is left."""
    graph = {k: set(v) for k, v in graph.items()}
    found: list[list[str]] = []
    while (cycle := _find_cycle(graph)) is not None and len(found) < 50:
        found.append(cycle)
        graph[cycle[-2]].discard(cycle[-1])
    return found


def _parents(module: str) -> Iterable[str]:
    parts = module.split(".")
    return (".".join(parts[:i]) for i in range(1, len(parts)))


def _load_graph(kinds: set[str]) -> dict[str, set[str]]:
    """Who imports whom, with the packages Python imports first to reach a submodule."""
    graph: dict[str, set[str]] = {m: set() for m in _modules()}
    for e in edges():
        if e.kind not in kinds:
            continue
        graph[e.source].add(e.target)
        # importing a.b._c runs a/b/__init__.py first, unless the importer lives inside it already
        own = {e.source, *_parents(e.source)}
        graph[e.source].update(p for p in _parents(e.target) if p not in own)
    return graph


def _describe(cycle: list[str]) -> str:
    by_pair = {(e.source, e.target): e for e in edges()}
    steps = []
    for a, b in zip(cycle, cycle[1:], strict=False):
        e = by_pair.get((a, b))
        where = f" (line {e.line}, {e.kind})" if e else " (via its package __init__)"
        steps.append(f"{a} -> {b}{where}")
    return "\n  ".join(steps)


def test_every_module_has_a_layer() -> None:
    index = _layer_index()
    missing = sorted({unit_of(m) for m in _modules()} - set(index))
    assert not missing, f"units without a layer in LAYERS (and docs/architecture.md): {missing}"


def test_no_upward_imports() -> None:
    index = _layer_index()
    bad = []
    for e in edges():
        src, dst = unit_of(e.source), unit_of(e.target)
        if src == dst or src not in index or dst not in index:
            continue
        ls, ld = index[src], index[dst]
        if ld > ls:
            bad.append(
                f"{e} (layer {LAYERS[ls][0]!r} imports layer {LAYERS[ld][0]!r}; {e.kind}, line {e.line})"
            )
        elif ld == ls:
            bad.append(f"{e} ({src} and {dst} share layer {LAYERS[ls][0]!r}; {e.kind}, line {e.line})")
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(set(bad)))


def test_no_cycles_when_modules_load() -> None:
    cycles = _cycles(_load_graph({"load"}))
    assert not cycles, "import cycles at load time:\n  " + "\n\n  ".join(map(_describe, cycles))


def test_no_cycles_through_lazy_imports() -> None:
    cycles = _cycles(_load_graph({"load", "lazy"}))
    assert not cycles, "import cycles through lazy imports:\n  " + "\n\n  ".join(map(_describe, cycles))


def _private_crossings() -> dict[tuple[str, str], list[Edge]]:
    found: dict[tuple[str, str], list[Edge]] = {}
    for e in edges():
        parts = e.target.split(".")
        owner = unit_of(e.target)
        if not owner.endswith("/") or unit_of(e.source) == owner:
            continue
        if any(p.startswith("_") and not p.startswith("__") for p in parts[2:]):
            found.setdefault((unit_of(e.source), owner), []).append(e)
    return found


def test_private_modules_stay_inside_their_package() -> None:
    crossings = _private_crossings()
    bad = [
        f"{e} (line {e.line}: private to {owner})"
        for (src, owner), es in crossings.items()
        if owner in NEVER_PRIVATE or (src, owner) not in KNOWN_PRIVATE
        for e in es
    ]
    assert not bad, "imports of another package's private modules:\n" + "\n".join(sorted(bad))


def test_known_private_list_is_current() -> None:
    stale = sorted(KNOWN_PRIVATE - set(_private_crossings()))
    assert not stale, f"these pairs no longer import private modules; drop them from KNOWN_PRIVATE: {stale}"


def _third_party(kinds: set[str]) -> Iterator[tuple[str, str, int, str]]:
    """(module, imported top-level name, line, kind) of every import outside robojudge."""
    for module, node, kind in _statements():
        if kind not in kinds or (isinstance(node, ast.ImportFrom) and node.level):
            continue
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            top = name.split(".")[0]
            if top != PACKAGE:
                yield module, top, node.lineno, kind


def test_base_layer_uses_only_the_standard_library() -> None:
    base = set(LAYERS[0][1])
    bad = [
        f"{module} imports {name} (line {line}, {kind})"
        for module, name, line, kind in _third_party({"load", "lazy", "typing"})
        if unit_of(module) in base and name not in sys.stdlib_module_names and name != "__future__"
    ]
    assert not bad, "the base layer imports only the standard library:\n" + "\n".join(bad)


def test_heavy_frameworks_load_lazily() -> None:
    # A private module may need torch when it loads (network classes); it is then reached only from
    # inside functions. Every public module and package must import light.
    graph = _load_graph({"load"})
    heavy = _importers_of(graph, {module for module, name, _, _ in _third_party({"load"}) if name in HEAVY})
    public = sorted(m for m in heavy if not any(p.startswith("_") for p in m.split(".")[1:]))
    lines = [f"{m}: " + " -> ".join(_heavy_path(m, graph, heavy)) for m in public]
    if len(lines) > 12:
        lines = [*lines[:12], f"... and {len(lines) - 12} more"]
    assert not public, "importing these loads a heavy framework (import it lazily):\n" + "\n".join(lines)


def _importers_of(graph: dict[str, set[str]], seeds: set[str]) -> set[str]:
    """``seeds`` and every node that reaches one of them through the graph."""
    found = set(seeds)
    while more := {m for m, targets in graph.items() if m not in found and targets & found}:
        found |= more
    return found


def _heavy_path(start: str, graph: dict[str, set[str]], heavy: set[str]) -> list[str]:
    path = [start]
    while (nxt := sorted(graph[path[-1]] & heavy - set(path))) and len(path) < 20:
        path.append(nxt[0])
    return path


def test_imports_name_existing_modules() -> None:
    missing = [f"{e} (line {e.line})" for e in _all_edges() if e.target not in _modules()]
    assert not missing, "imports of modules that do not exist:\n" + "\n".join(missing)


def _doc_layers() -> list[tuple[str, tuple[str, ...]]]:
    """The layer table of docs/architecture.md: rows ``| n | name | `unit`, `unit` | ... |``."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|([^|]*)\|", line)
        if m:
            rows.append((int(m.group(1)), m.group(2), tuple(re.findall(r"`([^`]+)`", m.group(3)))))
    assert rows, f"{DOC}: no layer table found"
    assert [n for n, _, _ in rows] == list(range(1, len(rows) + 1)), f"{DOC}: layers not numbered 1..n"
    return [(name, units) for _, name, units in rows]


def test_doc_table_matches() -> None:
    assert _doc_layers() == [(name, units) for name, units in LAYERS]


# -- the checker itself, on small made-up trees --------------------------------------------------


def test_find_cycle_reports_the_path() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}) == [["a", "b", "a"], ["c", "d", "c"]]


def test_importers_of_follows_chains() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}, "e": set()}
    assert _importers_of(graph, {"c"}) == {"a", "b", "c", "d"}
    assert _importers_of(graph, {"e"}) == {"e"}


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("import robojudge.store\n", "load"),
        ("def f():\n    from robojudge import store\n", "lazy"),
        ("import typing\nif typing.TYPE_CHECKING:\n    from robojudge.store import x\n", "typing"),
        ("try:\n    from robojudge.store import x\nexcept ImportError:\n    pass\n", "load"),
        ("class A:\n    def m(self):\n        import robojudge.store\n", "lazy"),
    ],
)
def test_import_kinds(source: str, kind: str) -> None:
    kinds = [k for node, k in _imports(ast.parse(source)) if _targets("robojudge.metrics.pixel", node)]
    assert kinds == [kind]


def test_relative_and_submodule_targets() -> None:
    node = ast.parse("from .. import store\n").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _targets("robojudge.metrics.pixel", node) == ["robojudge.store"]
    node = ast.parse("from ._registry import metric\n").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _targets("robojudge.metrics", node) == ["robojudge.metrics._registry"]
    node = ast.parse("from robojudge.metrics import learned, get_metric\n").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _targets("robojudge.cli", node) == ["robojudge.metrics.learned", "robojudge.metrics"]


def test_units() -> None:
    assert unit_of("robojudge") == "__init__.py"
    assert unit_of("robojudge.registry") == "registry.py"
    assert unit_of("robojudge.metrics") == "metrics/"
    assert unit_of("robojudge.metrics.learned.tv") == "metrics/"
