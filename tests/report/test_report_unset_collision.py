"""A generator literally named ``(unset)`` is never merged with the items that have no generator.

The suite (6 clips, one source) holds per clip three rollouts:

  u<c>  generator "(unset)"   iq1_psnr 40   PA = IA = 5
  n<c>  no generator          iq1_psnr 10   PA = IA = 1
  o<c>  generator "other"     iq1_psnr 25   PA = IA = 3

Kept apart, the generator "(unset)" has psnr 40 and PA 5 (rank 1), "other" 25 and 3, and the items
without a generator, shown as "(unset 2)", 10 and 1. Merged (the old code), "(unset)" had 12 items,
psnr (40 + 10) / 2 = 25 and PA (5 + 1) / 2 = 3, tied with "other", and the real numbers were nowhere.
The pick score ``pick`` (direction unknown, passed as higher-is-better) makes the no-generator rollout
win in clips 0-2 and the "(unset)" one in clips 3-5.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from _report_data import higher_is_better
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import UNSET, generator_board, group_by_field, label_scores, report_suite, unset_name
from robojudge.report._robophys import _by_generator
from robojudge.report._sections import ReportInput, overview_section
from robojudge.select import best_of_n, write_picks
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

runner = CliRunner()
CLIPS = range(6)
#: prefix -> (generator, psnr, label)
KINDS = {"u": ("(unset)", 40.0, 5), "n": (None, 10.0, 1), "o": ("other", 25.0, 3)}


def _items() -> list[Item]:
    return [Item(item_id=f"{k}{c}", video="v.mp4", clip_id=f"c{c}", source="s", generator=g,
                 labels={"pa": lab, "ia": lab}) for c in CLIPS for k, (g, _, lab) in KINDS.items()]


def _rows() -> list[ResultRow]:
    rows = []
    for c in CLIPS:
        for k, (_, psnr, _) in KINDS.items():
            rows.append(ResultRow(f"{k}{c}", "iq1_psnr", "h", "1", "ok", psnr))
            pick = {"n": 1.0 if c < 3 else 0.0, "u": 0.0 if c < 3 else 1.0, "o": 0.5}[k]
            rows.append(ResultRow(f"{k}{c}", "pick", "h", "1", "ok", pick))
    return rows


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, str]:
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n"
                                for it in _items()))
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with ResultStore(url) as store:
        store.add(_rows())
    return manifest, url


def test_the_name_of_the_items_without_a_value_is_one_no_value_has() -> None:
    assert unset_name(["a", None]) == UNSET == "(unset)"
    assert unset_name(["(unset)", None]) == "(unset 2)"
    assert unset_name(["(unset)", "(unset 2)", None, "x"]) == "(unset 3)"


def test_the_overview_keeps_them_apart() -> None:
    section = overview_section(ReportInput(_rows(), _items(), higher_is_better, bootstrap=0))
    table = section.tables[0]
    assert table.columns[5:8] == ["(unset 2)", "(unset)", "other"]
    # (each group's own n and failed follow the means, kept apart as well)
    assert table.columns[8:] == ["n (unset 2)", "failed (unset 2)", "n (unset)", "failed (unset)", "n other",
                                 "failed other"]
    psnr = next(r for r in table.rows if r[0].text == "iq1_psnr")
    assert [c.value for c in psnr[5:8]] == [10.0, 40.0, 25.0]
    assert "Items with no generator are shown as '(unset 2)', apart from the generator named '(unset)'" \
        in section.intro


def test_the_leaderboard_ranks_the_real_generator_alone() -> None:
    items = _items()
    board = generator_board(items, label_scores(items), bootstrap=0)
    got = {e.generator: (e.standings["pa"].score.value, e.standings["overall"].rank, e.n_items["pa"])
           for e in board.entries}
    assert got == {"(unset)": (5.0, 1, 6), "other": (3.0, 2, 6), "(unset 2)": (1.0, 3, 6)}


def test_robophys_means_and_the_groups_of_every_section() -> None:
    items = _items()
    inp = ReportInput(_rows(), items, higher_is_better, bootstrap=0)
    psnr = np.array([KINDS[it.item_id[0]][1] for it in items])
    gens, means = _by_generator(inp, {"iq1_psnr": psnr})
    assert gens == ["(unset 2)", "(unset)", "other"]
    assert means["iq1_psnr"].tolist() == [10.0, 40.0, 25.0]
    # The sizes, libraries and motion sections read the same groups.
    assert (inp.group_of["u0"], inp.group_of["n0"], inp.group_of["o0"]) == ("(unset)", "(unset 2)", "other")


def test_the_manifest_mode_summary_keeps_them_apart(run: tuple[Path, str], tmp_path: Path) -> None:
    manifest, url = run
    assert group_by_field(_items(), "generator")["n0"] == "(unset 2)"
    summaries = report_suite(manifest, url, tmp_path / "report")
    psnr = {s.group: (s.n_ok, s.mean) for s in summaries if s.metric == "iq1_psnr"}
    assert psnr == {"(unset)": (6, 40.0), "(unset 2)": (6, 10.0), "other": (6, 25.0)}
    md = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert "Items with no generator are shown as '(unset 2)'" in md


def test_the_leaderboard_command_ranks_the_real_generator_alone(run: tuple[Path, str]) -> None:
    manifest, url = run
    done = runner.invoke(build_app("leaderboard"), ["leaderboard", "generators", str(manifest), "--db", url,
                                                    "--bootstrap", "0", "--json"])
    assert done.exit_code == 0, done.output
    entries = json.loads(done.stdout)["entries"]
    assert [e["generator"] for e in entries] == ["(unset)", "other", "(unset 2)"]
    shown = runner.invoke(build_app("leaderboard"), ["leaderboard", "generators", str(manifest), "--db", url,
                                                     "--bootstrap", "0"])
    assert shown.exit_code == 0, shown.output
    assert "Items with no generator are shown as '(unset 2)'" in " ".join(shown.stdout.split())


def test_best_of_n_groups_and_counts_them_apart(tmp_path: Path) -> None:
    items, rows = _items(), _rows()
    by_clip = best_of_n(items, rows, by="pick", group="clip_id", bootstrap=0, orient=True)
    assert [p.item_id for p in by_clip.picks] == ["n0", "n1", "n2", "u3", "u4", "u5"]
    assert by_clip.pick_counts() == {"(unset)": 3, "(unset 2)": 3}
    by_gen = best_of_n(items, rows, by="iq1_psnr", group="generator", bootstrap=0)
    assert [(p.group, p.n) for p in by_gen.picks] == [(("(unset)",), 6), (("(unset 2)",), 6), (("other",), 6)]
    # Ties within a group go to the smallest item id.
    assert [p.item_id for p in by_gen.picks] == ["u0", "n0", "o0"]
    out = write_picks(by_gen, tmp_path / "picks.csv")
    with out.open(encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert header.count("generator") == 1 and header[0] == "generator"


def test_an_export_refuses_a_by_value_spelt_like_the_unset_dash(tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    records = [{"item_id": i, "video": "v.mp4", **({"generator": g} if g else {})}
               for i, g in (("u0", "-"), ("n0", None), ("o0", "other"))]
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([ResultRow(i, "iq1_psnr", "h", "1", "ok", v) for i, v in (("u0", 40.0), ("n0", 10.0),
                                                                           ("o0", 25.0))])
    out = tmp_path / "export.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(out), "--by",
                                                "generator", "--suite", str(manifest)])
    assert done.exit_code == 2
    said = " ".join(done.output.split())
    assert "--by generator: 1 item(s)" in said and "have the generator '-' (u0)" in said
    assert not out.exists()
    # --suite alone keeps them apart: '-' for the generator named so, an empty cell for none.
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(out),
                                                "--suite", str(manifest)])
    assert done.exit_code == 0, done.output
    with out.open(encoding="utf-8") as f:
        exported = {r["item_id"]: r["generator"] for r in csv.DictReader(f)}
    assert exported == {"u0": "-", "n0": "", "o0": "other"}


def test_groups_that_print_alike_are_said_in_the_summary(tmp_path: Path) -> None:
    # `report --by task` showed two rows 'crème brûlée' (one task typed NFC, one NFD), and nothing said
    # they were two groups.
    nfc, nfd = "cr\u00e8me br\u00fbl\u00e9e", "cre\u0300me bru\u0302le\u0301e"
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", task=t)
             for k, t in enumerate((nfc, nfc, nfd, "stack", "stack\u200b"))]
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    lines = [it.model_dump_json(exclude_none=True) + "\n" for it in items]
    manifest.write_text("".join(lines), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with ResultStore(url) as store:
        store.add([ResultRow(it.item_id, "iq1_psnr", "h", "1", "ok", 30.0) for it in items])
    summaries = report_suite(manifest, url, tmp_path / "rep", by="task")
    assert sorted(s.group for s in summaries) == sorted([nfc, nfd, "stack", "stack\u200b"])  # kept apart
    md = " ".join((tmp_path / "rep" / "summary.md").read_text(encoding="utf-8").split())
    md = md.replace("\\\\", "\\")  # Markdown's escaped backslashes, as the page shows them
    assert ("The groups 'cr\\xe8me br\\xfbl\\xe9e' and 'cre\\u0300me bru\\u0302le\\u0301e' differ only in "
            "how their characters are composed (NFC/NFD; macOS writes file names decomposed): they print "
            "alike but are two groups; spell them one way in the manifest.") in md
    assert "The groups 'stack' and 'stack\\u200b' differ only in characters that print as nothing" in md
