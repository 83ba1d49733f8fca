"""``robojudge report STORE`` without a manifest, on a store that also holds set-level rows.

Set-level results (FVD and the like) are stored under ids starting with ``group:``, which no suite
item may carry; without a manifest the report must keep them out of the per-item tables, as it does
with one, instead of failing to build those tables.
"""

import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report_data import build_items, build_rows  # noqa: E402

from robojudge.cli._report import report  # noqa: E402
from robojudge.store import ResultRow, ResultStore  # noqa: E402
from robojudge.suite._schema import GROUP_PREFIX  # noqa: E402

app = typer.Typer()
app.command("report")(report)
app.command("noop")(lambda: None)  # a second command keeps "report" a subcommand


def _store_with_group_rows(path: Path) -> str:
    url = f"sqlite:///{path}"
    rows = build_rows(build_items(), judge=False)
    rows += [ResultRow(item_id=f"{GROUP_PREFIX}generator={g}", metric="fvd", config_hash="h", version="1",
                       status="ok", value=v) for g, v in (("good", 120.5), ("bad", 480.25))]
    with ResultStore(url) as store:
        store.add(rows)
    return url


def test_store_without_manifest_lists_group_rows_apart(tmp_path):
    db = tmp_path / "results.sqlite"
    _store_with_group_rows(db)
    res = CliRunner().invoke(app, ["report", str(db), "--out", str(tmp_path / "out"), "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    assert "could not be built" not in res.output, res.output
    assert "Overview: 0 plots, 2 tables" in res.output, res.output
    assert "Metric correlations: 1 plots, 1 tables" in res.output, res.output
    tables = tmp_path / "out" / "tables"
    summary = (tables / "summary.csv").read_text()
    # The per-item means run over the 36 items only; fvd is a set-level metric, not an item column.
    assert "fvd" not in summary and "iq1_psnr" in summary
    set_level = (tables / "set_level.csv").read_text()
    assert "group:generator=good" in set_level and "480.25" in set_level
    corr = (tables / "metric_correlations.csv").read_text()
    assert "fvd" not in corr and "iq1_psnr" in corr
    page = (tmp_path / "out" / "index.html").read_text()
    assert "over 36 items" in page and "2 rows belong to ids that are not items" in page
