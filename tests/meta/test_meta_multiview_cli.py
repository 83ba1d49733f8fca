"""``robojudge meta multiview`` and ``multiview_from_csv``: RoboWorM Table D5 from a CSV file, on a
table worked out by hand (pairs a method ties count as errors of its rank accuracy)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli._meta import app
from robojudge.meta import ScoreTableError, multiview_from_csv

runner = CliRunner()

# bimanual: human 1 2 3 3 5; the two 3s are not human-ordered, so 9 of the 10 pairs count.
#   rigis .2 .1 .5 .6 .9: only (v1, v2) is ordered the other way: 8/9. Ranks 2 1 3 4 5 against
#   1 2 3.5 3.5 5: cov 8.5, sums of squares 10 and 9.5: rho = 8.5 / sqrt(95).
#   vlm Bad Medium Medium Good Good (1 2 2 3 3): ties on (v2, v3) (humans 2 < 3) and (v4, v5) (3 < 5) are
#   errors, the other 7 agree: 7/9. Ranks 1 2.5 2.5 4.5 4.5: cov 8, sums 9 and 9.5: rho = 8 / sqrt(85.5).
# humanoid: human 1 2 4 5 (and a row without a rating, left out).
#   rigis .3 .4 .2 .8: (h1, h3) and (h2, h3) wrong, 4/6. Rank differences 1 1 -2 0: rho 1 - 6*6/60 = 0.4.
#   vlm Medium Medium (blank) Good: h3 unscored; of (h1,h2) (h1,h4) (h2,h4) the first is a tie: 2/3.
#   Ranks 1.5 1.5 3 against 1 2 3: cov 1.5, sums 1.5 and 2: rho = 1.5 / sqrt(3).
CSV = """video,embodiment,human,rigis,kiva,vlm
b1,bimanual,1,0.2,0.8,Bad
b2,bimanual,2,0.1,0.9,Medium
b3,bimanual,3,0.5,0.5,Medium
b4,bimanual,3,0.6,0.4,Good
b5,bimanual,5,0.9,0.1,Good
h1,humanoid,1,0.3,0.7,Medium
h2,humanoid,2,0.4,0.6,Medium
h3,humanoid,4,0.2,0.8,
h4,humanoid,5,0.8,0.2,Good
h5,humanoid,,0.5,0.5,Good
"""
RIGIS = {"bimanual": (8.5 / math.sqrt(95), 8 / 9), "humanoid": (0.4, 4 / 6)}
VLM = {"bimanual": (8 / math.sqrt(85.5), 7 / 9), "humanoid": (1.5 / math.sqrt(3), 2 / 3)}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "d5.csv"
    path.write_text(CSV)
    return path


def _run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["multiview", *(str(a) for a in args)])


def test_json_matches_the_hand_worked_table(table: Path) -> None:
    r = _run("--in", table, "--score", "rigis,kiva:lower-better", "--score", "vlm", "--target", "human",
             "--group", "embodiment", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["unlabelled"] == 1 and out["videos"] == {"bimanual": 5, "humanoid": 4}
    assert list(out["scores"]) == ["rigis", "kiva", "vlm"]
    for name, want in (("rigis", RIGIS), ("kiva", RIGIS), ("vlm", VLM)):  # kiva = 1 - rigis, turned
        got = out["scores"][name]
        for g, (rho, acc) in want.items():
            assert got["groups"][g]["rho"] == pytest.approx(rho)
            assert got["groups"][g]["rank_accuracy"] == pytest.approx(acc)
        assert got["rho"] == pytest.approx((want["bimanual"][0] + want["humanoid"][0]) / 2)
        assert got["rank_accuracy"] == pytest.approx((want["bimanual"][1] + want["humanoid"][1]) / 2)
    assert out["scores"]["kiva"]["higher_is_better"] is False
    assert out["scores"]["vlm"]["groups"]["humanoid"] == {"rho": pytest.approx(1.5 / math.sqrt(3)),
                                                          "rank_accuracy": pytest.approx(2 / 3), "n": 3,
                                                          "unscored": 1}
    assert out["scores"]["vlm"]["rank_accuracy"] == pytest.approx(13 / 18)  # (7/9 + 6/9) / 2


def test_table_and_files_in_the_d5_layout(table: Path, tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    r = _run("--in", table, "--score", "rigis,vlm", "--target", "human", "--group", "embodiment",
             "-o", folder)
    assert r.exit_code == 0, r.output
    lines = [" ".join(line.replace("│", " ").split()) for line in r.stdout.splitlines()]
    assert "RoboWorM Table D5" in r.stdout
    # rigis: 0.872 0.889 | 0.400 0.667 | mean 0.636 0.778; vlm: 0.865 0.778 | 0.866 0.667 | 0.866 0.722
    assert "rigis 0.872 0.889 0.400 0.667 0.636 0.778" in lines
    assert "vlm 0.865 0.778 0.866 0.667 0.866 0.722" in lines
    assert "1 row(s) without a reference rating left out" in r.stdout
    assert "vlm: videos without a score, left out: humanoid 1" in r.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["multiview.csv", "multiview.md", "multiview.tex"]
    md = (folder / "multiview.md").read_text()
    assert ("| method | bimanual rho | bimanual RankAcc | humanoid rho | humanoid RankAcc | mean rho | "
            "mean RankAcc |") in md
    # best per column bold, ties all (both rank 2/3 of the humanoid pairs)
    assert "| rigis | **0.872** | **0.889** | 0.400 | **0.667** | 0.636 | **0.778** |" in md
    assert "| vlm | 0.865 | 0.778 | **0.866** | **0.667** | **0.866** | 0.722 |" in md
    assert r"\begin{tabular}" in (folder / "multiview.tex").read_text()
    head, rigis_row = (folder / "multiview.csv").read_text().splitlines()[:2]
    assert head.startswith("method,bimanual rho,") and rigis_row.startswith(f"rigis,{8.5 / math.sqrt(95)!r},")


def test_one_group_without_group_column(table: Path) -> None:
    res = multiview_from_csv(table, {"rigis": True}, target="human")
    assert res.groups == ["all"] and res.videos == {"all": 9} and res.unlabelled == 1
    assert res.scores["rigis"].groups["all"].n == 9


def test_errors_name_the_file_line_and_column(table: Path, tmp_path: Path) -> None:
    r = _run("--in", table, "--score", "nope", "--target", "human")
    assert r.exit_code == 2 and "nope" in r.output and "d5.csv" in r.output
    bad = tmp_path / "bad.csv"
    bad.write_text(CSV.replace("h2,humanoid,2,0.4", "h2,humanoid,2,high"))
    r = _run("--in", bad, "--score", "rigis", "--target", "human", "--group", "embodiment")
    assert r.exit_code == 2 and "line 8" in r.output and "'rigis'" in r.output and "high" in r.output
    r = _run("--in", table, "--score", "rigis,rigis:lower-better", "--target", "human")
    assert r.exit_code == 2 and "more than once" in r.output
    with pytest.raises(ScoreTableError, match="both the target and a score"):
        multiview_from_csv(table, {"human": True}, target="human")
    blank = tmp_path / "blank.csv"
    blank.write_text(CSV.replace("h4,humanoid,", "h4,,"))
    with pytest.raises(ScoreTableError, match=r"line 10, column 'embodiment': blank group"):
        multiview_from_csv(blank, {"rigis": True}, target="human", group="embodiment")
