"""Empty files laid out as a folder to scan, and scanned items by id, for the ``suite scan`` tests."""

from __future__ import annotations

from pathlib import Path


def touch(root: Path, *rels: str) -> None:
    """Create each of ``rels`` under ``root`` as an empty file (its folders too)."""
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


def by_id(items: list[dict]) -> dict[str, dict]:
    """Scanned items keyed by their item_id."""
    return {it["item_id"]: it for it in items}
