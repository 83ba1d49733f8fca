"""`robojudge results export --by FIELD --suite SUITE` feeds `robojudge aggregate scores --by FIELD`.

An export holds every metric of the run: RoboPhys-3D ids beside robojudge's own metrics and judges'
rows. The aggregation leaves the others out with a note (as a wide table's other columns), and the
group of items without the field keeps its name ``-``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore

runner = CliRunner()


def _row(item: str, metric: str, value: float | None, status: str = "ok") -> ResultRow:
    return ResultRow(item, metric, "h", "1", status, value, error=None if status == "ok" else "boom")


def test_an_export_of_a_run_aggregates_by_generator(tmp_path: Path) -> None:
    suite = tmp_path / "suite.jsonl"
    gens = {"a1": "alpha", "a2": "alpha", "b1": None}
    suite.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", **({"generator": g} if g else {})})
                             + "\n" for i, g in gens.items()))
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([
            _row("a1", "ol_average_recall", 0.2), _row("a2", "ol_average_recall", 0.6),
            _row("b1", "ol_average_recall", 0.9),
            _row("a1", "pixel_frame_consistency", 0.99), _row("b1", "judge:qwen:pa", 4.0),
            _row("a2", "ol_avrage_recall", 0.5),  # a near miss of an id: named as one in the note
            _row("b1", "ol_average_precision", None, status="error"),
        ])
    export = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--by", "generator", "--suite", str(suite)])
    assert done.exit_code == 0, done.output
    assert {r["generator"] for r in csv.DictReader(export.open())} == {"alpha", "-"}

    out = tmp_path / "scores.csv"
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(export), "--by",
                                                  "generator", "--normalized", "--missing", "drop", "--out",
                                                  str(out)])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert ("ignoring the rows of 3 metric(s) that are not RoboPhys-3D ids: judge:qwen:pa, ol_avrage_recall "
            "(did you mean ol_average_recall?), pixel_frame_consistency") in said
    rows = {r["generator"]: r for r in csv.DictReader(out.open())}
    assert set(rows) == {"alpha", "-"}
    # OL holds ol_average_precision and ol_average_recall (out of 2); with --missing drop the one stored
    # is the mean: alpha (0.2 + 0.6) / 2 = 0.4 -> 2 * 0.4; the error row of '-' is no value.
    assert float(rows["alpha"]["subdim_OL"]) == pytest.approx(0.8)
    assert float(rows["-"]["subdim_OL"]) == pytest.approx(1.8)


def test_a_table_naming_no_robophys_metric_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("metric,value\nflow_warp_error,3\npixel_frame_consistency,1\n")
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(path)])
    assert done.exit_code == 2
    assert "unknown RoboPhys-3D metric 'flow_warp_error' (and 1 more unknown); no row names a RoboPhys-3D " \
           "metric" in " ".join(done.output.split())


def test_stale_rows_are_marked_in_the_export_and_left_out_by_aggregate(tmp_path: Path) -> None:
    # An audit rescored nothing after correcting a reference: the export carried the stale values with
    # nothing in the file to say so, and `aggregate` ranked with them (0.414 against 0.108) while the
    # report left them out.
    import numpy as np

    from robojudge.run import build_requests, score_items
    from robojudge.suite import load_suite
    from robojudge.video import write_video

    rng = np.random.default_rng(0)
    rows = []
    for name, gen in (("a1", "alpha"), ("a2", "alpha"), ("b1", "beta")):
        write_video(tmp_path / f"{name}.mp4", rng.integers(0, 255, (6, 16, 16, 3), dtype=np.uint8), fps=8)
        rows.append({"item_id": name, "video": f"{name}.mp4", "generator": gen})
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        score_items(load_suite(suite).items, build_requests(["mq_temporal_flickering"]), store)
    write_video(tmp_path / "a2.mp4", np.zeros((6, 16, 16, 3), np.uint8), fps=8)  # a2's value is now stale
    export = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--by", "generator", "--suite", str(suite)])
    assert done.exit_code == 0, done.output
    assert {r["item_id"]: r["stale"] for r in csv.DictReader(export.open())} == {"a1": "", "a2": "stale",
                                                                               "b1": ""}
    assert "the 'stale' column marks them" in " ".join(done.output.split())
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(export), "--by",
                                                  "generator", "--robophyscore-metrics",
                                                  "mq_temporal_flickering"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "leaving out the values of 1 stale row(s)" in said and "e.g. a2" in said
    assert "alpha: mq_temporal_flickering 1 of 2" in said  # the stale item counts as missing


def test_a_set_level_row_of_a_group_the_suite_no_longer_has_is_marked_outside(tmp_path: Path) -> None:
    # A generator renamed sloppy -> sloppy2: the old group's Inception Score was exported as generator
    # 'sloppy', and aggregate showed a generator no item has (then as '-', the items without one).
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"item_id": "x1", "video": "v.mp4", "generator": "sloppy2"}) + "\n")
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    db = tmp_path / "r.sqlite"

    def group(name: str) -> ResultRow:
        return ResultRow(f"group:generator={name}", "iq1_inception_score", "h", "1", "ok", 2.0,
                         config={"group_by": "generator"}, details={"group": name})

    with ResultStore(db) as store:
        store.add([group("sloppy"), group("sloppy2"), _row("x1", "iq1_ssim", 0.5)])
    export = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--by", "generator", "--suite", str(suite)])
    assert done.exit_code == 0, done.output
    cells = {r["item_id"]: (r["generator"], r["outside_suite"]) for r in csv.DictReader(export.open())}
    assert cells == {"group:generator=sloppy": ("", "outside"), "group:generator=sloppy2": ("sloppy2", ""),
                     "x1": ("sloppy2", "")}
    assert "1 of 3 rows are of items (or groups) that are not in" in " ".join(done.output.split())


def _export(tmp_path: Path, rows: list[ResultRow]) -> Path:
    tmp_path.mkdir(exist_ok=True)
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "generator": g}) + "\n"
                             for i, g in (("a1", "alpha"), ("a2", "alpha"), ("b1", "beta"))))
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add(rows)
    export = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--by", "generator", "--suite", str(suite)])
    assert done.exit_code == 0, done.output
    return export


def _scores(export: Path) -> tuple[int, str, dict[str, dict[str, str]]]:
    out = export.with_name("scores.csv")
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(export), "--by",
                                                  "generator", "--missing", "drop", "--out", str(out)])
    rows = {r["generator"]: r for r in csv.DictReader(out.open())} if done.exit_code == 0 else {}
    return done.exit_code, " ".join(done.output.split()), rows


def test_a_judge_rubric_score_counts_as_the_metric_it_feeds(tmp_path: Path) -> None:
    # docs/judges.md: `judge:NAME:pla_physical_commonsense` is stored on the metric's native scale "so
    # aggregate normalizes it with the taxonomy's rule"; aggregate dropped it as not a RoboPhys-3D id, and
    # RoboPhyscore left out the one of its eight default metrics that was scored.
    pla = {"a1": 5.0, "a2": 3.0, "b1": 1.0}
    judged = _export(tmp_path / "judged", [_row(i, "judge:mk:pla_physical_commonsense", v)
                                           for i, v in pla.items()])
    direct = _export(tmp_path / "direct", [_row(i, "pla_physical_commonsense", v) for i, v in pla.items()])
    code, said, got = _scores(judged)
    assert code == 0, said
    assert ("reading judge rubric scores as the RoboPhys-3D metrics they feed: "
            "judge:mk:pla_physical_commonsense as pla_physical_commonsense") in said
    assert got == _scores(direct)[2]
    # table normalization of PLA is (x - 1) / 4: alpha (1 + 0.5) / 2, beta 0
    assert float(got["alpha"]["subdim_PLA"]) == pytest.approx(0.75)
    assert float(got["beta"]["subdim_PLA"]) == pytest.approx(0.0)
    assert got["alpha"]["robophyscore"] not in ("", "nan")


def test_two_sources_of_one_taxonomy_metric_are_refused(tmp_path: Path) -> None:
    rows = [_row(i, "judge:mk:pla_physical_commonsense", 4.0) for i in ("a1", "a2", "b1")]
    rows += [_row(i, "judge:other:pla_physical_commonsense", 2.0) for i in ("a1", "a2", "b1")]
    code, said, _ = _scores(_export(tmp_path, rows))
    assert code == 2
    assert ("2 sources of RoboPhys-3D metric 'pla_physical_commonsense': judge:mk:pla_physical_commonsense, "
            "judge:other:pla_physical_commonsense, which are never averaged") in said


def test_rows_of_items_the_suite_no_longer_holds_are_left_out_not_scored_as_a_group(tmp_path: Path) -> None:
    # An audit exported a run with a manifest that had dropped one item: its rows were written with the
    # generator '-', and `aggregate` scored them as a generator '-' (or averaged them into the items
    # without a generator), while the report left them out.
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    now = tmp_path / "now.jsonl"  # the suite without item 'gone' (of alpha), scored before
    now.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", **({"generator": g} if g else {})})
                           + "\n" for i, g in (("a1", "alpha"), ("a2", "alpha"), ("u1", None))))
    db = tmp_path / "r.sqlite"
    values = {"a1": 0.2, "a2": 0.4, "u1": 0.6, "gone": 1.0}
    with ResultStore(db) as store:
        store.add([_row(i, "ol_average_recall", v) for i, v in values.items()])
    export = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--by", "generator", "--suite", str(now)])
    assert done.exit_code == 0, done.output
    assert "the 'outside_suite' column marks them 'outside' and their generator cell is empty" in " ".join(
        done.output.split())
    cells = {r["item_id"]: (r["generator"], r["outside_suite"]) for r in csv.DictReader(export.open())}
    assert cells == {"a1": ("alpha", ""), "a2": ("alpha", ""), "u1": ("-", ""), "gone": ("", "outside")}
    out = tmp_path / "scores.csv"
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(export), "--by",
                                                  "generator", "--normalized", "--missing", "drop", "--out",
                                                  str(out)])
    assert done.exit_code == 0, done.output
    assert "leaving out 1 row(s) marked outside the suite" in " ".join(done.output.split())
    rows = {r["generator"]: r for r in csv.DictReader(out.open())}
    # OL out of 2, one metric stored: alpha 2 * (0.2 + 0.4) / 2 = 0.6; '-' is u1 alone, 2 * 0.6 (with
    # 'gone' it was 2 * (0.6 + 1.0) / 2 = 1.6)
    assert set(rows) == {"alpha", "-"}
    assert float(rows["alpha"]["subdim_OL"]) == pytest.approx(0.6)
    assert float(rows["-"]["subdim_OL"]) == pytest.approx(1.2)
    # the report's results.csv, the same export, marks it too
    done = runner.invoke(build_app("report"), ["report", str(now), "--db", str(db), "--no-html", "--out",
                                               str(tmp_path / "rep")])
    assert done.exit_code == 0, done.output
    with (tmp_path / "rep" / "results.csv").open() as fh:
        marks = {r["item_id"]: r["outside_suite"] for r in csv.DictReader(fh)}
    assert marks == {"a1": "", "a2": "", "u1": "", "gone": "outside"}


def test_a_user_rubric_declaring_its_taxonomy_metric_feeds_it(tmp_path: Path) -> None:
    # A rubric file with `taxonomy = "pla_physical_commonsense"` stores details.taxonomy_id on its rows:
    # the report read it, aggregate called the rows "not RoboPhys-3D ids" (review s69_review1 1).
    pla = {"a1": 5.0, "a2": 3.0, "b1": 1.0}
    declared = {"taxonomy_id": "pla_physical_commonsense", "rubric": "my_physics"}
    judged = _export(tmp_path / "judged", [
        ResultRow(i, "judge:mk:my_physics", "h", "1", "ok", v, details=declared) for i, v in pla.items()])
    direct = _export(tmp_path / "direct", [_row(i, "pla_physical_commonsense", v) for i, v in pla.items()])
    code, said, got = _scores(judged)
    assert code == 0, said
    assert "judge:mk:my_physics as pla_physical_commonsense" in said
    assert got == _scores(direct)[2] and float(got["alpha"]["subdim_PLA"]) == pytest.approx(0.75)
    undeclared = _export(tmp_path / "plain", [_row(i, "judge:mk:my_physics", v) for i, v in pla.items()]
                         + [_row(i, "iq1_psnr", 30.0) for i in pla])
    code, said, got = _scores(undeclared)
    assert code == 0 and got["alpha"]["subdim_PLA"] == ""
    assert "not RoboPhys-3D ids: judge:mk:my_physics" in said


def test_two_rubric_versions_of_one_judge_are_named_as_such(tmp_path: Path) -> None:
    # The refusal named pla_physical_commonsense, which no row of the file holds, and blamed an earlier
    # robojudge for what a judge run again with a reworded rubric leaves (review s69_review1 5).
    rows = [ResultRow(i, "judge:mk:pla_physical_commonsense", "h", v, "ok", 4.0)
            for i in ("a1", "a2", "b1") for v in ("1", "2")]
    code, said, _ = _scores(_export(tmp_path, rows))
    assert code == 2
    assert ("metric 'pla_physical_commonsense' (from judge:mk:pla_physical_commonsense): stored under 2 "
            "versions") in said
    assert "a judge run again with a changed rubric keeps its earlier rubric version's rows" in said


def _substrate_suite(tmp_path: Path) -> tuple[Path, Path]:
    """RoboPhys-3D's grid in small: generators x substrates (in ``meta.substrate``) x regimes, one metric."""
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    # item: (generator, substrate, regime, ol_average_recall)
    grid = {"a1": ("wan", "raw", "easy", 0.2), "a2": ("wan", "raw", "easy", 0.4),
            "a3": ("wan", "raw", "hard", 0.9), "a4": ("wan", "vggt", "easy", 0.5),
            "a5": ("wan", "vggt", "hard", 0.1), "b1": ("cosmos", "raw", "easy", 0.6),
            "b2": ("cosmos", "raw", "hard", 0.0), "b3": ("cosmos", None, "easy", 0.3)}
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "generator": g, "regime": r,
                                         "meta": {"substrate": s} if s else {"depth": 3}}) + "\n"
                             for i, (g, s, r, _) in grid.items()))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([_row(i, "ol_average_recall", v) for i, (*_, v) in grid.items()]
                  + [ResultRow("group:generator=wan", "iq1_inception_score", "h", "1", "ok", 2.0,
                               config={"group_by": "generator"}, details={"group": "wan"})])
    return suite, db


def test_an_export_by_generator_substrate_and_regime_gives_robophys_tables_2_to_4(tmp_path: Path) -> None:
    # RoboPhys-3D Tables 2-4/17 are per world model x reconstruction substrate, macro-averaged over the
    # task regimes; `results export --by` took one field, so the docs' pipeline could not run (audit gaps
    # F1: "--by 'generator,split' is not an item field").
    suite, db = _substrate_suite(tmp_path)
    export = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--by", "generator,meta.substrate,regime", "--suite",
                                                 str(suite)])
    assert done.exit_code == 0, done.output
    with export.open() as fh:
        read = csv.DictReader(fh)
        header = list(read.fieldnames or [])
        cells = {r["item_id"]: (r["generator"], r["meta.substrate"], r["regime"]) for r in read}
    # the --by columns first after the standard ones, in the order given; generator once
    assert header[header.index("generator"):header.index("generator") + 5] == [
        "generator", "meta.substrate", "regime", "source", "clip_id"]
    assert cells["a4"] == ("wan", "vggt", "easy")
    assert cells["b3"] == ("cosmos", "-", "easy")  # no meta.substrate: '-', as an unset field
    # the set-level row grouped by generator: its generator, no substrate nor regime
    assert cells["group:generator=wan"] == ("wan", "", "")

    out = tmp_path / "scores.csv"
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(export), "--by",
                                                  "generator,meta.substrate", "--macro", "regime",
                                                  "--normalized", "--missing", "drop", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "leaving out 1 set-level row(s) with an empty" in " ".join(done.output.split())
    rows = {(r["generator"], r["meta.substrate"]): r for r in csv.DictReader(out.open())}
    assert set(rows) == {("wan", "raw"), ("wan", "vggt"), ("cosmos", "raw"), ("cosmos", "-")}
    # OL is out of 2 metrics, one stored: 2 x the regime's mean, then the regimes' mean.
    # wan/raw: easy 2 * (0.2 + 0.4) / 2 = 0.6, hard 2 * 0.9 = 1.8 -> 1.2 (not 2 * 0.5 = 1.0 pooled)
    # wan/vggt: (1.0 + 0.2) / 2 = 0.6; cosmos/raw: (1.2 + 0.0) / 2 = 0.6; cosmos/-: easy alone 0.6
    assert float(rows["wan", "raw"]["subdim_OL"]) == pytest.approx(1.2)
    assert float(rows["wan", "vggt"]["subdim_OL"]) == pytest.approx(0.6)
    assert float(rows["cosmos", "raw"]["subdim_OL"]) == pytest.approx(0.6)
    assert float(rows["cosmos", "-"]["subdim_OL"]) == pytest.approx(0.6)
    assert rows["wan", "raw"]["n_regimes"] == "2" and rows["cosmos", "-"]["n_regimes"] == "1"


def test_the_python_api_exports_several_grouping_columns(tmp_path: Path) -> None:
    from robojudge.aggregate import read_metric_table, scores_from_table
    from robojudge.run import export_run

    suite, db = _substrate_suite(tmp_path)
    export = tmp_path / "long.csv"
    export_run(db, export, by=["generator", "meta.substrate", "regime"], suite=suite)
    got = scores_from_table(read_metric_table(export), by=["generator", "meta.substrate"], macro="regime",
                            normalized=True, missing="drop")
    ol = {(r["generator"], r["meta.substrate"]): r["subdim_OL"] for _, r in got.iterrows()}
    assert ol["wan", "raw"] == pytest.approx(1.2) and ol["cosmos", "-"] == pytest.approx(0.6)
    # a non-text meta value is written as JSON
    export_run(db, export, by="meta.depth", suite=suite)
    with export.open() as fh:
        assert {r["item_id"]: r["meta.depth"] for r in csv.DictReader(fh)}["b3"] == "3"


@pytest.mark.parametrize(("by", "said"), [
    ("generator,nope", "--by 'nope' is not an item field; use one of"),
    ("generator,labels", "--by 'labels' holds a structure, not a text"),
    ("generator,,regime", "an empty name is none"),
    ("meta.", "name the key of the items' meta"),
    ("regime,generator,regime", "regime is named twice"),
])
def test_bad_by_lists_are_refused_naming_the_field(tmp_path: Path, by: str, said: str) -> None:
    suite, db = _substrate_suite(tmp_path)
    out = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(out), "--by",
                                                by, "--suite", str(suite)])
    assert done.exit_code == 2
    assert said in " ".join(done.output.split())
    assert not out.exists()


def test_a_meta_value_spelt_like_the_unset_dash_is_refused(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "meta": m}) + "\n"
                             for i, m in (("x1", {"substrate": "-"}), ("x2", {}))))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([_row("x1", "iq1_ssim", 0.5), _row("x2", "iq1_ssim", 0.7)])
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o",
                                                 str(tmp_path / "o.csv"), "--by", "generator,meta.substrate",
                                                 "--suite", str(suite)])
    assert done.exit_code == 2
    assert "--by meta.substrate: 1 item(s)" in " ".join(done.output.split())


def test_a_blank_meta_value_exports_as_the_unset_dash_and_aggregates(tmp_path: Path) -> None:
    # A meta value of "" exported as an empty cell, which `aggregate scores --by` then refused as a group
    # with no name; it is the unset group '-', as an item without the key (s75 left item)
    from robojudge.aggregate import read_metric_table, scores_from_table
    from robojudge.run import export_run

    (tmp_path / "v.mp4").write_bytes(b"not opened")
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "meta": m}) + "\n"
                             for i, m in (("x1", {"substrate": ""}), ("x2", {"substrate": "  "}),
                                          ("x3", {"substrate": "raw"}))))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([_row("x1", "ol_average_recall", 0.2), _row("x2", "ol_average_recall", 0.4),
                   _row("x3", "ol_average_recall", 0.9)])
    export = tmp_path / "long.csv"
    export_run(db, export, by="meta.substrate", suite=suite)
    with export.open() as fh:
        assert {r["item_id"]: r["meta.substrate"] for r in csv.DictReader(fh)} == {"x1": "-", "x2": "-",
                                                                                  "x3": "raw"}
    got = scores_from_table(read_metric_table(export), by=["meta.substrate"], normalized=True, missing="drop")
    ol = {r["meta.substrate"]: r["subdim_OL"] for _, r in got.iterrows()}
    assert ol["-"] == pytest.approx(0.6) and ol["raw"] == pytest.approx(1.8)
