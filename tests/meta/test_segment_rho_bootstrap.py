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
    # the difference is taken replicate by replicate on the same draw
    diff = out.differences["poor"]
    assert np.allclose(diff.groups["fetch"].draws,
                       out.metrics["poor"].groups["fetch"].draws - out.metrics["good"].groups["fetch"].draws)
    assert diff.macro.rho == pytest.approx(out.metrics["poor"].macro.rho - out.metrics["good"].macro.rho)
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
