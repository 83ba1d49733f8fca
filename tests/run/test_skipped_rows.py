"""Manifest rows left out of a run: one problem per missing file, a capped list on stderr, one count line
on stdout and one warning from the Python API (audit logging F4)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.run import score_suite
from robojudge.suite import load_suite


def _manifest(tmp_path: Path, missing: int) -> Path:
    (tmp_path / "v.mp4").write_bytes(b"placeholder; uniform_random never opens it")
    rows = [{"item_id": f"ok{i}", "video": "v.mp4", "instruction": "x"} for i in range(2)]
    rows += [{"item_id": f"gone{i:02d}", "video": f"gone{i:02d}.mp4", "views": {"cam0": f"gone{i:02d}.mp4"},
              "instruction": "x"} for i in range(missing)]
    manifest = tmp_path / "s.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_a_file_two_fields_name_is_one_problem(tmp_path: Path) -> None:
    suite = load_suite(_manifest(tmp_path, 1), strict=False)
    # Before: two problems, one for field video and one for views.cam0, for the one missing file.
    (problem,) = suite.problems
    assert problem.field == "video" and problem.message.startswith("file not found: gone00.mp4")
    assert problem.message.endswith("(also named by field views.cam0)")


def test_the_run_caps_the_list_and_counts_the_rows_on_stdout(tmp_path: Path) -> None:
    res = CliRunner().invoke(build_app("score"), [
        "score", str(_manifest(tmp_path, 30)), "-m", "uniform_random", "--db", str(tmp_path / "r.sqlite"),
        "--no-progress"])
    assert res.exit_code == 0, res.output
    err = res.stderr.splitlines()
    assert sum(line.startswith("skipped manifest row: ") for line in err) == 21, res.stderr
    assert "skipped manifest row: ... and 10 more: `robojudge suite validate` lists them all" in err
    assert "30 manifest rows skipped (file not found: 30)" in res.stdout.splitlines()
    assert "SkippedRowsWarning" not in res.output  # the CLI says it its own way


def test_the_api_warns_once_with_the_count(tmp_path: Path) -> None:
    from robojudge.suite import SkippedRowsWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = score_suite(_manifest(tmp_path, 3), ["uniform_random"], run_dir=tmp_path / "run")
    said = [w for w in caught if issubclass(w.category, SkippedRowsWarning)]
    assert len(said) == 1 and "3 manifest rows skipped (file not found: 3)" in str(said[0].message)
    assert run.summary.ok == 2 and len(run.manifest_problems) == 3
