"""Run folders and store files whose paths hold URL characters (``%``, ``?``, ``#``): the default store
is in the run folder, each manifest has its own, and the ``report`` hint that ``score`` prints works."""

from __future__ import annotations

import json
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultStore, default_db_url, parse_url, sqlite_url


@pytest.mark.parametrize("name", ["exp%20a", "what?", "100%", "a#b", "x?y=1&z"])
def test_default_store_url_names_the_file_in_the_run_folder(tmp_path, name):
    folder = tmp_path / name
    assert parse_url(default_db_url(folder)).database == str(folder / "results.sqlite")
    assert parse_url(sqlite_url(folder / "r.sqlite")).database == str(folder / "r.sqlite")


def _manifest(folder: Path, name: str, item: str) -> Path:
    path = folder / name
    path.write_text(json.dumps({"item_id": item, "video": "v.mp4", "instruction": "x"}) + "\n")
    return path


def test_score_and_report_from_a_folder_with_url_characters(tmp_path, monkeypatch):
    work = tmp_path / "exp%20a"
    work.mkdir()
    (work / "v.mp4").write_bytes(b"")
    monkeypatch.chdir(work)
    first, second = _manifest(work, "what?.jsonl", "one"), _manifest(work, "what?2.jsonl", "two")
    runner = CliRunner()
    for manifest in (first, second):
        res = runner.invoke(build_app("score"), ["score", manifest.name, "-m", "test_slow", "--no-progress"])
        assert res.exit_code == 0, res.output
        assert "1 scored" in res.output  # the second suite is not taken for the first one's
    assert not (tmp_path / "exp a").exists()  # nothing written beside the working folder
    for stem, item in (("what?", "one"), ("what?2", "two")):
        store_file = work / "runs" / stem / "results.sqlite"
        assert store_file.is_file()
        with ResultStore(store_file) as store:
            assert [r.item_id for r in store.rows()] == [item]
    res = runner.invoke(build_app("report"), ["report", "runs/what?", "--out", "rep", "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    # a store file (not a run folder) whose name holds a '%'
    (work / "runs" / "what?" / "results.sqlite").rename(work / "store%41.sqlite")
    res = runner.invoke(build_app("report"),
                        ["report", "store%41.sqlite", "--out", "rep2", "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    assert (work / "rep2" / "index.html").is_file()


def test_the_url_handed_back_opens_the_same_store(tmp_path, monkeypatch):
    # ResultStore.url and run.db_url pasted the raw path: opened again, they named another (new) store
    from robojudge.run import score_suite

    work = tmp_path / "exp%20a" / "what?"
    work.mkdir(parents=True)
    (work / "v.mp4").write_bytes(b"")
    monkeypatch.chdir(work)
    run = score_suite(_manifest(work, "s.jsonl", "one"), ["test_slow"])
    with ResultStore(run.db_url) as store:
        assert [r.item_id for r in store.rows()] == ["one"]
    assert not (tmp_path / "exp a").exists()
    with ResultStore(work / "runs" / "s" / "results.sqlite") as store:
        assert parse_url(store.url).database == str(work / "runs" / "s" / "results.sqlite")
    with ResultStore(tmp_path / "plain.sqlite") as store:  # an ordinary path is shown as it is
        assert store.url == f"sqlite:///{tmp_path / 'plain.sqlite'}"
