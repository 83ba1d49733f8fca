"""`robojudge meta segments-table`: stored per-segment values and exported human segment verdicts joined
on one clock, into the CSV `meta segments` reads (RoboWorM Table D4 on a user's own data).

Audit gaps F5: KIVA judges 16-frame segments, `robojudge annotate` 3-second ones, and the table that joins
them had to be built by hand. The overlaps below are worked out by hand from the frame rates.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.meta import ScoreTableError, best_overlap, segment_table, write_segment_table
from robojudge.store import ResultRow, ResultStore
from robojudge.video import write_video

runner = CliRunner()


def _video(path: Path, fps: float, n: int) -> str:
    frames = np.zeros((n, 16, 16, 3), dtype=np.uint8)
    frames[:, :, :, 0] = np.arange(n, dtype=np.uint8)[:, None, None] * 3
    write_video(path, frames, fps=fps)
    return path.name


def _kiva(item: str, spans: list[tuple[int, int, float | None]], config: str = "cfg-a") -> ResultRow:
    segs = [{"start": a, "stop": b, "score": s, "rigidity": None, "jerk": None, "invalid": None}
            for a, b, s in spans]
    return ResultRow(item, "kiva", config, "13", "ok", 50.0, details={"robot": "fetch", "segments": segs})


def _suite(tmp_path: Path) -> tuple[Path, Path, Path]:
    """a: 15 fps, b: 30 fps (a suite mixing both, as RoboWorM Table A1); c has no verdicts, d no row."""
    a = _video(tmp_path / "a.mp4", 15, 64)
    b = _video(tmp_path / "b.mp4", 30, 112)
    items = [
        {"item_id": "a", "video": a, "embodiment": "gripper", "clip_id": "clip1"},
        {"item_id": "b", "video": b, "embodiment": "bimanual", "clip_id": "clip2"},
        {"item_id": "c", "video": a, "embodiment": "gripper", "clip_id": "clip1"},
        {"item_id": "d", "video": b, "embodiment": "bimanual"},
    ]
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    # As `annotate export --format manifest` writes it: the verdicts and their length under meta.annotation.
    notes = {"a": {"kind": "label", "segments": ["good", "bad"], "segment_s": 3.0},
             "b": {"kind": "label", "segments": ["medium", None], "segment_s": 3.0}}
    labelled = tmp_path / "labelled.jsonl"
    lines = [{**it, "video": str(tmp_path / it["video"])} for it in items]
    for line in lines:
        if line["item_id"] in notes:
            line["meta"] = {"annotation": notes[line["item_id"]]}
    labelled.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([
            _kiva("a", [(0, 16, 0.5), (16, 32, None), (32, 48, 1.0), (48, 64, 2.0)]),
            _kiva("b", [(16 * k, 16 * (k + 1), 0.1 * (k + 1)) for k in range(7)]),
            _kiva("c", [(0, 16, 0.3)]),
            _kiva("elsewhere", [(0, 16, 9.0)]),  # not in the suite
            ResultRow("a", "iq1_psnr", "h", "1", "ok", 30.0),
        ])
    return suite, labelled, db


def test_each_metric_segment_gets_the_verdict_of_the_human_segment_it_overlaps_most(tmp_path: Path) -> None:
    suite, labelled, db = _suite(tmp_path)
    build = segment_table(suite, str(db), "kiva", labels=labelled)
    got = [(r.segment, r.verdict, r.human_segment, round(r.overlap, 4), r.value) for r in build.rows]
    # a at 15 fps: segments of 16/15 = 1.067 s; its 3rd [2.133, 3.2) s has 0.867 s in human segment 0
    # (0-3 s) and 0.2 s in segment 1: Good, 0.867 / 1.067 = 0.8125 of it. Its 4th [3.2, 4.267) is Bad.
    # b at 30 fps: segments of 0.533 s; its 6th [2.667, 3.2) has 0.333 s in segment 0 (0.625 of it); its
    # 7th [3.2, 3.733) lies in segment 1, which has no verdict: left out.
    assert got == [
        ("a#0", "Good", 0, 1.0, 0.5), ("a#1", "Good", 0, 1.0, None), ("a#2", "Good", 0, 0.8125, 1.0),
        ("a#3", "Bad", 1, 1.0, 2.0),
        *((f"b#{k}", "Medium", 0, 1.0, pytest.approx(0.1 * (k + 1))) for k in range(5)),
        ("b#5", "Medium", 0, 0.625, pytest.approx(0.6)),
    ]
    assert build.no_verdict == 1
    assert build.skipped == {"no human segment verdicts": ["c"], "no stored value": ["d"]}
    assert build.frame_rates == {15.0: 1, 30.0: 1}
    assert build.configs == (("cfg-a", "13"),)
    a3 = build.rows[3]
    assert (a3.start_frame, a3.stop_frame, a3.start_s, a3.end_s) == (48, 64, pytest.approx(3.2),
                                                                      pytest.approx(64 / 15))
    assert (a3.group, a3.clip, build.rows[4].group, build.rows[4].clip) == ("gripper", "clip1", "bimanual",
                                                                             "clip2")


def test_a_tie_goes_to_the_earlier_human_segment_and_unrated_segments_are_passed_over() -> None:
    assert best_overlap(1.0, 2.0, ["bad", "good"], 1.5) == (0, 0.5)
    assert best_overlap(1.0, 2.0, [None, "good"], 1.5) == (1, 0.5)
    assert best_overlap(1.0, 1.4, [None, "good"], 1.5) is None  # only the unrated segment overlaps
    assert best_overlap(7.0, 8.0, ["good", "good"], 3.0) is None  # after the last human segment


def test_the_table_is_what_meta_segments_reads(tmp_path: Path) -> None:
    suite, labelled, db = _suite(tmp_path)
    out = tmp_path / "segments.csv"
    app = build_app("meta")
    done = runner.invoke(app, ["meta", "segments-table", "--suite", str(suite), "--db", str(db), "--labels",
                               str(labelled), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "wrote 10 segments of 2 items" in done.output
    assert "15 fps (1 items), 30 fps (1 items)" in done.output
    assert "1 kiva segment(s) left out: no human segment verdict overlaps them" in done.output
    assert "1 item(s) left out, no human segment verdicts: c" in done.output
    with out.open(encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [r["verdict"] for r in table] == ["Good"] * 3 + ["Bad"] + ["Medium"] * 6
    assert table[1]["kiva"] == "" and table[2]["kiva"] == "1.0" and table[2]["overlap"] == "0.8125"
    assert (table[3]["start_s"], table[3]["end_s"], table[3]["fps"]) == ("3.2", "4.26667", "15")
    done = runner.invoke(app, ["meta", "segments", "--in", str(out), "--score", "kiva", "--group", "group",
                               "--clip", "clip", "--video", "video", "--bootstrap", "50", "--draws", "20",
                               "--json"])
    assert done.exit_code == 0, done.output
    res: dict[str, Any] = json.loads(done.stdout)
    assert res["segments"] == {"bimanual": 6, "gripper": 4}
    assert res["verdicts"]["gripper"] == {"Good": 3, "Medium": 0, "Bad": 1}
    # gripper: scores 0.5, 1.0, 2.0 (one blank) against Good, Good, Bad: ranks 1, 2, 3 against 1.5, 1.5,
    # 3, so rho = 1.5 / sqrt(2 * 1.5) = 0.866 on the 3 scored
    assert res["rho"]["kiva"]["gripper"]["n"] == 3
    assert math.isclose(res["rho"]["kiva"]["gripper"]["rho"], 1.5 / math.sqrt(3.0))


def test_labels_without_their_length_need_it_given_and_a_clash_is_an_error(tmp_path: Path) -> None:
    suite, labelled, db = _suite(tmp_path)
    old = tmp_path / "old.jsonl"
    lines = [json.loads(x) for x in labelled.read_text(encoding="utf-8").splitlines()]
    for x in lines:
        x.get("meta", {}).get("annotation", {}).pop("segment_s", None)
    old.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"old\.jsonl, item 'a', field meta\.annotation\.segment_s: .*"
                                              r"--human-segment SECONDS"):
        segment_table(suite, str(db), labels=old)
    # 2 s segments instead: a's 3rd segment [2.133, 3.2) s now lies in human segment 1 (2-4 s): Bad
    build = segment_table(suite, str(db), labels=old, segment_s=2.0)
    assert [r.verdict for r in build.rows if r.item_id == "a"] == ["Good", "Good", "Bad", "Bad"]
    with pytest.raises(ScoreTableError, match=r"item 'a', field meta\.annotation\.segment_s: the labels' "
                                              r"segments are 3 s and --human-segment says 2 s"):
        segment_table(suite, str(db), labels=labelled, segment_s=2.0)


def test_rows_of_two_configurations_are_refused_unless_one_is_chosen(tmp_path: Path) -> None:
    suite, labelled, db = _suite(tmp_path)
    with ResultStore(db) as store:
        store.add([_kiva("a", [(0, 16, 7.0), (16, 32, 7.0)], config="cfg-b")])
    with pytest.raises(ScoreTableError, match=r"metric 'kiva' is stored under 2 configurations .*--config"):
        segment_table(suite, str(db), labels=labelled)
    build = segment_table(suite, str(db), labels=labelled, config="cfg-b@13")
    assert [(r.segment, r.value) for r in build.rows] == [("a#0", 7.0), ("a#1", 7.0)]
    assert build.skipped["no stored value"] == ["b", "c", "d"]
    with pytest.raises(ScoreTableError, match=r"--config 'cfg' matches several"):
        segment_table(suite, str(db), labels=labelled, config="cfg")


def test_bad_stored_segments_and_verdicts_name_the_file_item_and_field(tmp_path: Path) -> None:
    suite, labelled, db = _suite(tmp_path)
    with pytest.raises(ScoreTableError, match=r"details\.segments\[0\]\.rigor: no such key"):
        segment_table(suite, str(db), labels=labelled, value="rigor")
    with pytest.raises(ScoreTableError, match=r"no rows of metric 'kiva_jerk'; the store holds iq1_psnr, "
                                              r"kiva"):
        segment_table(suite, str(db), "kiva_jerk", labels=labelled)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(labelled.read_text(encoding="utf-8").replace('"bad"', '"awful"'), encoding="utf-8")
    with pytest.raises(ScoreTableError, match=r"bad\.jsonl, item 'a', field meta\.annotation\.segments\[1\]: "
                                              r"'awful' is not one of"):
        segment_table(suite, str(db), labels=bad)
    odd = tmp_path / "odd.sqlite"
    with ResultStore(odd) as store:
        store.add([ResultRow("a", "kiva", "c", "13", "ok", 1.0,
                             details={"segments": [{"start": 5, "stop": 5}]})])
    with pytest.raises(ScoreTableError, match=r"item 'a', metric 'kiva', field details\.segments\[0\]: "
                                              r"start 5 and stop 5 are not a frame span"):
        segment_table(suite, str(odd), labels=labelled)


def test_written_table_replaces_the_file_whole(tmp_path: Path) -> None:
    suite, labelled, db = _suite(tmp_path)
    out = tmp_path / "t.csv"
    write_segment_table(segment_table(suite, str(db), labels=labelled), out)
    header = out.read_text(encoding="utf-8").splitlines()[0]
    assert header == ("item_id,group,clip,video,segment,start_frame,stop_frame,fps,start_s,end_s,verdict,"
                      "human_segment,overlap,kiva")
