"""``results export`` and ``results import`` find a manifest's store as every other reader does.

Before, ``results export --suite suite.jsonl`` was "Missing option '--db'" and ``results import ...
--suite suite.jsonl`` "give exactly one of --db and --run-dir", while score, report, leaderboard,
select and results status default to ``runs/<manifest>/results.sqlite`` (CLI audit F7).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultStore
from robojudge.video import write_video

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(build_app(args[0]), list(args))


def _suite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for k in range(2):
        write_video(folder / f"v{k}.mp4", np.full((4, 16, 16, 3), 60 * (k + 1), np.uint8), fps=4)
        lines.append(json.dumps({"item_id": f"i{k}", "video": f"v{k}.mp4", "generator": "g"}))
    manifest = folder / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


@pytest.mark.parametrize("layout", ["default", "run folder"])
def test_export_and_import_given_only_the_manifest_use_its_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    monkeypatch.chdir(tmp_path)
    if layout == "default":  # runs/suite under the current folder
        manifest, store = _suite(tmp_path / "data"), tmp_path / "runs" / "suite" / "results.sqlite"
        scored = _run("score", str(manifest), "-m", "uniform_random", "--no-progress")
    else:  # the manifest inside the run folder it was scored into (F4)
        manifest, store = _suite(tmp_path / "dl" / "suite"), tmp_path / "dl" / "results.sqlite"
        scored = _run("score", str(manifest), "--run-dir", "dl", "-m", "uniform_random", "--no-progress")
    assert scored.exit_code == 0, scored.output

    out = tmp_path / "x.csv"
    done = _run("results", "export", "--suite", str(manifest), "-o", str(out))
    assert done.exit_code == 0, done.output
    assert "wrote 2 rows" in done.output and out.read_text().count("uniform_random") == 2

    values = tmp_path / "imp.csv"
    values.write_text("item_id,metric,value\ni0,ts_data_engine,0.5\n", encoding="utf-8")
    done = _run("results", "import", str(values), "--suite", str(manifest))
    assert done.exit_code == 0, done.output
    assert "1 imported" in done.output
    with ResultStore(str(store), read_only=True) as s:
        assert [r.value for r in s.rows(metric="ts_data_engine")] == [0.5]


def test_without_a_store_or_a_manifest_both_say_what_to_give(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _suite(tmp_path / "data")
    for args in (["results", "export", "-o", "x.csv"], ["results", "import", "imp.csv"]):
        done = _run(*args)
        assert done.exit_code == 2 and "or --suite (the manifest, whose store is found as" in done.output
        done = _run(*args, "--suite", str(manifest))  # never scored: no store, none made
        assert done.exit_code == 2 and "no result store at runs/suite/results.sqlite" in done.output
    assert not (tmp_path / "runs").exists()
