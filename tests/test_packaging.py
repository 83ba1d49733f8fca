"""What the wheel and the sdist carry: the licence text, and in the sdist the whole test suite with what it
reads.

Found by the packaging audit of 2026-12-06: no licence text in the repository, the sdist or the wheel
(Apache-2.0 asks that recipients get a copy), and an sdist whose tests failed (setuptools' default took
the top-level test files but not conftest.py, the helpers, the sub-folders, docs/ or the Makefile).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the text as the Apache Software Foundation
#: publishes it (with its appendix on how to apply it).
APACHE_2 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
#: Files the tests read beside the package, which the sdist must therefore carry.
NEEDED = ["LICENSE", "Makefile", "constraints.txt", "constraints-lowest.txt", "README.md",
          "tests/conftest.py", "tests/_encode.py", "tests/video/_videogen.py",
          "tests/video/data/bframes_in_avi.avi", "tests/data/vggt_1b_keys.json", "docs/img/sim_strip.png",
          "docs/report.md", "benchmarks/bench_fingerprints.py", "scripts/system-deps.sh"]


def test_the_licence_is_the_unmodified_apache_2_text_and_named_in_pyproject() -> None:
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "Apache-2.0"
    assert meta["project"]["license-files"] == ["LICENSE"]
    # license-files, and license as an SPDX expression, need setuptools 77 (PEP 639)
    assert "setuptools>=77" in meta["build-system"]["requires"]


def _copy(dest: Path) -> Path:
    """The checkout without what it builds or caches, as a clean clone has it."""
    skip = shutil.ignore_patterns(".git", ".venv", ".venv-lowest", "build", "dist", "runs", "*.egg-info",
                                  "__pycache__", ".*_cache", "_data")
    return Path(shutil.copytree(ROOT, dest, ignore=skip))


@pytest.mark.slow
def test_the_wheel_has_the_licence_and_the_sdist_runs_its_own_tests(tmp_path: Path) -> None:
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("no setuptools here (a Python 3.12+ venv has none unless installed)")
    if major < 77:
        pytest.skip(f"setuptools {major} here; pyproject.toml builds with 77 or later")
    tree, out = _copy(tmp_path / "tree"), tmp_path / "dist"
    built = []
    for hook in ("build_sdist", "build_wheel"):  # one process each: setuptools keeps state between them
        proc = subprocess.run([sys.executable, "-c", f"import sys; from setuptools import build_meta as b; "
                               f"print('built', b.{hook}(sys.argv[1]))", str(out)],
                              cwd=tree, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        built.append(proc.stdout.rpartition("built ")[2].strip())
    sdist_name, wheel_name = built

    with zipfile.ZipFile(out / wheel_name) as whl:
        names = whl.namelist()
        licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
        assert hashlib.sha256(whl.read(licence)).hexdigest() == APACHE_2
        assert "License-File: LICENSE" in whl.read(licence.replace("licenses/LICENSE", "METADATA")).decode()
        assert not [n for n in names if n.startswith(("tests/", "docs/"))]

    with tarfile.open(out / sdist_name) as sdist:
        sdist.extractall(tmp_path / "sdist", filter="data")
    unpacked = tmp_path / "sdist" / sdist_name.removesuffix(".tar.gz")
    missing = [p for p in NEEDED if not (unpacked / p).is_file()]
    assert not missing, f"the sdist lacks {missing}"
    tests = sorted(p.relative_to(tree).as_posix() for p in (tree / "tests").rglob("*") if p.is_file())
    assert [t for t in tests if not (unpacked / t).is_file()] == []
    assert not list(unpacked.rglob("*.pyc"))
    # The audit's check: README's and the docs' paths exist in the unpacked sdist.
    env_run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "tests/test_docs_paths.py"], cwd=unpacked, capture_output=True, text=True,
                             timeout=600, env={**os.environ, "PYTHONPATH": str(unpacked / "src")})
    assert env_run.returncode == 0, env_run.stdout[-3000:]


def test_the_readme_shows_the_pip_install_after_the_quick_start() -> None:
    # The long description on PyPI is the README, whose quick start needs a checkout (make).
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sections = {s.partition("\n")[0]: s for s in text.split("\n## ")[1:]}
    titles = list(sections)
    assert titles.index("Install with pip") == titles.index("Quick start") + 1
    quick = sections["Quick start"]
    assert "make demo   # build the embedded demo suite" in quick and "make test   # install" in quick
    block = sections["Install with pip"].split("```bash\n")[1].split("```")[0].splitlines()
    commands = [line.split("#")[0].strip() for line in block]
    # robojudge is not on PyPI: the install is from the checkout (a same-named package there is not ours)
    assert commands == ["pip install '.[sim]'", "robojudge demo"]
    assert "not on PyPI" in sections["Install with pip"]
