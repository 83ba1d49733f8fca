"""``results export`` and ``results upgrade`` take the run folder as their argument, as ``report`` does.

``robojudge score`` ends with ``report: robojudge report runs/NAME``; ``results export runs/NAME`` was
refused ("Got unexpected extra argument(s)"), the folder accepted only as ``--db`` (realvid audit F6).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.video import write_video

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(build_app(args[0]), list(args))


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    lines = []
    for k in range(2):
        write_video(tmp_path / f"v{k}.mp4", np.full((4, 16, 16, 3), 60 * (k + 1), np.uint8), fps=4)
        lines.append(json.dumps({"item_id": f"i{k}", "video": f"v{k}.mp4", "generator": "g"}))
    (tmp_path / "suite.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _run("score", "suite.jsonl", "-m", "uniform_random", "--no-progress")
    assert done.exit_code == 0, done.output
    assert "robojudge report runs/suite" in " ".join(done.output.split())
    return tmp_path


def test_export_takes_the_run_folder_score_prints(scored: Path) -> None:
    done = _run("results", "export", "runs/suite", "-o", "a.csv", "--suite", "suite.jsonl", "--by",
                "generator")
    assert done.exit_code == 0, done.output
    assert "wrote 2 rows" in done.output
    assert (scored / "a.csv").read_text().count("uniform_random") == 2
    by_db = _run("results", "export", "--db", "runs/suite", "-o", "b.csv", "--suite", "suite.jsonl", "--by",
                 "generator")
    assert by_db.exit_code == 0, by_db.output
    assert (scored / "a.csv").read_text() == (scored / "b.csv").read_text()


def test_export_refuses_the_store_given_twice_or_a_manifest_as_the_store(scored: Path) -> None:
    twice = _run("results", "export", "runs/suite", "--db", "runs/suite/results.sqlite", "-o", "a.csv")
    assert twice.exit_code == 2
    assert "give the store once, as runs/suite or as --db runs/suite/results.sqlite" in " ".join(
        twice.output.split())
    manifest = _run("results", "export", "suite.jsonl", "-o", "a.csv")
    assert manifest.exit_code == 2
    assert "a suite manifest is given as --suite suite.jsonl" in " ".join(manifest.output.split())
    assert not (scored / "a.csv").exists()
    # .ndjson is a manifest too (it was opened as a SQLite store: "file is not a database"; review rev15 F4)
    (scored / "suite.ndjson").write_bytes((scored / "suite.jsonl").read_bytes())
    nd = _run("results", "export", "suite.ndjson", "-o", "a.csv")
    said = " ".join(nd.output.split())
    assert nd.exit_code == 2 and "a suite manifest is given as --suite suite.ndjson" in said
    nothing = _run("results", "export", "-o", "a.csv")
    assert nothing.exit_code == 2 and "give the run folder (robojudge results export runs/NAME" in " ".join(
        nothing.output.split())


def test_upgrade_takes_the_run_folder_too(scored: Path) -> None:
    done = _run("results", "upgrade", "runs/suite")
    assert done.exit_code == 0, done.output
    assert _run("results", "upgrade", "--db", "runs/suite").exit_code == 0
    # upgrade has no --suite: it is not offered (review rev15 F4)
    manifest = " ".join(_run("results", "upgrade", "suite.jsonl").output.split())
    assert "is a file, not a run folder or store" in manifest and "--suite" not in manifest
    nothing = _run("results", "upgrade")
    assert nothing.exit_code == 2 and "results upgrade: give the store" in " ".join(nothing.output.split())
