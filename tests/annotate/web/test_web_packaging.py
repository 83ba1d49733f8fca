"""The templates and static files ship in the wheel: pyproject's package-data must name them.

The editable install the tests use reads them from the checkout, so without this check a wheel
without them (an app that cannot render a page) would pass every other test.
"""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "robojudge"


def test_web_assets_are_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["robojudge"]
    assets = [p for p in (PACKAGE / "annotate" / "web").rglob("*")
              if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert {p.parent.name for p in assets} == {"templates", "static"}
    missing = [str(p.relative_to(PACKAGE)) for p in assets
               if not any(fnmatch.fnmatch(str(p.relative_to(PACKAGE)), pat) for pat in patterns)]
    assert missing == [], f"not in [tool.setuptools.package-data] of pyproject.toml: {missing}"
