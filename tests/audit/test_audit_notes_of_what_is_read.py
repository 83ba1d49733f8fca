"""``audit acceleration`` speaks only of what it reads (review rev5, 3-5): ``--retry-errors`` without
``--metrics`` did nothing and said nothing; the stale note counted rows of metrics the audit never reads
and told the user to rescore them; ``--set`` on a metric Q leaves out printed both "left out" and "no
result of it is stored"."""

from __future__ import annotations

import json
from pathlib import Path

from _audit_store import dense_fast_suite, moving_bar_video, run_audit, stored_suite

from robojudge.run import MetricRequest
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

METRIC = "pixel_frame_consistency"


def test_retry_errors_without_metrics_is_refused(tmp_path: Path) -> None:
    manifest, db = dense_fast_suite(tmp_path), f"sqlite:///{tmp_path / 'r.sqlite'}"
    req = MetricRequest.build(METRIC)
    with ResultStore(db) as store:
        store.add([ResultRow(item_id=f"c{k}-{g}", metric=METRIC, config_hash=req.config_hash,
                             version=req.spec.version, status="error", value=None, error="ValueError: bad")
                   for k in range(3) for g in ("dense", "fast")])
    res = run_audit(manifest, db, "--retry-errors")
    assert res.exit_code == 2, res.output
    assert "--retry-errors" in res.output and "--metrics" in res.output
    with ResultStore(db, read_only=True) as store:
        assert [r.status for r in store.rows()] == ["error"] * 6
    assert run_audit(manifest, db, "--retry-errors", "-m", METRIC).exit_code == 0  # with --metrics it retries


def test_stale_rows_of_metrics_not_audited_are_not_counted(tmp_path: Path) -> None:
    manifest, db = dense_fast_suite(tmp_path), f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert run_audit(manifest, db, "-m", f"{METRIC},flow_warp_error").exit_code == 0
    moving_bar_video(tmp_path / "c0-fast.mp4", 8)  # generated again: both metrics' rows of c0-fast are stale
    res = run_audit(manifest, db, "-m", METRIC, "--out", str(tmp_path / "out"))  # METRIC's is scored anew
    assert res.exit_code == 0, res.output
    assert "left out" not in res.output and "over 3 clips" in res.output
    assert json.loads((tmp_path / "out" / "acceleration.json").read_text())["stale_left_out"] == 0
    # reading the store, flow_warp_error is audited too: its stale row is left out and counted
    every = run_audit(manifest, db, "--out", str(tmp_path / "every"))
    assert "1 stored result of 1 item left out" in " ".join(every.output.split())
    assert json.loads((tmp_path / "every" / "acceleration.json").read_text())["stale_left_out"] == 1


def test_set_on_a_left_out_metric_gets_one_line(tmp_path: Path) -> None:
    items = [Item(item_id=f"c{k}-{g}", video=f"c{k}-{g}.mp4", generator=g, clip_id=f"c{k}",
                  meta={"generation_seconds": 10.0 if g == "dense" else 5.0})
             for g in ("dense", "fast") for k in range(3)]
    rows = []
    for metric, (dense, fast) in {METRIC: (1.0, 2.0), "uniform_random": (1.0, 5.0)}.items():
        req = MetricRequest.build(metric)
        rows += [ResultRow(item_id=it.item_id, metric=metric, config_hash=req.config_hash,
                           version=req.spec.version, status="ok",
                           value=dense if it.generator == "dense" else fast) for it in items]
    manifest, db = stored_suite(tmp_path, items, rows)
    res = run_audit(manifest, db, "--set", "uniform_random.seed=0")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "left out (they do not measure the video" in text and "uniform_random" in text
    assert "no result of it is stored" not in text  # its results are stored: only Q leaves it out
    assert "fast: speedup 2.00 (seconds), Q 0.500 over 3 clips" in text
