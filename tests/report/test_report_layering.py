"""report/ reads the store, meta and aggregate only: it never loads the metric registry or the judges.

The direction and range of a metric come from those packages, so the callers that may import them
(the CLI, the demo) pass the lookups in; the report's own defaults know the taxonomy only.
"""

import json
import subprocess
import sys
from pathlib import Path

from _report_data import build_items, build_rows, higher_is_better, write_run

from robojudge.metric_info import direction, registry_range
from robojudge.report._sections import ReportInput, overview_section

_SCRIPT = """
import json, sys
sys.path.insert(0, {here!r})
from _report_data import write_run
from pathlib import Path
from robojudge.report import report_suite, write_html_report

url, manifest = write_run(Path({folder!r}))
write_html_report(url, Path({folder!r}) / "html", manifest=manifest, bootstrap=20)
report_suite(manifest, url, Path({folder!r}) / "summary")
print(json.dumps(sorted({{m.split(".")[1] for m in sys.modules if m.startswith("robojudge.")}})))
"""


def test_report_with_its_defaults_loads_neither_metrics_nor_judges(tmp_path):
    script = _SCRIPT.format(here=str(Path(__file__).parent), folder=str(tmp_path))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    loaded = set(json.loads(res.stdout.strip().splitlines()[-1]))
    assert "report" in loaded
    assert not loaded & {"metrics", "judges", "run", "models", "web", "cli"}, loaded
    # The taxonomy still gives its metrics' directions: the lower-is-better count is oriented.
    agreement = (tmp_path / "html" / "tables" / "metric_agreement.csv").read_text()
    assert "cs_collision_count,known" in agreement and "jitter,unknown" in agreement


def test_callers_pass_the_registry_lookups():
    items = build_items()
    rows = build_rows(items)
    assert registry_range("iq1_ssim") == (0.0, 1.0) and direction("iq1_lpips") is False
    assert direction("judge:vlm:pa") is True and registry_range("judge:vlm:pa") == (1.0, 5.0)
    assert registry_range("jitter") is None
    by_default = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    injected = overview_section(ReportInput(rows, items, higher_is_better, bootstrap=0,
                                            native_range=registry_range))
    ranges = [{r[0].text: r[1].text for r in sec.tables[0].rows} for sec in (by_default, injected)]
    assert ranges[0]["iq1_ssim"] == "unknown" and ranges[1]["iq1_ssim"] == "[0, 1]"


def test_cli_report_uses_the_registry(tmp_path):
    import typer
    from typer.testing import CliRunner

    from robojudge.cli._report import report

    app = typer.Typer()
    app.command("report")(report)
    app.command("noop")(lambda: None)
    write_run(tmp_path / "run")
    res = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "out"),
                                   "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    summary = (tmp_path / "out" / "tables" / "summary.csv").read_text()
    assert "iq1_ssim,\"[0, 1]\"" in summary or "iq1_ssim,[0, 1]" in summary
