"""``robojudge report`` on a run folder that came with links in it writes only inside its report folder.

A shared run folder (a tar or zip keeps links) whose ``report/tables/summary.csv`` pointed at the user's
``~/.bashrc`` had the report overwrite it with the summary table, a dangling link had its folders created,
and a ``tables/`` that was a link had the report write there and remove the user's files (audit untrusted
1). A link the user made inside the report folder, pointing inside it, is still followed; so is every link
to a file in a folder the user named with ``--out`` (a page or leaderboard linked into a published or
paper folder, review rev4 1), and the user's own ``./report`` link for a store file (rev4 3).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _report_data import write_run

from robojudge.cli import main
from robojudge.run import default_run_dir


def _report(*args: object) -> int:
    with pytest.raises(SystemExit) as stop:
        main(["report", *map(str, args), "--bootstrap", "0"])
    return int(stop.value.code or 0)


def _downloaded_run(tmp_path: Path) -> tuple[Path, Path]:
    """A run folder with an earlier report, and the user's home beside it."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_bytes(b'export PS1="\\u@\\h$ "\n')
    run = tmp_path / "Downloads" / "evil_run"
    write_run(run)
    (run / "report" / "tables").mkdir(parents=True)
    (run / "report" / "index.html").write_text("<html></html>\n")
    return home, run


def test_a_link_to_a_file_outside_is_replaced_and_its_target_left_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home, run = _downloaded_run(tmp_path)
    before = (home / ".bashrc").read_bytes()
    summary = run / "report" / "tables" / "summary.csv"
    summary.symlink_to("../../../../home/.bashrc")
    assert summary.resolve() == (home / ".bashrc").resolve()
    assert _report(run) == 0
    assert (home / ".bashrc").read_bytes() == before
    assert not summary.is_symlink() and summary.read_text().startswith("metric,")
    err = capsys.readouterr().err
    assert err.count("warning:") == 1, err
    assert f"warning: {summary} was a link to ../../../../home/.bashrc" in err


def test_a_dangling_link_creates_nothing_outside(tmp_path: Path) -> None:
    _, run = _downloaded_run(tmp_path)
    md = run / "report" / "tables" / "summary.md"
    md.symlink_to("../../../../home2/.config/newdir/.bash_aliases")
    assert _report(run) == 0
    assert not (tmp_path / "home2").exists()
    assert not md.is_symlink() and "| metric |" in md.read_text()


def test_a_linked_tables_folder_leading_out_is_neither_written_nor_cleaned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, run = _downloaded_run(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    mine = {"summary.csv": "my own summary\n", "leaderboard.md": "my own leaderboard\n"}
    for name, text in mine.items():
        (victim / name).write_text(text)
    dl_report = tmp_path / "dl_report"
    dl_report.mkdir()
    (dl_report / "index.html").write_text("<html></html>\n")
    (dl_report / "tables").symlink_to("../victim")
    assert _report(run, "-o", dl_report) == 2
    assert {p.name: p.read_text() for p in victim.iterdir()} == mine
    assert (dl_report / "index.html").read_text() == "<html></html>\n"
    err = capsys.readouterr().err
    assert f"{dl_report / 'tables'}: a link to ../victim" in err and "nothing is written or removed" in err


def test_a_default_report_folder_that_leads_out_of_the_run_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home, run = _downloaded_run(tmp_path)
    for p in (run / "report" / "tables", run / "report" / "index.html"):
        p.rmdir() if p.is_dir() else p.unlink()
    (run / "report").rmdir()
    (run / "report").symlink_to("../../home")
    assert _report(run) == 2
    assert [p.name for p in home.iterdir()] == [".bashrc"]
    assert "report folder" in capsys.readouterr().err


def test_links_the_user_made_inside_the_report_folder_are_followed(tmp_path: Path) -> None:
    _, run = _downloaded_run(tmp_path)
    out = run / "report"
    (out / "paper").mkdir()
    (out / "paper" / "summary.csv").write_text("old\n")
    (out / "tables" / "summary.csv").symlink_to("../paper/summary.csv")
    assert _report(run) == 0
    assert (out / "tables" / "summary.csv").is_symlink()
    assert (out / "paper" / "summary.csv").read_text().startswith("metric,")


def test_a_manifests_summary_folder_replaces_links_leading_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # summary.csv and results.csv (the store's export) are written into the default folder
    # (runs/<manifest>/report) as the HTML report is.
    home, run = _downloaded_run(tmp_path)
    before = (home / ".bashrc").read_bytes()
    monkeypatch.chdir(tmp_path)
    manifest = run / "suite" / "suite.jsonl"
    out = default_run_dir(manifest) / "report"
    out.mkdir(parents=True)
    for name in ("summary.csv", "results.csv"):
        (out / name).symlink_to("../" * len(out.parts) + "home/.bashrc")
        assert (out / name).resolve() == (home / ".bashrc").resolve()
    assert _report(manifest, "--db", f"sqlite:///{run / 'results.sqlite'}", "--no-html") == 0
    assert (home / ".bashrc").read_bytes() == before
    assert not (out / "summary.csv").is_symlink() and not (out / "results.csv").is_symlink()
    assert (out / "results.csv").read_text().startswith("item_id,")


def test_with_out_a_page_linked_into_a_published_folder_is_kept_up_to_date(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The user's own link, in the folder they named: followed on every run, the link kept, nothing said.
    _, run = _downloaded_run(tmp_path)
    published = tmp_path / "Downloads" / "published"
    published.mkdir()
    (published / "index.html").write_text("old published page\n")
    page = run / "report" / "index.html"
    page.unlink()
    page.symlink_to("../../published/index.html")
    for _ in range(2):
        (published / "index.html").write_text("old published page\n")
        assert _report(run, "--out", run / "report") == 0
        assert page.is_symlink()
        assert (published / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert "warning:" not in capsys.readouterr().err


def test_with_out_a_leaderboard_linked_into_a_papers_folder_is_kept_up_to_date(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, run = _downloaded_run(tmp_path)
    board, paper = tmp_path / "board", tmp_path / "paper"
    board.mkdir()
    paper.mkdir()
    (paper / "leaderboard.md").write_text("paper's table (old)\n")
    (board / "leaderboard.md").symlink_to("../paper/leaderboard.md")
    with pytest.raises(SystemExit) as stop:
        main(["leaderboard", "generators", str(run / "suite" / "suite.jsonl"), "--db",
              f"sqlite:///{run / 'results.sqlite'}", "--bootstrap", "50", "-o", str(board)])
    assert stop.value.code in (0, None)
    assert (board / "leaderboard.md").is_symlink()
    assert (paper / "leaderboard.md").read_text().startswith("# Generator leaderboard")
    assert "warning:" not in capsys.readouterr().err


def test_the_default_report_folder_of_a_store_file_may_be_the_users_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `robojudge report results.sqlite` writes ./report: the user's own folder, not a downloaded run's.
    _, run = _downloaded_run(tmp_path)
    here, web = tmp_path / "work", tmp_path / "web"
    here.mkdir()
    web.mkdir()
    (here / "report").symlink_to("../web")
    monkeypatch.chdir(here)
    assert _report(run / "results.sqlite") == 0
    assert (web / "index.html").read_text().startswith("<!DOCTYPE html>")
