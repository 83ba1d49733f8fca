"""``robojudge results import``: imported values flow into export, aggregate and report (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner, Result

from robojudge.cli import build_app
from robojudge.store import ResultStore

VALUES = (
    "item_id,metric,value\n"
    "a,ts_action_planner,0.5\n"
    "b,ts_action_planner,0.75\n"
    "a,ts_data_engine,0.25\n"
    "c,ta_mean_trajectory_length,1.0\n"
)


def invoke(*args: object) -> Result:
    return CliRunner().invoke(build_app(str(args[0])), [str(a) for a in args])


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run folder with a suite manifest of three items (a, b: generator g1; c: g2)."""
    monkeypatch.setenv("COLUMNS", "200")
    run = tmp_path / "runs" / "suite"
    run.mkdir(parents=True)
    rows = [("a", "g1"), ("b", "g1"), ("c", "g2")]
    for item, _ in rows:
        (run / f"{item}.mp4").write_bytes(b"")  # the manifest checks that media exist, nothing more
    (run / "suite.jsonl").write_text("".join(
        json.dumps({"item_id": i, "video": f"{i}.mp4", "generator": g}) + "\n" for i, g in rows))
    (tmp_path / "values.csv").write_text(VALUES)
    return run


def test_import_export_aggregate(run_dir: Path, tmp_path: Path) -> None:
    res = invoke("results", "import", tmp_path / "values.csv", "--run", run_dir)
    assert res.exit_code == 0, res.output
    assert "checking item ids against" in res.output and "4 imported, 0 unchanged, 0 replaced" in res.output
    again = invoke("results", "import", tmp_path / "values.csv", "--run", run_dir)
    assert again.exit_code == 0 and "0 imported, 4 unchanged, 0 replaced" in again.output
    db = run_dir / "results.sqlite"
    out = tmp_path / "export.csv"
    assert invoke("results", "export", "--db", db, "--out", out).exit_code == 0
    agg = tmp_path / "agg.csv"
    res = invoke("aggregate", "scores", "--in", out, "--by", "item_id", "--missing", "drop", "--out", agg)
    assert res.exit_code == 0, res.output
    scores = pd.read_csv(agg).set_index("item_id")
    # TS has 3 metrics (ts_action_planner, ts_data_engine, ts_vlm2), identity-normalized; with
    # --missing drop S_TS is the mean of those present and subdim_TS prints S_TS * 3:
    #   a: (0.5 + 0.25) / 2 * 3 = 1.125;   b: 0.75 * 3 = 2.25.
    assert scores.loc["a", "subdim_TS"] == pytest.approx(1.125)
    assert scores.loc["b", "subdim_TS"] == pytest.approx(2.25)
    # TA has 4 metrics; ta_mean_trajectory_length is affine_clip on [0.1349, 3.88], lower is better:
    #   c: (3.88 - 1.0) / (3.88 - 0.1349) = 2.88 / 3.7451 = 0.768998..., times 4 = 3.07599...
    assert scores.loc["c", "subdim_TA"] == pytest.approx(4 * 2.88 / 3.7451)


def test_a_run_folder_given_as_run_dir_or_db_checks_the_item_ids(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(VALUES + "zz,ts_action_planner,0.5\n")
    # before: --run-dir was "No such option", and --db RUN_FOLDER imported the unknown item 'zz'
    for flag in ("--run-dir", "--db"):
        res = invoke("results", "import", bad, flag, run_dir)
        assert res.exit_code == 2, res.output
        assert "item 'zz' field item_id: item 'zz' is not in the suite" in res.output
    res = invoke("results", "import", tmp_path / "values.csv", "--run-dir", run_dir)
    assert res.exit_code == 0 and "4 imported" in res.output, res.output


def test_report_summarizes_imported_values(run_dir: Path, tmp_path: Path) -> None:
    assert invoke("results", "import", tmp_path / "values.csv", "--run", run_dir).exit_code == 0
    folder = tmp_path / "report"
    db = run_dir / "results.sqlite"
    res = invoke("report", run_dir / "suite.jsonl", "--db", db, "--no-html", "--out", folder)
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(folder / "summary.csv")
    g1 = summary[(summary.metric == "ts_action_planner") & (summary.group == "g1")].iloc[0]
    assert g1.n_ok == 2 and g1["mean"] == pytest.approx((0.5 + 0.75) / 2)


def test_bad_file_lists_every_problem_and_imports_nothing(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(VALUES + "zz,ts_action_planner,0.5\nb,ts_data_engine,2\n")
    res = invoke("results", "import", bad, "--run", run_dir)
    assert res.exit_code == 2
    assert f"{bad}:6: item 'zz' field item_id: item 'zz' is not in the suite" in res.output
    assert f"{bad}:7: item 'b' field value: 2.0 is outside the native range [0, 1]" in res.output
    assert "2 problem(s), nothing was imported" in res.output
    with ResultStore(run_dir / "results.sqlite") as store:
        assert store.count() == 0


def test_replace_dry_run_and_metric_option(run_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    one = tmp_path / "planner.csv"
    one.write_text("item_id,value\na,0.5\n")
    dry = invoke("results", "import", one, "--db", db, "--metric", "ts_action_planner", "--dry-run")
    assert dry.exit_code == 0 and "dry run, nothing written" in dry.output and "1 imported" in dry.output
    assert invoke("results", "import", one, "--db", db, "--metric", "ts_action_planner").exit_code == 0
    one.write_text("item_id,value\na,0.6\n")
    refused = invoke("results", "import", one, "--db", db, "--metric", "ts_action_planner")
    assert refused.exit_code == 2 and "the store holds 0.5" in refused.output
    replaced = invoke("results", "import", one, "--db", db, "--metric", "ts_action_planner", "--replace")
    assert replaced.exit_code == 0 and "0 imported, 0 unchanged, 1 replaced" in replaced.output
    with ResultStore(db) as store:
        assert [r.value for r in store.rows()] == [0.6]


def test_needs_exactly_one_store(tmp_path: Path, run_dir: Path) -> None:
    values = tmp_path / "values.csv"
    assert "give --db or --run-dir (the store to import into), or --suite" in invoke(
        "results", "import", values).output
    both = invoke("results", "import", values, "--db", tmp_path / "x.sqlite", "--run", run_dir)
    assert both.exit_code == 2 and "give one of --db and --run-dir, not both" in both.output
    missing = invoke("results", "import", values, "--run", tmp_path / "nope")
    assert missing.exit_code == 2 and "no run folder" in missing.output


def test_run_manifest_is_the_reports(tmp_path: Path) -> None:
    """import --run and the report find a run folder's manifest with the one suite function."""
    from robojudge.report import resolve_source
    from robojudge.suite import RUN_MANIFESTS, run_manifest

    run = tmp_path / "run"
    (run / "suite").mkdir(parents=True)
    (run / "results.sqlite").write_bytes(b"")
    assert run_manifest(run) is None and resolve_source(run)[1] is None
    (run / "suite.csv").write_text("item_id,video\n")
    (run / "suite.jsonl").mkdir()  # a folder is not a manifest
    assert run_manifest(run) == run / "suite.csv" == resolve_source(run)[1]
    (run / "suite" / "suite.jsonl").write_text("")
    assert run_manifest(run) == run / RUN_MANIFESTS[0] == resolve_source(run)[1]


def test_a_run_without_a_manifest_checks_ids_against_the_manifests_scored_into_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    lists, run = tmp_path / "lists", tmp_path / "run"
    lists.mkdir()
    (lists / "v.mp4").write_bytes(b"")
    for gen, ids in (("alpha", ("a1", "a2")), ("beta", ("b1",))):
        (lists / f"{gen}.jsonl").write_text("".join(json.dumps({"item_id": i, "video": "v.mp4"}) + "\n"
                                                    for i in ids))
    with ResultStore(run / "results.sqlite") as store:  # scored from one manifest per generator
        store.note_manifest(lists / "alpha.jsonl")
        store.note_manifest(lists / "beta.jsonl")
    values = tmp_path / "values.csv"
    values.write_text("item_id,metric,value\na1,ts_action_planner,0.5\nb1,ts_action_planner,0.7\n"
                      "zz,ts_action_planner,0.1\n")
    done = invoke("results", "import", values, "--run", run, "--dry-run")
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and "checking item ids against" in said and "beta.jsonl" in said
    assert "item 'zz' is not in the suites" in said and "1 problem(s)" in said  # a1 and b1 are both known
    values.write_text("item_id,metric,value\na1,ts_action_planner,0.5\nb1,ts_action_planner,0.7\n")
    assert invoke("results", "import", values, "--run", run).exit_code == 0
