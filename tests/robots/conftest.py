"""Robot tests write nothing to the user's cache folder (the built-in Franka's model file goes there)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(folder))
    return folder
