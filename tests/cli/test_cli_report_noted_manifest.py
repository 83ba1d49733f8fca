"""``robojudge report RUN`` finds the manifest that was scored into the run's store.

Scored with ``--run-dir`` (or with the default run folder, from a manifest kept elsewhere), the run
folder holds no manifest, and the report used to come without labels or generators unless ``--suite``
was passed. The store now notes each manifest scored or judged into it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import noted_manifest
from robojudge.store import default_db_url
from robojudge.video import write_video

runner = CliRunner()


def _manifest(tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    canvas = rng.integers(0, 256, (40, 64, 3), dtype=np.uint8)
    lines = []
    for g, gen in enumerate(("alpha", "beta")):
        for c in range(3):
            frames = np.stack([np.roll(canvas, (c + 1) * (g + 1) * i, axis=1)[:32, :48] for i in range(10)])
            video = tmp_path / "videos" / gen / f"ep{c}.mp4"
            video.parent.mkdir(parents=True, exist_ok=True)
            write_video(video, frames, fps=8)
            lines.append(json.dumps({"item_id": f"{gen}/ep{c}", "video": f"videos/{gen}/ep{c}.mp4",
                                     "generator": gen, "clip_id": f"ep{c}", "instruction": "push",
                                     "labels": {"pa": 1 + c + g, "ia": 3}}))
    manifest = tmp_path / "lists" / "suite.jsonl"
    manifest.parent.mkdir()
    manifest.write_text("\n".join(lines) + "\n")
    shutil.move(tmp_path / "videos", manifest.parent / "videos")
    return manifest


def test_report_of_a_run_folder_reads_the_manifest_scored_into_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _manifest(tmp_path)
    run = tmp_path / "elsewhere" / "run 1"
    scored = runner.invoke(build_app("score"), ["score", str(manifest), "-m", "mq_dynamic_degree",
                                                "--run-dir", str(run), "--no-progress"])
    assert scored.exit_code == 0, scored.output
    assert "6 tasks: 4 scored, 2 unscored (nothing to measure), 0 failed" in scored.stdout
    assert f"report: robojudge report '{run}'" in scored.stdout  # quoted: the folder has a space
    assert noted_manifest(default_db_url(run)) == manifest.resolve()

    done = runner.invoke(build_app("report"), ["report", str(run), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    assert f"suite manifest: {manifest.resolve()}" in done.stderr
    assert "Metrics against the labels: not shown" not in done.stderr
    assert "Generator leaderboard: 1 plots" in done.stderr
    html = (run / "report" / "index.html").read_text()
    assert "alpha" in html and "beta" in html

    # --suite still wins; a manifest that has gone is not used.
    other = tmp_path / "other.jsonl"
    other.write_text(manifest.read_text().replace("videos/", "lists/videos/"))
    done = runner.invoke(build_app("report"), ["report", str(run), "--suite", str(other), "--bootstrap", "0"])
    assert done.exit_code == 0 and "suite manifest:" not in done.output
    # a run folder's report has no manifest summary: --no-html and --by are refused, not ignored
    for extra, words in ((["--no-html"], "--no-html leaves nothing to write"),
                         (["--by", "task"], "--by task:")):
        refused = runner.invoke(build_app("report"), ["report", str(run), *extra])
        assert refused.exit_code == 2 and words in refused.output, refused.output
    manifest.unlink()
    gone = runner.invoke(build_app("report"), ["report", str(run), "--bootstrap", "0"])
    assert gone.exit_code == 0, gone.output
    said = " ".join(gone.stderr.split())
    assert f"no suite manifest found (its store notes {manifest.resolve()}, no longer there" in said
    assert "(pass --suite)" in said


def test_a_store_file_and_the_default_run_folder_find_it_too(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _manifest(tmp_path)
    scored = runner.invoke(build_app("score"), ["score", str(manifest), "-m", "mq_dynamic_degree",
                                                "--no-progress"])
    assert scored.exit_code == 0, scored.output
    assert "report: robojudge report runs/suite" in scored.stdout
    store = tmp_path / "runs" / "suite" / "results.sqlite"
    done = runner.invoke(build_app("report"), ["report", str(store), "--out", "r", "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    assert f"suite manifest: {manifest.resolve()}" in done.stderr
    assert "Generator leaderboard: 1 plots" in done.stderr


def test_a_store_scored_from_one_manifest_per_generator_reports_them_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    whole = _manifest(tmp_path)
    lines = whole.read_text().splitlines()
    per_generator = {}
    for gen in ("alpha", "beta"):
        per_generator[gen] = whole.with_name(f"{gen}.jsonl")
        per_generator[gen].write_text("\n".join(ln for ln in lines if f'"generator": "{gen}"' in ln) + "\n")
    run = tmp_path / "run"
    for gen in ("alpha", "beta"):
        args = ["score", str(per_generator[gen]), "-m", "mq_dynamic_degree", "--run-dir", str(run),
                "--no-progress"]
        scored = runner.invoke(build_app("score"), args)
        assert scored.exit_code == 0, scored.output

    done = runner.invoke(build_app("report"), ["report", str(run), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    out = " ".join(done.stderr.split())
    assert f"suite manifest: {per_generator['beta'].resolve()}" in out
    assert f"and the items it lacks from 1 more manifest scored into this store: " \
           f"{per_generator['alpha'].resolve()}" in out
    board = (run / "report" / "tables" / "leaderboard.csv").read_text().splitlines()
    assert [ln.split(",")[1] for ln in board[1:]] == ["beta", "alpha"]  # by their labels' means, 3 and 2
    html = (run / "report" / "index.html").read_text()
    assert f"suites {per_generator['beta'].resolve()}, {per_generator['alpha'].resolve()}" in html

    # The leaderboard and Best-of-N take the run folder too, and see both generators.
    board = runner.invoke(build_app("leaderboard"), ["leaderboard", "generators", str(run), "--bootstrap",
                                                     "0", "--json"])
    assert board.exit_code == 0, board.output
    ranked = json.loads(board.stdout)
    assert [e["generator"] for e in ranked["entries"]] == ["beta", "alpha"], ranked
    assert "suite manifests: " in board.stderr and "alpha.jsonl" in board.stderr
    picks = runner.invoke(build_app("select"), ["select", "best-of-n", str(run), "--by", "mq_dynamic_degree",
                                                "--group", "clip_id", "--bootstrap", "0", "--json"])
    assert picks.exit_code == 0, picks.output
    assert len(json.loads(picks.stdout)["picks"]) == 3  # ep0-ep2, each with an alpha and a beta rollout
    status = runner.invoke(build_app("results"), ["results", "status", str(run)], env={"COLUMNS": "250"})
    assert status.exit_code == 0, status.output
    # every row checked against its item's inputs, whichever manifest the item came from
    row = next(ln for ln in status.stdout.splitlines() if "mq_dynamic_degree" in ln)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[3:5] == ["6", "6"] and cells[9] == "0", cells  # current, up to date; not checked
    empty = tmp_path / "empty"
    empty.mkdir()
    gone = runner.invoke(build_app("leaderboard"), ["leaderboard", "generators", str(empty)])
    assert gone.exit_code == 2 and "no results.sqlite in this run folder" in gone.output

    # --suite names the one manifest to use: no others are added
    only = runner.invoke(build_app("report"), ["report", str(run), "--suite", str(per_generator["alpha"]),
                                               "--bootstrap", "0"])
    assert only.exit_code == 0 and "more manifest" not in only.stderr
    html = (run / "report" / "index.html").read_text()
    assert f"suite {per_generator['alpha'].resolve()}" in html and "beta.jsonl" not in html


def test_a_report_says_when_another_manifest_scored_into_the_store_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two machines scored halves into one store; with one half's manifest gone the summary covered the
    # other half without a word in the terminal.
    monkeypatch.chdir(tmp_path)
    manifest = _manifest(tmp_path)
    run = tmp_path / "run"
    part = tmp_path / "machine_b" / "part2.jsonl"
    part.parent.mkdir()
    video = manifest.parent / "videos" / "alpha" / "ep0.mp4"
    part.write_text(json.dumps({"item_id": "gamma/ep0", "video": str(video), "generator": "gamma"}) + "\n")
    for m in (manifest, part):
        scored = runner.invoke(build_app("score"), ["score", str(m), "-m", "mq_dynamic_degree",
                                                    "--run-dir", str(run), "--no-progress"])
        assert scored.exit_code == 0, scored.output
    part.unlink()
    done = runner.invoke(build_app("report"), ["report", str(run), "--suite", str(manifest), "--bootstrap",
                                                "0"])
    assert done.exit_code == 0, done.output
    quiet = " ".join(done.stderr.split())
    assert "no longer there" not in quiet  # --suite given: the user chose the manifest
    done = runner.invoke(build_app("report"), ["report", str(run), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.stderr.split())
    assert (f"1 stored result is of items none of the manifests read holds, so in no per-item table (its "
            f"store notes {part.resolve()}, no longer there") in said


def test_a_moved_project_s_own_manifest_noted_under_its_old_path_is_not_taken_for_missing_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store notes the manifest under the folder it was scored from; after the project moved and was
    # scored again, the report said another manifest's items were missing, though every item was there.
    monkeypatch.chdir(tmp_path)
    manifest = _manifest(tmp_path / "p1")
    run = tmp_path / "run"
    assert runner.invoke(build_app("score"), ["score", str(manifest), "-m", "mq_dynamic_degree", "--run-dir",
                                              str(run), "--no-progress"]).exit_code == 0
    (tmp_path / "p1").rename(tmp_path / "p2")
    moved = tmp_path / "p2" / "lists" / "suite.jsonl"
    assert runner.invoke(build_app("score"), ["score", str(moved), "-m", "mq_dynamic_degree", "--run-dir",
                                              str(run), "--no-progress"]).exit_code == 0
    done = runner.invoke(build_app("report"), ["report", str(run), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    assert "no longer there" not in done.stderr and "none of the manifests read" not in done.stderr
