"""`robojudge report MANIFEST --by meta.KEY` groups the summary by a value of the items' meta.

RoboWorM Table C4 sets KIVA against the median rollout depth, which a manifest holds in
``meta.rollout_depth``; `report --by` took only item fields (audit gaps F6: "cannot group by
'meta.rollout_depth'").
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import group_by_field
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

runner = CliRunner()


def test_report_groups_its_summary_by_a_meta_key(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    # item: (rollout depth, iq1_psnr); x5 has no depth
    depths = {"x1": (1, 10.0), "x2": (1, 20.0), "x3": (2, 30.0), "x4": (2, 50.0), "x5": (None, 7.0)}
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(
        json.dumps({"item_id": i, "video": "v.mp4", "meta": {} if d is None else {"rollout_depth": d}}) + "\n"
        for i, (d, _) in depths.items()))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([ResultRow(i, "iq1_psnr", "h", "1", "ok", v) for i, (_, v) in depths.items()])
    done = runner.invoke(build_app("report"), ["report", str(manifest), "--db", str(db), "--no-html", "--by",
                                               "meta.rollout_depth", "--out", str(tmp_path / "rep")])
    assert done.exit_code == 0, done.output
    with (tmp_path / "rep" / "summary.csv").open(encoding="utf-8") as fh:
        means = {r["group"]: (r["n_ok"], float(r["mean"])) for r in csv.DictReader(fh)}
    # depth 1: (10 + 20) / 2; depth 2: (30 + 50) / 2; no depth: x5 alone, shown as '(unset)'
    assert means == {"1": ("2", pytest.approx(15.0)), "2": ("2", pytest.approx(40.0)),
                     "(unset)": ("1", pytest.approx(7.0))}
    assert "meta.rollout_depth" in (tmp_path / "rep" / "summary.md").read_text(encoding="utf-8")


def test_group_by_field_reads_meta_values_as_text_and_refuses_a_bare_prefix() -> None:
    items = [Item(item_id="a", video="v.mp4", meta={"substrate": "vggt", "depth": 3}),
             Item(item_id="b", video="v.mp4")]
    assert group_by_field(items, "meta.substrate") == {"a": "vggt", "b": "(unset)"}
    assert group_by_field(items, "meta.depth") == {"a": "3", "b": "(unset)"}
    with pytest.raises(ValueError, match="or meta.KEY for a value of the items' meta"):
        group_by_field(items, "meta.")


def test_two_fields_and_a_key_no_item_holds_are_refused(tmp_path: Path) -> None:
    # review rev7 F1: 'meta.substrate,generator' was read as one meta key and put every item in one
    # '(unset)' group with exit 0; a misspelt key did the same
    items = [Item(item_id="a", video="v.mp4", meta={"substrate": "vggt"}), Item(item_id="b", video="v.mp4")]
    with pytest.raises(ValueError, match="report --by takes one field.*results export --by a,b"):
        group_by_field(items, "meta.substrate,generator")
    with pytest.raises(ValueError, match=r"meta holds .substrat. \(did you mean meta.substrate\?\)"):
        group_by_field(items, "meta.substrat")
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": it.item_id, "video": "v.mp4", "meta": it.meta}) + "\n"
                                for it in items))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([ResultRow(i, "iq1_psnr", "h", "1", "ok", 1.0) for i in ("a", "b")])
    for by in ("meta.substrat", "meta.substrate,generator"):
        done = runner.invoke(build_app("report"), ["report", str(manifest), "--db", str(db), "--no-html",
                                                   "--by", by, "--out", str(tmp_path / "rep")])
        assert done.exit_code == 2, done.output
    export = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "--suite",
                                                  str(manifest), "--by", "generator,meta.substrat", "-o",
                                                  str(tmp_path / "x.csv")])
    assert export.exit_code != 0 and "no item's meta holds 'substrat'" in " ".join(export.output.split())
    assert not (tmp_path / "x.csv").exists()
