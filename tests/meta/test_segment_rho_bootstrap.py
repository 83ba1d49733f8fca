"""Intervals of segment-level Spearman's rho from a paired, stratified cluster bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import (
    ClusterBootstrap,
    segment_spearman,
    segment_spearman_bootstrap,
    summarize_replicates,
)


def _design(seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray, list[str], list[str]]:
    """Two robots, 7 and 5 clips of 3 segments; two metrics with ties, one with unscored segments."""
    rng = np.random.default_rng(seed)
    groups, clusters, levels = [], [], []
    for robot, clips in (("fetch", 7), ("aloha", 5)):
        for c in range(clips):
            for _ in range(3):
                groups.append(robot)
                clusters.append(f"clip{c}")  # the same clip names in both robots: distinct clusters
                levels.append(int(rng.integers(0, 3)))
    lv = np.asarray(levels, dtype=np.float64)
    good = np.round(lv + rng.normal(0, 0.8, lv.size), 1)  # rounded: ties
    poor = np.round(rng.normal(0, 1, lv.size), 1)
    poor[[2, 9, 30]] = np.nan
    return {"good": good, "poor": poor}, lv, groups, clusters


def test_points_are_segment_spearman_and_every_draw_is_scipy_on_the_resample() -> None:
    scores, lv, groups, clusters = _design()
    out = segment_spearman_bootstrap(scores, lv, groups, clusters, reference="good", replicates=40, seed=7)
    # The same draw, rebuilt: segments keyed by robot and clip, robots as strata.
    keys = [f"{g}\x00{c}" for g, c in zip(groups, clusters, strict=True)]
    boot = ClusterBootstrap(keys, strata=groups, n_replicates=40, seed=7)
    w = boot.item_weights(boot.counts).astype(int)
    g = np.asarray(groups)
    for name, s in scores.items():
        plain = segment_spearman(s, lv, groups)
        got = out.metrics[name]
        assert got.macro.rho == pytest.approx(plain.macro, abs=1e-12)
        assert got.micro.rho == pytest.approx(plain.micro.rho, abs=1e-12)
        for robot in ("fetch", "aloha"):
            assert got.groups[robot].rho == pytest.approx(plain.groups[robot].rho, abs=1e-12)
            assert got.groups[robot].n == plain.groups[robot].n
            m = (g == robot) & np.isfinite(s)
            for b in range(40):
                x, y = np.repeat(s[m], w[b, m]), np.repeat(lv[m], w[b, m])
                want = stats.spearmanr(x, y).statistic
                assert got.groups[robot].draws[b] == pytest.approx(want, abs=1e-9), (name, robot, b)
        # micro pools both robots' resampled segments
        m = np.isfinite(s)
        for b in range(0, 40, 7):
            want = stats.spearmanr(np.repeat(s[m], w[b, m]), np.repeat(lv[m], w[b, m])).statistic
            assert got.micro.draws[b] == pytest.approx(want, abs=1e-9)
        assert np.allclose(got.macro.draws, (got.groups["fetch"].draws + got.groups["aloha"].draws) / 2)
    # the difference is taken replicate by replicate on the same draw, and on the segments both scored:
    # good without the three segments poor left unscored
    diff = out.differences["poor"]
    on_both = segment_spearman_bootstrap({"good": np.where(np.isnan(scores["poor"]), np.nan, scores["good"])},
                                         lv, groups, clusters, replicates=40, seed=7).metrics["good"]
    for part in ("fetch", "aloha"):
        assert np.allclose(diff.groups[part].draws,
                           out.metrics["poor"].groups[part].draws - on_both.groups[part].draws)
    assert np.allclose(diff.micro.draws, out.metrics["poor"].micro.draws - on_both.micro.draws)
    assert diff.macro.rho == pytest.approx(out.metrics["poor"].macro.rho - on_both.macro.rho)
    assert diff.micro.n == on_both.micro.n == int(np.isfinite(scores["poor"]).sum())
    assert set(out.differences) == {"poor"}
    assert out.clusters == {"aloha": 5, "fetch": 7}


def test_hand_worked_two_clips() -> None:
    # Clip A ranks its segments right (rho 1); clip B swaps two (rho 0.5); both pooled give 0.75 (mid-ranks
    # 1.5, 3.5, 5.5 on both sides, deviations (-2, 0, 2, -2, 2, 0) and (-2, 0, 2, -2, 0, 2): 12 / 16).
    # A replicate draws AA (1/4), AB or BA (1/2), BB (1/4), so its rho is 1, 0.75 or 0.5.
    scores = np.array([0.0, 1, 2, 0, 2, 1])
    levels = np.array([0.0, 1, 2, 0, 1, 2])
    out = segment_spearman_bootstrap({"m": scores}, levels, ["r"] * 6, list("AAABBB"), replicates=4000,
                                     seed=1)
    r = out.metrics["m"].groups["r"]
    assert r.rho == pytest.approx(0.75)
    values, counts = np.unique(np.round(r.draws, 12), return_counts=True)
    assert values.tolist() == [0.5, 0.75, 1.0]
    assert counts / 4000 == pytest.approx([0.25, 0.5, 0.25], abs=0.04)
    # The percentile interval of these draws is [0.5, 1.0], but two clips are too few to show one.
    low, high, _ = summarize_replicates(r.draws[None, :], 0.95)
    assert (low[0], high[0]) == pytest.approx((0.5, 1.0), abs=1e-12)
    assert math.isnan(r.low) and math.isnan(r.high)
    assert r.why == "scored items in 2 cluster(s); an interval needs at least 3"
    assert r.replicates == 4000


def test_identical_clips_give_no_spread_and_a_monotone_copy_differs_by_zero() -> None:
    clip = [(0.1, 0), (0.5, 1), (0.9, 2), (0.2, 1)]
    scores = np.array([s for _ in range(6) for s, _ in clip])
    levels = np.array([lv for _ in range(6) for _, lv in clip], dtype=float)
    clusters = [f"c{k}" for k in range(6) for _ in clip]
    out = segment_spearman_bootstrap({"a": scores, "b": 10 * scores + 3}, levels, ["r"] * scores.size,
                                     clusters, reference="a", replicates=300)
    a = out.metrics["a"].groups["r"]
    assert a.low == pytest.approx(a.rho) and a.high == pytest.approx(a.rho)  # every resample is the clip
    d = out.differences["b"].groups["r"]
    assert np.all(d.draws == 0.0) and (d.rho, d.low, d.high) == (0.0, 0.0, 0.0)


def test_each_robot_keeps_its_number_of_clips() -> None:
    # A robot of one clip can only redraw that clip: its interval is its point, while the other robot's
    # varies. Unstratified, a replicate could leave a robot out or give it more clips than it has.
    scores, lv, groups, clusters = _design(3)
    clusters = ["only" if g == "aloha" else c for g, c in zip(groups, clusters, strict=True)]
    out = segment_spearman_bootstrap({"good": scores["good"]}, lv, groups, clusters, replicates=200)
    aloha = out.metrics["good"].groups["aloha"]
    assert np.allclose(aloha.draws, aloha.rho)
    assert out.metrics["good"].groups["fetch"].draws.std() > 0.01
    assert out.clusters == {"aloha": 1, "fetch": 7}


def test_undefined_groups_stay_out_of_macro() -> None:
    scores, lv, groups, clusters = _design(1)
    lv = np.where(np.asarray(groups) == "aloha", 1.0, lv)  # aloha: one level only, no rho
    out = segment_spearman_bootstrap({"good": scores["good"]}, lv, groups, clusters, replicates=100)
    m = out.metrics["good"]
    assert math.isnan(m.groups["aloha"].rho) and math.isnan(m.groups["aloha"].low)
    assert m.macro.rho == pytest.approx(m.groups["fetch"].rho)
    assert np.allclose(m.macro.draws, m.groups["fetch"].draws, equal_nan=True)


def test_same_seed_same_intervals_and_the_interval_holds_the_point() -> None:
    scores, lv, groups, clusters = _design(2)
    a = segment_spearman_bootstrap(scores, lv, groups, clusters, replicates=500, seed=4)
    b = segment_spearman_bootstrap(scores, lv, groups, clusters, replicates=500, seed=4)
    c = segment_spearman_bootstrap(scores, lv, groups, clusters, replicates=500, seed=5)
    ga, gb, gc = (x.metrics["good"].micro for x in (a, b, c))
    assert (ga.low, ga.high) == (gb.low, gb.high)
    assert (ga.low, ga.high) != (gc.low, gc.high)
    assert ga.low < ga.rho < ga.high


def test_bad_input_names_what_is_wrong() -> None:
    scores, lv, groups, clusters = _design()
    with pytest.raises(ValueError, match="differ in length"):
        segment_spearman_bootstrap(scores, lv, groups[:-1], clusters)
    with pytest.raises(ValueError, match="'good'.*one per segment"):
        segment_spearman_bootstrap({"good": scores["good"][:-1]}, lv, groups, clusters)
    with pytest.raises(ValueError, match="reference 'kiva' is not one of the metrics"):
        segment_spearman_bootstrap(scores, lv, groups, clusters, reference="kiva")
    with pytest.raises(ValueError, match="at least one metric"):
        segment_spearman_bootstrap({}, lv, groups, clusters)
    with pytest.raises(ValueError, match="n_replicates"):
        segment_spearman_bootstrap(scores, lv, groups, clusters, replicates=0)


def _two_robots(psnr_on_adroit: float) -> tuple[dict[str, np.ndarray], np.ndarray, list[str], list[str]]:
    """Fetch: 5 segments both scores rank alike; adroit: 5 that kiva ranks backwards, psnr one value (or
    none)."""
    levels = np.array([0.0, 2, 1, 0, 2] * 2)
    kiva = np.array([0.1, 0.9, 0.5, 0.2, 0.7, 0.8, 0.1, 0.3, 0.9, 0.2])
    psnr = np.r_[[30.0, 10, 20, 26, 12], [psnr_on_adroit] * 5]
    groups = ["fetch"] * 5 + ["adroit"] * 5
    return {"kiva": kiva, "psnr": -psnr}, levels, groups, [f"c{i}" for i in range(10)]


def test_a_difference_pairs_groups_and_segments_both_metrics_score() -> None:
    # psnr cannot rank adroit (one value there). Its macro (fetch alone, 0.949) minus kiva's over both robots
    # (0.949 - 0.949 = 0) used to be reported as +0.949 with an interval excluding 0; on fetch, the one
    # robot both rank, the two agree exactly.
    fetch = stats.spearmanr([0, 2, 1, 0, 2], [0.1, 0.9, 0.5, 0.2, 0.7]).statistic  # 0.9487, both scores
    scores, levels, groups, clusters = _two_robots(20.0)
    out = segment_spearman_bootstrap(scores, levels, groups, clusters, reference="kiva", replicates=500)
    psnr, kiva, d = out.metrics["psnr"], out.metrics["kiva"], out.differences["psnr"]
    assert kiva.groups["adroit"].rho == pytest.approx(-fetch) and kiva.macro.rho == pytest.approx(0.0)
    assert psnr.macro.rho == pytest.approx(fetch) and psnr.macro_groups == ("fetch",)
    assert kiva.macro_groups == ("adroit", "fetch")
    assert psnr.groups["adroit"].why == "the score takes one value on every scored segment"
    assert d.groups["fetch"].rho == 0.0 and d.macro.rho == 0.0 and d.macro_groups == ("fetch",)
    assert (d.macro.low, d.macro.high) == (0.0, 0.0)
    assert "psnr's rho is undefined: the score takes one value" in d.groups["adroit"].why
    # Both scored every segment, so the micro difference is of the two pooled rhos over all ten.
    pooled = [stats.spearmanr(levels, s).statistic for s in (scores["psnr"], scores["kiva"])]
    assert d.micro.rho == pytest.approx(pooled[0] - pooled[1]) and d.micro.n == 10
    # psnr blank on adroit: its micro rests on fetch alone (0.949); kiva's on the same segments is 0.949
    # too, where the difference used to be taken from kiva's micro over all ten (-0.039): +0.988.
    scores, levels, groups, clusters = _two_robots(math.nan)
    out = segment_spearman_bootstrap(scores, levels, groups, clusters, reference="kiva", replicates=500)
    d = out.differences["psnr"]
    assert out.metrics["psnr"].micro.rho == pytest.approx(fetch)
    assert d.micro.rho == 0.0 and d.micro.n == 5 and np.nanmax(np.abs(d.micro.draws)) == 0.0
    assert d.groups["adroit"].why == "no segment scored by both" and d.groups["adroit"].n == 0


def test_an_undefined_rho_says_why() -> None:
    # adroit: every verdict Good; aloha: two segments; fetch: rho 0.956. The rho cells were blank with no
    # reason, and the macro (fetch alone) did not say it averaged one robot of three.
    levels = np.array([0.0, 2, 1, 0, 2, 1, 0, 0, 0, 0, 2])
    kiva = np.array([0.1, 0.9, 0.5, 0.2, 0.7, 0.3, 0.1, 0.6, 0.3, 0.2, 0.1])
    groups = ["fetch"] * 6 + ["adroit"] * 3 + ["aloha"] * 2
    clusters = ["c1", "c1", "c2", "c3", "c4", "c5", "d1", "d2", "d3", "e1", "e1"]
    m = segment_spearman_bootstrap({"kiva": kiva}, levels, groups, clusters, replicates=200).metrics["kiva"]
    assert m.groups["adroit"].why == "every scored segment's verdict is Good"
    assert m.groups["aloha"].why == "2 scored segment(s); rho needs at least 3"
    assert m.macro.rho == pytest.approx(stats.spearmanr(levels[:6], kiva[:6]).statistic)  # 0.956
    assert m.macro_groups == ("fetch",) and m.macro.why is None
    none = segment_spearman_bootstrap({"kiva": kiva[6:9]}, levels[6:9], groups[6:9], clusters[6:9],
                                      replicates=50).metrics["kiva"]
    assert none.macro.why == "no group has a defined rho" and none.macro_groups == ()
    assert none.micro.why == "every scored segment's verdict is Good"
