"""A copied run folder: the report names only the manifests it takes items from.

The store of ``runs/demo`` notes the manifest it was scored from; a copy of the folder holds its own
copy of that manifest, with every item. The report read the copy's manifest and then said it took
``the items it lacks from 1 more manifest`` (the original one), although that manifest adds nothing:
only a noted manifest that gives items is named, on the terminal and on the page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from _report_data import write_run
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import load_run_results, noted_manifests, write_html_report
from robojudge.store import ResultStore

runner = CliRunner()


def test_a_copied_run_names_its_own_manifest_only(tmp_path: Path) -> None:
    url, manifest = write_run(tmp_path / "orig")
    with ResultStore(url) as store:
        store.note_manifest(manifest)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "orig", copy)
    own = copy / "suite" / "suite.jsonl"
    noted = noted_manifests(f"sqlite:///{copy / 'results.sqlite'}", besides=own)
    assert noted == [manifest.resolve()]  # the original is still noted, and still there

    result = write_html_report(f"sqlite:///{copy / 'results.sqlite'}", tmp_path / "r1", manifest=own,
                               more_manifests=noted, bootstrap=0)
    assert result.added_from == ()
    page = result.index.read_text(encoding="utf-8")
    assert f"suite {own}" in page and str(manifest) not in page

    done = runner.invoke(build_app("report"), ["report", str(copy), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    out = " ".join(done.stderr.split())
    assert f"suite manifest: {own} (pass --suite for another)" in out
    assert "items it lacks" not in out and str(manifest) not in out
    # the leaderboards and best-of-N read the folder through load_run_results: the same manifests
    assert load_run_results(copy).manifests == [own]
    done = runner.invoke(build_app("leaderboard"), ["leaderboard", "generators", str(copy)])
    assert str(manifest) not in " ".join(done.output.split()), done.output


def test_a_moved_run_without_its_manifest_names_the_noted_one(tmp_path: Path) -> None:
    # a project moved away from the manifest it was scored from: the run folder said no manifest was
    # scored into its store, though the store notes one, at its old path
    url, manifest = write_run(tmp_path / "orig", manifest_name="data/suite.jsonl")
    with ResultStore(url) as store:
        store.note_manifest(manifest)
    run = tmp_path / "moved"
    run.mkdir()
    shutil.copy(tmp_path / "orig" / "results.sqlite", run / "results.sqlite")
    shutil.rmtree(tmp_path / "orig")
    res = runner.invoke(build_app("results"), ["results", "status", str(run)])
    said = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"(its store notes {manifest.resolve()}, no longer there: a moved or copied project?)" in said
    done = runner.invoke(build_app("report"), ["report", str(run), "--bootstrap", "0"])
    assert f"no suite manifest found (its store notes {manifest.resolve()}" in " ".join(done.output.split())
