"""CSV exports neutralise text cells a spreadsheet would run as a formula (OWASP CSV injection)."""

import csv

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from robojudge._csv import csv_safe
from robojudge.store import ResultRow, ResultStore, export_results

HOSTILE = ["=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]


@pytest.mark.parametrize("cell", HOSTILE)
def test_text_cells_starting_like_a_formula_get_a_quote(cell):
    assert csv_safe(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-0.5", "+3", "-1e-05", "1.5E+10", ".5", "-.5", "0", "-inf", "nan",
                                  "plain", "", "a=b", "'abc", "'", "-"])
def test_numbers_and_harmless_text_stay(cell):
    assert csv_safe(cell) == cell


@pytest.mark.parametrize("cell", ["'=already", "'-take1", "''-x", "'-0.5", "'-"])
def test_text_that_reads_as_escaped_gets_one_more_quote(cell):
    assert csv_safe(cell) == "'" + cell


def test_every_reader_gives_back_the_stored_ids(tmp_path):
    # '-take1 and -take1 were both written '-take1: two items collapsed into one id on reading back
    from robojudge.aggregate._tables import read_metric_table
    from robojudge.meta._tables import read_score_csv
    from robojudge.store import SafeCsvWriter

    ids = ["-take1", "'-take1", "''=x", "=x", "'abc", "-", "-0.5", "'"]
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        store.add([ResultRow(item_id=i, metric="m", config_hash="h", version="1", status="ok", value=1.0)
                   for i in ids])
        export_results(store, tmp_path / "r.csv")
    assert sorted(read_metric_table(tmp_path / "r.csv")["item_id"]) == sorted(ids)
    assert sorted(read_score_csv(tmp_path / "r.csv")["item_id"]) == sorted(ids)
    assert sorted(SafeCsvWriter.unescape(r["item_id"]) for r in _read(tmp_path / "r.csv")) == sorted(ids)


def test_non_text_values_pass_through():
    assert csv_safe(-0.5) == -0.5 and csv_safe(None) is None and csv_safe(True) is True


def _store(tmp_path):
    store = ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}")
    store.add([
        ResultRow(item_id="=cmd|' /C calc'!A0", metric="m", config_hash="h", version="1", status="ok",
                  value=-0.5),
        ResultRow(item_id="ok-item", metric="m", config_hash="h", version="1", status="error", value=None,
                  error="-2+3 went wrong"),
        ResultRow(item_id="third", metric="@m", config_hash="h", version="1", status="ok", value=2.0,
                  details={"note": "=1+1"}),
    ])
    return store


def _read(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_export_neutralises_text_but_keeps_negative_numbers(tmp_path):
    with _store(tmp_path) as store:
        export_results(store, tmp_path / "safe.csv")
        export_results(store, tmp_path / "raw.csv", raw=True)
        export_results(store, tmp_path / "raw.parquet")
    safe = {r["metric"] + "/" + r["status"]: r for r in _read(tmp_path / "safe.csv")}
    first = safe["m/ok"]
    assert first["item_id"] == "'=cmd|' /C calc'!A0" and first["value"] == "-0.5"
    assert float(first["value"]) == -0.5
    assert safe["m/error"]["error"] == "'-2+3 went wrong"
    assert "'@m/ok" in safe and safe["'@m/ok"]["details"] == '{"note":"=1+1"}'  # starts with '{': harmless
    raw = {r["item_id"] for r in _read(tmp_path / "raw.csv")}
    assert "=cmd|' /C calc'!A0" in raw
    assert "=cmd|' /C calc'!A0" in pq.read_table(tmp_path / "raw.parquet").column("item_id").to_pylist()


def test_results_export_cli_raw_flag(tmp_path):
    from robojudge.cli._results import app

    with _store(tmp_path):
        pass
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    runner = CliRunner()
    res = runner.invoke(app, ["export", "--db", db, "--out", str(tmp_path / "a.csv")])
    assert res.exit_code == 0, res.output
    assert "'=cmd" in (tmp_path / "a.csv").read_text()
    res = runner.invoke(app, ["export", "--db", db, "--out", str(tmp_path / "b.csv"), "--raw"])
    assert res.exit_code == 0, res.output
    assert "'=cmd" not in (tmp_path / "b.csv").read_text() and "=cmd" in (tmp_path / "b.csv").read_text()
