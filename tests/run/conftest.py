"""Fixtures for the run tests."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from robojudge.metrics import METRICS, SET_METRICS
from robojudge.store import ResultStore


@pytest.fixture(autouse=True)
def _cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """File digests (and judge replies) are cached in tmp_path, never in the user's cache folder."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResultStore]:
    """An empty SQLite result store in tmp_path."""
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as s:
        yield s


@pytest.fixture(scope="module")
def ray_toy() -> Iterator[ModuleType]:
    """tests/run/_ray_toy's metrics, registered for the using module only.

    Imported at collection they stayed registered for the whole session, and the other tests saw
    them: in ``--metrics all``, in ``metrics list``, beside the set metrics. Ray workers import the
    module themselves (``ROBOJUDGE_PLUGINS``).
    """
    yield from _registered_for_module("_ray_toy")


@pytest.fixture(scope="module")
def contract_toy() -> Iterator[ModuleType]:
    """tests/run/_toy_contract's metrics (they break a metric's contract), registered for the using module
    only, as :func:`ray_toy`'s."""
    yield from _registered_for_module("_toy_contract")


def _registered_for_module(name: str) -> Iterator[ModuleType]:
    with METRICS.scratch(), SET_METRICS.scratch():
        if name in sys.modules:  # an earlier module's registrations were undone: run them again
            yield importlib.reload(sys.modules[name])
        else:
            yield importlib.import_module(name)
