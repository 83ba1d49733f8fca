"""The shape of robojudge.models: no import circle inside it, every weight spec declared in one
module, loaders kept out of the shared helpers, one network cache, and a light package import.

Imports are read from the source with ``ast``: lazy ones inside functions and ``TYPE_CHECKING`` ones
count as edges too.
"""

import ast
import subprocess
import sys
from pathlib import Path

import robojudge.models
from robojudge.models import WEIGHTS, WeightSpec, list_weights
from robojudge.registry import BUILTIN_MODULES

PACKAGE = Path(robojudge.models.__file__).parent
PREFIX = "robojudge.models"


def _modules() -> dict[str, ast.Module]:
    return {
        PREFIX if f.stem == "__init__" else f"{PREFIX}.{f.stem}": ast.parse(f.read_text(), str(f))
        for f in sorted(PACKAGE.glob("*.py"))
    }


def _imports(tree: ast.Module, known: set[str]) -> set[str]:
    """Modules of the package that ``tree`` imports anywhere (``from pkg import sub`` counts as ``sub``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found & known


def _graph() -> dict[str, set[str]]:
    trees = _modules()
    return {name: _imports(tree, set(trees)) - {name} for name, tree in trees.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle among the submodules (the package ``__init__`` re-exports them: left out)."""
    sub = {m: deps - {PREFIX} for m, deps in graph.items() if m != PREFIX}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(sub[m]):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(sub):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_module_imports_one_that_imports_it_back():
    graph = _graph()
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])
    # Submodules import one another directly, never through the package (which imports them all).
    assert [m for m, deps in graph.items() if m != PREFIX and PREFIX in deps] == []


def test_the_circle_check_finds_a_circle():
    graph = {PREFIX: set(), "a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(graph) == ["a", "b", "c", "a"]


def test_shared_helpers_import_no_loader():
    graph = _graph()
    loaders = {f"{PREFIX}.{m}" for m in ("_torch", "_hf", "_clipiqa", "_hpsv3", "_viclip", "_viclip_net",
                                         "_da3")}
    for helper in ("_load", "_cache", "_weights", "_specs", "_status", "_viclip_config"):
        assert graph[f"{PREFIX}.{helper}"] & loaders == set(), helper


def test_every_spec_is_declared_in_one_module_that_the_registry_loads():
    calls = {
        name
        for name, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register_weights"
    }
    assert calls == {f"{PREFIX}._specs"}
    assert BUILTIN_MODULES["weights"] == (f"{PREFIX}._specs",)
    assert {s.name for s in list_weights()} == set(WEIGHTS.names())
    # Each built-in spec is also a public constant of the package, the same object the registry holds.
    exported = {
        spec.name: spec for n in robojudge.models.__all__
        if isinstance(spec := getattr(robojudge.models, n), WeightSpec)
    }
    assert set(exported) == set(WEIGHTS.names())
    assert all(WEIGHTS.get(name) is spec for name, spec in exported.items())


def test_no_functools_cache_and_no_module_level_network_dicts():
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                decorators = [ast.unparse(d) for d in node.decorator_list]
                # the one exception: openai-clip's tokenizer object, which holds no tensors
                allowed = name == f"{PREFIX}._viclip" and node.name == "_bpe"
                assert allowed or not any("cache" in d for d in decorators), f"{name}.{node.name}"
        for node in tree.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict):
                raise AssertionError(f"{name}: a module-level dict {ast.unparse(node.target)}")


def test_importing_the_package_loads_no_framework():
    code = ("import sys, robojudge.models as m; m.list_weights(); "
            "print(sorted(k for k in ('torch', 'transformers', 'pyiqa', 'lpips', 'torchvision') "
            "if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
