"""One run, one set of settings (audit config F3): the parent kept the settings it read first while
``--workers`` processes read the environment again, so a program that changed ``os.environ`` without
``settings.reload()`` scored with one limit (or weights folder) at ``workers=1`` and another at
``workers=2``, under the same fingerprint."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np

from robojudge import settings
from robojudge.run import score_suite
from robojudge.video import write_video


def test_workers_use_the_parents_settings(tmp_path: Path) -> None:
    rows = []
    for k in range(2):
        frames = np.zeros((6, 32, 48, 3), np.uint8)
        for t in range(6):
            frames[t, 8:16, 4 + 4 * t + k:12 + 4 * t + k] = 200
        write_video(tmp_path / f"v{k}.mp4", frames, fps=4)
        rows.append({"item_id": f"v{k}", "video": f"v{k}.mp4"})
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    old = os.environ.get("ROBOJUDGE_FRAME_MEMORY_GIB")
    os.environ.pop("ROBOJUDGE_FRAME_MEMORY_GIB", None)
    settings.reload()  # no limit: what the run is to use
    # Changed behind the settings' back (no reload): about 1 KiB, which no video fits in.
    os.environ["ROBOJUDGE_FRAME_MEMORY_GIB"] = "0.000001"
    try:
        assert settings.get().frame_memory_bytes is None
        for workers in (1, 2):
            db = tmp_path / f"w{workers}.sqlite"
            summary = score_suite(manifest, ["pixel_frame_consistency"], db=str(db), workers=workers).summary
            errors = sqlite3.connect(db).execute(
                "select error from robojudge_results where status = 'error'").fetchall()
            assert errors == [] and summary.failed == 0 and summary.ok == 2, (workers, errors)
    finally:
        if old is None:
            os.environ.pop("ROBOJUDGE_FRAME_MEMORY_GIB", None)
        else:
            os.environ["ROBOJUDGE_FRAME_MEMORY_GIB"] = old
        settings.reload()


def test_the_decoder_start_takes_the_given_settings() -> None:
    from robojudge.video._pool import _warm_up

    before = settings.get()
    given = settings.Settings.from_environment()
    try:
        _warm_up(given)
        assert settings.get() is given
    finally:
        settings.install(before)
