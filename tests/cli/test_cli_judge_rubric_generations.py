"""`robojudge judge` run again with changed rubric files: the leaderboards take the new PA+IA judge.

Before, the judge's four series (old and new PA, old and new IA) were four judges of one axis:
`leaderboard judges` showed no Overall and `leaderboard generators --scores judge:mk` offered only
single-axis choices.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.video import write_video

RUBRICS = Path(__file__).parents[2] / "src" / "robojudge" / "data" / "rubrics"
REPLY = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4}'
runner = CliRunner()


def _run(command: str, *args: str):
    return runner.invoke(build_app(command), [command, *args])


def test_rejudged_with_new_rubrics_leaderboards_take_the_paired_judge(tmp_path: Path) -> None:
    items = []
    for k, gen in enumerate(["a", "a", "b", "b"]):
        write_video(tmp_path / f"v{k}.mp4", np.full((6, 32, 32, 3), 50 * (k + 1), np.uint8), fps=4)
        items.append({"item_id": f"i{k}", "video": f"v{k}.mp4", "clip_id": f"c{k // 2}", "generator": gen,
                      "instruction": "push the block", "labels": {"pa": 3, "ia": 4}})
    suite = tmp_path / "suite.jsonl"
    suite.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    (tmp_path / "judges.toml").write_text(f"[judges.mk]\nbackend = \"mock\"\nreplies = ['{REPLY}']\n",
                                          encoding="utf-8")
    db = str(tmp_path / "r.sqlite")
    for version in ("1", "2"):
        folder = tmp_path / f"rub{version}"
        folder.mkdir()
        args = []
        for axis in ("pa", "ia"):
            text = (RUBRICS / f"{axis}.toml").read_text(encoding="utf-8")
            (folder / f"{axis}.toml").write_text(text.replace('version = "1"', f'version = "{version}"', 1),
                                                 encoding="utf-8")
            args += ["--rubric-file", str(folder / f"{axis}.toml")]
        done = _run("judge", str(suite), "--judges", str(tmp_path / "judges.toml"), "--judge", "mk",
                    "--db", db, *args)
        assert done.exit_code == 0, done.output
        assert "8 scored" in done.output

    board = _run("leaderboard", "judges", str(suite), "--db", db, "--bootstrap", "0")
    assert board.exit_code == 0, board.output
    table2 = board.stdout.split("paired differences between judges")[0]  # (the differences name them too)
    lines = [ln.replace("\u2020", "").replace("\u25b2", "").split()  # (small n, best per column)
             for ln in table2.splitlines() if ln.lstrip()[:3] == "mk "]
    # label (6 words), scored 8, unscored 0, then PA, IA and Overall r, Acc and MSE: judge 3 and 4
    # against labels 3 and 4 is exact (r is "-": the labels do not vary within an axis, so neither does
    # the pooled Overall r, which would only measure the gap between the axes' means)
    assert lines == [["mk", "[rubrics", "pa", f"v{v},", "ia", f"v{v}]", "8", "0", "-", "1.00", "0.00", "-",
                      "1.00", "0.00", "-", "1.00", "0.00"] for v in (1, 2)]

    refused = _run("leaderboard", "generators", str(suite), "--db", db, "--scores", "judge:mk",
                   "--bootstrap", "0")
    assert refused.exit_code == 2
    assert "'mk [rubrics pa v1, ia v1]'; 'mk [rubrics pa v2, ia v2]' (the newest rubrics: " in refused.output
    ranked = _run("leaderboard", "generators", str(suite), "--db", db, "--scores",
                  "judge:mk [rubrics pa v2, ia v2]", "--bootstrap", "0")
    assert ranked.exit_code == 0, ranked.output
    rows = [ln.replace("\u2020", "").split() for ln in ranked.stdout.splitlines() if ln.strip()[:1].isdigit()]
    # PA 3 and IA 4 on every item: Overall (3 + 4) / 2 (each marked small n)
    assert sorted(r[1:5] for r in rows) == [["a", "3.00", "4.00", "3.50"], ["b", "3.00", "4.00", "3.50"]]
