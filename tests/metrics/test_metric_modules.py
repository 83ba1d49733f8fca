"""The modules that register metrics are listed in one place; nothing registers through a hidden import."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import robojudge
from robojudge.registry import BUILTIN_MODULES

SRC = Path(robojudge.__file__).parent
REGISTERING = {"metric", "set_metric", "robophys_metric", "register_rig_metrics"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _registers(tree: ast.Module) -> bool:
    """Whether the module calls metric(), set_metric(), robophys_metric() or register_rig_metrics() (as a
    decorator or not).

    A module that defines one of them (the registry itself, _sets, _spec, _rig_metrics) only passes calls
    along.
    """
    defines = any(isinstance(n, ast.FunctionDef) and n.name in REGISTERING for n in ast.walk(tree))
    if defines:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in REGISTERING:
                return True
    return False


def test_every_module_that_registers_metrics_is_listed_and_nothing_else() -> None:
    found = {
        _module_name(p)
        for p in sorted((SRC / "metrics").rglob("*.py"))
        if _registers(ast.parse(p.read_text(encoding="utf-8"), str(p)))
    }
    listed = BUILTIN_MODULES["metric"]
    assert len(set(listed)) == len(listed), "a module is listed twice"
    assert sorted(found - set(listed)) == [], "these modules register metrics but are not listed"
    assert sorted(set(listed) - found) == [], "these listed modules register no metric"
    # The catalog registers the ids nothing computes: last, so a computed id it claimed fails as a
    # duplicate of the module that computes it.
    assert listed[-1] == "robojudge.metrics.robophys.catalog"


_PROBE = """
import importlib, json, sys
from robojudge.metrics import METRICS, SET_METRICS
from robojudge.registry import BUILTIN_MODULES

packages = ["robojudge.metrics", "robojudge.metrics.learned", "robojudge.metrics.robophys",
            "robojudge.metrics.tracking", "robojudge.metrics.functional"]
for p in packages:
    try:
        importlib.import_module(p)
    except ModuleNotFoundError:
        pass
listed = BUILTIN_MODULES["metric"]
out = {"by_packages": sorted(m for m in listed if m in sys.modules) + sorted(METRICS._items), "foreign": {}}
for mod in listed:
    before = set(METRICS._items)
    importlib.import_module(mod)
    for mid in sorted(set(METRICS._items) - before):
        spec = METRICS._items[mid]
        origin = (SET_METRICS._items[mid].fn if mid in SET_METRICS._items else spec.fn).__module__
        if origin != mod:
            out["foreign"][mid] = [mod, origin]
print(json.dumps(out))
"""


def test_importing_a_module_registers_only_its_own_metrics() -> None:
    # A fresh process: this one has loaded every metric already. (_items: the entries registered so far,
    # read without triggering the registry's own load.)
    res = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["by_packages"] == [], "importing the metric packages registered metrics"
    # id -> [module imported, module whose metric it is]: list the second before the first.
    assert out["foreign"] == {}, "importing a listed module registered metrics of another module"
