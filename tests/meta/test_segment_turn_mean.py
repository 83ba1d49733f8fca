"""RoboWorM Table D4 ranks a VLM by its mean level over three turns (Spearman's rho) and compares its
majority verdict with the human label (overlap); `meta segments --turn-mean` does both."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from robojudge.cli._meta import app
from robojudge.judges._scoring import majority_vote
from robojudge.meta import ScoreTableError, segments_from_csv

# Human label per segment on Table D4's scale (Bad 1, Medium 2, Good 3) and a VLM's three turns.
HUMAN = [1, 1, 2, 2, 3, 3, 1, 2, 3, 2]
TURNS = [[1, 2, 2], [1, 1, 2], [2, 2, 3], [2, 3, 3], [3, 3, 2], [3, 3, 3], [2, 2, 1], [2, 2, 2], [2, 3, 3],
         [1, 2, 2]]
NAMES = {1: "Bad", 2: "Medium", 3: "Good"}


def _csv(tmp_path: Path, rows: list[tuple[str, str, str]] | None = None) -> Path:
    votes = [majority_vote([float(t) for t in turns]) for turns in TURNS]
    if rows is None:
        rows = [(NAMES[h], f"{v.value:g}", f"{v.mean:.6f}") for h, v in zip(HUMAN, votes, strict=True) if v]
    path = tmp_path / "segments.csv"
    path.write_text("verdict,vlm,vlm_mean\n" + "".join(",".join(r) + "\n" for r in rows))
    return path


def test_the_turn_mean_and_the_majority_rank_differently_here() -> None:
    # The premise: majorities 2 1 2 3 3 3 2 2 3 2 against mean levels
    # 1.67 1.33 2.33 2.67 2.67 3 1.67 2 2.67 1.67.
    votes = [majority_vote([float(t) for t in turns]) for turns in TURNS]
    majority = [v.value for v in votes if v]
    mean = [v.mean for v in votes if v]
    assert stats.spearmanr(majority, HUMAN).statistic == pytest.approx(0.8199, abs=1e-4)
    assert stats.spearmanr(mean, HUMAN).statistic == pytest.approx(0.8755, abs=1e-4)


def test_a_voted_judges_rho_is_on_its_turn_mean_and_its_overlap_on_its_majority(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    voted = segments_from_csv(path, {"vlm": True}, turn_means={"vlm": "vlm_mean"}, replicates=20)
    votes = [majority_vote([float(t) for t in turns]) for turns in TURNS]
    mean = np.array([v.mean for v in votes if v])
    majority = np.array([v.value for v in votes if v])
    assert voted.rho.metrics["vlm"].micro.rho == pytest.approx(stats.spearmanr(mean, HUMAN).statistic)
    # Before, the only rho there was: on the majority verdict the column holds.
    plain = segments_from_csv(path, {"vlm": True}, replicates=20)
    assert plain.rho.metrics["vlm"].micro.rho == pytest.approx(stats.spearmanr(majority, HUMAN).statistic)
    assert voted.rho.metrics["vlm"].micro.rho - plain.rho.metrics["vlm"].micro.rho > 0.05
    # Overlap, by hand: majority 2 1 2 3 3 3 2 2 3 2 against human 1 1 2 2 3 3 1 2 3 2 is equal at
    # segments 2, 3, 5, 6, 8, 9 and 10 (1-based): 7 of 10.
    assert voted.voted["vlm"].micro == pytest.approx(0.7)
    assert voted.voted["vlm"].groups == {"all": pytest.approx(0.7)}
    assert voted.turn_means == {"vlm": "vlm_mean"} and not voted.bands


def test_the_command_reports_both_and_says_which_is_which(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    runner = CliRunner()
    args = ["segments", "--in", str(path), "--score", "vlm:higher-better", "--turn-mean", "vlm=vlm_mean",
            "--bootstrap", "20"]
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["rho"]["vlm"]["micro"]["rho"] == pytest.approx(0.8755, abs=1e-4)
    assert out["majority_overlap"]["vlm"]["micro"] == pytest.approx(0.7)
    assert out["turn_mean"] == {"vlm": "vlm_mean"}
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "vlm's rho is on its mean level over turns (column vlm_mean)" in text
    assert "majority-verdict overlap" in text


def test_a_voted_judge_must_be_a_score_on_table_d4s_scale(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    with pytest.raises(ScoreTableError, match="turn mean given for 'judge', which is not one of the scores"):
        segments_from_csv(path, {"vlm": True}, turn_means={"judge": "vlm_mean"}, replicates=20)
    with pytest.raises(ScoreTableError, match="where higher is better: mark it so"):
        segments_from_csv(path, {"vlm": False}, turn_means={"vlm": "vlm_mean"}, replicates=20)
    odd = _csv(tmp_path, [("Bad", "1", "1"), ("Good", "2.5", "2.5"), ("Good", "3", "3")])
    with pytest.raises(ScoreTableError, match=r"line 3, column 'vlm': 2.5 is not a verdict of RoboWorM"):
        segments_from_csv(odd, {"vlm": True}, turn_means={"vlm": "vlm_mean"}, replicates=20)
    blank = _csv(tmp_path, [("Bad", "1", "1"), ("Good", "3", ""), ("Good", "3", "3")])
    with pytest.raises(ScoreTableError, match=r"line 3, column 'vlm_mean': blank where column 'vlm' has a"):
        segments_from_csv(blank, {"vlm": True}, turn_means={"vlm": "vlm_mean"}, replicates=20)
    res = CliRunner().invoke(app, ["segments", "--in", str(path), "--score", "vlm:higher-better",
                                   "--turn-mean", "vlm"])
    assert res.exit_code != 0 and "give SCORE=COLUMN" in " ".join(res.output.split())


def test_verdict_overlap_counts_a_segment_without_a_verdict_as_a_miss() -> None:
    from robojudge.meta import verdict_overlap

    # Levels 0 Good, 1 Medium, 2 Bad; group a: 1 of 2 right, group b: 1 right, 1 without a verdict.
    out = verdict_overlap([0, 2, 1, np.nan], [0, 1, 1, 2], ["a", "a", "b", "b"])
    assert out.groups == {"a": 0.5, "b": 0.5} and out.macro == 0.5 and out.micro == 0.5


def test_the_json_names_the_seed_the_level_and_the_draws(tmp_path: Path) -> None:
    # An 80% interval must not read as a 95% one once printed: the file says which it is.
    path = _csv(tmp_path)
    args = ["segments", "--in", str(path), "--score", "vlm:higher-better", "--bootstrap", "20", "--json"]
    res = CliRunner().invoke(app, [*args, "--seed", "5", "--level", "0.8"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["bootstrap"] == {"replicates": 20, "seed": 5, "level": 0.8, "clusters": {"all": 10}}
    assert out["draws"] is None  # no --video, so no band overlap was calibrated
    assert json.loads(CliRunner().invoke(app, args).output)["bootstrap"]["level"] == 0.95
