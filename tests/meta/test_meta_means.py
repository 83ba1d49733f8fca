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


def _by_hand(x, groups, clusters, strata, bootstrap, seed, level):
    """Every cell's mean and percentile interval from the item weights of each replicate, one by one."""
    boot = ClusterBootstrap(clusters, strata, bootstrap, seed)
    w = boot.item_weights(boot.counts)  # (B, n)
    g = np.asarray(groups)
    out = {}
    for name in sorted(set(groups)):
        cells = []
        for c in range(x.shape[1]):
            keep = (g == name) & np.isfinite(x[:, c])
            if not keep.any():
                cells.append((0, np.nan, np.nan, np.nan))
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                reps = (w[:, keep] * x[keep, c]).sum(axis=1) / w[:, keep].sum(axis=1)
            lo, hi = np.quantile(reps[np.isfinite(reps)], [(1 - level) / 2, (1 + level) / 2])
            cells.append((int(keep.sum()), x[keep, c].mean(), lo, hi))
        out[name] = cells
    return out


def test_many_groups_strata_and_empty_cells_match_the_replicates_by_hand():
    rng = np.random.default_rng(7)
    n, k = 90, 5
    groups = [f"g{i % 6}" for i in range(n)]
    clusters = [f"c{i // 6}" for i in range(n)]  # one item of every group per clip, as in a suite
    strata = [f"s{(i // 6) % 3}" for i in range(n)]
    x = rng.normal(size=(n, k)) * np.arange(1, k + 1)
    x[rng.random((n, k)) < 0.2] = np.nan
    x[np.array(groups) == "g2", 4] = np.nan  # a group with no value in one column
    out = group_means(x, groups, clusters, strata, bootstrap=400, seed=11, level=0.8)
    want = _by_hand(x, groups, clusters, strata, 400, 11, 0.8)
    assert set(out) == set(want)
    for name, cells in want.items():
        for got, (n_ok, mean, lo, hi) in zip(out[name], cells, strict=True):
            assert got.n == n_ok
            if n_ok == 0:
                assert np.isnan(got.mean) and np.isnan(got.low) and np.isnan(got.high)
                continue
            assert got.mean == pytest.approx(mean, rel=1e-12)
            assert (got.low, got.high) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))


def test_memory_grows_with_items_and_replicates_not_with_groups():
    import tracemalloc

    rng = np.random.default_rng(0)
    n, k, g, b = 2400, 100, 12, 200
    x = rng.normal(size=(n, k))
    groups = [f"g{i % g}" for i in range(n)]
    clusters = [f"c{i // g}" for i in range(n)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        group_means(x, groups, clusters, bootstrap=b, seed=0)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    # The values themselves are n * k * 8 = 1.9 MB; an (items, groups, columns, 2) array would be
    # 46 MB and its per-clip sums 3.8 MB more. Allow a few copies of the values and of the replicates.
    assert peak < 6 * x.nbytes + 8 * b * k * 2 * 8, f"peak {peak / 1e6:.1f} MB"


def test_two_clips_get_a_mean_and_the_reason_not_an_interval():
    # Group "few" holds three values in each of clips 0 and 1: a resample can only recombine the two
    # clips, so its "interval" was the spread of three recombinations (in simulation it held the truth
    # 48.5% of the time). As in generator_leaderboard and agreement_table: the mean, and why.
    rng = np.random.default_rng(3)
    clusters = [f"c{i // 3}" for i in range(60)] + ["c0"] * 3 + ["c1"] * 3
    groups = ["many"] * 60 + ["few"] * 6
    x = np.concatenate([rng.normal(size=60), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]])
    out = group_means(x, groups, clusters, bootstrap=300, seed=0)
    (few,) = out["few"]
    assert (few.n, few.n_clusters, few.mean) == (6, 2, pytest.approx(0.35))
    assert np.isnan(few.low) and np.isnan(few.high)
    assert few.why == "scored items in 2 cluster(s); an interval needs at least 3"
    (many,) = out["many"]
    assert many.why is None and many.low < many.mean < many.high
    # A third clip: an interval.
    (three,) = group_means(x[:9], ["g"] * 9, clusters[:9], bootstrap=300, seed=0)["g"]
    assert three.n_clusters == 3 and three.why is None and three.low < three.mean < three.high


def test_clips_alone_in_their_stratum_are_counted_per_cell():
    # Clips c0-c5 share two sources; c6 and c7 are each the only clip of their source, and only group
    # "b" has values there.
    clusters = [f"c{i}" for i in range(8) for _ in range(2)]
    strata = ["s0" if c in ("c0", "c1", "c2") else "s1" if c in ("c3", "c4", "c5") else f"alone-{c}"
              for c in clusters]
    groups = ["a" if int(c[1:]) < 6 else "b" for c in clusters]
    groups[:6] = ["b"] * 6  # group b also holds clips c0-c2
    # and clip c0 holds an item of each group: the groups are paired, so drawn within the sources only
    # (with no clip shared, b's clips would be drawn among b's own, c6 and c7 included: none held fixed)
    groups[0] = "a"
    x = np.arange(16.0)
    out = group_means(x, groups, clusters, strata, bootstrap=200, seed=0)
    assert out["a"][0].n_lone_clusters == 0
    assert out["b"][0].n_lone_clusters == 2 and out["b"][0].n_clusters == 5
    # Without strata no clip is alone.
    assert group_means(x, groups, clusters, None, bootstrap=200, seed=0)["b"][0].n_lone_clusters == 0
    assert ClusterBootstrap(clusters, strata, 5).lone_cluster.tolist() == [False] * 6 + [True] * 2
