"""`robojudge report MANIFEST` reads the store once: summary.md, results.csv, provenance.json and the page
are of one snapshot, even while a run stores more results (audit concur F4). Before, the summary, the
results.csv and the page were three reads, and a report taken mid-run gave three counts in one folder."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from _report_data import write_run
from typer.testing import CliRunner

from robojudge.cli import _report as cli_report
from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore


def _provenance_metrics(folder: Path) -> set[str]:
    record = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    return {series["metric"] for series in record["metrics"]}


def test_a_report_taken_while_a_run_writes_is_one_snapshot(  # type: ignore[no-untyped-def]
        tmp_path: Path, monkeypatch) -> None:
    url, manifest = write_run(tmp_path / "run")
    with ResultStore(url, read_only=True) as store:
        before = store.count()
        item_ids = sorted({r.item_id for r in store.rows()})
    real = cli_report.stale_rows
    wrote: list[int] = []

    def meanwhile(rows, items):  # type: ignore[no-untyped-def]
        """The stale check, once the summary's rows are read: another run stores a metric of every item."""
        if not wrote:
            with ResultStore(url) as writer:
                wrote.append(writer.add([ResultRow(i, "late_metric", "c", "1", "ok", 0.5) for i in item_ids]))
        return real(rows, items)

    monkeypatch.setattr(cli_report, "stale_rows", meanwhile)
    out = tmp_path / "rep"
    res = CliRunner().invoke(build_app("report"), ["report", str(manifest), "--db", url, "--out", str(out),
                                                   "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert wrote == [len(item_ids)] and wrote[0] > 0  # the run did write during the report
    md = (out / "summary.md").read_text(encoding="utf-8")
    assert re.search(rf"^{before} results, \d+ failed\.$", md, re.M), md
    with (out / "results.csv").open(newline="", encoding="utf-8") as fh:
        exported = list(csv.DictReader(fh))
    assert len(exported) == before and "late_metric" not in {r["metric"] for r in exported}
    assert "late_metric" not in _provenance_metrics(out) and "cs_collision_count" in _provenance_metrics(out)
    assert "late_metric" not in (out / "index.html").read_text(encoding="utf-8")
    with ResultStore(url, read_only=True) as store:  # the next report has them all
        assert store.count() == before + len(item_ids)
