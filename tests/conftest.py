"""Shared pytest fixtures."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from _postgres import postgres_db_url, postgres_url  # noqa: F401  (fixtures, used by name)


@pytest.fixture
def weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ``$ROBOJUDGE_WEIGHTS`` folder and hub cache, offline; no loaded network kept before or after.

    Tests put tiny random networks into the folder; nothing can come from a hub.
    """
    import huggingface_hub.constants

    from robojudge.models import clear_loaded

    root = tmp_path / "weights"
    root.mkdir()
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    clear_loaded()
    yield root
    clear_loaded()
