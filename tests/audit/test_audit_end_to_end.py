"""The audits end to end on a tiny synthetic suite: stand-ins, scoring, the audit, outputs, CLI, report."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.audit import audit_acceleration, audit_sample_size, make_standins
from robojudge.cli import app
from robojudge.metric_info import direction
from robojudge.report import write_html_report
from robojudge.suite._demo import make_synthetic_suite

METRICS = ["pixel_frame_consistency", "iq1_psnr"]


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit")
    manifest = make_synthetic_suite(root / "syn", episodes=2, seed=0)
    return root, manifest, make_standins(manifest, "faithful", root / "acc", ["interp4", "lowres4"])


@pytest.mark.slow
def test_acceleration_audit_of_standins(standins) -> None:
    root, _, manifest = standins
    db = f"sqlite:///{root / 'results.sqlite'}"
    gens = ["faithful-interp4", "faithful-lowres4"]
    run = audit_acceleration(manifest, "faithful", gens, metrics=METRICS, db=db, bootstrap=200,
                             timing=manifest.parent / "timing.csv", out_dir=root / "out")
    assert run.scored is not None and (run.scored.ok, run.scored.failed) == (12, 0)
    dense, interp, low = run.audit.methods
    # Nominal costs: interp4 generates a quarter of the frames, lowres4 a sixteenth of the pixels.
    assert (interp.speedup, interp.basis) == (4.0, "seconds") and low.speedup == 16.0
    assert dense.q.value == 1.0 and dense.speedup == 1.0
    assert [r.metric for r in interp.retentions] == METRICS and interp.clips == 2
    # PSNR against the reference: dense is the reference itself (capped at 100 dB), both stand-ins lose
    psnr = {m.name: m.retentions[1].retention.value for m in run.audit.methods}
    assert psnr["faithful"] == 1.0 and psnr["faithful-interp4"] < 0.5 and psnr["faithful-lowres4"] < 0.5
    data = json.loads((root / "out" / "acceleration.json").read_text())
    assert data["dense"] == "faithful" and [m["name"] for m in data["methods"]] == ["faithful", *gens]
    assert (root / "out" / "frontier.svg").read_text().startswith("<svg")
    assert "Acceleration audit" in (root / "out" / "index.html").read_text()
    csv_head = (root / "out" / "tables" / "acceleration_faithful.csv").read_text().splitlines()[0]
    assert csv_head.startswith("method,speedup")
    # The same audit without the timing file: the manifest's meta.generation_seconds give the same speedups.
    again = audit_acceleration(manifest, "faithful", gens, db=db, bootstrap=0)
    assert [m.speedup for m in again.audit.methods] == [1.0, 4.0, 16.0]
    assert math.isnan(again.audit.methods[1].q.low)  # no bootstrap, no interval
    # robojudge report finds the audit the manifest declares.
    report = write_html_report(db, root / "report", manifest=manifest, higher_is_better=direction,
                               bootstrap=50)
    sec = {s.key: s for s in report.sections}["acceleration"]
    assert sec.skipped is None and sec.plots
    # A video moved away (a drive not mounted) keeps its item's stored results, as in the report: the
    # audit left the item out without a word and gave another Q.
    from robojudge.suite import load_suite

    moved = next(it for it in load_suite(manifest).items if it.generator == "faithful-interp4").video
    hold = root / "held.mp4"
    Path(moved).rename(hold)
    try:
        away = audit_acceleration(manifest, "faithful", gens, db=db, bootstrap=0)
    finally:
        hold.rename(moved)
    assert away.audit.methods[1].clips == 2
    assert [m.q.value for m in away.audit.methods] == [m.q.value for m in again.audit.methods]


@pytest.mark.slow
def test_cli_commands(standins, tmp_path) -> None:
    root, syn, _ = standins
    runner = CliRunner()
    out = runner.invoke(app, ["audit", "standins", str(syn), "--dense", "faithful",
                              "--out", str(tmp_path / "s"), "--methods", "chunk4"])
    assert out.exit_code == 0, out.output
    manifest = tmp_path / "s" / "suite.jsonl"
    res = runner.invoke(app, ["audit", "acceleration", str(manifest), "--dense", "faithful", "--accelerated",
                              "faithful-chunk4", "-m", "pixel_frame_consistency", "--store",
                              f"sqlite:///{tmp_path / 'r.sqlite'}", "--bootstrap", "50", "--min-q", "0.5"])
    assert res.exit_code == 0, res.output
    assert "faithful-chunk4: speedup" in res.output and "largest speedup with Q >= 0.5" in res.output
    bad = runner.invoke(app, ["audit", "acceleration", str(manifest), "--dense", "faithful", "--accelerated",
                              "nobody", "--store", f"sqlite:///{tmp_path / 'r.sqlite'}"])
    assert bad.exit_code == 2 and "'nobody'" in bad.output
    bad = runner.invoke(app, ["audit", "standins", str(syn), "--dense", "faithful",
                              "--out", str(tmp_path / "x"), "--methods", "blur3"])
    assert bad.exit_code == 2 and "unknown stand-in method 'blur3'" in bad.output


@pytest.mark.slow
def test_sample_size_on_the_synthetic_suite(standins) -> None:
    root, syn, _ = standins
    run = audit_sample_size(syn, ns=[2, 4, 8], window=8, draws=20, out_dir=root / "ss")
    r = run.result
    assert "ep00-broken" in run.skipped  # a truncated video costs its windows, not the audit
    assert set(r.curves) == {"faithful", "flicker", "stalled", "teleport", "vanish"}
    assert all(w == 8 for w in r.windows.values())  # 2 videos x 33 frames -> 4 windows of 8 each
    assert r.ns == (2, 4, 8) and all(0.0 <= f <= 1.0 for f in r.flips)
    # n = 8 is every window: each draw is a permutation of them, so the mean is the full value (up to
    # the order of the float sums)
    assert all(r.curves[g][2].mean == pytest.approx(r.full[g], abs=1e-9) for g in r.curves)
    assert r.flips[2] == 0.0
    data = json.loads((root / "ss" / "sample_size.json").read_text())
    assert data["ns"] == [2, 4, 8] and "values" not in data["curves"]["faithful"][0]
    assert data["pairs"] == [10, 10, 10]  # every generator has 8 windows: all 10 pairs at every n
    res = CliRunner().invoke(app, ["audit", "sample-size", str(syn), "--n", "2,4", "--window", "8", "--draws",
                                   "5", "--generators", "faithful,flicker"])
    assert res.exit_code == 0, res.output
    assert "flip share" in res.output and "generator pairs compared: 1, 1" in res.output
    assert "compare fewer pairs" not in res.output
