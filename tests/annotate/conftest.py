"""A small suite with real video files, and the annotation database on SQLite and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from _ann_data import SuiteFiles, make_suite


@pytest.fixture(scope="session")
def suite_files(tmp_path_factory: pytest.TempPathFactory) -> SuiteFiles:
    return make_suite(tmp_path_factory.mktemp("ann_suite"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test using ``db_url`` runs on SQLite and PostgreSQL, unless marked :data:`SQLITE_ONLY`."""
    if "db_backend" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        if mark.args and mark.args[0] == "db_backend":
            return
    metafunc.parametrize("db_backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])


@pytest.fixture
def db_url(db_backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if db_backend == "sqlite":
        return f"sqlite:///{tmp_path / 'ann.sqlite'}"
    return str(request.getfixturevalue("postgres_db_url"))


@pytest.fixture(autouse=True)
def _fast_argon2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cheap argon2 parameters: the defaults cost about half a second per hash on a busy 2-core machine.

    ``test_passwords.py`` checks the real defaults and that a login upgrades a cheap hash to them.
    """
    from argon2 import PasswordHasher

    from robojudge.annotate import _passwords

    cheap = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    monkeypatch.setattr(_passwords, "_hasher", lambda: cheap)
    monkeypatch.setattr(_passwords, "dummy_hash", lambda: cheap.hash("not-a-real-password"))
