"""An --out that cannot be written is refused before the work: the leaderboards, the report, the
audits, training, `metrics sets` and `suite prompts` used to compute everything (bootstraps, scoring,
judge calls, training) and then fail at the write.

Every case names a manifest and a store that do not exist: the --out check must come first, so the
error is about --out, not about the missing inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app

CASES = [
    ["audit", "acceleration", "{m}", "--dense", "d", "--accelerated", "a", "--out", "{o}"],
    ["audit", "standins", "{m}", "--dense", "d", "--out", "{o}"],
    ["audit", "sample-size", "{m}", "--out", "{o}"],
    ["leaderboard", "generators", "{m}", "--db", "{db}", "--out", "{o}"],
    ["leaderboard", "judges", "{m}", "--db", "{db}", "--out", "{o}"],
    ["leaderboard", "fps-ablation", "{m}", "--backend", "mock", "--model", "x", "--db", "{db}",
     "--out", "{o}"],
    ["report", "{m}", "--db", "{db}", "--out", "{o}"],
    ["report", "{tmp}/run", "--out", "{o}"],
    ["train", "sft", "--model", "m", "--data", "{tmp}/d", "--out", "{o}"],
    ["train", "grpo", "--model", "m", "--data", "{tmp}/d", "--out", "{o}"],
    ["metrics", "sets", "{m}", "--metrics", "iq1_fvd", "--out", "{o}/rows.csv"],
    ["suite", "prompts", "{m}", "--judge", "j", "--out", "{o}/p.jsonl"],
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(a[:2]) for a in CASES])
def test_an_out_under_a_file_is_refused_first(tmp_path: Path, args: list[str]) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.sqlite").write_bytes(b"")
    subs = {"{m}": str(tmp_path / "missing.jsonl"), "{db}": str(tmp_path / "missing.sqlite"),
            "{o}": str(blocker / "out"), "{tmp}": str(tmp_path)}
    argv = []
    for a in args:
        for k, v in subs.items():
            a = a.replace(k, v)
        argv.append(a)
    res = CliRunner().invoke(build_app(argv[0]), argv)
    assert res.exit_code == 2, res.output
    assert f"{blocker} is a file, so no folder can be made under it" in res.output, res.output
    assert blocker.read_text() == "not a folder"


def test_an_out_file_that_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "rows.csv"
    folder.mkdir()
    argv = ["metrics", "sets", str(tmp_path / "missing.jsonl"), "--metrics", "iq1_fvd", "--out", str(folder)]
    res = CliRunner().invoke(build_app("metrics"), argv)
    assert res.exit_code == 2 and f"--out {folder}: a folder, not a file" in res.output, res.output


def test_an_existing_out_file_in_a_read_only_folder_is_refused_first(tmp_path: Path, monkeypatch,
                                                                      capsys) -> None:
    # The file is written beside its name and renamed onto it, so its folder must take a new file: a
    # review found `suite prompts` sending every judge request before it failed to write (an existing
    # writable file in a read-only folder passed this check, which was right when it was rewritten in
    # place). As root os.access passes, so simulated.
    import os

    import typer

    from robojudge.cli._common import check_out_file

    out = tmp_path / "ro" / "rows.csv"
    out.parent.mkdir()
    out.write_text("old")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(out.parent) else real(p, mode))
    with pytest.raises(typer.Exit):
        check_out_file(out)
    assert f"its folder {out.parent} is not writable" in " ".join(capsys.readouterr().err.split())
    with pytest.raises(typer.Exit):
        check_out_file(out.parent / "new.csv")  # a new file needs the folder
    monkeypatch.setattr(os, "access", real)
    check_out_file(out)  # no error
