"""Shared pytest fixtures."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _postgres import postgres_db_url, postgres_url  # noqa: F401  (fixtures, used by name)
from robojudge import settings


@pytest.fixture(autouse=True, scope="session")
def _settings_follow_monkeypatch() -> Iterator[None]:
    """Re-read robojudge's settings whenever a test's monkeypatch sets, removes or restores a variable.

    The settings are read once per process, which is right for a run but not for tests that change a
    variable in the middle of a session (``monkeypatch.setenv("ROBOJUDGE_WEIGHTS", ...)``, also on a
    ``pytest.MonkeyPatch.context()``); wrapping the three methods covers them all without each test
    having to remember :func:`robojudge.settings.reload`.
    """
    cls = pytest.MonkeyPatch
    originals = {name: getattr(cls, name) for name in ("setenv", "delenv", "undo")}

    def follow(method: Any) -> Any:
        def wrapped(self: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            finally:
                settings.reload()

        return wrapped

    for name, method in originals.items():
        setattr(cls, name, follow(method))
    settings.reload()
    yield
    for name, method in originals.items():
        setattr(cls, name, method)


@pytest.fixture
def weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ``$ROBOJUDGE_WEIGHTS`` folder and hub cache, offline; no loaded network kept before or after.

    Tests put tiny random networks into the folder; nothing can come from a hub.
    """
    import huggingface_hub.constants

    from robojudge.models import clear

    root = tmp_path / "weights"
    root.mkdir()
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    clear()
    yield root
    clear()
