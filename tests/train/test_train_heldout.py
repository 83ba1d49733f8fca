"""Judging a trained judge on its export's held-out items, with the frames it was trained on (audit train
F1, F2): `robojudge judge` and `leaderboard judges` take --split-of EXPORT_DIR:SPLIT and warn of a judge
scored on items it was trained on, or sent frames sampled otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.judges import FrameSpec, make_judge
from robojudge.run import judge_suite
from robojudge.store import ResultStore
from robojudge.train import (
    ExportError,
    export_training_data,
    parse_split_of,
    serving_differences,
    split_items,
    trained_on,
)

REPLY = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4}'


@pytest.fixture
def trained(labelled_suite: Path, tmp_path: Path) -> dict[str, Any]:
    """An export (4 of 8 clips held out) and a checkpoint folder whose robojudge-train.json says it was
    trained on the export's train split at 2 fps, 8 frames, 4 images (as `train sft` writes it; the
    judge that serves it here is the mock backend, so no model runs)."""
    data = tmp_path / "data"
    export_training_data(labelled_suite, ["pa", "ia"], data, fractions={"train": 0.5, "val": 0.5},
                         frames=FrameSpec(fps=2.0, max_frames=8),
                         judge=make_judge({"name": "x", "backend": "hf", "max_images": 4}))
    train, val = split_items(data, "train"), split_items(data, "val")
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "robojudge-train.json").write_text(json.dumps({
        "stage": "sft", "data": str(data.resolve()), "train_items": sorted(train),
        "frames": {"fps": 2.0, "max_frames": 8, "size": None}, "max_images": 4}))
    toml = tmp_path / "judges.toml"
    toml.write_text(f'[judges.ck]\nbackend = "mock"\nmodel = {json.dumps(str(ck))}\nreplies = [{REPLY!r}]\n')
    return {"suite": labelled_suite, "data": data, "train": train, "val": val, "ck": ck, "toml": toml}


def _judge(t: dict[str, Any], db: Path, *extra: str) -> Any:
    return CliRunner().invoke(app, ["judge", str(t["suite"]), "--judges", str(t["toml"]), "--judge", "ck",
                                    "--db", str(db), "--no-cache", "--no-progress", *extra])


def _stored_items(db: Path) -> set[str]:
    with ResultStore(db, read_only=True) as store:
        return {r.item_id for r in store.rows()}


def test_judge_split_of_judges_the_held_out_items_only(trained: dict[str, Any], tmp_path: Path) -> None:
    assert len(trained["train"]) == 8 and len(trained["val"]) == 8
    res = _judge(trained, tmp_path / "r.sqlite", "--split-of", f"{trained['data']}:val", "--fps", "2",
                 "--max-frames", "8", "--max-images", "4")
    assert res.exit_code == 0, res.output
    assert _stored_items(tmp_path / "r.sqlite") == set(trained["val"])
    assert "was trained on" not in res.output and "other frames" not in res.output  # held out, same frames


def test_judging_the_training_items_is_warned_of_with_the_count(
    trained: dict[str, Any], tmp_path: Path
) -> None:
    res = _judge(trained, tmp_path / "r.sqlite")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert f"judge 'ck' ({trained['ck']}) was trained on 8 of these 16 items" in text, text
    assert "--split-of EXPORT_DIR:test" in text
    # ... and of the frames: judge's defaults (4 fps, 32 frames, 32 images) are not what it was trained on
    assert ("judged with fps 4.0 (trained on 2.0), max_frames 32 (trained on 8), max_images 32 (trained on 4)"
            in text)
    assert "pass --fps 2 --max-frames 8 and set max_images = 4" in text


def test_leaderboard_judges_warns_and_keeps_the_warning_in_its_table(
    trained: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "r.sqlite"
    assert _judge(trained, db).exit_code == 0
    args = ["leaderboard", "judges", str(trained["suite"]), "--db", str(db), "--no-calibrated",
            "--bootstrap", "0"]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    # every one of the 16 items is labelled (c7-gen_b with PA only) and judged; 8 are of its train split
    assert "was trained on 8 of these 16 items" in " ".join(res.output.split())
    assert "was trained on 8 of these 16 items" in (tmp_path / "lb" / "judges.md").read_text()
    held = CliRunner().invoke(app, [*args, "--split-of", f"{trained['data']}:val", "--json"])
    assert held.exit_code == 0, held.output
    assert "was trained on" not in held.output
    assert json.loads(held.output[held.output.index("{"):])["n_items"] == 8


def test_the_python_api_and_its_errors(trained: dict[str, Any], tmp_path: Path) -> None:
    judge = make_judge({"name": "ck", "backend": "mock", "model": str(trained["ck"]), "replies": [REPLY]})
    run = judge_suite(trained["suite"], judge, "pa", db=f"sqlite:///{tmp_path / 'a.sqlite'}",
                      only_items=trained["val"])
    assert run.summary.total == 8 and _stored_items(tmp_path / "a.sqlite") == set(trained["val"])
    with pytest.raises(ValueError, match="none of its 16 items is among the 1 items asked for"):
        judge_suite(trained["suite"], judge, "pa", db=f"sqlite:///{tmp_path / 'b.sqlite'}", only_items={"x"})
    two = set(sorted(trained["train"])[:2])
    seen = trained_on("ck", str(trained["ck"]), sorted(trained["val"] | two))
    assert seen is not None and seen.of == 10 and set(seen.items) == two
    assert trained_on("ck", str(trained["ck"]), sorted(trained["val"])) is None
    assert trained_on("ck", "Qwen/Qwen2.5-VL-7B-Instruct", sorted(trained["train"])) is None  # no record
    assert serving_differences(str(trained["ck"]), FrameSpec(fps=2.0, max_frames=8), 4) == []
    assert serving_differences(str(trained["ck"]), FrameSpec(fps=2.0, max_frames=8, grid_view="whole"), 4)
    assert parse_split_of("runs/a:b:test") == (Path("runs/a:b"), "test")
    with pytest.raises(ExportError, match="give EXPORT_DIR:SPLIT"):
        parse_split_of(str(trained["data"]))
    with pytest.raises(ExportError, match="the test split is empty"):
        split_items(trained["data"], "test")
    with pytest.raises(ExportError, match="no export.json"):
        split_items(tmp_path, "val")


def test_a_record_without_train_items_is_read_through_its_export(trained: dict[str, Any]) -> None:
    """Checkpoints trained before train_items was recorded name their export and its digest: the items
    are that export's train split while the export there is still the one trained on."""
    record = trained["ck"] / "robojudge-train.json"
    digest = json.loads((trained["data"] / "export.json").read_text())["digest"]
    record.write_text(json.dumps({"stage": "sft", "data": str(trained["data"]), "data_digest": digest}))
    seen = trained_on("ck", str(trained["ck"]), sorted(trained["train"] | trained["val"]))
    assert seen is not None and set(seen.items) == trained["train"]
    record.write_text(json.dumps({"stage": "sft", "data": str(trained["data"]), "data_digest": "0" * 64}))
    assert trained_on("ck", str(trained["ck"]), sorted(trained["train"])) is None  # another export now


def test_split_items_missing_from_the_suite_are_counted(
    trained: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A suite that lost some of the split's items (another version of the manifest): said, with the count,
    # where the run went on without a word (review rev17 F3).
    lines = trained["suite"].read_text().splitlines()
    val = set(trained["val"])
    dropped = [ln for ln in lines if json.loads(ln)["item_id"] in val][:3]
    smaller = trained["suite"].parent / "smaller.jsonl"  # (beside it: the same relative video paths)
    smaller.write_text("".join(ln + "\n" for ln in lines if ln not in dropped))
    db = tmp_path / "r.sqlite"
    with caplog.at_level("WARNING", logger="robojudge.run._judge"):
        run = judge_suite(smaller, make_judge({"name": "m", "backend": "mock", "replies": [REPLY]}), ["pa"],
                          db=str(db), only_items=val, cache=None)
    assert run.summary.total == 5
    assert any("3 of the 8 items asked for are not in" in r.getMessage() for r in caplog.records)
    args = ["leaderboard", "judges", str(smaller), "--db", str(db), "--no-calibrated", "--bootstrap", "0"]
    board = CliRunner().invoke(app, [*args, "--split-of", f"{trained['data']}:val"])
    assert board.exit_code == 0, board.output
    said = " ".join(board.output.split())
    assert "3 of its 8 items are not in this suite; compared on the 5 that are" in said
