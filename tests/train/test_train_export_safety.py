"""What an audit of judge training found in the export (2026-12-06): ``--out`` replaced files no export
wrote (the labels manifest, a suite's frame folders), rollouts without a clip id were split apart with
the card saying "no clip in two splits", the manifest's own split field was ignored without a word, and
nothing told two exports apart."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from _train_suite import write_labelled_suite

from robojudge.judges import FrameSpec
from robojudge.suite import Item
from robojudge.train import ExportError, export_training_data
from robojudge.train._splits import clip_key
from robojudge.video import write_video

SMALL = FrameSpec(fps=2.0, max_frames=2)


def _rows(manifest: Path) -> list[dict]:
    return [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]


def _write(manifest: Path, rows: list[dict]) -> None:
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_out_holding_the_labels_manifest_is_refused(labelled_suite: Path, tmp_path: Path) -> None:
    inside = labelled_suite.parent / "train.jsonl"  # the labels, named like the records file
    shutil.copy(labelled_suite, inside)
    before = inside.read_bytes()
    with pytest.raises(ExportError, match=r"would replace .*train\.jsonl, which holds the labels manifest"):
        export_training_data(inside, ["pa"], labelled_suite.parent, frames=SMALL)
    assert inside.read_bytes() == before


def test_out_holding_a_suite_s_frame_folders_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    write_video(root / "frames" / "ep1", np.zeros((4, 16, 16, 3), np.uint8), fps=4)
    _write(root / "suite.jsonl", [{"item_id": "ep1", "video": "frames/ep1", "labels": {"pa": 3}}])
    with pytest.raises(ExportError, match=r"holds frames that no robojudge export wrote"):
        export_training_data(root / "suite.jsonl", ["pa"], root, frames=SMALL)
    (root / "export.json").write_text("{}")  # as if an export had been written there before
    with pytest.raises(ExportError, match=r"which holds .*frames/ep1, a file of item 'ep1'"):
        export_training_data(root / "suite.jsonl", ["pa"], root, frames=SMALL)
    assert len(list((root / "frames" / "ep1").glob("*.png"))) == 4


def test_out_with_files_no_export_wrote_is_refused_and_an_earlier_export_is_replaced(
    labelled_suite: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("# my notes\n")
    with pytest.raises(ExportError, match=r"holds README\.md that no robojudge export wrote"):
        export_training_data(labelled_suite, ["pa"], out, frames=SMALL)
    assert (out / "README.md").read_text() == "# my notes\n"
    (out / "README.md").unlink()
    first = export_training_data(labelled_suite, ["pa"], out, frames=SMALL)
    again = export_training_data(labelled_suite, ["pa"], out, frames=SMALL)  # an export's own files: replaced
    assert first.digest == again.digest == json.loads((out / "export.json").read_text())["digest"]
    rows = _rows(labelled_suite)
    rows[0]["labels"]["pa"] = 1 + rows[0]["labels"]["pa"] % 5  # one rating changed: another export
    _write(labelled_suite, rows)
    assert export_training_data(labelled_suite, ["pa"], out, frames=SMALL).digest != first.digest


def test_items_without_a_clip_id_and_a_manifest_split_are_noted(tmp_path: Path) -> None:
    """Items without a clip id were split apart with the card saying "no clip in two splits"; a shared
    reference video does not stand in for one (one reference may serve a whole task: a review found the
    whole suite collapsed into one clip and the validation split empty)."""
    manifest = write_labelled_suite(tmp_path / "suite")
    rows = _rows(manifest)
    for row in rows:
        row["reference_video"] = "videos/c0-gen_a.mp4"  # one reference for the task
    rows[0].pop("clip_id")
    rows[1]["split"] = "test"
    _write(manifest, rows)
    summary = export_training_data(manifest, ["pa"], tmp_path / "out", frames=SMALL,
                                   fractions={"train": 0.5, "val": 0.5})
    assert summary.records["val"] > 0 and summary.records["train"] > 0
    assert summary.notes[0].startswith("1 item(s) have no clip_id (c0-gen_a): each is its own clip")
    assert summary.notes[1] == ("the manifest's split field (test 1) is not used: the export splits by clip "
                                "itself (--val, --test, --seed)")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Note: 1 item(s) have no clip_id" in card


def test_clip_key_is_the_clip_id_else_the_item() -> None:
    assert clip_key(Item(item_id="a", video="v.mp4", clip_id="c", reference_video="r.mp4")) == "c"
    assert clip_key(Item(item_id="a", video="v.mp4", reference_video="r.mp4")) == "item:a"
