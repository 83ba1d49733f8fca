"""A statistic that gives one value in every resample gets no (zero-width) interval, and says why.

With ratings at the top of the scale a judge within one point of every label, or a generator scored 5
on every item, gave ``1.000 [1.000, 1.000]`` and ``5.0 [5.0, 5.0]`` as "95% intervals" with se 0.
"""

import math

import numpy as np
import pytest

from robojudge.meta import (
    AT_BOUND_WHY,
    CONSTANT_WHY,
    ONE_PER_STRATUM_WHY,
    OVERALL,
    agreement_table,
    constant_replicates,
    generator_leaderboard,
    group_means,
    interval_gate,
)
from robojudge.report._leaderboard import leaderboard_markdown
from robojudge.select._bon import GroupPick, summarize


def test_constant_replicates_compares_the_defined_ones():
    reps = np.array([[1.0, 1.0, np.nan, 1.0], [1.0, 0.9, 1.0, 1.0], [np.nan] * 4,
                     [1.0, 1.0 - 2e-16, 1.0, 1.0], [0.5, 0.5 + 1e-9, 0.5, 0.5]])
    assert constant_replicates(reps).tolist() == [True, False, False, True, False]


def test_the_gate_withholds_a_constant_cell_after_the_cluster_rule():
    keep, why, used = interval_gate(np.array([100, 100, 100, 100]), np.array([12, 12, 2, 12]), 100,
                                    constant=np.array([True, False, True, False]))
    assert keep.tolist() == [False, True, False, True]
    assert why[0] == CONSTANT_WHY and why[1] is None and why[3] is None
    assert why[2].startswith("scored items in 2 cluster(s)")  # too few clusters says so first
    assert used.tolist() == [None] * 4


def _ceiling(n_clips=12, per_clip=3):
    rng = np.random.default_rng(4)
    n = n_clips * per_clip
    human = rng.choice([4.0, 5.0], size=n, p=[0.3, 0.7])
    # Within one point of every label (so within-one is 1 on every resample) but not always equal.
    judge = np.where(rng.random(n) < 0.5, human, np.clip(human + rng.choice([-1.0, 1.0], size=n), 1, 5))
    clusters = [f"c{i // per_clip}" for i in range(n)]
    return human, judge, clusters


def test_agreement_within_one_at_the_ceiling_has_no_interval():
    human, judge, clusters = _ceiling()
    rep = agreement_table({"j": {"pa": judge}}, {"pa": human}, clusters, bootstrap=300, seed=0)
    w = rep.cells["j"]["pa"].stats["within_one"]
    assert w.value == 1.0 and math.isnan(w.low) and math.isnan(w.high) and math.isnan(w.se)
    assert w.why == AT_BOUND_WHY  # 1 is the bound of a rate, and the reason says so
    exact = rep.cells["j"]["pa"].stats["exact"]  # varies across resamples: its interval stands
    assert exact.why is None and exact.low < exact.value < exact.high
    assert rep.cells["j"][OVERALL].stats["within_one"].why == AT_BOUND_WHY


def test_a_generator_at_the_top_of_the_scale_has_no_interval_but_keeps_its_rank_spread():
    rng = np.random.default_rng(1)
    n_clips = 12
    gens = ["top", "mid"] * n_clips
    clusters = [f"c{i // 2}" for i in range(2 * n_clips)]
    pa = np.where(np.array(gens) == "top", 5.0, rng.choice([3.0, 4.0, 5.0], size=2 * n_clips))
    ia = rng.choice([3.0, 4.0, 5.0], size=2 * n_clips)
    board = generator_leaderboard({"pa": pa, "ia": ia}, gens, clusters, bootstrap=300, seed=0)
    top = next(e for e in board.entries if e.generator == "top")
    s = top.standings["pa"]
    assert s.score.value == 5.0 and math.isnan(s.score.low) and s.score.why == CONSTANT_WHY
    assert (s.rank, s.rank_low) == (1, 1) and not math.isnan(s.rank_prob)  # the others move around it
    mid = next(e for e in board.entries if e.generator == "mid").standings["pa"].score
    assert mid.why is None and mid.low < mid.value < mid.high
    md = leaderboard_markdown(board)
    assert "| 5.000 |" in md and "5.000 [5.000, 5.000]" not in md
    assert f"No interval for top PA: {CONSTANT_WHY}." in md


def test_group_means_withhold_an_all_alike_column():
    x = np.stack([np.ones(12), np.arange(12.0) % 3], axis=1)
    ones, varied = group_means(x, ["g"] * 12, [f"c{i // 2}" for i in range(12)], bootstrap=300, seed=0)["g"]
    assert ones.mean == 1.0 and math.isnan(ones.low) and math.isnan(ones.high) and ones.why == CONSTANT_WHY
    assert varied.why is None and varied.low < varied.mean < varied.high


def _pick(k: int, label: float) -> GroupPick:
    return GroupPick((f"g{k}",), 3, 3, f"i{k}", 1.0, 1, label, label - 0.5 * (k % 2), label, 0.0, 1.0,
                     0.5 + 0.1 * (k % 3))


def test_best_of_n_statistic_at_its_bound_in_every_group_has_no_interval():
    s = summarize([_pick(k, 3.0 + k % 2) for k in range(8)], bootstrap=300, seed=0)
    for name in ("regret", "top1"):  # 0 and 1 in every group
        e = s.stats[name]
        assert math.isnan(e.low) and e.why == CONSTANT_WHY, name
    sel = s.stats["selected"]
    assert sel.why is None and sel.low < sel.value < sel.high
    assert s.stats["top1"].value == pytest.approx(1.0)


def test_table_2_says_why_a_cell_shows_no_interval():
    from robojudge.report._judges import judge_table, judges_markdown

    human, judge, clusters = _ceiling()
    rep = agreement_table({"j": {"pa": human.copy(), "ia": judge}}, {"pa": human, "ia": human}, clusters,
                          bootstrap=300, seed=0)  # PA: the labels themselves, so r = 1 (give or take ulps)
    md = judges_markdown(judge_table(rep), rep)
    assert "| **1.000** | **1.000** | **0.000** |" in md and "[1.000, 1.000]" not in md
    assert f"No interval for j PA r, j PA acc, j PA mse: {AT_BOUND_WHY}." in md


def _one_clip_per_source(n_clips=40, per=4):
    rng = np.random.default_rng(0)
    clip = np.repeat(np.arange(n_clips), per)
    human = rng.integers(1, 6, clip.size).astype(float)
    judge = np.clip(human + rng.integers(-2, 3, clip.size), 1, 5).astype(float)
    return human, judge, clip, np.array([f"src{c}" for c in clip])


def test_every_source_holding_one_clip_is_named_as_the_cause():
    # Review rev6 F1: r = 0.66 far from any bound was withheld as "at its bound on every clip"; the cause
    # is that a stratified resample of one-clip strata is the sample itself.
    human, judge, clip, source = _one_clip_per_source()
    rep = agreement_table({"j": {"pa": judge}}, {"pa": human}, clip, source, bootstrap=200, seed=0,
                          rank_stats=False)
    for s in ("pearson", "mse", "within_one"):
        e = rep.cells["j"]["pa"].stats[s]
        assert math.isnan(e.low) and e.why == ONE_PER_STRATUM_WHY, s
    assert "each source holds one clip" in ONE_PER_STRATUM_WHY and "at its bound" not in ONE_PER_STRATUM_WHY
    free = agreement_table({"j": {"pa": judge}}, {"pa": human}, clip, None, bootstrap=200, seed=0,
                           rank_stats=False).cells["j"]["pa"].stats["pearson"]
    assert free.why is None and free.low < free.value < free.high  # without strata it resamples
    board = generator_leaderboard({"pa": judge}, ["g", "h"] * (clip.size // 2), clip, source, bootstrap=200,
                                  seed=0)
    assert {e.standings["pa"].score.why for e in board.entries} == {ONE_PER_STRATUM_WHY}
    means = group_means(judge[:, None], ["g"] * clip.size, clip, source, bootstrap=200, seed=0)["g"]
    assert means[0].why == ONE_PER_STRATUM_WHY


def test_a_constant_away_from_any_bound_is_not_said_to_be_at_it():
    # A judge that always answers 3 on a 1-5 scale: its mean is the same in every resample, at no bound.
    rng = np.random.default_rng(2)
    gens = ["mk", "other"] * 12
    clusters = [f"c{i // 2}" for i in range(24)]
    pa = np.where(np.array(gens) == "mk", 3.0, rng.choice([2.0, 4.0, 5.0], size=24))
    board = generator_leaderboard({"pa": pa}, gens, clusters, bootstrap=300, seed=0)
    mk = next(e for e in board.entries if e.generator == "mk").standings["pa"].score
    assert mk.value == 3.0 and math.isnan(mk.low) and mk.why == CONSTANT_WHY
    assert "at its bound" not in CONSTANT_WHY
    # An agreement statistic constant in every resample but not at its bound (a bias of exactly 0).
    human = np.repeat([2.0, 4.0], 12)
    rep = agreement_table({"j": {"pa": human.copy()}}, {"pa": human}, clusters, bootstrap=300, seed=0)
    stats = rep.cells["j"]["pa"].stats
    assert stats["bias"].why == CONSTANT_WHY and stats["mse"].why == AT_BOUND_WHY


def test_the_gate_picks_the_reason_of_a_constant_cell():
    args = (np.array([100, 100]), np.array([12, 12]), 100)
    flat = np.array([True, True])
    assert interval_gate(*args, constant=flat, at_bound=np.array([True, False]))[1].tolist() == [
        AT_BOUND_WHY, CONSTANT_WHY]
    assert interval_gate(*args, constant=flat, at_bound=True, one_per_stratum=True)[1].tolist() == [
        ONE_PER_STRATUM_WHY] * 2
