"""``robojudge report RUN_OR_DB --out DIR`` through typer, on small stores from the report tests' helper."""

import csv
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from _report_data import write_run  # noqa: E402

from robojudge.cli._report import report  # noqa: E402

app = typer.Typer()
app.command("report")(report)
app.command("noop")(lambda: None)  # a second command keeps "report" a subcommand


def _invoke(*args: object) -> object:
    return CliRunner().invoke(app, ["report", *map(str, args)])


def test_run_folder_without_manifest_and_db_url(tmp_path):
    url, _ = write_run(tmp_path / "run", manifest_name="elsewhere/suite.jsonl")  # not where it is looked for
    res = _invoke(tmp_path / "run", "--bootstrap", "0")
    assert res.exit_code == 0, res.output
    assert "no suite manifest found" in res.output and "Judges against the labels: not shown" in res.output
    index = tmp_path / "run" / "report" / "index.html"
    assert index.exists() and "Metric correlations" in index.read_text()
    res = _invoke(url, "--out", tmp_path / "from-url", "--bootstrap", "0", "--title", "mine")
    assert res.exit_code == 0, res.output
    assert "<title>mine</title>" in (tmp_path / "from-url" / "index.html").read_text()
    assert (tmp_path / "from-url" / "tables" / "metric_correlations.tex").exists()


def test_manifest_mode_keeps_the_grouped_summary(tmp_path):
    url, manifest = write_run(tmp_path / "run")
    res = _invoke(manifest, "--db", url, "--out", tmp_path / "out", "--by", "generator", "--no-html")
    assert res.exit_code == 0, res.output
    with (tmp_path / "out" / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["group"] for r in rows} == {"good", "mid", "bad"}
    assert not (tmp_path / "out" / "index.html").exists()
    missing = _invoke(tmp_path / "nowhere")
    assert missing.exit_code == 2 and "no such run folder" in missing.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _invoke(empty).exit_code == 2


@pytest.mark.slow
def test_run_folder_finds_its_manifest_and_writes_every_section(tmp_path):
    write_run(tmp_path / "run")
    res = _invoke(tmp_path / "run", "--out", tmp_path / "out", "--bootstrap", "50")
    assert res.exit_code == 0, res.output
    # Table 2, the vlm - calibrated differences, every statistic, the confusion counts
    assert "Judges against the labels: 4 plots, 4 tables" in res.output
    assert "Generator leaderboard: 1 plots, 2 tables" in res.output  # the board and every pair's P(a > b)
    tables = tmp_path / "out" / "tables"
    assert {p.stem for p in tables.glob("*.tex")} >= {"judges", "leaderboard", "robophys", "metric_agreement"}
