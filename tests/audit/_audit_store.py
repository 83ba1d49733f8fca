"""A suite manifest (empty videos beside it: nothing is decoded) and a store holding given rows, for
the acceleration-audit tests."""

from __future__ import annotations

import json
from pathlib import Path

from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item


def stored_suite(folder: Path, items: list[Item], rows: list[ResultRow]) -> tuple[Path, str]:
    """``(manifest, store url)`` in ``folder``."""
    manifest = folder / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(mode="json", exclude_none=True)) + "\n"
                                for it in items))
    for it in items:
        (folder / it.video).write_bytes(b"")
    db = f"sqlite:///{folder / 'r.sqlite'}"
    with ResultStore(db) as store:
        store.add(rows)
    return manifest, db
