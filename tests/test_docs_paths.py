"""The files the README and docs/ point at exist, and the README's list of the core install is whole.

A file moved by a refactoring (``tests/train/_tiny_vlm.py`` to ``tests/_tiny_vlm.py``) left its old path in
docs/training.md; a dependency added to pyproject.toml (pillow, pandas) was missing from the README's
sentence on what ``pip install robojudge`` brings.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A repository path in backticks: `tests/_tiny_vlm.py`, `src/robojudge/models/_specs.py`, `scripts/x.py`.
_PATH = re.compile(r"`((?:tests|src|scripts|benchmarks|docs)/[^`\s]+)`")
# How the README names a distribution whose import name or brand differs from it.
_README_NAMES = {"opencv-python-headless": "OpenCV (headless)", "av": "PyAV"}


def _paths(text: str) -> list[str]:
    """The repository paths ``text`` names in backticks (a test id's ``::name`` and a ``:line`` dropped;
    globs and placeholders skipped)."""
    out = []
    for raw in _PATH.findall(text):
        path = raw.split("::")[0].split(":")[0].rstrip("/.,")
        if not any(c in path for c in "*<>{}$"):
            out.append(path)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_file_the_docs_name_exists(doc: Path) -> None:
    missing = [p for p in _paths(doc.read_text(encoding="utf-8")) if not (ROOT / p).exists()]
    assert missing == [], f"{doc.name} names files that do not exist: {missing}"


def test_the_path_check_can_fail() -> None:
    assert _paths("built by `tests/train/_tiny_vlm.py` (see `tests/_tiny_vlm.py::build`)") == [
        "tests/train/_tiny_vlm.py", "tests/_tiny_vlm.py"]
    assert not (ROOT / "tests/train/_tiny_vlm.py").exists()


def _requirement_name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0]


def test_the_readme_names_every_core_dependency() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"the core install is (.*?)\.(?:\s|$)", text)
    assert m, "README.md no longer says what the core install is"
    listed = {w.strip().lower() for w in re.split(r",| and ", m.group(1))}
    for dep in map(_requirement_name, deps):
        assert _README_NAMES.get(dep, dep).lower() in listed, f"README's core install leaves out {dep}"
