"""The report's "Networks" section: which network each model-backed metric in the report computes with,
where the published file is and whether robojudge's loader was ever checked on it (docs/weights.md)."""

from __future__ import annotations

import csv

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metric_info import registry_networks
from robojudge.models import get_weights
from robojudge.report._network_section import networks_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

ITEMS = [Item(item_id=f"i{k}", video="v.mp4", generator="g") for k in range(3)]


def _rows() -> list[ResultRow]:
    rows = []
    for it in ITEMS:
        rows.append(ResultRow(it.item_id, "clip_frame_consistency", "h", "1", "ok", 0.9))
        rows.append(ResultRow(it.item_id, "cc_semantics", "h", "1", "ok", 0.5))
        rows.append(ResultRow(it.item_id, "pixel_frame_consistency", "h", "1", "ok", 0.7))
        # failed on every item: left out of the report's tables, so not listed here either
        rows.append(ResultRow(it.item_id, "dino_frame_consistency", "h", "1", "error", None,
                              error="no weights"))
    return rows


def test_registry_networks_follow_the_catalogue():
    (clip,) = registry_networks("clip_frame_consistency")
    spec = get_weights("clip_vit_b32")
    assert (clip.name, clip.source, clip.pinning, clip.unverified) == (
        "clip_vit_b32", spec.source(), spec.pinning(), spec.unverified)
    assert registry_networks("pixel_frame_consistency") == ()
    assert registry_networks("judge:qwen:pa") == ()  # not a registered metric: nothing known
    assert registry_networks("cc_semantics")[0].unverified  # ViCLIP: robojudge's own port


def test_section_lists_the_networks_of_the_metrics_with_values():
    sec = networks_section(ReportInput(_rows(), ITEMS, lambda m: True, networks=registry_networks))
    assert sec.skipped is None
    (table,) = sec.tables
    got = [(r[0].formatted(), r[1].formatted(), r[5].formatted()) for r in table.rows]
    assert got == [("cc_semantics", "viclip_l14_internvid", "no (unverified)"),
                   ("clip_frame_consistency", "clip_vit_b32",
                    "no (unverified)" if get_weights("clip_vit_b32").unverified else "yes")]
    assert "Unverified (cc_semantics)" in sec.intro and "2 metrics" in sec.intro


def test_without_the_lookup_or_without_model_metrics_the_section_says_why():
    sec = networks_section(ReportInput(_rows(), ITEMS, lambda m: True))
    assert sec.tables == [] and "without the metric registry's list of networks" in sec.skipped
    only_free = [r for r in _rows() if r.metric == "pixel_frame_consistency"]
    sec = networks_section(ReportInput(only_free, ITEMS, lambda m: True, networks=registry_networks))
    assert sec.tables == [] and "no metric with values in this report computes with a network" in sec.skipped


def test_cli_report_writes_the_networks_table(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultStore(f"sqlite:///{db}") as store:
        store.add_new(_rows())
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in ITEMS))
    res = CliRunner().invoke(build_app("report"), ["report", str(manifest), "--db", str(db),
                                                    "--out", str(tmp_path / "rep"), "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    with open(tmp_path / "rep" / "tables" / "networks.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [(r["metric"], r["loader checked"]) for r in table][0] == ("cc_semantics", "no (unverified)")
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert 'id="networks"' in page and "viclip_l14_internvid" in page


def test_the_files_behind_each_metric_s_values_are_counted_and_a_mix_is_said():
    # Each value records the digest of the weights it was computed with; the report named the network
    # only, so values of two different files of it (two machines) were compared as one metric's.
    a, b = "a" * 32, "b" * 32
    rows = [ResultRow("i0", "clip_frame_consistency", "h", "1", "ok", 0.9,
                      details={"network_weights": {"clip_vit_b32": a}}),
            ResultRow("i1", "clip_frame_consistency", "h", "1", "ok", 0.8,
                      details={"network_weights": {"clip_vit_b32": a}}),
            ResultRow("i2", "clip_frame_consistency", "h", "1", "ok", 0.7,
                      details={"network_weights": {"clip_vit_b32": b}}),
            *(ResultRow(it.item_id, "cc_semantics", "h", "1", "ok", 0.5) for it in ITEMS)]
    sec = networks_section(ReportInput(rows, ITEMS, lambda m: True, networks=registry_networks))
    (table,) = sec.tables
    files = {r[0].formatted(): r[6].formatted() for r in table.rows}
    assert files == {"clip_frame_consistency": f"2 files: {a[:12]} (2 values), {b[:12]} (1 value)",
                     "cc_semantics": "not recorded"}
    assert "different files of one network (clip_frame_consistency)" in sec.intro
    bare = ResultRow("i2", "clip_frame_consistency", "h", "1", "ok", 0.7)  # stored before rows recorded it
    one = [r for r in rows if r.item_id != "i2"] + [bare]
    sec = networks_section(ReportInput(one, ITEMS, lambda m: True, networks=registry_networks))
    files = {r[0].formatted(): r[6].formatted() for r in sec.tables[0].rows}
    assert files["clip_frame_consistency"] == f"1 file ({a[:12]}); 1 value records none"
    assert "different files" not in sec.intro
