"""One concept, one spelling: the spelling most commands use is accepted where a command had its own,
and the old spelling still works (the audit's option table)."""

from __future__ import annotations

import click
import pytest
import typer

from robojudge.cli import build_app


def _parses(path: list[str], args: list[str]) -> dict[str, object]:
    """The parameters ``robojudge PATH... ARGS`` parses to (nothing runs)."""
    cmd: click.Command = typer.main.get_command(build_app(path[0]))
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    with cmd.make_context(" ".join(path), list(args), resilient_parsing=False) as ctx:
        return dict(ctx.params)


@pytest.mark.parametrize(("path", "args", "param", "value"), [
    # before: "No such option" for each new spelling
    (["results", "import"], ["f.csv", "--run-dir", "runs/x"], "run", "runs/x"),
    (["results", "import"], ["f.csv", "--run", "runs/x"], "run", "runs/x"),
    (["suite", "prompts"], ["s.jsonl", "--out", "p.jsonl", "-j", "q", "--cache-dir", "c"], "cache", "c"),
    (["suite", "prompts"], ["s.jsonl", "-o", "p.jsonl", "-j", "q", "--cache", "c"], "cache", "c"),
    (["meta", "segments"], ["--in", "s.csv", "--score", "k", "--bootstrap", "50"], "replicates", 50),
    (["meta", "segments"], ["--in", "s.csv", "--score", "k", "--replicates", "50"], "replicates", 50),
    (["judge", "draft"], ["--names", "a,b", "--db", "r.sqlite"], "judges", "a,b"),
    (["judge", "draft"], ["--judges", "a,b", "--db", "r.sqlite"], "judges", "a,b"),
    (["demo"], ["-o", "runs/d"], "out", "runs/d"),
    (["suite", "make-demo"], ["-o", "d"], "out", "d"),
    (["kiva", "train"], ["--episodes", "e.jsonl", "--robot", "fetch", "-o", "k"], "out", "k"),
    (["audit", "acceleration"], ["s.jsonl", "--dense", "d", "--accelerated", "a", "-o", "x"], "out", "x"),
])
def test_the_common_spelling_and_the_old_one_are_both_accepted(path: list[str], args: list[str], param: str,
                                                                value: object) -> None:
    assert str(_parses(path, args)[param]) == str(value)
