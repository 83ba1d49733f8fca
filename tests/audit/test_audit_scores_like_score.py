"""``robojudge audit acceleration`` scores and reads results as ``robojudge score`` and the report do (CLI
consistency audit, F1): a bad ROBOJUDGE_* variable is refused before any task (it used to become an
error row per task), a run that measured nothing exits 1 (it exited 0), ``--retry-errors`` computes
stored failures again (there was no way to from the audit), and stored rows whose video changed since
are left out with the report's note (they were audited)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.run import MetricRequest
from robojudge.store import ResultRow, ResultStore
from robojudge.video import write_video

METRIC = "pixel_frame_consistency"


def _video(path: Path, step: int) -> None:
    """Eight 16x16 frames whose brightness grows by ``step`` per frame (the metric's value grows with it)."""
    frames = np.stack([np.full((16, 16, 3), 40 + step * t, np.uint8) for t in range(8)])
    write_video(path, frames, fps=4)


def _suite(folder: Path, *, videos: bool = True) -> Path:
    """Three clips, each rolled out by ``dense`` (10 s) and ``fast`` (5 s); empty video files unless
    ``videos``."""
    lines = []
    for k in range(3):
        for gen, secs in (("dense", 10.0), ("fast", 5.0)):
            name = f"c{k}-{gen}.mp4"
            if videos:
                _video(folder / name, 2 if gen == "dense" else 4)
            else:
                (folder / name).write_bytes(b"")
            lines.append(json.dumps({"item_id": f"c{k}-{gen}", "video": name, "generator": gen,
                                     "clip_id": f"c{k}", "meta": {"generation_seconds": secs}}))
    manifest = folder / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def _audit(manifest: Path, db: Path, *extra: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["audit", "acceleration", str(manifest), "--dense", "dense",
                                    "--accelerated", "fast", "--db", f"sqlite:///{db}", "--bootstrap", "0",
                                    "--no-progress", *extra])


def _statuses(db: Path) -> list[str]:
    with ResultStore(f"sqlite:///{db}", read_only=True) as store:
        return sorted(r.status for r in store.rows())


def test_a_bad_settings_variable_is_refused_before_any_task(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = _suite(tmp_path)
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "abc")
    res = _audit(manifest, tmp_path / "r.sqlite", "-m", METRIC)
    assert res.exit_code == 2, res.output
    assert "ROBOJUDGE_FRAME_MEMORY_GIB='abc'" in res.output
    assert not (tmp_path / "r.sqlite").exists()  # no error rows to carry into the next run


def test_a_run_that_measured_nothing_exits_1(tmp_path: Path) -> None:
    manifest = _suite(tmp_path, videos=False)  # every video unreadable
    db = tmp_path / "r.sqlite"
    res = _audit(manifest, db, "-m", METRIC)
    assert res.exit_code == 1, res.output
    assert "nothing was measured" in res.output
    assert _statuses(db) == ["error"] * 6


def test_retry_errors_computes_the_stored_failures_again(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    db = tmp_path / "r.sqlite"
    req = MetricRequest.build(METRIC)
    # failures an earlier run stored (a bad variable read on use, as before robojudge checked it first)
    with ResultStore(f"sqlite:///{db}") as store:
        store.add([ResultRow(item_id=f"c{k}-{g}", metric=METRIC, config_hash=req.config_hash,
                             version=req.spec.version, status="error", value=None, error="ValueError: bad")
                   for k in range(3) for g in ("dense", "fast")])
    kept = _audit(manifest, db, "-m", METRIC)  # a plain rerun keeps them
    assert "0 scored, 0 failed, 6 already stored" in kept.output and _statuses(db) == ["error"] * 6
    res = _audit(manifest, db, "-m", METRIC, "--retry-errors")
    assert res.exit_code == 0, res.output
    assert "6 scored" in res.output and _statuses(db) == ["ok"] * 6
    assert "fast: speedup 2.00 (seconds), Q 0.500 over 3 clips" in res.output  # dense changes half as much


def test_rows_whose_video_changed_are_left_out_with_the_reports_note(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    db = tmp_path / "r.sqlite"
    assert _audit(manifest, db, "-m", METRIC).exit_code == 0
    _video(tmp_path / "c0-fast.mp4", 8)  # one rollout generated again after it was scored
    res = _audit(manifest, db)
    assert res.exit_code == 0, res.output
    assert "fast: speedup 2.00 (seconds), Q 0.500 over 2 clips" in res.output  # c0 has no fast score now
    assert ("1 stored result of 1 item left out: their inputs (video, reference, instruction...) changed "
            "since they were computed") in " ".join(res.output.split())
    out = tmp_path / "out"
    _audit(manifest, db, "--out", str(out))
    assert json.loads((out / "acceleration.json").read_text())["stale_left_out"] == 1
    # scoring the metric again computes the changed rollout anew: nothing is left out
    again = _audit(manifest, db, "-m", METRIC)
    assert again.exit_code == 0 and "left out" not in again.output
    assert "over 3 clips" in again.output
