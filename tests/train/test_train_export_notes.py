"""What `robojudge train export` says about its data, and the frame options it shares with `judge`
(audit train F2, F4, F5, F7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.train import export_training_data, read_frames


def _invoke(*args: object) -> Any:
    return CliRunner().invoke(app, ["train", *map(str, args)])


def _rewrite(manifest: Path, change: Any) -> Path:
    rows = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    for k, row in enumerate(rows):
        change(k, row)
    out = manifest.with_name("changed.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_a_requested_split_that_rounds_to_no_clip_is_said(labelled_suite: Path, tmp_path: Path) -> None:
    # 2 sources of 4 clips; --val 0.1 --test 0.1: each source cuts train at 3.2 -> 3 and val at 3.6 -> 4,
    # so test gets no clip in either source. Before, nothing said so (only an empty train was warned of).
    res = _invoke("export", "--labels", labelled_suite, "--out", tmp_path / "d", "--val", 0.1, "--test", 0.1)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert not (tmp_path / "d" / "test.jsonl").exists()
    assert "the test split is empty: --test 0.1 of 8 clip(s) in 2 source(s)" in text, text
    assert "the largest has 4 clip(s), 0.4 of a clip" in text and "val split is empty" not in text
    assert "the test split is empty" in (tmp_path / "d" / "README.md").read_text()


def test_disputed_labels_are_left_out_unless_asked_for(labelled_suite: Path, tmp_path: Path) -> None:
    # What `robojudge annotate export --include-disputed` writes for items awaiting an adjudication.
    def dispute(k: int, row: dict[str, Any]) -> None:
        if k < 6:
            row["meta"] = {"annotation": {"kind": "label", "disputed": ["pa", "ia"]}}

    manifest = _rewrite(labelled_suite, dispute)
    kept = export_training_data(manifest, ["pa", "ia"], tmp_path / "d", fractions={"train": 1.0})
    ids = {json.loads(line)["item_id"] for line in (tmp_path / "d" / "train.jsonl").read_text().splitlines()}
    assert ids.isdisjoint({"c0-gen_a", "c0-gen_b", "c1-gen_a", "c1-gen_b", "c2-gen_a", "c2-gen_b"})
    assert len(ids) == 10 and len(kept.disputed) == 6
    note = next(n for n in kept.notes if "await an adjudication" in n)
    assert note.startswith("6 item(s) left out") and "meta.annotation.disputed" in note
    assert kept.skipped == {"pa": 0, "ia": 1}  # c7-gen_b has no IA label: not disputed, counted apart

    res = _invoke("export", "--labels", manifest, "--out", tmp_path / "e", "--val", 0, "--include-disputed")
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in (tmp_path / "e" / "train.jsonl").read_text().splitlines()]
    assert len({r["item_id"] for r in recs}) == 16
    assert {r["item_id"] for r in recs if r.get("disputed") == ["pa", "ia"]} == {
        f"c{k}-gen_{g}" for k in range(3) for g in "ab"}
    assert "6 item(s) carry labels a cross-review disputes" in " ".join(res.output.split())


def test_a_rubric_whose_labels_are_all_one_score_is_said(labelled_suite: Path, tmp_path: Path) -> None:
    def constant(k: int, row: dict[str, Any]) -> None:
        row["labels"] = {"pa": 3, "ia": 3}

    res = _invoke("export", "--labels", _rewrite(labelled_suite, constant), "--out", tmp_path / "d",
                  "--val", 0.25)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "pa: every one of its 12 train record(s) has the score 3" in text, text
    assert "ia: every one of its 12 train record(s) has the score 3" in text
    # varied labels: no such note
    res = _invoke("export", "--labels", labelled_suite, "--out", tmp_path / "v", "--val", 0.25)
    assert "has the score" not in res.output


def test_export_takes_the_judge_s_size_and_grid_view(labelled_suite: Path, tmp_path: Path) -> None:
    res = _invoke("export", "--labels", labelled_suite, "--out", tmp_path / "d", "--rubric", "pa",
                  "--size", 24, "--grid-view", "whole", "--max-frames", 4)
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "d" / "export.json").read_text())
    assert meta["frames"] == {"fps": 4.0, "max_frames": 4, "size": 24, "grid_view": "whole"}
    rec = json.loads((tmp_path / "d" / "train.jsonl").read_text().splitlines()[0])
    frames = read_frames([tmp_path / "d" / p for p in rec["frames"]])
    assert max(frames.shape[1:3]) == 24  # the 40x32 videos, longer side 24 as `judge --size 24` sends
    assert "longer side 24 px, grid view whole" in (tmp_path / "d" / "README.md").read_text()
    bad = _invoke("export", "--labels", labelled_suite, "--out", tmp_path / "b", "--grid-view", "side")
    assert bad.exit_code == 2 and "grid_view must be one of main, whole" in bad.output


def test_notes_go_to_stderr_and_the_summary_to_stdout(labelled_suite: Path, tmp_path: Path) -> None:
    # (audit cli2 F7) the notes were printed on stdout: `train export ... > log` hid the one that says the
    # asked-for split is empty; the other commands print notes, warnings and hints on stderr
    res = _invoke("export", "--labels", labelled_suite, "--out", tmp_path / "d", "--val", 0.1, "--test", 0.1)
    assert res.exit_code == 0, res.output
    assert "exported " in res.stdout and "note:" not in res.stdout, res.stdout
    assert "note: the test split is empty" in " ".join(res.stderr.split()), res.stderr
    res = _invoke("export", "--labels", labelled_suite, "--out", tmp_path / "e", "--val", 0.6, "--test", 0.4)
    assert "no train split" in res.stderr and "no train split" not in res.stdout, res.output
