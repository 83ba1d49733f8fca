"""Fixtures for the run tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """File digests (and judge replies) are cached in tmp_path, never in the user's cache folder."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(folder))
    return folder
