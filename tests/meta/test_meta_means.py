import numpy as np
import pytest

from robojudge.meta import ClusterBootstrap, group_means, mean_confidence_interval


def test_zero_one_metric_interval_stays_in_range_where_t_does_not():
    x = np.array([0.0, 1.0, 1.0])
    t = mean_confidence_interval(x)
    assert t.low == pytest.approx(-0.7675, abs=1e-3) and t.high == pytest.approx(2.1009, abs=1e-3)
    (cell,) = group_means(x, ["g"] * 3, bootstrap=500, seed=0)["g"]
    assert cell.mean == pytest.approx(2 / 3) and cell.n == 3 and cell.n_clusters == 3
    assert 0.0 <= cell.low <= cell.mean <= cell.high <= 1.0


def test_matches_a_by_hand_cluster_bootstrap():
    rng = np.random.default_rng(1)
    n = 40
    groups = ["a" if i % 2 else "b" for i in range(n)]
    clusters = [f"c{i // 4}" for i in range(n)]
    x = np.stack([rng.normal(size=n), rng.uniform(size=n)], axis=1)
    x[3, 1] = np.nan
    out = group_means(x, groups, clusters, bootstrap=300, seed=5, level=0.9)
    boot = ClusterBootstrap(clusters, None, 300, 5)
    w = boot.item_weights(boot.counts)  # (B, n)
    g = np.array(groups)
    for gi in ("a", "b"):
        for c in range(2):
            keep = (g == gi) & np.isfinite(x[:, c])
            reps = (w[:, keep] * x[keep, c]).sum(axis=1) / w[:, keep].sum(axis=1)
            lo, hi = np.quantile(reps[np.isfinite(reps)], [0.05, 0.95])
            cell = out[gi][c]
            assert cell.n == keep.sum() and cell.mean == pytest.approx(x[keep, c].mean())
            assert (cell.low, cell.high) == (pytest.approx(lo), pytest.approx(hi))
            assert cell.n_clusters == len({clusters[i] for i in np.flatnonzero(keep)})


def test_no_values_and_no_bootstrap():
    out = group_means(np.array([[np.nan], [1.0]]), ["a", "b"], bootstrap=0)
    assert out["a"][0].n == 0 and np.isnan(out["a"][0].mean)
    assert out["b"][0].mean == 1.0 and np.isnan(out["b"][0].low)
    with pytest.raises(ValueError):
        group_means(np.zeros((2, 1)), ["a"])
