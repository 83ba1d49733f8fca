import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import (
    CONSTANT_WHY,
    OVERALL,
    ClusterBootstrap,
    RankCorrelation,
    agreement_table,
    axis_stats,
    moment_columns,
    overall,
    percentile_interval,
    stats_from_sums,
    summarize_replicates,
)
from robojudge.meta._report import _BOOT, _replicates


def test_cluster_draws_stay_in_strata():
    clusters = np.array(["a", "a", "b", "c", "d", "d", "e"])
    strata = np.array(["s", "s", "s", "t", "t", "t", "t"])
    boot = ClusterBootstrap(clusters, strata, n_replicates=500, seed=7)
    # clusters a, b in stratum s (2 draws each replicate); c, d, e in t (3 draws)
    assert np.all(boot.counts[:, :2].sum(axis=1) == 2) and np.all(boot.counts[:, 2:].sum(axis=1) == 3)
    w = boot.item_weights(boot.counts[:3])
    assert np.all(w[:, 0] == w[:, 1]) and np.all(w[:, 4] == w[:, 5])  # a cluster moves as a whole
    np.testing.assert_array_equal(ClusterBootstrap(clusters, strata, 500, seed=7).counts, boot.counts)
    with pytest.raises(ValueError, match="spans"):
        ClusterBootstrap(["a", "a"], ["s", "t"], 10)


def test_weighted_sums_equal_expanded_data():
    rng = np.random.default_rng(0)
    n = 40
    y = rng.integers(1, 6, n).astype(float)
    x = np.clip(y + rng.normal(0, 1, n), 1, 5)
    x[[3, 9]] = np.nan
    w = rng.integers(0, 4, (6, n)).astype(float)
    sums = w @ moment_columns(x, y, cx=3.0, cy=3.0, scale=(1, 5))
    got = stats_from_sums(sums)
    for b in range(6):
        xe, ye = np.repeat(x, w[b].astype(int)), np.repeat(y, w[b].astype(int))
        ref = axis_stats(xe, ye)
        for k in ("pearson", "exact", "within_one", "mse", "mae"):
            assert got[k][b] == pytest.approx(getattr(ref, k))
        assert got["bias"][b] == pytest.approx(ref.bias)


@pytest.mark.parametrize("continuous", [False, True])
def test_weighted_spearman_equals_expanded_data(continuous):
    rng = np.random.default_rng(1)
    n = 400  # continuous scores give > 256 distinct pairs: the item-by-item route
    y = rng.integers(1, 6, n).astype(float)
    x = y + rng.normal(0, 1, n) if continuous else rng.integers(1, 6, n).astype(float)
    idx = np.arange(n)
    half = idx[::2]
    x2 = rng.integers(1, 6, n).astype(float)
    rc = RankCorrelation([(idx, x, y), (half, x2[half], y[half])], n)
    assert rc.few_cells is not continuous
    w = rng.integers(0, 3, (4, n)).astype(float)
    for b, got in enumerate(rc(w)):
        k = w[b].astype(int)
        xe = np.r_[np.repeat(x, k), np.repeat(x2[half], k[half])]
        ye = np.r_[np.repeat(y, k), np.repeat(y[half], k[half])]
        assert got == pytest.approx(stats.spearmanr(xe, ye).statistic)


def _judges(n=120, seed=0):
    rng = np.random.default_rng(seed)
    human = {"pa": rng.integers(1, 6, n).astype(float), "ia": rng.integers(1, 6, n).astype(float)}
    pred = {}
    for j, noise in (("good", 0.6), ("bad", 1.5)):
        pred[j] = {a: np.clip(np.round(h + rng.normal(0, noise, n)), 1, 5) for a, h in human.items()}
    pred["good"]["pa"][:5] = np.nan
    clusters = np.arange(n) // 2
    strata = clusters % 3
    return pred, human, clusters, strata


def test_replicates_equal_recomputation_on_resampled_items():
    pred, human, clusters, strata = _judges()
    boot = ClusterBootstrap(clusters, strata, n_replicates=3, seed=11)
    reps = _replicates(boot, ("good", "bad"), ("pa", "ia"), pred, human, (1, 5), True, chunk=2)
    for b in range(3):
        take = np.repeat(np.arange(clusters.size), boot.item_weights(boot.counts[b:b + 1])[0].astype(int))
        for ji, j in enumerate(("good", "bad")):
            per = [axis_stats(pred[j][a][take], human[a][take]) for a in ("pa", "ia")]
            tot = overall({a: (pred[j][a][take], human[a][take]) for a in ("pa", "ia")})
            for ti, s in enumerate((*per, tot)):
                for si, k in enumerate(_BOOT):
                    assert reps[ji, ti, si, b] == pytest.approx(getattr(s, k)), (j, ti, k)


def test_agreement_table_points_cis_and_differences():
    pred, human, clusters, strata = _judges()
    rep = agreement_table(pred, human, clusters, strata, bootstrap=400, seed=3)
    cell = rep.cells["good"]["pa"]
    ref = axis_stats(pred["good"]["pa"], human["pa"])
    assert cell.n == 115 and cell.n_unscored == 5
    assert cell.stats["pearson"].value == pytest.approx(ref.pearson)
    assert cell.stats["kendall"].value == pytest.approx(ref.kendall) and math.isnan(cell.stats["kendall"].low)
    for t in ("pa", "ia", OVERALL):
        for k in ("pearson", "spearman", "exact", "mse"):
            e = rep.cells["good"][t].stats[k]
            assert e.low <= e.value <= e.high and e.se > 0
    # good left 5 PA items unscored: the pair is compared without them, bad's scores of them left out.
    d = rep.differences["good", "bad"][OVERALL]["pearson"]
    bad = {a: np.where(np.isnan(pred["good"][a]), np.nan, v) for a, v in pred["bad"].items()}
    assert d.value == pytest.approx(overall({a: (pred["good"][a], human[a]) for a in human}).pearson
                                    - overall({a: (bad[a], human[a]) for a in human}).pearson)
    assert rep.shared["good", "bad"] == {"pa": 115, "ia": 120, OVERALL: 235}
    assert d.low > 0  # the less noisy judge is reliably better
    assert len(rep.cells["good"]["pa"].confusion) == 5
    again = agreement_table(pred, human, clusters, strata, bootstrap=400, seed=3)
    assert again.to_dict() == rep.to_dict()
    same = agreement_table({"a": pred["good"], "b": pred["good"]}, human, clusters, bootstrap=50, seed=1)
    e = same.differences["a", "b"]["pa"]["mse"]
    # A judge against itself differs by exactly 0 in every resample: the value stands, with no interval.
    assert e.value == 0.0 and math.isnan(e.low) and math.isnan(e.high) and e.why == CONSTANT_WHY


def test_no_bootstrap_and_missing_axis():
    pred, human, _, _ = _judges()
    rep = agreement_table({"only_pa": {"pa": pred["good"]["pa"]}}, human, bootstrap=0)
    assert rep.cells["only_pa"]["ia"].n == 0 and rep.cells["only_pa"]["ia"].n_unscored == 120
    assert math.isnan(rep.cells["only_pa"][OVERALL].stats["pearson"].value)
    assert math.isnan(rep.cells["only_pa"]["pa"].stats["pearson"].low)
    js = rep.to_dict()
    assert js["cells"]["only_pa"][OVERALL]["stats"]["mse"]["value"] is None
    with pytest.raises(ValueError):
        agreement_table({"x": {"zz": np.ones(120)}}, human)
    boot = agreement_table({"only_pa": {"pa": pred["good"]["pa"]}, "good": pred["good"]}, human,
                           bootstrap=20, seed=0)
    assert math.isnan(boot.cells["only_pa"]["ia"].stats["mse"].low)
    assert math.isnan(boot.cells["only_pa"][OVERALL].stats["pearson"].high)
    assert boot.cells["only_pa"]["pa"].stats["spearman"].se > 0


def test_percentile_interval_matches_numpy():
    rng = np.random.default_rng(0)
    r = rng.normal(size=(4, 999))
    r[1, :10] = np.nan
    lo, hi = percentile_interval(r, 0.9)
    want = np.nanquantile(r, [0.05, 0.95], axis=1)
    np.testing.assert_allclose(lo, want[0]) and np.testing.assert_allclose(hi, want[1])


def test_bootstrap_coverage_bivariate_normal():
    # 200 data sets of 100 items from a bivariate normal with rho = 0.5, B = 1000 each: the 95%
    # percentile interval for Pearson r should cover 0.5 about 95% of the time.
    rng = np.random.default_rng(2026)
    cov = [[1.0, 0.5], [0.5, 1.0]]
    hits = 0
    for _ in range(200):
        xy = rng.multivariate_normal([0, 0], cov, size=100)
        rep = agreement_table({"j": {"a": xy[:, 0]}}, {"a": xy[:, 1]}, bootstrap=1000,
                              seed=int(rng.integers(2**31)), rank_stats=False, pairs=[])
        e = rep.cells["j"]["a"].stats["pearson"]
        hits += e.low <= 0.5 <= e.high
    assert 0.88 <= hits / 200 <= 0.99


def test_a_judge_pair_is_compared_on_the_items_both_scored():
    # Judges a and b give the same scores on i0-i4; a leaves i5-i7 blank and b gets them wrong. Each cell
    # rests on its own items (a: r 1, Acc 1, MSE 0; b on all 8: r 0.290, Acc 5/8, MSE (16 + 4 + 4) / 8 = 3);
    # the difference used to subtract those (0.710, 0.375, -3.0, intervals excluding 0) though on the items
    # both scored the two judges are identical.
    human = {"pa": np.array([1.0, 4, 2, 5, 3, 1, 4, 2])}
    b = np.array([1.0, 4, 2, 5, 3, 5, 2, 4])
    a = np.where(np.arange(8) < 5, b, np.nan)
    rep = agreement_table({"a": {"pa": a}, "b": {"pa": b}}, human, bootstrap=500, seed=2)
    assert rep.cells["b"]["pa"].stats["pearson"].value == pytest.approx(stats.pearsonr(b, human["pa"])[0])
    assert rep.cells["b"]["pa"].stats["mse"].value == pytest.approx(3.0)
    for t in ("pa", OVERALL):
        for k in ("pearson", "spearman", "kendall", "exact", "within_one", "mse", "mae", "bias"):
            e = rep.differences["a", "b"][t][k]
            assert e.value == 0.0, (t, k)
            if k != "kendall":
                # Every replicate draws the same items for both: 0 each time, so no interval, and why.
                assert math.isnan(e.low) and math.isnan(e.high) and e.why == CONSTANT_WHY, (t, k)
    assert rep.shared["a", "b"] == {"pa": 5, OVERALL: 5}
    assert rep.to_dict()["differences"][0]["n"] == {"pa": 5, OVERALL: 5}


@pytest.mark.parametrize("continuous", [False, True])
def test_pair_replicates_are_each_judges_replicates_on_the_shared_items(continuous):
    # Each side of a difference is the judge bootstrapped without the items the other left unscored
    # (PA and IA apart), on the same draws; a pair that scored the same items keeps the plain difference.
    rng = np.random.default_rng(4)
    n = 90
    human = {a: rng.integers(1, 6, n).astype(float) for a in ("pa", "ia")}
    pred = {}
    for j, noise in (("a", 0.5), ("b", 1.0), ("c", 0.8)):
        pred[j] = {}
        for a, y in human.items():
            p = y + rng.normal(0, noise, n)
            pred[j][a] = p if continuous else np.clip(np.round(p), 1, 5)
    for j, a, k in (("a", "pa", 7), ("b", "ia", 11), ("b", "pa", 3)):
        pred[j][a][rng.choice(n, k, replace=False)] = np.nan
    pred["c"] = {a: np.where(np.isnan(pred["a"][a]), np.nan, pred["c"][a]) for a in human}  # a's items
    clusters = np.arange(n) // 3
    rep = agreement_table(pred, human, clusters, bootstrap=200, seed=9)
    boot = ClusterBootstrap(clusters, None, 200, seed=9)
    for a, b in (("a", "b"), ("b", "c"), ("a", "c")):
        keep = {ax: np.isfinite(pred[a][ax]) & np.isfinite(pred[b][ax]) for ax in human}
        on = {j: {ax: np.where(keep[ax], pred[j][ax], np.nan) for ax in human} for j in (a, b)}
        reps = _replicates(boot, (a, b), ("pa", "ia"), on, human, (1, 5), True, chunk=64)
        low, high, se = summarize_replicates(reps[0] - reps[1], 0.95)
        for ti, t in enumerate(("pa", "ia", OVERALL)):
            want = overall({ax: (on[a][ax], human[ax]) for ax in human}) if t == OVERALL else \
                axis_stats(on[a][t], human[t])
            assert rep.shared[a, b][t] == want.n
            for bi, k in enumerate(_BOOT):
                e = rep.differences[a, b][t][k]
                assert (e.low, e.high, e.se) == pytest.approx((low[ti, bi], high[ti, bi], se[ti, bi]),
                                                              abs=1e-9), (a, b, t, k)
    assert rep.shared["a", "c"]["pa"] == rep.cells["a"]["pa"].n == rep.cells["c"]["pa"].n  # same items


def test_the_overall_interval_is_gated_by_its_thinner_axis():
    # PA scored on 8 items, IA on 1. The Overall Acc (0.25 + 1) / 2 = 0.625 used to get an interval (about
    # [0.56, 0.81]) because its items lay in 8 clusters, though the IA half rests on one item that never
    # varies (and gets no interval of its own); the leaderboard already gates the Overall by its thinner axis.
    human = {"pa": np.array([1.0, 4, 2, 5, 3, 1, 4, 2]), "ia": np.array([1.0, 3, 5, 2, 4, 1, 3, 5])}
    pred = {"j": {"pa": np.array([1.0, 3, 5, 2, 4, 1, 3, 5]), "ia": np.r_[1.0, [np.nan] * 7]}}
    rep = agreement_table(pred, human, bootstrap=1000, seed=0)
    e = rep.cells["j"][OVERALL].stats["exact"]
    assert e.value == pytest.approx((2 / 8 + 1) / 2)
    assert math.isnan(e.low) and math.isnan(e.high) and "1 cluster" in e.why
    assert not math.isnan(rep.cells["j"]["pa"].stats["exact"].low)  # PA alone has 8 clusters


def _gappy_judges(n=120, seed=12):
    """Six judges, each leaving its own items unscored on each axis; one scores PA continuously (the
    item-by-item rank route) and one never scores IA."""
    rng = np.random.default_rng(seed)
    human = {a: rng.integers(1, 6, n).astype(float) for a in ("pa", "ia")}
    pred = {}
    for j in range(6):
        pred[f"j{j}"] = {}
        for a, y in human.items():
            p = np.clip(np.round(y + rng.normal(0, 0.5 + 0.2 * j, n)), 1, 5)
            p[rng.random(n) < 0.08] = np.nan
            pred[f"j{j}"][a] = p
    pred["j1"]["pa"] = pred["j1"]["pa"] + rng.normal(0, 0.3, n)
    pred["j5"]["ia"][:] = np.nan
    clusters = rng.integers(0, 70, n)
    return pred, human, clusters, clusters % 3


@pytest.mark.parametrize("exact_ranks", [True, False])
def test_pair_differences_equal_the_per_pair_bootstrap_bit_for_bit(monkeypatch, exact_ranks):
    # Every pair's difference against the straightforward computation: both judges taken on the items
    # both scored and bootstrapped on their own. The table takes the views' Spearman rho from the judges'
    # cell weights less the left-out items' (or, past the exact-sum bound, ranks them again); nothing may
    # move, not even in the last bit.
    from robojudge.meta import _report

    if not exact_ranks:
        monkeypatch.setattr(_report, "EXACT_RANK_WEIGHT", 0)
    pred, human, clusters, strata = _gappy_judges()
    axes = ("pa", "ia")
    rep = agreement_table(pred, human, clusters, strata, bootstrap=300, seed=4)
    boot = ClusterBootstrap(clusters, strata, 300, seed=4)
    checked = 0
    for (a, b), per in rep.differences.items():
        keep = {ax: np.isfinite(pred[a][ax]) & np.isfinite(pred[b][ax]) for ax in axes}
        on = {j: {ax: np.where(keep[ax], pred[j][ax], np.nan) for ax in axes} for j in (a, b)}
        reps = _replicates(boot, (a, b), axes, on, human, (1, 5), True, chunk=256)
        low, high, se = summarize_replicates(reps[0] - reps[1], 0.95)
        for ti, t in enumerate((*axes, OVERALL)):
            if t == OVERALL:
                sides = [overall({ax: (on[j][ax], human[ax]) for ax in axes}) for j in (a, b)]
            else:
                sides = [axis_stats(on[j][t], human[t]) for j in (a, b)]
            for k, e in per[t].items():
                np.testing.assert_array_equal(e.value, getattr(sides[0], k) - getattr(sides[1], k))
                if k in _BOOT and e.why is None:
                    bi = _BOOT.index(k)
                    want = [low[ti, bi], high[ti, bi], se[ti, bi]]
                    np.testing.assert_array_equal([e.low, e.high, e.se], want, err_msg=f"{a}-{b} {t} {k}")
                    checked += not math.isnan(e.low)
    assert checked > 200  # most cells have an interval to compare


def test_a_view_of_a_judge_is_not_ranked_again(monkeypatch):
    # Judges with whole-number scores taken on a pair's shared items reuse their judges' cell weights:
    # the ranks are built once per judge and key (axes and Overall), not again for each side of each pair.
    from robojudge.meta import _report

    built = []

    class Counted(RankCorrelation):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(_report, "RankCorrelation", Counted)
    pred, human, clusters, strata = _gappy_judges()
    pred = {j: p for j, p in pred.items() if j != "j1"}  # whole-number scores only
    rep = agreement_table(pred, human, clusters, strata, bootstrap=50, seed=4)
    assert len(rep.differences) == 10
    assert len(built) == 5 * 3
