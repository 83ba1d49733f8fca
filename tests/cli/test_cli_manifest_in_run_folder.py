"""A manifest inside a run folder whose store notes it resolves to that run folder, not ``runs/<stem>``.

``robojudge demo`` lays out ``runs/demo/suite/suite.jsonl`` and scores it into ``runs/demo/results.sqlite``.
Before, a command given that manifest with no ``--db`` used ``./runs/suite`` instead: the README's
``robojudge judge runs/demo/suite/suite.jsonl ...`` wrote the judge to a second store, which
``report runs/demo`` and ``leaderboard judges runs/demo`` never read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.run import default_run_dir
from robojudge.store import ResultStore, default_db_url
from robojudge.video import write_video

runner = CliRunner()
REPLY = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4}'


def _run(command: str, *args: str):
    return runner.invoke(build_app(command), [command, *args])


def _demo_like(root: Path) -> Path:
    """``root/suite/suite.jsonl`` with its videos, as the demo lays out its suite in its run folder."""
    folder = root / "suite"
    (folder / "videos").mkdir(parents=True)
    lines = []
    for k, gen in enumerate(["a", "a", "b", "b"]):
        write_video(folder / "videos" / f"v{k}.mp4", np.full((6, 32, 32, 3), 40 * (k + 1), np.uint8), fps=4)
        lines.append(json.dumps({"item_id": f"i{k}", "video": f"videos/v{k}.mp4", "clip_id": f"c{k // 2}",
                                 "generator": gen, "instruction": "push", "labels": {"pa": 3, "ia": 4}}))
    manifest = folder / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


def test_judge_and_score_given_the_manifest_use_its_run_folder_s_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _demo_like(tmp_path / "dl")
    rel = "dl/suite/suite.jsonl"
    done = _run("score", rel, "--run-dir", "dl", "-m", "uniform_random", "--no-progress")
    assert done.exit_code == 0, done.output
    assert default_run_dir(rel) == Path("dl") and default_run_dir(manifest) == Path("dl")
    store = default_db_url(tmp_path / "dl")

    (tmp_path / "j.toml").write_text(f"[judges.mk]\nbackend = \"mock\"\nreplies = ['{REPLY}']\n",
                                     encoding="utf-8")
    judged = _run("judge", rel, "--judges", "j.toml", "-j", "mk", "--no-progress")
    assert judged.exit_code == 0, judged.output
    assert f"results: {store}" in judged.stdout
    assert "report: robojudge report dl" in judged.stdout
    scored = _run("score", rel, "-m", "mq_dynamic_degree", "--no-progress")
    assert scored.exit_code == 0, scored.output
    assert f"results: {store}" in scored.stdout
    assert not (tmp_path / "runs").exists()
    with ResultStore(store, read_only=True) as s:
        stored = {r.metric for r in s.rows()}
    assert stored == {"uniform_random", "mq_dynamic_degree", "judge:mk:pa", "judge:mk:ia"}

    # the run folder and the manifest name one store: both leaderboards show the judge
    for given in ("dl", rel):
        board = _run("leaderboard", "judges", given, "--bootstrap", "0")
        assert board.exit_code == 0, board.output
        assert any(ln.split()[:1] == ["mk"] for ln in board.stdout.splitlines()), board.output


def test_a_manifest_its_folder_s_store_does_not_note_keeps_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _demo_like(tmp_path / "dl")
    other = tmp_path / "dl" / "suite" / "other.jsonl"
    other.write_text(manifest.read_text(encoding="utf-8"), encoding="utf-8")
    done = _run("score", str(other), "--run-dir", "dl", "-m", "uniform_random", "--no-progress")
    assert done.exit_code == 0, done.output
    assert default_run_dir(other) == Path("dl")
    assert default_run_dir(manifest) == Path("runs") / "suite"  # in the folder, but never scored into it


def test_a_symlink_to_the_manifest_finds_its_run_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link to the manifest file elsewhere: score resumes into the run folder's store, report reads it.
    Before, only the link's own folders were looked at: score made a second store under ./runs/ and
    computed everything again, and report said there was no store. The manifest's video paths are
    relative, as the demo writes them: read from the folder the link leads to (they were looked for beside
    the link, and every item was "file not found": audit suiteio F2)."""
    manifest = _demo_like(tmp_path / "proj" / "runs" / "x")
    monkeypatch.chdir(tmp_path / "proj")
    done = _run("score", str(manifest), "--run-dir", "runs/x", "-m", "uniform_random", "--no-progress")
    assert done.exit_code == 0, done.output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "suite.jsonl").symlink_to(manifest)
    monkeypatch.chdir(elsewhere)
    assert default_run_dir("suite.jsonl") == tmp_path / "proj" / "runs" / "x"
    again = _run("score", "suite.jsonl", "-m", "uniform_random", "--no-progress")
    assert again.exit_code == 0, again.output
    assert "0 scored" in again.stdout and "4 already stored" in again.stdout, again.output
    assert f"results: {default_db_url(tmp_path / 'proj' / 'runs' / 'x')}" in again.stdout
    assert not (elsewhere / "runs").exists()
    report = _run("report", "suite.jsonl", "--no-html", "--out", str(tmp_path / "rep"))
    assert report.exit_code == 0, report.output
    assert (tmp_path / "rep" / "summary.md").is_file()


def test_a_linked_manifest_with_a_store_of_its_own_keeps_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link scored into its own ./runs/<name> before links were followed: the same command resumes
    there, not in the run folder the link leads to (which is someone else's: review rev16 F1)."""
    manifest = _demo_like(tmp_path / "colleague" / "runs" / "x")
    lines = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    videos = manifest.parent
    manifest.write_text("".join(json.dumps({**d, "video": str(videos / d["video"])}) + "\n" for d in lines),
                        encoding="utf-8")
    monkeypatch.chdir(tmp_path / "colleague")
    assert _run("score", str(manifest), "--run-dir", "runs/x", "-m", "uniform_random",
                "--no-progress").exit_code == 0
    me = tmp_path / "me"
    me.mkdir()
    (me / "bench.jsonl").symlink_to(manifest)
    monkeypatch.chdir(me)
    first = _run("score", "bench.jsonl", "-m", "uniform_random", "--run-dir", "runs/bench", "--no-progress")
    assert first.exit_code == 0 and "4 scored" in first.stdout, first.output
    assert default_run_dir("bench.jsonl") == Path("runs") / "bench"
    again = _run("score", "bench.jsonl", "-m", "uniform_random", "--no-progress")
    assert "4 already stored" in again.stdout and "runs/bench/results.sqlite" in again.stdout, again.output
