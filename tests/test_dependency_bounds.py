"""pyproject.toml's lower bounds are the versions constraints-lowest.txt pins, and `make test-lowest` runs
tests with those.

Found by the lowest-versions audit of 2026-12-07: no lower bound had been installed since it was written.
numpy>=1.26, scipy>=1.11, pyarrow>=15 and matplotlib>=3.8 could not be installed beside OpenCV 5, which
needs NumPy 2. scikit-image 0.22 and pandas 2.1 did install beside NumPy 2, but were built against
NumPy 1 and failed on import, and every iq1_ssim was lost. A bound raised or lowered without the pin,
or the reverse, fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: The extras whose bounds constraints-lowest.txt pins: `dev` (what the lowest tests run with) and
#: `postgres` (psycopg, as in `dev`). The other extras bring frameworks that no fast test needs.
EXTRAS = ("dev", "postgres")
#: Dev tools that no test imports: the lowest environment takes the release pip picks.
UNPINNED = frozenset({"ruff", "mypy", "playwright"})


def _pins() -> dict[str, tuple[str, int]]:
    """constraints-lowest.txt's ``NAME==VERSION`` lines: normalized name -> (version, line number)."""
    pins: dict[str, tuple[str, int]] = {}
    lines = (ROOT / "constraints-lowest.txt").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        pin = line.split("#")[0].strip()
        if not pin:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9_.-]*)==([0-9][^\s;]*)", pin)
        assert m, f"constraints-lowest.txt line {n}: {pin!r} is not NAME==VERSION"
        name = canonicalize_name(m[1])
        first = pins.get(name, ("", 0))[1]
        assert not first, f"constraints-lowest.txt line {n}: {name} is pinned on line {first} already"
        pins[name] = (m[2], n)
    return pins


def _requirements() -> list[tuple[str, Requirement]]:
    """Each requirement of the core and of :data:`EXTRAS`, with where pyproject.toml has it."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = tomllib.loads(text)["project"]
    listed = [("dependencies", "dependencies", r) for r in project["dependencies"]]
    extras = project["optional-dependencies"]
    listed += [(f"optional-dependencies.{e}", e, r) for e in EXTRAS for r in extras[e]]
    lines = text.splitlines()
    found = []
    for field, key, raw in listed:
        start = next(i for i, s in enumerate(lines) if s.startswith(f"{key} = ["))
        line = next((i for i, s in enumerate(lines[start:], start + 1) if f'"{raw}"' in s), 0)
        found.append((f"pyproject.toml line {line} ([project] {field}) {raw!r}", Requirement(raw)))
    return found


def test_each_lower_bound_is_the_version_constraints_lowest_txt_pins() -> None:
    pins = _pins()
    wrong = []
    for where, req in _requirements():
        name = canonicalize_name(req.name)
        if name in UNPINNED:
            continue
        lows = [s.version for s in req.specifier if s.operator == ">="]
        if len(lows) != 1:
            wrong.append(f"{where}: needs one lower bound (>=), has {str(req.specifier) or 'none'}")
        elif name not in pins:
            wrong.append(f"{where}: constraints-lowest.txt pins no {name}; add {name}=={lows[0]}")
        elif Version(pins[name][0]) != Version(lows[0]):
            version, line = pins[name]
            wrong.append(f"{where}: lower bound {lows[0]}, but constraints-lowest.txt line {line} pins "
                         f"{name}=={version}; change both together, after `make test-lowest` passes")
    assert not wrong, "\n".join(wrong)


def test_constraints_lowest_txt_pins_only_what_pyproject_toml_asks_for() -> None:
    pins = _pins()
    named = {canonicalize_name(req.name) for _, req in _requirements()}
    # psycopg[binary] asks for the psycopg-binary of its own version, which pyproject.toml does not name
    others = {f"{name} (line {line})" for name, (_, line) in pins.items() if name not in named}
    assert others == {f"psycopg-binary (line {pins['psycopg-binary'][1]})"}
    assert pins["psycopg-binary"][0] == pins["psycopg"][0]
    assert not UNPINNED & set(pins)
