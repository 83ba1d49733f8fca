"""``aggregate scores`` reads ids as text, refuses bad cells and duplicates, and shows partial groups.

Each test here failed on the reader that took pandas' defaults: group ids ``01``/``1``/``1.0`` merged,
``NA``/``None``/``null`` and empty group cells vanished, ``abc`` became NaN, duplicate (item, metric)
rows were averaged, and a group mean from 6 of 10 items passed under ``--missing nan``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.aggregate import AggregateInputError, read_metric_table, scores_from_table
from robojudge.cli import build_app
from robojudge.cli._aggregate import app
from robojudge.metrics import get_metric
from robojudge.store import ResultRow, ResultStore, SafeCsvWriter
from robojudge.video import write_video

runner = CliRunner()


def _invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _rows(text: str) -> dict[str, dict[str, str]]:
    lines = [ln for ln in text.splitlines() if not ln.startswith("note:")]
    return {r["generator"]: r for r in csv.DictReader(lines)}


def test_group_ids_are_text_and_never_merge_or_vanish(tmp_path: Path) -> None:
    path = tmp_path / "ids.csv"
    path.write_text("generator,iq1_ssim\n01,0.2\n1,0.8\nNA,0.5\nNone,0.4\nnull,0.3\n1.0,0.9\n")
    res = _invoke("scores", "--in", path, "--by", "generator", "--missing", "drop")
    assert res.exit_code == 0, res.output
    rows = _rows(res.stdout)
    assert set(rows) == {"01", "1", "1.0", "NA", "None", "null"}
    # IQ-1 out of 6: 6 * (identity-normalized SSIM) per group, each from its one row.
    assert float(rows["01"]["subdim_IQ-1"]) == pytest.approx(6 * 0.2)
    assert float(rows["1"]["subdim_IQ-1"]) == pytest.approx(6 * 0.8)
    assert float(rows["null"]["subdim_IQ-1"]) == pytest.approx(6 * 0.3)


def test_an_empty_group_cell_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text("generator,iq1_ssim\na,0.2\n,0.8\nb,0.3\n")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert f"error: {path} line 3, column 'generator': empty group cell" in said
    assert "Traceback" not in res.output


@pytest.mark.parametrize("cell", ["abc", '"1,5"', "NA"])
def test_a_value_that_is_no_number_is_an_error_naming_line_and_column(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "v.csv"
    path.write_text(f"item_id,generator,iq1_ssim\nx1,a,0.2\nx2,a,{cell}\n")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert f"{path} line 3, item 'x2', column 'iq1_ssim': not a number" in said


def test_a_long_value_that_is_no_number_names_item_and_metric(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("item_id,metric,value\nx1,iq1_ssim,0.5\nx2,iq1_ssim,abc\n")
    with pytest.raises(AggregateInputError, match=r"line 3, item 'x2', metric 'iq1_ssim', column 'value': "
                       r"not a number: 'abc'"):
        scores_from_table(read_metric_table(path), source=path)


def test_blank_and_nan_values_are_missing_not_errors(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    path.write_text("generator,iq1_ssim\na,0.2\na,\na,nan\n")
    res = _invoke("scores", "--in", path, "--by", "generator", "--missing", "drop")
    assert res.exit_code == 0, res.output
    assert float(_rows(res.stdout)["a"]["subdim_IQ-1"]) == pytest.approx(6 * 0.2)


def test_duplicate_item_metric_rows_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.csv"
    path.write_text("item_id,metric,value\nx1,iq1_ssim,0.5\nx1,iq1_ssim,0.6\n")
    res = _invoke("scores", "--in", path)
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert "item 'x1', metric 'iq1_ssim': 2 rows (line 2, line 3), which are never averaged" in said


def _refused(tmp_path: Path, table: str) -> str:
    """``aggregate scores --by generator`` of the export ``table``: refused; what it said, on one line."""
    path = tmp_path / "export.csv"
    path.write_text(table)
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 2
    return " ".join(res.output.split())


def test_two_configurations_of_a_metric_in_an_export_are_refused(tmp_path: Path) -> None:
    said = _refused(tmp_path, "item_id,metric,value,status,config_hash,generator\n"
                              "x1,iq1_ssim,0.5,ok,aaaa,g\nx2,iq1_ssim,0.7,ok,aaaa,g\nx1,iq1_ssim,0.9,ok,bbbb,g\n")
    assert ("item 'x1', metric 'iq1_ssim': stored under 2 configurations (config_hash aaaa, bbbb; line 2, "
            "line 4), which are never averaged") in said
    assert "keep the rows of one configuration" in said


def test_two_versions_of_a_metric_in_an_export_are_named(tmp_path: Path) -> None:
    # An upgraded demo: rbg_stability v3 rows stay current beside v4 rows of the same config hash, and
    # the error named neither version and suggested a config_hash filter that cannot part them.
    said = _refused(tmp_path, "item_id,metric,value,status,config_hash,version,generator\n"
                              "x1,iq1_ssim,0.5,ok,aaaa,3,g\nx1,iq1_ssim,0.9,ok,aaaa,4,g\n")
    assert ("item 'x1', metric 'iq1_ssim': stored under 2 versions of the metric (version 3, 4; line 2, "
            "line 3), which are never averaged") in said
    assert "filter the export on its version column" in said


def test_an_export_of_the_installed_versions_aggregates_after_an_upgrade(tmp_path: Path) -> None:
    # An upgrade audit: after a version bump the documented `results export` -> `aggregate scores` path
    # was refused, and editing the CSV by hand was the only way on. --installed-versions leaves the old
    # version's rows out (and says how many); a judge's rows and unknown metrics' rows stay.
    spec, pfc = get_metric("iq1_ssim"), get_metric("pixel_frame_consistency")
    db = tmp_path / "r.sqlite"
    write_video(tmp_path / "v.mp4", np.zeros((4, 16, 16, 3), np.uint8), fps=4)
    with ResultStore(db) as store:
        # (two stale rows, one of the installed version: the note counted the one left out too)
        store.add([ResultRow("x1", "pixel_frame_consistency", "h", v, "ok", 0.5, fingerprint="before")
                   for v in (pfc.version, "0")])
        store.add([ResultRow("x1", "iq1_ssim", "h", spec.version, "ok", 0.9),
                   ResultRow("x1", "iq1_ssim", "h", "0", "ok", 0.5),
                   ResultRow("x2", "iq1_ssim", "h", "0", "ok", 0.7),
                   ResultRow("x1", "judge:j:pa", "h", "1", "ok", 4.0),
                   ResultRow("x1", "not_a_metric_here", "h", "7", "ok", 1.0)])
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "generator": "g"})
                                              + "\n" for i in ("x1", "x2")))
    base = ["results", "export", "--db", str(db), "--suite", str(tmp_path / "s.jsonl"), "--by", "generator"]
    runner = CliRunner()
    res = runner.invoke(build_app("results"), [*base, "--out", str(tmp_path / "all.csv")])
    assert res.exit_code == 0, res.output
    assert "--installed-versions" in " ".join(_invoke("scores", "--in", tmp_path / "all.csv", "--by",
                                                      "generator").output.split())
    res = runner.invoke(build_app("results"), [*base, "--out", str(tmp_path / "now.csv"),
                                               "--installed-versions"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "left out 3 rows of metric versions other than installed: iq1_ssim version 0 (2); " \
        "pixel_frame_consistency version 0 (1)" in said
    assert "1 of 4 rows are stale" in said
    with (tmp_path / "now.csv").open() as fh:
        kept = [(r["item_id"], r["metric"], r["version"]) for r in csv.DictReader(fh)]
    assert sorted(kept) == [("x1", "iq1_ssim", spec.version), ("x1", "judge:j:pa", "1"),
                            ("x1", "not_a_metric_here", "7"), ("x1", "pixel_frame_consistency", pfc.version)]
    res = _invoke("scores", "--in", tmp_path / "now.csv", "--by", "generator")
    assert res.exit_code == 0, res.output


def test_one_item_in_two_groups_is_no_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("item_id,generator,iq1_ssim\nx1,a,0.5\nx1,b,0.7\n")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 0, res.output
    assert set(_rows(res.stdout)) == {"a", "b"}


def _partial_export(tmp_path: Path) -> Path:
    # Group g: 10 items, iq1_ssim scored on 6 of them (4 error rows without a value); group h complete.
    path = tmp_path / "export.csv"
    lines = ["item_id,metric,value,status,generator"]
    for i in range(10):
        ok = i < 6
        lines.append(f"g{i},iq1_ssim,{'0.5' if ok else ''},{'ok' if ok else 'error'},g")
    lines += [f"h{i},iq1_ssim,0.25,ok,h" for i in range(3)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_missing_nan_makes_a_partly_measured_group_nan_and_says_so(tmp_path: Path) -> None:
    res = _invoke("scores", "--in", _partial_export(tmp_path), "--by", "generator",
                  "--robophyscore-metrics", "iq1_ssim")
    assert res.exit_code == 0, res.output
    rows = _rows(res.stdout)
    assert rows["g"]["robophyscore"] == ""  # 6 of 10 items: NaN under --missing nan
    assert float(rows["h"]["robophyscore"]) == pytest.approx(0.25)
    said = " ".join(res.stderr.split())
    assert "1 (group, metric) pair(s) lack values" in said and "g: iq1_ssim 6 of 10" in said


def test_missing_drop_averages_the_values_there_are_and_says_so(tmp_path: Path) -> None:
    res = _invoke("scores", "--in", _partial_export(tmp_path), "--by", "generator", "--missing", "drop")
    assert res.exit_code == 0, res.output
    assert float(_rows(res.stdout)["g"]["subdim_IQ-1"]) == pytest.approx(6 * 0.5)
    assert "g: iq1_ssim 6 of 10" in " ".join(res.stderr.split())


def test_an_item_without_any_row_of_a_metric_counts_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("item_id,metric,value,generator\n"
                    "a1,iq1_ssim,0.5,g\na1,iq1_psnr,25,g\na2,iq1_psnr,25,g\n")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 0, res.output
    assert "g: iq1_ssim 1 of 2" in " ".join(res.stderr.split())


def test_set_level_rows_are_complete_with_their_own_row(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("item_id,metric,value,generator\n"
                    "a1,iq1_ssim,0.5,g\na2,iq1_ssim,0.7,g\ngroup:generator=g,iq1_fvd,500,g\n")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 0, res.output
    assert "lack values" not in res.stderr


def test_cells_escaped_by_the_export_read_back_as_stored(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("item_id,metric,value,generator\n"
                    "'=cmd,iq1_ssim,0.5,'-base\n"
                    "x2,iq1_ssim,0.7,'@gen\n"
                    "x3,iq1_ssim,0.9,'plain\n")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 0, res.output
    # Only the export's escape (a ' before = + - @ tab CR) is undone; 'plain keeps its quote. The output
    # CSV escapes the groups again, as every CSV robojudge writes, so it reads back the same way.
    assert {SafeCsvWriter.unescape(g) for g in _rows(res.stdout)} == {"-base", "@gen", "'plain"}
    assert set(_rows(res.stdout)) == {"'-base", "'@gen", "'plain"}


def test_set_level_rows_of_another_grouping_are_left_out_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("item_id,metric,value,generator\n"
                    "a1,iq1_ssim,0.5,g\ngroup:task=t1,iq1_fvd,500,\n")
    res = _invoke("scores", "--in", path, "--by", "generator", "--robophyscore-metrics", "iq1_ssim")
    assert res.exit_code == 0, res.output
    assert float(_rows(res.stdout)["g"]["robophyscore"]) == pytest.approx(0.5)
    said = " ".join(res.stderr.split())
    assert "leaving out 1 set-level row(s) with an empty generator cell" in said and "group:task=t1" in said


def test_normalized_values_outside_the_unit_range_are_named(tmp_path: Path) -> None:
    # Identity and one-minus rules keep a raw SSIM of 1.7 as 1.7 (visible, not clipped): say so.
    path = tmp_path / "wide.csv"
    path.write_text("generator,iq1_ssim,iq1_psnr\nA,1.7,25\nA,0.5,30\nB,0.6,28\n")
    res = _invoke("scores", "--in", path, "--by", "generator", "--missing", "drop")
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert "normalized values outside [0, 1]: iq1_ssim (1, e.g. raw 1.7)" in said
    assert "iq1_psnr" not in said.split("outside [0, 1]:")[1].split(";")[0]
    fine = tmp_path / "fine.csv"
    fine.write_text("generator,iq1_ssim\nA,0.7\nB,0.6\n")
    assert "outside [0, 1]" not in _invoke("scores", "--in", fine, "--by", "generator").stderr
