"""The public results API the CLI calls: ``robojudge.run.export_run`` and ``robojudge.run.status_suite``."""

from __future__ import annotations

import json
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import StoreError
from robojudge.suite import Item
from robojudge.video import write_video


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A manifest of two items in two generators, scored into the default store ``runs/suite``."""
    monkeypatch.chdir(tmp_path)
    items = []
    for k, gen in enumerate(["g1", "g2"]):
        path = tmp_path / f"v{k}.mp4"
        write_video(path, np.full((4, 16, 16, 3), 40 * (k + 1), np.uint8), fps=4)
        items.append(Item(item_id=f"i{k}", video=str(path), generator=gen, instruction="x"))
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    from robojudge.run import score_suite

    assert score_suite(manifest, ["test_frames_a"]).summary.ok == 2
    return manifest


def test_export_run_adds_the_by_column(run: Path, tmp_path: Path) -> None:
    from robojudge.run import export_run

    db = tmp_path / "runs" / "suite" / "results.sqlite"
    n = export_run(db, tmp_path / "long.csv", by="generator", suite=run)
    table = pd.read_csv(tmp_path / "long.csv")
    assert n == 2 and dict(zip(table["item_id"], table["generator"], strict=True)) == {"i0": "g1", "i1": "g2"}
    assert export_run(str(db), tmp_path / "plain.parquet") == 2
    assert "generator" not in pd.read_parquet(tmp_path / "plain.parquet").columns
    with pytest.raises(ValueError, match="--by and --suite go together|by and suite"):
        export_run(db, tmp_path / "x.csv", by="generator")
    with pytest.raises(ValueError, match="'item_id'.*export column"):
        export_run(db, tmp_path / "x.csv", by="item_id", suite=run)
    with pytest.raises(StoreError, match="no result store"):
        export_run(tmp_path / "nope.sqlite", tmp_path / "x.csv")
    assert not (tmp_path / "nope.sqlite").exists() and not (tmp_path / "x.csv").exists()


def test_status_suite_is_public_and_names_a_missing_store(run: Path, tmp_path: Path) -> None:
    from robojudge.run import status_suite

    status = status_suite(run)  # the default store of the manifest
    assert [(m.metric, m.up_to_date) for m in status.metrics] == [("test_frames_a", 2)]
    with pytest.raises(StoreError, match="no result store at .*elsewhere"):
        status_suite(run, run_dir=tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


def test_cli_export_by_item_id_is_refused(run: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "runs" / "suite" / "results.sqlite")
    args = ["results", "export", "--db", db, "--out", str(tmp_path / "x.csv"), "--by", "item_id",
            "--suite", str(run)]
    res = CliRunner().invoke(build_app("results"), args)
    assert res.exit_code == 2 and "item_id" in res.output and "export column" in res.output
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(run), "--run-dir",
                                                    str(tmp_path / "elsewhere")])
    assert res.exit_code == 2 and "no result store" in res.output


def test_a_run_folder_given_for_a_manifest_is_named_with_the_call_that_takes_one(
    run: Path, tmp_path: Path
) -> None:
    """``status_suite("runs/suite")`` said to run `suite scan`, ``load_suite_results`` named a store path
    that does not exist; the CLI commands above them take a run folder."""
    from robojudge.run import load_suite_results, status_suite

    folder = tmp_path / "runs" / "suite"
    assert (folder / "results.sqlite").exists()
    with pytest.raises(ValueError, match=r"a run folder, not a manifest; for a run folder use .*run_results"):
        status_suite(folder)
    with pytest.raises(ValueError, match=r"a run folder, not a manifest; .*load_run_results\(RUN, stale="):
        load_suite_results(folder)
