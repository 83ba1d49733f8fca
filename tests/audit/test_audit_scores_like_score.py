"""``robojudge audit acceleration`` scores and reads results as ``robojudge score`` and the report do (CLI
consistency audit, F1): a bad ROBOJUDGE_* variable is refused before any task (it used to become an
error row per task), a run that measured nothing exits 1 (it exited 0), ``--retry-errors`` computes
stored failures again (there was no way to from the audit), and stored rows whose video changed since
are left out with the report's note (they were audited)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _audit_store import dense_fast_suite, moving_bar_video, run_audit

from robojudge.run import MetricRequest
from robojudge.store import ResultRow, ResultStore

METRIC = "pixel_frame_consistency"


def _statuses(db: Path) -> list[str]:
    with ResultStore(f"sqlite:///{db}", read_only=True) as store:
        return sorted(r.status for r in store.rows())


def test_a_bad_settings_variable_is_refused_before_any_task(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = dense_fast_suite(tmp_path)
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "abc")
    res = run_audit(manifest, tmp_path / "r.sqlite", "-m", METRIC)
    assert res.exit_code == 2, res.output
    assert "ROBOJUDGE_FRAME_MEMORY_GIB='abc'" in res.output
    assert not (tmp_path / "r.sqlite").exists()  # no error rows to carry into the next run


def test_a_run_that_measured_nothing_exits_1(tmp_path: Path) -> None:
    manifest = dense_fast_suite(tmp_path, videos=False)  # every video unreadable
    db = tmp_path / "r.sqlite"
    res = run_audit(manifest, db, "-m", METRIC)
    assert res.exit_code == 1, res.output
    assert "nothing was measured" in res.output
    assert _statuses(db) == ["error"] * 6


def test_retry_errors_computes_the_stored_failures_again(tmp_path: Path) -> None:
    manifest = dense_fast_suite(tmp_path)
    db = tmp_path / "r.sqlite"
    req = MetricRequest.build(METRIC)
    # failures an earlier run stored (a bad variable read on use, as before robojudge checked it first)
    with ResultStore(f"sqlite:///{db}") as store:
        store.add([ResultRow(item_id=f"c{k}-{g}", metric=METRIC, config_hash=req.config_hash,
                             version=req.spec.version, status="error", value=None, error="ValueError: bad")
                   for k in range(3) for g in ("dense", "fast")])
    kept = run_audit(manifest, db, "-m", METRIC)  # a plain rerun keeps them
    assert "0 scored, 0 failed, 6 already stored" in kept.output and _statuses(db) == ["error"] * 6
    res = run_audit(manifest, db, "-m", METRIC, "--retry-errors")
    assert res.exit_code == 0, res.output
    assert "6 scored" in res.output and _statuses(db) == ["ok"] * 6
    assert "fast: speedup 2.00 (seconds), Q 0.500 over 3 clips" in res.output  # dense changes half as much


def test_rows_whose_video_changed_are_left_out_with_the_reports_note(tmp_path: Path) -> None:
    manifest = dense_fast_suite(tmp_path)
    db = tmp_path / "r.sqlite"
    assert run_audit(manifest, db, "-m", METRIC).exit_code == 0
    moving_bar_video(tmp_path / "c0-fast.mp4", 8)  # one rollout generated again after it was scored
    res = run_audit(manifest, db)
    assert res.exit_code == 0, res.output
    assert "fast: speedup 2.00 (seconds), Q 0.500 over 2 clips" in res.output  # c0 has no fast score now
    assert ("1 stored result of 1 item left out: their inputs (video, reference, instruction...) changed "
            "since they were computed") in " ".join(res.output.split())
    out = tmp_path / "out"
    run_audit(manifest, db, "--out", str(out))
    assert json.loads((out / "acceleration.json").read_text())["stale_left_out"] == 1
    # scoring the metric again computes the changed rollout anew: nothing is left out
    again = run_audit(manifest, db, "-m", METRIC)
    assert again.exit_code == 0 and "left out" not in again.output
    assert "over 3 clips" in again.output
