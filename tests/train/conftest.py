"""Fixtures for the judge-training tests: a small labelled suite; no test reaches a hub."""

from __future__ import annotations

from pathlib import Path

import pytest
from _train_suite import write_labelled_suite


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "default-cache"))


@pytest.fixture
def labelled_suite(tmp_path: Path) -> Path:
    return write_labelled_suite(tmp_path / "suite")
