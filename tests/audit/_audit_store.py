"""Helpers of the acceleration-audit tests: a suite manifest (empty videos beside it: nothing is decoded)
and a store holding given rows; a three-clip dense/fast suite of small videos; the CLI command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner, Result

from robojudge.cli import app
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video


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


def moving_bar_video(path: Path, step: int) -> None:
    """Eight 16x48 frames, a bright bar 8 px wide moving ``step`` px per frame across a dark field:
    each frame changes ``2 * step`` columns, so pixel_frame_consistency grows in proportion to ``step``.
    (A field that only brightened, as this clip did, is still: nothing moves in it.)"""
    frames = np.full((8, 16, 48, 3), 40, np.uint8)
    for t in range(8):
        frames[t, :, step * t:step * t + 8] = 200
    write_video(path, frames, fps=4)


def dense_fast_suite(folder: Path, *, videos: bool = True) -> Path:
    """Three clips, each rolled out by ``dense`` (10 s) and ``fast`` (5 s); empty video files unless
    ``videos``."""
    lines = []
    for k in range(3):
        for gen, secs in (("dense", 10.0), ("fast", 5.0)):
            name = f"c{k}-{gen}.mp4"
            if videos:
                moving_bar_video(folder / name, 2 if gen == "dense" else 4)
            else:
                (folder / name).write_bytes(b"")
            lines.append(json.dumps({"item_id": f"c{k}-{gen}", "video": name, "generator": gen,
                                     "clip_id": f"c{k}", "meta": {"generation_seconds": secs}}))
    manifest = folder / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def run_audit(manifest: Path, db: str | Path, *extra: str) -> Result:
    """``robojudge audit acceleration`` of ``dense`` against ``fast`` on ``db`` (a URL, or a SQLite file)."""
    url = db if isinstance(db, str) else f"sqlite:///{db}"
    return CliRunner().invoke(app, ["audit", "acceleration", str(manifest), "--dense", "dense",
                                    "--accelerated", "fast", "--db", url, "--bootstrap", "0", "--no-progress",
                                    *extra])
