"""Fixtures for the result store tests: every behavioural test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty result store: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'results.sqlite'}"
    return str(request.getfixturevalue("postgres_db_url"))
