"""Options that were accepted and did something senseless (an audit of every command given bad input):
each is now one error line naming the option, before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore


def _run(*args: object) -> tuple[int, str]:
    res = CliRunner().invoke(build_app(str(args[0])), [str(a) for a in args])
    return res.exit_code, res.output


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "j.sqlite"
    with ResultStore(db) as st:
        st.add([ResultRow(item_id="a", metric="judge:m:pa", config_hash="c", version="1", status="ok",
                          value=3.0)])
    return db


@pytest.mark.parametrize(("args", "words"), [
    (["judge", "draft", "-j", "m,m", "--db", "{db}", "--out", "{tmp}/d.jsonl"], "--names: m given twice"),
    (["judge", "draft", "-j", "m", "--min-judges", "3", "--db", "{db}", "--out", "{tmp}/d.jsonl"],
     "--min-judges 3: more than the 1 judge(s) given"),
    (["judge", "texts", "-j", "m", "--field", "item_id", "--db", "{db}", "--out", "{tmp}/t.jsonl"],
     "--field 'item_id': name a key other than item_id"),
    (["metrics", "list", "--update", "{tmp}/m.md"], "--update rewrites the Markdown table: add --markdown"),
    (["aggregate", "select", "--in", "{tmp}/x.csv", "--threshold", "nan"], "--threshold nan: a Pearson r"),
    (["aggregate", "select", "--in", "{tmp}/x.csv", "--threshold", "5"], "--threshold 5.0: a Pearson r"),
])
def test_a_senseless_option_is_refused_naming_it(store: Path, tmp_path: Path, args: list[str],
                                                 words: str) -> None:
    filled = [a.format(db=store, tmp=tmp_path) for a in args]
    code, output = _run(*filled)
    assert code == 2 and words in output, output
    assert not list(tmp_path.glob("*.jsonl")) and not (tmp_path / "m.md").exists()


def test_a_foreign_database_is_named(tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE foo (x)")
    conn.close()
    code, output = _run("results", "export", "--db", other, "--out", tmp_path / "e.csv")
    assert code == 2 and "other.sqlite: the database is not a robojudge result store" in output


def test_an_empty_round_name_is_refused(tmp_path: Path) -> None:
    code, output = _run("annotate", "round", "create", " ", "--db", f"sqlite:///{tmp_path}/a.sqlite",
                        "-p", "p", "--to", "a", "--to", "b", "--item", "x")
    assert code == 2 and "round name: empty" in output
    assert json.dumps(output)  # one line, no traceback
    assert "Traceback" not in output


@pytest.mark.parametrize(("args", "words"), [
    (["leaderboard", "generators", "{tmp}/s.jsonl", "--sort", "paa"], "--sort must be pa, ia or overall"),
    (["leaderboard", "generators", "{tmp}/s.jsonl", "--predict", "clas"], "--predict must be expected or"),
    (["leaderboard", "judges", "{tmp}/s.jsonl", "--predict", "clas"], "--predict must be expected or"),
    (["train", "export", "--labels", "{tmp}/s.jsonl", "--out", "{tmp}/o", "--fps", "0"], "--fps"),
    (["train", "export", "--labels", "{tmp}/s.jsonl", "--out", "{tmp}/o", "--max-frames", "0"],
     "--max-frames"),
])
def test_options_are_named_not_the_python_parameters(tmp_path: Path, args: list[str], words: str) -> None:
    """sort_by, prediction and 'None' leaked from the Python API into the command line's errors."""
    code, output = _run(*[a.format(tmp=tmp_path) for a in args])
    assert code == 2 and words in output, output
    assert "sort_by" not in output and "None" not in output and not (tmp_path / "o").exists()


def test_suite_info_names_a_problem_of_the_whole_file(tmp_path: Path) -> None:
    """An empty manifest printed "1 row(s) left out" (it has no rows)."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, output = _run("suite", "info", empty)
    assert code == 0 and f"{empty}: manifest has no items" in output and "row(s) left out" not in output
    two = tmp_path / "two.jsonl"
    two.write_text('{"item_id": "a", "video": "missing.mp4"}\n{"item_id": 3\n')
    code, output = _run("suite", "info", two)
    assert "2 row(s) left out" in output
