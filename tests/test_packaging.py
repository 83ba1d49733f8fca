"""What the wheel and the sdist carry: the licence text.

Found by the packaging audit of 2026-12-06: no licence text in the repository, the sdist or the wheel
(Apache-2.0 asks that recipients get a copy).
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the text as the Apache Software Foundation
#: publishes it (with its appendix on how to apply it).
APACHE_2 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def test_the_licence_is_the_unmodified_apache_2_text_and_named_in_pyproject() -> None:
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "Apache-2.0"
    assert meta["project"]["license-files"] == ["LICENSE"]
    # license-files, and license as an SPDX expression, need setuptools 77 (PEP 639)
    assert "setuptools>=77" in meta["build-system"]["requires"]
