"""A clip alone in its source is drawn once in every stratified resample: the tables say so.

Where every source holds one clip the interval is withheld (ONE_PER_STRATUM_WHY); where only some do,
the interval is shown but varies only the other clips, so it is narrower than the data support. That
was silent; now the agreement table, the leaderboard and their outputs carry a sentence.
"""

import json
import sys
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.meta import ClusterBootstrap, agreement_table, generator_leaderboard, lone_clusters_note
from robojudge.report._judges import judge_table, judges_markdown
from robojudge.report._leaderboard import leaderboard_markdown

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta_csvs import write_agreement_csvs  # noqa: E402


def test_clusters_alone_in_their_stratum_are_counted():
    # strata a: clips 0,1,2; b: clip 3; c: clip 4 -> two clips alone in their source
    clusters = [0, 0, 1, 2, 3, 3, 4]
    strata = ["a", "a", "a", "a", "b", "b", "c"]
    boot = ClusterBootstrap(clusters, strata, n_replicates=50, seed=0)
    assert boot.n_lone_clusters == 2 and not boot.one_per_stratum
    # a lone clip is drawn exactly once in every replicate; the others vary
    assert (boot.counts[:, 3] == 1).all() and (boot.counts[:, 4] == 1).all()
    assert boot.counts[:, :3].std() > 0
    assert ClusterBootstrap(clusters, None, n_replicates=5).n_lone_clusters == 0
    # every source one clip: the interval is withheld for that reason, not counted here
    every = ClusterBootstrap([0, 1, 2], ["a", "b", "c"], n_replicates=5)
    assert every.one_per_stratum and every.n_lone_clusters == 0
    assert lone_clusters_note(0, 10) == ""
    assert lone_clusters_note(1, 10).startswith("1 of 10 clips is the only clip of its source: ")
    assert "narrower than they should be" in lone_clusters_note(3, 10)


def _half_lone(n_shared=20, n_lone=20, per=3):
    """``n_shared`` clips in two sources, ``n_lone`` more clips each in its own source."""
    rng = np.random.default_rng(4)
    n = n_shared + n_lone
    clip = np.repeat(np.arange(n), per)
    source = np.array([f"s{c % 2}" if c < n_shared else f"lone{c}" for c in clip])
    human = rng.integers(1, 6, clip.size).astype(float)
    judge = np.clip(human + rng.integers(-2, 3, clip.size), 1, 5).astype(float)
    return human, judge, clip, source


def test_agreement_and_leaderboard_say_their_intervals_are_too_narrow():
    human, judge, clip, source = _half_lone()
    rep = agreement_table({"j": {"pa": judge}}, {"pa": human}, clip, source, bootstrap=400, seed=0,
                          rank_stats=False)
    assert rep.n_lone_clusters == 20 and rep.to_dict()["bootstrap"]["lone_clusters"] == 20
    shown = rep.cells["j"]["pa"].stats["pearson"]
    merged = agreement_table({"j": {"pa": judge}}, {"pa": human}, clip, None, bootstrap=400, seed=0,
                             rank_stats=False).cells["j"]["pa"].stats["pearson"]
    # the reason for the sentence: the lone clips' part of the spread is missing
    assert shown.high - shown.low < 0.85 * (merged.high - merged.low)
    md = judges_markdown(judge_table(rep), rep)
    assert "20 of 40 clips are each the only clip of their source" in md
    board = generator_leaderboard({"pa": judge, "ia": human}, ["g", "h"] * (clip.size // 2), clip, source,
                                  bootstrap=200, seed=0)
    assert board.n_lone_clusters == 20
    assert "20 of 40 clips are each the only clip of their source" in leaderboard_markdown(board)
    # without lone clips nothing is said
    plain = agreement_table({"j": {"pa": judge}}, {"pa": human}, clip, None, bootstrap=100, seed=0,
                            rank_stats=False)
    assert plain.n_lone_clusters == 0 and "the only clip of" not in judges_markdown(
        judge_table(plain), plain)


def test_meta_agreement_prints_the_sentence(tmp_path: Path):
    pred, human = write_agreement_csvs(tmp_path)
    # sources src0..src2 hold several clips each; put clip19 (items v38, v39) in a source of its own
    lines = human.read_text().splitlines()
    solo = [ln.split(",") for ln in lines]
    human.write_text("\n".join(",".join([*f[:4], "solo"]) if f[3] == "clip19" else ",".join(f) for f in solo)
                     + "\n")
    runner = CliRunner()
    done = runner.invoke(app, ["meta", "agreement", "--pred", str(pred), "--human", str(human),
                               "--bootstrap", "200"])
    assert done.exit_code == 0, done.output
    assert "1 of 20 clips is the only clip of its source" in " ".join(done.output.split())
    as_json = runner.invoke(app, ["meta", "agreement", "--pred", str(pred), "--human", str(human),
                                  "--bootstrap", "200", "--json"])
    assert json.loads(as_json.stdout)["bootstrap"]["lone_clusters"] == 1
