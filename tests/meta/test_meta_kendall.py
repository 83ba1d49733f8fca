import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import ClusterBootstrap, agreement_table, kendall_interval, weighted_kendall_tau_b


@pytest.mark.parametrize("block", [None, 7])
@pytest.mark.parametrize("discrete", [True, False])
def test_weighted_tau_b_equals_scipy_on_the_expanded_sample(discrete, block, monkeypatch):
    # block: the sign matrix made a few rows at a time (whole, it took 2.6 GB at 4,000 pooled scores)
    if block is not None:
        from robojudge.meta import _kendall

        monkeypatch.setattr(_kendall, "_BLOCK_ENTRIES", block)
    rng = np.random.default_rng(3)
    n = 40
    y = rng.integers(1, 6, n).astype(float)
    x = np.clip(y + rng.integers(-1, 2, n), 1, 5).astype(float) if discrete else y + rng.normal(0, 1, n)
    w = rng.integers(0, 4, size=(6, n))
    got = weighted_kendall_tau_b(x, y, w)
    for b in range(6):
        want = stats.kendalltau(np.repeat(x, w[b]), np.repeat(y, w[b])).statistic
        assert got[b] == pytest.approx(want, abs=1e-12)


def test_weighted_tau_b_by_hand_and_degenerate():
    # x = 1, 2, 3 and y = 1, 3, 2 with weights 1, 1, 1: pairs (1,2) C, (1,3) C, (2,3) D -> S = 1,
    # no ties, n0 = 3 -> tau = 1/3. Doubling item 1: 2 more C pairs with each of 2 and 3 and one
    # pair tied on both: S = 3, N = 4, n0 = 6, nx = ny = 1 -> tau = 3 / 5.
    x, y = [1.0, 2.0, 3.0], [1.0, 3.0, 2.0]
    got = weighted_kendall_tau_b(x, y, [[1, 1, 1], [2, 1, 1], [1, 0, 0]])
    assert got[0] == pytest.approx(1 / 3) and got[1] == pytest.approx(3 / 5) and math.isnan(got[2])


def test_interval_uses_the_agreement_table_draws():
    rng = np.random.default_rng(0)
    n = 60
    human = rng.integers(1, 6, n).astype(float)
    pred = np.clip(human + rng.integers(-1, 2, n), 1, 5).astype(float)
    pred[3] = np.nan
    clusters = np.repeat(np.arange(20), 3)
    est = kendall_interval(pred, human, clusters, bootstrap=400, seed=7)
    ok = np.isfinite(pred)
    assert est.value == pytest.approx(stats.kendalltau(pred[ok], human[ok]).statistic)
    assert est.low < est.value < est.high and est.se > 0
    # The replicates are those of ClusterBootstrap(clusters, seed=7): recompute them directly.
    boot = ClusterBootstrap(clusters, None, 400, 7)
    w = boot.item_weights(boot.counts)[:, ok]
    reps = weighted_kendall_tau_b(pred[ok], human[ok], w)
    assert est.low == pytest.approx(np.quantile(reps, 0.025))
    assert est.high == pytest.approx(np.quantile(reps, 0.975))
    # The agreement table draws the same weights: its Pearson interval is the percentile interval of
    # the frequency-weighted Pearson r over these very weights.
    table = agreement_table({"j": {"pa": pred}}, {"pa": human}, clusters, bootstrap=400, seed=7, pairs=[])
    x, y = pred[ok], human[ok]
    mx, my = (w @ x) / w.sum(1), (w @ y) / w.sum(1)
    cov = (w * (x - mx[:, None]) * (y - my[:, None])).sum(1)
    r = cov / np.sqrt((w * (x - mx[:, None]) ** 2).sum(1) * (w * (y - my[:, None]) ** 2).sum(1))
    pearson = table.cells["j"]["pa"].stats["pearson"]
    assert pearson.low == pytest.approx(np.quantile(r, 0.025))
    assert pearson.high == pytest.approx(np.quantile(r, 0.975))
    assert table.cells["j"]["pa"].stats["kendall"].value == pytest.approx(est.value)


def test_interval_is_withheld_below_five_clusters_as_every_correlation():
    # Twelve items in two clips: a resample only recombines the two, and the interval was a near-point
    # ([0.167, 0.232] in a report) while Pearson's beside it was withheld. A correlation's interval needs
    # 5 clusters (robojudge.meta.MIN_CORRELATION_CLUSTERS), Kendall's as Pearson's.
    rng = np.random.default_rng(1)
    human = rng.integers(1, 6, 12).astype(float)
    pred = np.clip(human + rng.integers(-1, 2, 12), 1, 5).astype(float)
    for k in (1, 2, 3, 4):
        clusters = np.arange(12) % k
        est = kendall_interval(pred, human, clusters, bootstrap=200, seed=0)
        assert est.value == pytest.approx(stats.kendalltau(pred, human).statistic)
        assert np.isnan(est.low) and np.isnan(est.high)
        assert est.why == f"scored items in {k} cluster(s); a correlation's interval needs at least 5"
        table = agreement_table({"j": {"pa": pred}}, {"pa": human}, clusters, bootstrap=200, seed=0, pairs=[])
        assert table.cells["j"]["pa"].stats["pearson"].why == est.why
    est5 = kendall_interval(pred, human, np.arange(12) % 5, bootstrap=200, seed=0)
    assert est5.why is None and est5.low <= est5.value <= est5.high
    flat = kendall_interval(np.full(12, 3.0), human, np.arange(12), bootstrap=200, seed=0)
    assert math.isnan(flat.value) and flat.why == "judge scores are constant"
