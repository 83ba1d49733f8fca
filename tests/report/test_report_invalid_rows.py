"""A manifest row that no longer validates is said by `robojudge report`, as `score` says it.

Before, the report read the manifest leniently and never said what it left out: a row refused (a name
over the length limit that an older manifest held) took its item and stored results out of the
leaderboard and every per-item table, without a word on the terminal or the page.
"""

from __future__ import annotations

import json
from pathlib import Path

from _report_data import write_run
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import write_html_report


def _spoil_one_row(manifest: Path) -> str:
    """Give the first row a generator over the limit; its item id."""
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    rows[0]["generator"] = "g" * 300
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(rows[0]["item_id"])


def test_report_says_which_manifest_rows_it_left_out(tmp_path: Path) -> None:
    url, manifest = write_run(tmp_path / "run")
    item = _spoil_one_row(manifest)
    app = build_app("report")
    res = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    line = next((ln for ln in res.stderr.splitlines() if ln.startswith("skipped manifest row:")), None)
    assert line is not None, res.stderr
    assert f"item {item!r} field generator: generator is 300 bytes long in UTF-8" in line
    page = (tmp_path / "run" / "report" / "index.html").read_text()
    assert '<p class="warning">1 manifest row left out, it does not validate, so its stored results are ' \
           "in no per-item table" in page
    # the summary of a manifest, without the HTML report, says it too
    res = CliRunner().invoke(app, ["report", str(manifest), "--db", url, "--no-html",
                                   "--out", str(tmp_path / "sum")])
    assert res.exit_code == 0, res.output
    assert any(ln.startswith("skipped manifest row:") and repr(item) in ln for ln in res.stderr.splitlines())
    # and from Python
    html = write_html_report(url, tmp_path / "py", manifest=manifest, bootstrap=0)
    assert [(p.item_id, p.field) for p in html.manifest_problems] == [(item, "generator")]
