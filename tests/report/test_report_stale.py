"""A result whose video was replaced after scoring is not reported as the new video's: report,
leaderboards and selection leave it out and say so (``results status`` calls it stale)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import load_run_results
from robojudge.run import load_suite_results, score_suite, stale_rows
from robojudge.video import write_video


def _video(path: Path, noisy: bool) -> None:
    rng = np.random.default_rng(3)
    frames = np.zeros((8, 32, 32, 3), np.uint8)
    for t in range(8):
        frames[t, 8:16, 2 * t:2 * t + 6] = 255
    if noisy:
        frames = rng.integers(0, 256, frames.shape, dtype=np.uint8)
    write_video(path, frames, fps=4)


def _suite(tmp_path: Path) -> Path:
    for n in ("a", "b"):
        _video(tmp_path / f"{n}.mp4", noisy=False)
    manifest = tmp_path / "s.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": f"{n}.mp4", "instruction": "x",
                                            "generator": "g", "labels": {"pa": 3, "ia": 3}}) + "\n"
                                for n in ("a", "b")))
    return manifest


def test_a_replaced_video_leaves_its_old_result_out(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    manifest = _suite(tmp_path)
    score_suite(manifest, ["pixel_frame_consistency"])
    before = load_suite_results(manifest)
    assert (len(before.rows), before.stale) == (2, [])
    _video(tmp_path / "b.mp4", noisy=True)  # replaced, not scored again
    after = load_suite_results(manifest)
    assert [r.item_id for r in after.rows] == ["a"] and [r.item_id for r in after.stale] == ["b"]
    run = load_run_results(tmp_path / "runs" / "s", stale=stale_rows)
    assert [r.item_id for r in run.rows] == ["a"] and [r.item_id for r in run.stale] == ["b"]
    assert len(load_run_results(tmp_path / "runs" / "s").rows) == 2  # the report's own default: no check

    res = CliRunner().invoke(build_app("report"), ["report", str(manifest), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    note = "1 stored result of 1 item left out: their inputs (video, reference, instruction...) changed"
    assert note in said
    summary = (tmp_path / "runs" / "s" / "report" / "summary.md").read_text()
    assert note in " ".join(summary.split())
    row = next(line for line in summary.splitlines() if "pixel_frame_consistency" in line)
    assert "| 1 |" in row  # one value (a's) in the summary, not two
    page = (tmp_path / "runs" / "s" / "report" / "index.html").read_text()
    assert note in " ".join(page.split())

    res = CliRunner().invoke(build_app("report"), ["report", str(manifest), "--no-html"])
    assert note in " ".join(res.output.split())
    # results.csv keeps the stale row, marked, as `results export --suite` marks it (aggregate on it
    # ranked with the stale value).
    import csv

    with (tmp_path / "runs" / "s" / "report" / "results.csv").open() as fh:
        marks = {r["item_id"]: r["stale"] for r in csv.DictReader(fh)}
    assert marks == {"a": "", "b": "stale"}
    res = CliRunner().invoke(build_app("select"), ["select", "best-of-n", str(manifest), "--by",
                                                   "pixel_frame_consistency", "--group", "generator"])
    assert res.exit_code == 0, res.output
    assert note in " ".join(res.output.split())

    res = CliRunner().invoke(build_app("results"), ["results", "export", "--db", "runs/s", "--out", "x.csv",
                                                    "--suite", str(manifest)])
    assert res.exit_code == 0, res.output
    assert "1 of 2 rows are stale: their inputs" in " ".join(res.output.split())  # exported, and said

    score_suite(manifest, ["pixel_frame_consistency"])  # scored again: nothing left out
    assert load_suite_results(manifest).stale == []
    res = CliRunner().invoke(build_app("results"), ["results", "export", "--db", "runs/s", "--out", "y.csv",
                                                    "--suite", str(manifest)])
    assert res.exit_code == 0 and "stale" not in res.output
