"""`robojudge report MANIFEST` names a configuration, and an interval's method, alike on every surface.

Before: the printed summary named the two configurations of ``iq1_psnr`` by config hash (``h1 v1``)
where summary.md wrote ``iq1_psnr [frames=8]``; metric_correlations.md/.csv did not say that a
lower-is-better metric was negated (only the HTML intro did); and summary.md (Student t) and
tables/summary.md (cluster bootstrap) gave one mean two intervals without naming either method.
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


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The printed output and the report folder of one run of ``report MANIFEST``."""
    tmp_path = tmp_path_factory.mktemp("names")
    (tmp_path / "v.mp4").write_bytes(b"")
    items = [{"item_id": f"{g}{c}", "video": "v.mp4", "clip_id": f"c{c}", "generator": g}
             for c in range(6) for g in ("a", "b")]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it) + "\n" for it in items))
    rows = []
    for k, it in enumerate(items):
        x = float(k)
        rows += [ResultRow(it["item_id"], "iq1_psnr", f"h{n}", "1", "ok", 20 + x + n, config={"frames": n})
                 for n in (8, 16)]
        rows.append(ResultRow(it["item_id"], "flow_warp_error", "w", "1", "ok", 10 - x, config={"levels": 3}))
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add(rows)
    done = runner.invoke(build_app("report"), ["report", str(manifest), "--db", str(tmp_path / "r.sqlite"),
                                               "--out", str(tmp_path / "rep"), "--bootstrap", "50"])
    assert done.exit_code == 0, done.output
    return done.stdout, tmp_path / "rep"


def test_the_printed_summary_names_configurations_as_summary_md_does(report: tuple[str, Path]) -> None:
    out, rep = report
    summary_md = (rep / "summary.md").read_text()
    printed = [line for line in out.splitlines() if "iq1_psnr" in line]
    for label in ("iq1_psnr [frames=8]", "iq1_psnr [frames=16]"):
        assert f"| {label} | a |" in summary_md
        assert sum(label in line for line in printed) == 2  # (generators a and b)
    assert not any("h8" in line or "h16" in line for line in printed)
    with (rep / "summary.csv").open() as fh:
        assert {r["label"] for r in csv.DictReader(fh)} == {"iq1_psnr [frames=8]", "iq1_psnr [frames=16]",
                                                           "flow_warp_error"}


def test_each_summary_file_names_its_interval(report: tuple[str, Path]) -> None:
    out, rep = report
    summary_md = (rep / "summary.md").read_text()
    assert "| 95% t-interval |" in summary_md and "Student-t" in summary_md and "95% t-interval" in out
    overview = (rep / "tables" / "summary.md").read_text()
    assert overview.startswith("## Mean [95% cluster-bootstrap interval] of every stored configuration")
    assert "cluster-bootstrap percentile intervals (50 replicates" in overview


def test_the_correlation_files_say_the_values_are_oriented(report: tuple[str, Path]) -> None:
    _, rep = report
    corr_md = (rep / "tables" / "metric_correlations.md").read_text()
    assert "oriented metrics: a lower-is-better metric is negated" in corr_md
    with (rep / "tables" / "metric_correlations.csv").open() as fh:
        table = {r["metric"]: r for r in csv.DictReader(fh)}
    assert table["flow_warp_error"]["direction"] == "lower is better: negated"
    assert table["iq1_psnr [frames=8]"]["direction"] == "higher is better"
    # flow_warp_error falls as iq1_psnr rises: negated, the two agree
    assert float(table["flow_warp_error"]["iq1_psnr [frames=8]"]) == 1.0
