"""A rerun whose stored rows are failures (audit config F2): the frame-memory error told the user to set
ROBOJUDGE_FRAME_MEMORY_GIB; once they did, the rerun counted every failure as "already stored", printed
"0 failed" and did nothing, without a word about ``--retry-errors``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.video import write_video


def _suite(tmp_path: Path) -> Path:
    rows = []
    for k in range(3):
        frames = np.full((6, 32, 48, 3), 40 * k, np.uint8)
        write_video(tmp_path / f"v{k}.mp4", frames, fps=4)
        rows.append({"item_id": f"v{k}", "video": f"v{k}.mp4", "instruction": "x"})
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def _score(manifest: Path, *more: str):  # type: ignore[no-untyped-def]
    db = str(manifest.parent / "r.sqlite")
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", db,
            "--no-progress", *more]
    return CliRunner().invoke(build_app("score"), args)


def test_a_rerun_says_how_many_stored_rows_are_failures(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = _suite(tmp_path)
    with monkeypatch.context() as mp:
        mp.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "0.000001")  # about 1 KiB: no video fits
        first = _score(manifest)
    text = " ".join(first.output.split())
    assert first.exit_code == 1 and "3 failed" in text, first.output
    assert "then rerun with --retry-errors" in text  # (the error's advice leads to the retry)

    rerun = _score(manifest)  # the limit lifted: nothing is computed, and the summary says why
    text = " ".join(rerun.output.split())
    assert rerun.exit_code == 0, rerun.output  # nothing failed in this run (README, exit statuses)
    assert "0 failed, 3 already stored" in text
    assert "3 already stored, all of them failures of an earlier run, kept: --retry-errors computes them " \
           "again" in text

    retried = _score(manifest, "--retry-errors")
    text = " ".join(retried.output.split())
    assert retried.exit_code == 0 and "0 failed, 0 already stored" in text
    assert "failures of an earlier run" not in text
    again = _score(manifest)
    assert "failures of an earlier run" not in again.output and "3 already stored" in again.output
