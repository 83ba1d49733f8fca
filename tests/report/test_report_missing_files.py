"""An item whose files are missing now (a drive not mounted) keeps its stored results in the readers of
stored results: report, status, export. It was dropped from the manifest, so its rows were taken for
another suite's ids, a generator's mean lost it without a word and the export gave it generator '-'
(audit s67_docs finding 1)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.suite import load_suite
from robojudge.video import write_video


def _suite(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = []
    for k, gen in enumerate(["a", "a", "b", "b"]):
        write_video(tmp_path / f"v{k}.mp4", rng.integers(0, 255, (8, 32, 32, 3), dtype=np.uint8), fps=4)
        rows.append({"item_id": f"i{k}", "video": f"v{k}.mp4", "generator": gen, "clip_id": f"c{k % 2}"})
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_load_suite_keeps_items_with_missing_files_when_asked(tmp_path: Path):
    manifest = _suite(tmp_path)
    (tmp_path / "v1.mp4").unlink()
    assert [it.item_id for it in load_suite(manifest, strict=False).items] == ["i0", "i2", "i3"]
    kept = load_suite(manifest, strict=False, files="optional")
    assert [it.item_id for it in kept.items] == ["i0", "i1", "i2", "i3"] and kept.problems == []
    (warning,) = kept.warnings
    assert (warning.line, warning.item_id, warning.field) == (2, "i1", "video")
    assert "file not found" in warning.message and "kept" in warning.message


def test_a_path_with_a_nul_is_left_out_even_when_files_are_optional(tmp_path: Path):
    # it names no file anywhere: kept, it stopped every reader with "embedded null byte"
    manifest = _suite(tmp_path)
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    rows[1]["video"] = "v\u00001.mp4"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = load_suite(manifest, strict=False, files="optional")
    assert [it.item_id for it in suite.items] == ["i0", "i2", "i3"]
    (problem,) = suite.problems
    assert (problem.line, problem.item_id, problem.field) == (2, "i1", "video") and "NUL" in problem.message


def test_report_status_and_export_keep_the_item(tmp_path: Path):
    manifest = _suite(tmp_path)
    run = tmp_path / "run"
    runner = CliRunner()
    res = runner.invoke(build_app("score"), ["score", str(manifest), "-m", "mq_temporal_flickering",
                                             "--run-dir", str(run), "--no-progress"])
    assert res.exit_code == 0, res.output
    (tmp_path / "v1.mp4").rename(tmp_path / "away.mp4")  # the drive is not mounted
    res = runner.invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(run)])
    assert res.exit_code == 0, res.output
    assert "1 with inputs unavailable" in res.output and "not in the manifest" not in res.output
    said = " ".join(res.output.split())
    assert "1 manifest item(s) with files missing or unreadable now (first: " in said
    assert "item 'i1' field video: file not found" in said and "leaves them out" in said
    out = tmp_path / "ex.csv"
    res = runner.invoke(build_app("results"), ["results", "export", "--db", str(run), "-o", str(out),
                                               "--by", "generator", "--suite", str(manifest)])
    assert res.exit_code == 0, res.output
    with open(out, newline="") as f:
        generators = {r["item_id"]: r["generator"] for r in csv.DictReader(f)}
    assert generators == {"i0": "a", "i1": "a", "i2": "b", "i3": "b"}
    res = runner.invoke(build_app("report"), ["report", str(run), "--suite", str(manifest), "--out",
                                              str(tmp_path / "rep"), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "rep" / "index.html").read_text()
    assert "not items of the suite" not in page
    assert not (tmp_path / "rep" / "tables" / "set_level.csv").exists()
