"""Files written in one step keep within the file system's name limit (audit s67_names F6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge._files import NAME_MAX, temp_beside
from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore, export_results


@pytest.mark.parametrize("name", ["a.csv", "x" * 250 + ".csv", "中" * 81 + ".jsonl", "é" * 127])
def test_temp_names_fit_and_differ(tmp_path: Path, name: str):
    first, second = temp_beside(tmp_path / name), temp_beside(tmp_path / name)
    assert first != second and first.parent == tmp_path
    assert len(first.name.encode()) <= NAME_MAX and first.name.startswith(".")
    first.write_text("ok")  # the file system takes it


def test_a_target_near_the_limit_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    long = "p" * (NAME_MAX - len(".jsonl"))
    videos = tmp_path / long / "g"
    videos.mkdir(parents=True)
    (videos / "a.mp4").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(build_app("suite"), ["suite", "scan", long])  # --out: <folder>.jsonl, 255 bytes
    assert res.exit_code == 0, res.output
    assert (tmp_path / f"{long}.jsonl").is_file()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temporary file left
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0)])
        out = tmp_path / ("r" * (NAME_MAX - 4) + ".csv")
        assert export_results(store, out) == 1 and out.is_file()


def test_a_folder_name_too_long_for_the_suffix_gets_a_short_name_it_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `suite scan FOLDER` named the manifest <folder>.jsonl: a folder name of 250+ bytes (a prompt) made a
    # name over the limit, and the scan failed with "File name too long" unless --out was given.
    first, second = "p" * 252, "p" * 250 + "qq"  # the same first 240 bytes
    for name in (first, second):
        (tmp_path / name / "g").mkdir(parents=True)
        (tmp_path / name / "g" / "a.mp4").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    app = build_app("suite")
    res = CliRunner().invoke(app, ["suite", "scan", first])
    assert res.exit_code == 0, res.output
    written = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert len(written) == 1 and written[0].startswith("p" * 240 + "-") and written[0].endswith(".jsonl")
    assert len(written[0].encode()) == NAME_MAX
    assert f"wrote {written[0]}: 1 item(s)" in res.stdout
    assert f"so the manifest is named {written[0]}: the name's start and a hash of the whole name" in \
        " ".join(res.stderr.split())
    # The same folder gets the same name again (--force replaces it), another long name another one.
    again = CliRunner().invoke(app, ["suite", "scan", first])
    assert again.exit_code != 0 and "exists; pass --force to replace it" in again.output
    assert CliRunner().invoke(app, ["suite", "scan", first, "--force"]).exit_code == 0
    assert CliRunner().invoke(app, ["suite", "scan", second]).exit_code == 0
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_file())
    assert len(names) == 2 and written[0] in names
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temporary file left


def test_a_replaced_file_keeps_its_link_and_its_permissions(tmp_path: Path) -> None:
    # Files written whole through a temporary file (the report, summaries, judge texts) turned a link
    # into a plain file, leaving what it pointed to stale, and a chmod 600 table came back 0644.
    import os
    import stat

    from robojudge._files import replacing

    shared = tmp_path / "published" / "index.html"
    shared.parent.mkdir()
    shared.write_text("old page")
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").symlink_to(shared)
    private = out / "table.csv"
    private.write_text("old")
    private.chmod(0o600)
    with replacing() as files:
        files.write_text(out / "index.html", "new page")
        files.write_text(private, "new")
        files.write_text(out / "fresh.csv", "x")
    assert (out / "index.html").is_symlink() and shared.read_text() == "new page"
    assert private.read_text() == "new" and stat.S_IMODE(private.stat().st_mode) == 0o600
    assert (out / "fresh.csv").read_text() == "x"
    assert not [p for p in os.listdir(out) if p.startswith(".")]  # no temporary file left
