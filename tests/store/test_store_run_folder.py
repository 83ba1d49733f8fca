"""``--db`` given a run folder means the folder's ``results.sqlite``, as ``robojudge report RUN`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore, StoreError, default_db_url, parse_url

runner = CliRunner()


def test_a_folder_is_a_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert parse_url(run).database == str(run / "results.sqlite")
    assert parse_url(str(run)).database == parse_url(default_db_url(run)).database
    assert parse_url(tmp_path / "r.sqlite").database == str(tmp_path / "r.sqlite")  # a file stays a file
    assert parse_url(tmp_path / "new").database == str(tmp_path / "new")  # nothing there yet: a file
    with ResultStore(run) as store:  # a writer makes the run folder's store
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0)])
    assert (run / "results.sqlite").is_file()


def test_read_commands_take_a_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with ResultStore(default_db_url(run)) as store:
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0)])
    out = tmp_path / "long.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(run), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert out.read_text().splitlines()[1].startswith("a,m,1.0,ok")
    done = runner.invoke(build_app("results"), ["results", "upgrade", "--db", str(run)])
    assert done.exit_code == 0 and "schema version" in done.output
    empty = tmp_path / "empty"
    empty.mkdir()
    done = runner.invoke(build_app("results"), ["results", "upgrade", "--db", str(empty)])
    said = " ".join(done.output.split())
    assert done.exit_code == 2 and f"no result store at {empty / 'results.sqlite'}" in said


def test_a_new_store_named_like_an_export_is_refused(tmp_path: Path) -> None:
    for name in ("results.csv", "out.JSONL", "scores.parquet"):
        with pytest.raises(StoreError, match=r"name for a new result store; --db names the store") as info:
            ResultStore(tmp_path / name)
        assert "robojudge results export --db STORE -o" in str(info.value)
        assert not (tmp_path / name).exists()  # nothing was written under the export's name
    (tmp_path / "empty.csv").write_bytes(b"")
    with pytest.raises(StoreError):
        ResultStore(tmp_path / "empty.csv")
    with ResultStore(tmp_path / "results.db") as store:  # any other name is a store as before
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0)])
    legacy = tmp_path / "old.csv"  # a store already made under such a name keeps working
    (tmp_path / "results.db").rename(legacy)
    with ResultStore(legacy) as store:
        assert store.count() == 1
