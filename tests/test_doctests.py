"""Every example in a robojudge docstring runs and gives what it shows.

``tests/metrics/test_functional.py`` runs the functional package's; this runs every other module's,
found by searching the sources for ``>>>``, so a new example is run without being listed here.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules_with_examples() -> list[str]:
    out = []
    for path in sorted((SRC / "robojudge").rglob("*.py")):
        if ">>> " not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if not name.startswith("robojudge.metrics.functional"):
            out.append(name)
    return out


MODULES = _modules_with_examples()


def test_the_search_finds_the_examples() -> None:
    assert len(MODULES) >= 8 and "robojudge.run._executor" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has '>>> ' but no example doctest runs"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"


def test_no_attribute_docstring_is_left_without_its_attribute() -> None:
    """A constant's docstring is the string right after it. A constant inserted between another and its
    docstring (``DISAGREEMENT`` between ``SEGMENT_SECONDS`` and its segment-length note) leaves two strings
    in a row: the second documents nothing, and the first constant reads as undocumented."""
    import ast

    def text(node: ast.stmt) -> bool:
        return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)

    orphans = []
    for path in sorted((SRC / "robojudge").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for owner in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]:
            orphans += [f"{path.relative_to(SRC)}:{b.lineno}"
                        for a, b in zip(owner.body, owner.body[1:], strict=False) if text(a) and text(b)]
    assert orphans == []
