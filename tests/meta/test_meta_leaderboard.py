import numpy as np
import pytest

from robojudge.meta import competition_ranks, generator_leaderboard


def _suite(n_clips=30, seed=0):
    """Three generators on shared clips: a clearly ahead on PA, c clearly behind; b and c tied on IA."""
    rng = np.random.default_rng(seed)
    gens, clips, pa, ia = [], [], [], []
    for c in range(n_clips):
        for g, (mp, mi) in {"a": (4.5, 4.0), "b": (3.0, 3.0), "c": (1.5, 3.0)}.items():
            gens.append(g)
            clips.append(f"clip{c}")
            pa.append(np.clip(np.round(mp + rng.normal(0, 0.5)), 1, 5))
            ia.append(mi)
    return gens, clips, np.array(pa), np.array(ia)


def test_means_overall_and_ranks():
    gens, clips, pa, ia = _suite()
    board = generator_leaderboard({"pa": pa, "ia": ia}, gens, clips, bootstrap=500, seed=1)
    assert board.generators == ("a", "b", "c")
    g = np.array(gens)
    for e in board.entries:
        m_pa, m_ia = pa[g == e.generator].mean(), ia[g == e.generator].mean()
        assert e.standings["pa"].score.value == pytest.approx(m_pa)
        # Table 8: Overall is the mean of the generator's two axis means.
        assert e.standings["overall"].score.value == pytest.approx((m_pa + m_ia) / 2)
        s = e.standings["overall"].score
        assert s.low <= s.value <= s.high
        assert e.n_items == {"pa": 30, "ia": 30}
    by = {e.generator: e for e in board.entries}
    assert by["a"].standings["pa"].rank_prob == pytest.approx(1.0)
    assert (by["b"].standings["ia"].rank, by["c"].standings["ia"].rank) == (2, 2)  # tied means share a rank
    ia_pairs = [p for p in board.adjacent if p.target == "ia"]
    assert ia_pairs[1].prob == pytest.approx(0.5)  # b vs c always tied
    assert [p.upper for p in board.adjacent if p.target == "pa"] == ["a", "b"]
    assert board.outrank["pa"][0, 2] == pytest.approx(1.0)


def test_deterministic_and_clip_resampling_keeps_generators_together():
    gens, clips, pa, ia = _suite(n_clips=8, seed=3)
    one = generator_leaderboard({"pa": pa, "ia": ia}, gens, clips, bootstrap=300, seed=7)
    two = generator_leaderboard({"pa": pa, "ia": ia}, gens, clips, bootstrap=300, seed=7)
    assert one.to_dict() == two.to_dict()
    # A constant offset between two generators on every clip survives every clip resample exactly.
    gens2 = ["x", "y"] * 8
    clip2 = [f"c{i // 2}" for i in range(16)]
    base = np.repeat(np.arange(8.0), 2)
    scores = base + np.tile([1.0, 0.0], 8)
    board = generator_leaderboard({"pa": scores}, gens2, clip2, bootstrap=200, seed=0, sort_by="pa")
    assert board.adjacent[0].prob == pytest.approx(1.0)
    x = board.entries[0].standings["pa"]
    assert x.rank_prob == pytest.approx(1.0) and (x.rank_low, x.rank_high) == (1, 1)


def test_missing_axis_and_no_bootstrap():
    board = generator_leaderboard({"pa": [5, 4, np.nan], "ia": [3, 2, np.nan]}, ["a", "b", "c"], bootstrap=0)
    c = board.entries[-1]
    assert c.generator == "c" and np.isnan(c.standings["overall"].score.value)
    assert c.standings["overall"].rank is None  # no score, no rank
    assert np.isnan(board.entries[0].standings["pa"].score.low)
    with pytest.raises(ValueError):
        generator_leaderboard({"pa": [1, 2]}, ["a"], bootstrap=0)


def test_competition_ranks():
    assert competition_ranks(np.array([3.0, 5.0, 3.0, np.nan])).tolist() == [2, 1, 2, 4]
    # Equal as fractions, unequal as floats: a tie all the same; a real difference (1e-6) is not.
    a, b = (1 + 5 / 3) / 2, (4 / 3 + 4 / 3) / 2
    assert a != b
    assert competition_ranks(np.array([a, b, np.nan])).tolist() == [1, 1, 3]
    assert competition_ranks(np.array([b, b + 1e-6])).tolist() == [2, 1]
    assert competition_ranks(np.array([-np.inf, 1.0])).tolist() == [2, 1]


def test_means_within_the_tolerance_tie_in_ranks_spreads_and_pairs():
    # Scores with noise in their last digits (the calibrated judge's): b was ranked 2 by 1e-8.
    noise = np.array([0.0, 1e-8, 2e-8] * 8)
    gens = ["a", "b", "c"] * 8
    clips = [f"c{i // 3}" for i in range(24)]
    pa = 3.0 - noise
    pa[2::3] = 2.0  # c is really below
    board = generator_leaderboard({"pa": pa}, gens, clips, bootstrap=100, seed=0, sort_by="pa",
                                  tolerance=1e-4)
    by = {e.generator: e.standings["pa"] for e in board.entries}
    assert (by["a"].rank, by["b"].rank, by["c"].rank) == (1, 1, 3)
    assert by["b"].rank_prob == 1.0 and (by["b"].rank_low, by["b"].rank_high) == (1, 1)
    pairs = [(p.upper, p.lower, p.prob) for p in board.adjacent if p.target == "pa"]
    assert pairs == [("a", "b", 0.5), ("b", "c", 1.0)]
    assert board.to_dict()["tolerance"] == 1e-4
    plain = generator_leaderboard({"pa": pa}, gens, clips, bootstrap=0, sort_by="pa")
    assert [e.standings["pa"].rank for e in plain.entries] == [1, 2, 3]  # (as before, without one)
    assert competition_ranks(np.array([3.0, 3.0 - 5e-5, 2.9]), 1e-4).tolist() == [1, 1, 3]
    with pytest.raises(ValueError, match="tolerance"):
        generator_leaderboard({"pa": pa}, gens, bootstrap=0, tolerance=-1.0)


def test_the_json_rank_range_is_null_where_there_is_none():
    # One clip per generator: no rank spread. to_dict gave 0 and 0, where the CSV leaves the cells empty.
    board = generator_leaderboard({"pa": [5.0, 3.0, 1.0]}, ["a", "b", "c"], ["c1", "c2", "c3"], bootstrap=100,
                                  seed=0, sort_by="pa")
    got = board.to_dict()["entries"][0]["targets"]["pa"]
    assert got["rank"] == 1 and got["rank_low"] is None and got["rank_high"] is None


def test_exactly_tied_overall_means_share_a_rank_and_a_half_chance():
    # A: PA 1,1,1 IA 1,2,2 -> Overall (1 + 5/3) / 2; B: PA 1,1,2 IA 1,2,1 -> (4/3 + 4/3) / 2: both 4/3,
    # which the floats missed (ranks 1 and 2). With clips shared so that pa + ia is equal per clip, the
    # means are equal in every replicate: P(A above B) is a half exactly.
    pa, ia = [1, 1, 1, 1, 1, 2], [1, 2, 2, 1, 2, 1]
    lb = generator_leaderboard({"pa": pa, "ia": ia}, ["A"] * 3 + ["B"] * 3, bootstrap=0)
    assert [e.standings["overall"].rank for e in lb.entries] == [1, 1]
    clips = [f"g{i // 6}k{i % 3}" for i in range(18)]
    lb = generator_leaderboard({"pa": pa * 3, "ia": ia * 3}, (["A"] * 3 + ["B"] * 3) * 3, clusters=clips,
                               bootstrap=300, seed=1)
    (pair,) = [p for p in lb.adjacent if p.target == "overall"]
    assert pair.prob == 0.5
    assert all(e.standings["overall"].rank_prob == 1.0 for e in lb.entries)


def test_generators_without_scores_are_not_ranked():
    """Labels for a and b only: x and y have no mean, so no rank, no rank probability, no pairs."""
    gens = ["a", "b", "x", "y"] * 6
    clips = [f"c{i // 4}" for i in range(24)]
    pa = np.array([4.0, 2.0, np.nan, np.nan] * 6)
    ia = np.array([4.0, 3.0, np.nan, np.nan] * 6)
    ia[0] = np.nan  # a is still ranked on IA from its other five items
    board = generator_leaderboard({"pa": pa, "ia": ia}, gens, clips, bootstrap=200, seed=0)
    assert board.generators == ("a", "b", "x", "y")
    for e in board.entries[2:]:
        for t in ("pa", "ia", "overall"):
            s = e.standings[t]
            assert s.rank is None and np.isnan(s.rank_prob) and (s.rank_low, s.rank_high) == (0, 0)
    assert [(p.target, p.upper, p.lower) for p in board.adjacent] == [
        ("pa", "a", "b"), ("ia", "a", "b"), ("overall", "a", "b")]
    assert np.isnan(board.outrank["pa"][0, 2]) and np.isnan(board.outrank["pa"][2, 3])
    assert board.outrank["pa"][0, 1] == pytest.approx(1.0)
    a = board.entries[0].standings
    assert a["ia"].rank == 1 and a["overall"].rank == 1 and a["pa"].rank_prob == pytest.approx(1.0)
    d = board.to_dict()
    assert d["entries"][2]["targets"]["pa"]["rank"] is None


def test_only_one_generator_scored_on_an_axis():
    board = generator_leaderboard({"pa": [5.0, 1.0, np.nan, np.nan], "ia": [np.nan, np.nan, 3.0, 4.0]},
                                  ["a", "b", "c", "c"], bootstrap=50, seed=0, sort_by="ia")
    by = {e.generator: e.standings for e in board.entries}
    assert board.generators[0] == "c" and by["c"]["ia"].rank == 1
    assert by["a"]["ia"].rank is None and by["c"]["pa"].rank is None
    assert all(e.standings["overall"].rank is None for e in board.entries)
    assert [p.target for p in board.adjacent] == ["pa"]


def test_entries_count_their_clusters():
    gens, clips, pa, ia = _suite(n_clips=6)
    pa = pa.copy()
    pa[0] = np.nan  # generator a, clip0
    board = generator_leaderboard({"pa": pa, "ia": ia}, gens, clips, bootstrap=0)
    a = next(e for e in board.entries if e.generator == "a")
    assert a.n_items == {"pa": 5, "ia": 6} and a.n_clusters == {"pa": 5, "ia": 6}
    assert board.to_dict()["entries"][0]["n_clusters"] == a.n_clusters
    with pytest.raises(ValueError, match="clusters"):
        generator_leaderboard({"pa": pa}, gens, clips[:3], bootstrap=0)


def test_intervals_and_rank_shares_match_the_replicates_by_hand():
    from robojudge.meta import ClusterBootstrap

    rng = np.random.default_rng(4)
    names = ["a", "b", "c", "d"]
    n_clips = 15
    gens = [g for _ in range(n_clips) for g in names]
    clips = [f"clip{c}" for c in range(n_clips) for _ in names]
    strata = [f"s{c % 3}" for c in range(n_clips) for _ in names]
    shift = {"a": 0.6, "b": 0.3, "c": 0.2, "d": 0.0}
    pa = np.array([3 + shift[g] + rng.normal(0, 0.8) for g in gens])
    ia = np.array([3 + shift[g] / 2 + rng.normal(0, 0.8) for g in gens])
    pa[rng.random(pa.size) < 0.1] = np.nan
    board = generator_leaderboard({"pa": pa, "ia": ia}, gens, clips, strata, bootstrap=300, seed=2,
                                  level=0.9)
    boot = ClusterBootstrap(clips, strata, 300, 2)
    w = boot.item_weights(boot.counts)
    g = np.array(gens)
    reps = {}
    for name in names:
        per_axis = []
        for v in (pa, ia):
            keep = (g == name) & np.isfinite(v)
            with np.errstate(invalid="ignore", divide="ignore"):
                per_axis.append((w[:, keep] * v[keep]).sum(axis=1) / w[:, keep].sum(axis=1))
        reps[name] = {"pa": per_axis[0], "ia": per_axis[1], "overall": (per_axis[0] + per_axis[1]) / 2}
    by = {e.generator: e for e in board.entries}
    for t in ("pa", "ia", "overall"):
        means = np.stack([reps[n][t] for n in names], axis=1)  # (B, G)
        ranks = competition_ranks(means)
        every = np.isfinite(means).all(axis=1)  # replicates in which all four have a mean
        for gi, name in enumerate(names):
            s = by[name].standings[t]
            r = reps[name][t]
            lo, hi = np.quantile(r[np.isfinite(r)], [0.05, 0.95])
            assert (s.score.low, s.score.high) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
            assert s.rank_prob == pytest.approx(np.mean(ranks[every, gi] == s.rank))


def test_a_replicate_without_one_ranked_generator_ranks_nobody():
    """a lives in a clip of its own; b and c share the others, b one point above c on each.

    A replicate that missed a's clip has no mean for a, so it says nothing about anybody's rank: b
    ranks second, never first, in every replicate that ranks all three.
    """
    gens = ["a"] + ["b", "c"] * 5
    clips = ["own"] + [f"c{i // 2}" for i in range(10)]
    pa = np.array([5.0] + [3.0 + (i // 2) * 0.1 + (1.0 if i % 2 == 0 else 0.0) for i in range(10)])
    board = generator_leaderboard({"pa": pa}, gens, clips, bootstrap=400, seed=3, sort_by="pa")
    by = {e.generator: e.standings["pa"] for e in board.entries}
    assert [by[g].rank for g in "abc"] == [1, 2, 3]
    # a's clip is missed in about (5/6)^6 = 33% of the replicates; b would rank first in those.
    assert by["b"].rank_prob == pytest.approx(1.0) and (by["b"].rank_low, by["b"].rank_high) == (2, 2)
    assert by["c"].rank_prob == pytest.approx(1.0) and (by["c"].rank_low, by["c"].rank_high) == (3, 3)
    # a's mean rests on one clip: no interval and no rank spread of its own, with the reason
    assert np.isnan(by["a"].rank_prob) and (by["a"].rank_low, by["a"].rank_high) == (0, 0)
    assert np.isnan(by["a"].score.low) and by["a"].score.why is not None
    assert by["a"].score.why.startswith("scored items in 1 cluster(s)")


def test_one_or_two_clips_give_no_interval_and_no_pair_probability():
    # Resampling one clip gives its mean back every time: [m, m] and P(rank) 1.00 read as certainty.
    gens = ["a", "b"] * 2
    clips = ["c0", "c0", "c1", "c1"]
    board = generator_leaderboard({"pa": np.array([5.0, 4.0, 4.0, 3.0])}, gens, clips, bootstrap=200, seed=1)
    for e in board.entries:
        s = e.standings["pa"]
        assert np.isnan(s.score.low) and np.isnan(s.rank_prob) and "2 cluster(s)" in (s.score.why or "")
    assert all(np.isnan(p.prob) for p in board.adjacent)
    many = generator_leaderboard({"pa": np.array([5.0, 4.0, 4.0, 3.0, 4.5, 3.5])}, gens + ["a", "b"],
                                 clips + ["c2", "c2"], bootstrap=200, seed=1)
    assert all(not np.isnan(e.standings["pa"].score.low) for e in many.entries)  # 3 clips: intervals
    assert all(e.standings["pa"].score.why is None for e in many.entries)
