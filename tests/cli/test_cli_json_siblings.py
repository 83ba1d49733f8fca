"""``--json`` on ``judge rubrics`` and ``robots check``, as on their siblings (``metrics list``, ``weights
list``, ``annotate status``...): machine-readable, and nothing else on stdout.

Before, both were "No such option: --json" (CLI audit F7). ``annotate round status --json`` is tested in
tests/annotate/test_annotate_cli.py.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.judges import RUBRICS
from robojudge.robots import builtin_robot, summarize_robot

runner = CliRunner()


def test_judge_rubrics_json() -> None:
    res = runner.invoke(build_app("judge"), ["judge", "rubrics", "--json"])
    assert res.exit_code == 0, res.output
    listed = json.loads(res.stdout)
    assert [r["id"] for r in listed] == [RUBRICS.get(n).id for n in RUBRICS.names()]
    pa = next(r for r in listed if r["id"] == "pa")
    assert (pa["kind"], pa["score_min"], pa["score_max"], pa["needs_instruction"]) == ("score", 1, 5, False)
    caption = next(r for r in listed if r["id"] == "caption")
    assert caption["kind"] == "text" and caption["score_min"] is None


def test_robots_check_json() -> None:
    res = runner.invoke(build_app("robots"), ["robots", "check", "fetch", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    summary = summarize_robot(builtin_robot("fetch"))
    assert got["name"] == summary.spec.name and got["keypoints"] == list(summary.spec.keypoints)
    assert [(li["a"], li["b"], li["rigid"]) for li in got["links"]] == [
        (li.a, li.b, li.rigid) for li in summary.links]
    assert [j["joint"] for j in got["joints"]] == [name for name, _ in summary.joints]
