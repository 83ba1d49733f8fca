"""Files written in one step keep within the file system's name limit (audit s67_names F6)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge._files import LEFTOVER_AGE_S, NAME_MAX, temp_beside
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


def _outside_and_out(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / ".bashrc").write_text("export PS1='$ '\n")
    out = tmp_path / "shared_run" / "report"
    (out / "tables").mkdir(parents=True)
    return outside, out


def test_in_an_output_folder_a_link_leading_out_is_replaced_not_written_through(tmp_path: Path) -> None:
    # A folder that came with links in it (a downloaded run) had the file each pointed to overwritten
    # (audit untrusted 1: tables/summary.csv -> ~/.bashrc); a dangling one created its folders outside.
    import warnings

    from robojudge._files import LinkReplacedWarning, replacing

    outside, out = _outside_and_out(tmp_path)
    (out / "tables" / "summary.csv").symlink_to("../../../home/.bashrc")
    (out / "tables" / "summary.md").symlink_to("../../../home2/.config/newdir/.bash_aliases")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with replacing(out) as files:
            files.write_text(out / "tables" / "summary.csv", "metric,n\n")
            files.write_text(out / "tables" / "summary.md", "| metric |\n")
    assert (outside / ".bashrc").read_text() == "export PS1='$ '\n"
    assert not (tmp_path / "home2").exists()
    for name, text in (("summary.csv", "metric,n\n"), ("summary.md", "| metric |\n")):
        path = out / "tables" / name
        assert not path.is_symlink() and path.read_text() == text
    lines = [str(w.message) for w in said if issubclass(w.category, LinkReplacedWarning)]
    assert len(lines) == 2
    assert "summary.csv was a link to ../../../home/.bashrc" in lines[0] and "outside" in lines[0]
    assert "summary.md was a link to" in lines[1] and "does not exist" in lines[1]


def test_a_link_that_stays_in_the_output_folder_is_followed(tmp_path: Path) -> None:
    from robojudge._files import replace_text

    _, out = _outside_and_out(tmp_path)
    (out / "tables" / "latest.csv").write_text("old")
    (out / "summary.csv").symlink_to("tables/latest.csv")
    replace_text(out / "summary.csv", "new", root=out)
    assert (out / "summary.csv").is_symlink() and (out / "tables" / "latest.csv").read_text() == "new"


def test_a_linked_folder_leading_out_of_the_output_folder_is_refused(tmp_path: Path) -> None:
    # tables/ -> ../victim had the report write its tables there and remove the user's leaderboard.md.
    from robojudge._files import LinkedFolderError, replacing

    _, out = _outside_and_out(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "summary.csv").write_text("mine")
    (victim / "leaderboard.md").write_text("mine")
    (out / "tables").rmdir()
    (out / "tables").symlink_to("../../victim")
    for write in (lambda files: files.write_text(out / "tables" / "summary.csv", "theirs"),
                  lambda files: files.write_text(out / "tables" / "new" / "x.csv", "theirs"),
                  lambda files: files.remove(out / "tables" / "leaderboard.md")):
        refused = r"tables: a link to \.\./\.\./victim .* outside the output"
        with pytest.raises(LinkedFolderError, match=refused), replacing(out) as files:
            write(files)
    assert sorted(p.name for p in victim.iterdir()) == ["leaderboard.md", "summary.csv"]
    assert all(p.read_text() == "mine" for p in victim.iterdir())
    # Named by the user as a single file, a link still leads where the user pointed it.
    from robojudge._files import replace_text

    replace_text(out / "tables" / "summary.csv", "the user's")
    assert (victim / "summary.csv").read_text() == "the user's"


def test_in_a_folder_the_user_named_their_links_out_are_followed_and_linked_folders_refused(
        tmp_path: Path) -> None:
    # --out is the user's folder: a leaderboard.md linked into a paper's folder is theirs (review rev4 1),
    # while a folder the command writes into that leads out of it stays refused.
    import warnings

    from robojudge._files import LinkedFolderError, replacing

    _, out = _outside_and_out(tmp_path)
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "leaderboard.md").write_text("old")
    (out / "leaderboard.md").symlink_to("../../paper/leaderboard.md")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with replacing(out, named=True) as files:
            files.write_text(out / "leaderboard.md", "new")
    assert (out / "leaderboard.md").is_symlink() and (paper / "leaderboard.md").read_text() == "new"
    (out / "tables").rmdir()
    (out / "tables").symlink_to("../../paper")
    with pytest.raises(LinkedFolderError), replacing(out, named=True) as files:
        files.write_text(out / "tables" / "leaderboard.md", "theirs")
    assert (paper / "leaderboard.md").read_text() == "new"


@pytest.mark.skipif(os.name != "posix", reason="the sweep asks whether a process exists with signal 0")
def test_a_killed_writers_leftover_is_removed_by_the_next_write(tmp_path: Path):
    """A `kill -9` in the middle of `results export` left `.out.csv.<pid>.<hex>.tmp` beside the output,
    one per kill, each as big as the export, and no rerun removed them (audit resume F1)."""
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that has ended: its pid names no process now
    dead = tmp_path / f".out.csv.{gone.pid}.0123abcd.tmp"
    live = tmp_path / f".out.csv.{os.getppid()}.0123abcd.tmp"  # the process that started this one runs
    other = tmp_path / f".other.csv.{gone.pid}.0123abcd.tmp"  # another target's
    odd = tmp_path / f".out.csv.{gone.pid}.notours.tmp"  # not a name robojudge writes
    recent = tmp_path / f".out.csv.{gone.pid}.4567cdef.tmp"  # a writer elsewhere (another container)?
    for p in (dead, live, other, odd, recent):
        p.write_text("partial")
    old = time.time() - LEFTOVER_AGE_S - 60
    for p in (dead, live, other, odd):
        os.utime(p, (old, old))
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0)])
        assert export_results(store, tmp_path / "out.csv") == 1
    assert not dead.exists() and live.exists() and other.exists() and odd.exists()
    assert recent.exists()  # touched within the hour: a writer whose pid this machine may not know
    assert (tmp_path / "out.csv").is_file()
