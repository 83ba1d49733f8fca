"""`robojudge report MANIFEST` checks each stored row's inputs once for its summary and its HTML report
(twice was half the time of a report of a large store; audit s67_scale 3)."""

from __future__ import annotations

import collections

from _report_data import write_run
from typer.testing import CliRunner

from robojudge.cli import _report as cli_report
from robojudge.cli import build_app


def test_manifest_report_checks_each_row_once(tmp_path, monkeypatch):
    url, manifest = write_run(tmp_path / "run")
    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    real = cli_report.stale_rows

    def counting(rows, items):  # type: ignore[no-untyped-def]
        seen.update((r.item_id, r.metric) for r in rows)
        return real(rows, items)

    monkeypatch.setattr(cli_report, "stale_rows", counting)
    res = CliRunner().invoke(build_app("report"), ["report", str(manifest), "--db", url, "--out",
                                                   str(tmp_path / "rep"), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert seen and set(seen.values()) == {1}
