"""An export into a folder holding an earlier export with another split (upgrade audit F2): the export
made by the robojudge of 2026-12-05 was split otherwise, and the same command run again after the
upgrade moved 18 of 40 items to another split in place, without a word, replacing the only record of
what a checkpoint was trained on; the trained-on check could not see that checkpoint's items either."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.judges import FrameSpec
from robojudge.train import ExportError, export_training_data, split_items, trained_on

SMALL = FrameSpec(fps=2.0, max_frames=2)
HALF = {"train": 0.5, "val": 0.25, "test": 0.25}


def _splits(out: Path) -> dict[str, str]:
    found = {}
    for split in ("train", "val", "test"):
        if (out / f"{split}.jsonl").is_file():
            found.update({i: split for i in split_items(out, split)})
    return found


def _other_seed(labelled_suite: Path, tmp_path: Path) -> int:
    """A seed that splits the suite otherwise than seed 0 (found by exporting, not assumed)."""
    base = tmp_path / "seed0"
    export_training_data(labelled_suite, ["pa"], base, frames=SMALL, fractions=HALF, seed=0)
    for seed in range(1, 20):
        probe = tmp_path / f"seed{seed}"
        export_training_data(labelled_suite, ["pa"], probe, frames=SMALL, fractions=HALF, seed=seed)
        if _splits(probe) != _splits(base):
            return seed
    raise AssertionError("no seed of 1..19 splits the suite otherwise")


def test_an_export_with_another_split_is_refused_unless_forced_and_keeps_the_earlier_split(
    labelled_suite: Path, tmp_path: Path
) -> None:
    seed = _other_seed(labelled_suite, tmp_path)
    out = tmp_path / "data"
    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0)
    before = {p.name: p.read_bytes() for p in out.glob("*.json*")}
    old, new = _splits(out), _splits(tmp_path / f"seed{seed}")
    moved = sorted(i for i in old if old[i] != new[i])
    with pytest.raises(ExportError) as info:
        export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=seed)
    said = str(info.value)
    assert f"--out {out}" in said and f"put {len(moved)} of the {len(old)} items" in said
    assert moved[0] in said and "--force" in said
    assert {p.name: p.read_bytes() for p in out.glob("*.json*")} == before  # nothing changed
    assert not list(out.glob("earlier-split-*"))

    summary = export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=seed,
                                   force=True)
    assert summary.resplit == moved and summary.earlier_split is not None
    kept = summary.earlier_split
    assert kept.parent == out and kept.name.startswith("earlier-split-")
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == before  # the earlier records, as they were
    assert _splits(out) == new
    assert any(f"{len(moved)} item(s) changed split" in n and str(kept) in n for n in summary.notes)
    # The same split again is no change: no refusal, no other folder kept.
    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=seed)
    assert list(out.glob("earlier-split-*")) == [kept]


def test_the_cli_refuses_another_split_and_takes_force(labelled_suite: Path, tmp_path: Path) -> None:
    seed = _other_seed(labelled_suite, tmp_path)
    out = tmp_path / "data"
    args = ["train", "export", "--labels", str(labelled_suite), "--rubric", "pa", "--out", str(out), "--fps",
            "2", "--max-frames", "2", "--val", "0.25", "--test", "0.25"]
    assert CliRunner().invoke(app, args).exit_code == 0
    res = CliRunner().invoke(app, [*args, "--seed", str(seed)])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and "holds an earlier export that put" in said and "--force" in said
    res = CliRunner().invoke(app, [*args, "--seed", str(seed), "--force"])
    said = " ".join(res.output.split())
    assert res.exit_code == 0, res.output
    assert "changed split from the earlier export in this folder" in said and "earlier-split-" in said


def test_a_record_from_before_export_digests_is_read_through_its_export_with_a_warning(
    labelled_suite: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A checkpoint record as `train sft` wrote it on 2026-12-05: the export folder, no train_items, no
    # data_digest. Its items are that folder's train split (and an earlier one kept there), said to be
    # a guess.
    seed = _other_seed(labelled_suite, tmp_path)
    out = tmp_path / "data"
    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0)
    trained = split_items(out, "train")
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "robojudge-train.json").write_text(json.dumps({"stage": "sft", "data": str(out)}))
    items = sorted(_splits(out))
    with caplog.at_level(logging.WARNING, logger="robojudge.train"):
        seen = trained_on("ck", str(ck), items)
    assert seen is not None and set(seen.items) == trained
    warned = [r.getMessage() for r in caplog.records if "written before exports were fingerprinted" in
              r.getMessage()]
    assert len(warned) == 1 and str(out / "train.jsonl") in warned[0]

    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=seed, force=True)
    assert trained - split_items(out, "train")  # some training items are now held out
    seen = trained_on("ck", str(ck), items)
    assert seen is not None and trained <= set(seen.items)  # the kept train split still counts


def test_a_record_with_a_digest_finds_its_export_kept_beside_a_forced_one(
    labelled_suite: Path, tmp_path: Path
) -> None:
    seed = _other_seed(labelled_suite, tmp_path)
    out = tmp_path / "data"
    first = export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0)
    trained = split_items(out, "train")
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "robojudge-train.json").write_text(json.dumps({"stage": "sft", "data": str(out),
                                                         "data_digest": first.digest}))
    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=seed, force=True)
    seen = trained_on("ck", str(ck), sorted(_splits(out)))
    assert seen is not None and set(seen.items) == trained


def test_an_unreadable_earlier_export_is_refused_unless_forced_and_then_kept_aside(
    labelled_suite: Path, tmp_path: Path
) -> None:
    """A hand-edited or half-copied train.jsonl blocked every export into the folder, --force included,
    with no word of how to go on (review rev22 F2)."""
    out = tmp_path / "data"
    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0)
    with (out / "train.jsonl").open("a") as fh:
        fh.write('{"item_id": "cut')
    damaged = (out / "train.jsonl").read_bytes()
    refused = r"train\.jsonl, line \d+: not JSON .*cannot be read to compare"
    with pytest.raises(ExportError, match=refused) as info:
        export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0)
    assert "--force" in str(info.value)
    summary = export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0,
                                   force=True)
    kept = summary.earlier_split
    assert kept is not None and (kept / "train.jsonl").read_bytes() == damaged
    assert any("could not be read" in n and str(kept) in n for n in summary.notes)
    assert _splits(out)  # the new export is in place and readable
    # Cut inside a character (review rev24 F3): the same, where a bare UnicodeDecodeError named nothing.
    (out / "train.jsonl").write_bytes((out / "train.jsonl").read_bytes() + '{"item_id": "é'.encode()[:-1])
    with pytest.raises(ExportError, match=r"train\.jsonl, line \d+: not UTF-8 text .*--force"):
        export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0)
    export_training_data(labelled_suite, ["pa"], out, frames=SMALL, fractions=HALF, seed=0, force=True)
