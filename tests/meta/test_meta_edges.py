"""Edges of the agreement statistics that tests with balanced, well-covered data cannot see: the gate that
withholds an interval resting on too few replicates or clusters, means over groups of unequal sizes, and
rescaling by the right range. Each value is worked out by hand (or by scipy) in the test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import (
    agreement_table,
    fit_agreement,
    generator_leaderboard,
    mse,
    overall_from_axis_values,
)
from robojudge.meta._bootstrap import interval_gate
from robojudge.meta._segments import segment_spearman


def test_an_interval_needs_half_the_replicates():
    # 20 one-item clips: the humans vary only on clip 0, the judge only on clip 1, so a replicate defines
    # Pearson r only when it draws both clips (about 40% of them): the value stands, its interval does not.
    n = 20
    human = np.full(n, 3.0)
    human[0] = 5.0
    judge = np.full(n, 3.0)
    judge[1] = 1.0
    rep = agreement_table({"j": {"pa": judge}}, {"pa": human}, clusters=[f"c{i}" for i in range(n)],
                          bootstrap=2000, seed=0, rank_stats=False)
    e = rep.cells["j"]["pa"].stats["pearson"]
    assert e.value == pytest.approx(stats.pearsonr(judge, human).statistic)
    assert math.isnan(e.low) and math.isnan(e.high)
    assert e.why is not None and e.why.endswith("replicates; an interval needs half"), e.why
    # The gate itself, at its boundary: 999 of 2000 is under half, 1000 is half.
    ok, why = interval_gate(np.array([999, 1000, 1999]), np.array([10, 10, 10]), 2000)[:2]
    assert list(ok) == [False, True, True]
    assert why[0] == "defined in 999 of 2000 replicates; an interval needs half"


def test_the_overall_interval_needs_three_clusters_on_every_axis():
    # Generator a has IA on 10 clips but PA on 2: its Overall (the mean of the axes) rests on 2 clusters
    # for PA, too few for an interval, however many IA has.
    rng = np.random.default_rng(0)
    n = 10
    gens = ["a"] * n + ["b"] * n
    clips = [f"c{i}" for i in range(n)] * 2
    pa = np.r_[[3.0, 4.0] + [np.nan] * (n - 2), rng.integers(1, 6, n).astype(float)]
    ia = np.r_[rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)]
    board = generator_leaderboard({"pa": pa, "ia": ia}, gens, clusters=clips, bootstrap=2000, seed=0)
    a = next(e for e in board.entries if e.generator == "a")
    overall = a.standings["overall"].score
    assert overall.value == pytest.approx((3.5 + float(np.mean(ia[:n]))) / 2)
    assert math.isnan(overall.low) and math.isnan(overall.high)
    assert "2 cluster(s)" in (overall.why or ""), overall.why


def test_the_segment_macro_rho_is_the_mean_over_groups():
    # Two embodiments rank the segments as their levels do, one the other way round: the macro is the
    # mean of the three per-group rhos (RoboWorM Table D4), not their median.
    s = [1, 2, 3, 4] + [1, 2, 3, 4] + [4, 3, 2, 1]
    levels = [0, 1, 1, 2] * 3
    groups = ["g1"] * 4 + ["g2"] * 4 + ["g3"] * 4
    got = segment_spearman(s, levels, groups)
    rhos = [stats.spearmanr(s[i:i + 4], levels[i:i + 4]).statistic for i in (0, 4, 8)]
    assert [got.groups[g].rho for g in ("g1", "g2", "g3")] == pytest.approx(rhos)
    assert got.macro == pytest.approx(float(np.mean(rhos)))
    assert got.macro == pytest.approx(0.3162, abs=1e-4)


def test_the_rescaled_mae_puts_the_target_on_the_scores_range_by_its_own_range():
    score = [0.2, 0.4, 0.6, 0.8]  # a unified score in [0, 1]
    human = [1.0, 2.0, 4.0, 5.0]  # ratings on 1-5
    fit = fit_agreement(score, human, score_range=(0.0, 1.0), target_range=(1.0, 5.0))
    by_hand = sum(abs(s - (t - 1) / 4) for s, t in zip(score, human, strict=True)) / 4
    assert by_hand == pytest.approx(0.175)
    assert fit.mae_rescaled == pytest.approx(by_hand)


def test_a_pooled_overall_weights_each_axis_by_its_items():
    # PA: one item, squared error 4; IA: three items, no error: over the four items the MSE is 1.0, while
    # the mean of the two axes' MSEs would be 2.0.
    pa_p, pa_h = [3.0], [1.0]
    ia_p, ia_h = [2.0, 3.0, 4.0], [2.0, 3.0, 4.0]
    pooled = overall_from_axis_values([mse(pa_p, pa_h), mse(ia_p, ia_h)], [1, 3], "pooled")
    assert pooled == pytest.approx(mse(pa_p + ia_p, pa_h + ia_h)) and pooled == pytest.approx(1.0)
