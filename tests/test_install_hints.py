"""robojudge is not on PyPI, and a package of that name there is not ours: no message or page tells a
user to ``pip install 'robojudge[...]'`` (which would install that package in a fresh environment)."""

from __future__ import annotations

import re
from pathlib import Path

from robojudge.metrics._select import install_hint

ROOT = Path(__file__).resolve().parents[1]
#: ``pip install robojudge``, ``pip install 'robojudge[torch]'``, ``pip install -U "robojudge"``, also
#: split over two lines of a page.
FROM_PYPI = re.compile(r"""pip\s+install\s+(?:-\S+\s+)*['"]?robojudge\b(?![-_/.\w])""")


def _texts() -> list[Path]:
    return [*sorted((ROOT / "src").rglob("*.py")), ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            ROOT / "Makefile"]


def test_no_message_or_page_installs_robojudge_from_pypi() -> None:
    found = []
    for path in _texts():
        text = path.read_text(encoding="utf-8")
        for m in FROM_PYPI.finditer(text):
            found.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}")
    assert not found, "\n".join(found)


def test_the_extras_hint_installs_from_a_checkout() -> None:
    assert install_hint(["torch", "pyiqa"]) == "pip install '.[torch,iqa]' in a robojudge checkout"
    assert FROM_PYPI.search("pip install 'robojudge[torch]'") and FROM_PYPI.search("pip\ninstall robojudge")
    assert not FROM_PYPI.search("pip install '.[torch]'")
    assert not FROM_PYPI.search("pip install robojudge-0.1.0-py3-none-any.whl")
