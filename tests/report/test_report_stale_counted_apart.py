"""A judge's or a metric's stale rows are named as stale, not as never asked or unscored.

One item's video is replaced after it was scored and judged. The report leaves both rows out, but the
judge coverage table counted the judge's row under "not run" ("never asked"), and the RoboPhys-3D note
called the metric's gap "unscored or failed".
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metric_info import direction
from robojudge.report import ReportInput, write_html_report
from robojudge.report._robophys import robophys_section
from robojudge.run import score_suite, stale_rows
from robojudge.store import ResultRow
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "r", "physical_adherence": 3}'


def _video(path: Path, seed: int) -> None:
    frames = np.random.default_rng(seed).integers(0, 256, (8, 32, 32, 3), dtype=np.uint8)
    write_video(path, frames, fps=4)


def test_stale_rows_are_counted_as_stale(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    items = []
    for k, g in enumerate(["a", "a", "a", "b", "b", "b"]):
        _video(tmp_path / f"v{k}.mp4", k)
        items.append({"item_id": f"i{k}", "video": f"v{k}.mp4", "clip_id": f"c{k % 3}", "generator": g,
                      "instruction": "push the block"})
    manifest = tmp_path / "s.jsonl"
    manifest.write_text("".join(json.dumps(it) + "\n" for it in items))
    score_suite(manifest, ["mq_temporal_flickering"])
    (tmp_path / "judges.toml").write_text(f"[judges.mk]\nbackend = \"mock\"\nreplies = ['{REPLY}']\n")
    done = CliRunner().invoke(build_app("judge"), ["judge", str(manifest), "--judges", "judges.toml",
                                                   "--judge", "mk", "--rubric", "pa"])
    assert done.exit_code == 0 and "6 scored" in done.output, done.output
    _video(tmp_path / "v0.mp4", 99)  # replaced after scoring and judging

    rep = write_html_report("runs/s", tmp_path / "rep", manifest=manifest, higher_is_better=direction,
                            bootstrap=0, stale=stale_rows)
    assert sorted(r.metric for r in rep.stale) == ["judge:mk:pa", "mq_temporal_flickering"]
    with (tmp_path / "rep" / "tables" / "judge_coverage.csv").open() as fh:
        (pa,) = [r for r in csv.DictReader(fh) if r["rubric"] == "PA"]
    assert (pa["items"], pa["scored"], pa["stale"], pa["not run"]) == ("6", "5", "1", "0")  # (not run was 1)
    note = (tmp_path / "rep" / "tables" / "robophys.md").read_text()
    assert "(the others unscored, failed or stale: inputs changed since they were scored)" in note
    assert "a: mq_temporal_flickering 2 of 3" in note


def test_a_stale_judge_row_of_a_metric_it_feeds_is_named_stale_too() -> None:
    # judge:mk:pla_physical_commonsense is read as pla_physical_commonsense: its stale row (a0's, left out
    # of the rows as write_html_report leaves it out) leaves a's PLA measured on 2 of 3 items.
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in "ab" for k in range(3)]
    rows = [ResultRow(it.item_id, "judge:mk:pla_physical_commonsense", "h", "1", "ok", 3.0 + k)
            for k, it in enumerate(items)]
    stale, kept = rows[0], rows[1:]
    notes = [robophys_section(ReportInput(kept, items, direction, bootstrap=0, stale=gone)).tables[0].note
             for gone in ([], [stale])]
    assert "(the others unscored or failed)" in notes[0]
    assert "(the others unscored, failed or stale: inputs changed since they were scored)" in notes[1]
    assert "a: pla_physical_commonsense 2 of 3" in notes[1]


def test_a_judge_whose_every_row_is_stale_keeps_its_coverage_line() -> None:
    # Its series came from the kept rows only: a judge all of whose rows were left out vanished from the
    # coverage table, as if it had never run.
    from robojudge.report import judge_coverage

    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(4)]
    cfg = {"model": "m", "rubric": "pa"}
    old = [ResultRow(it.item_id, "judge:old:pa", "h1", "1", "ok", 3.0, config=cfg) for it in items[:3]]
    kept = [ResultRow(it.item_id, "judge:mk:pa", "h2", "1", "ok", 4.0, config=cfg) for it in items]
    stale_mk = [ResultRow("i0", "judge:mk:pa", "h3", "1", "ok", 2.0, config={**cfg, "model": "m2"})]
    cov = {(c.judge, c.axis): c for c in judge_coverage(kept, items, stale=old + stale_mk)}
    assert (cov[("old", "pa")].scored, cov[("old", "pa")].stale, cov[("old", "pa")].not_run) == (0, 3, 1)
    assert (cov[("old", "ia")].stale, cov[("old", "ia")].not_run) == (0, 4)
    # mk's current configuration keeps its label; the older one, all stale, is told apart
    assert cov[("mk", "pa")].scored == 4 and cov[("mk (stale)", "pa")].stale == 1
