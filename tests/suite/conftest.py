"""Fixtures for the suite-manifest tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from suite_manifest_helpers import MEDIA_FILES


@pytest.fixture
def media_root(tmp_path: Path) -> Path:
    """A folder holding the placeholder media that :data:`ROWS` refers to."""
    root = tmp_path / "suite"
    for rel in MEDIA_FILES:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"")
    return root
