"""The generator leaderboard's pairs: clip coverage per pair, the matched mode, and the paired difference
(audit abcompare F1, F2, F4, F6)."""

import numpy as np
import pytest

from robojudge.meta import coverage_notes, generator_leaderboard, paired_difference

_RNG = np.random.default_rng(1)
BASE = _RNG.integers(1, 5, size=30)  # clip difficulty: a score of 1 to 4 per clip
UP = _RNG.random(30) < 0.4  # the clips where "new" is one point better


def _paired(clip_ids=True):
    """old = the clip's base score; new = one more on the UP clips, else the same (never worse)."""
    gens, clips, score = [], [], []
    for c in range(30):
        gens += ["old", "new"]
        clips += [f"ep{c:02d}" if clip_ids else f"old{c}", f"ep{c:02d}" if clip_ids else f"new{c}"]
        score += [BASE[c], min(5, BASE[c] + UP[c])]
    return gens, clips, np.array(score, dtype=float)


def _disjoint():
    """old on clips 0-19, new on 10-29; clips 20-29 are easy (5); on the 10 shared clips both are alike."""
    base = BASE.copy()
    base[20:] = 5
    gens = ["old"] * 20 + ["new"] * 20
    clips = [f"ep{c:02d}" for c in range(20)] + [f"ep{c:02d}" for c in range(10, 30)]
    score = np.array([base[c] for c in range(20)] + [base[c] for c in range(10, 30)], dtype=float)
    return gens, clips, score


def test_generators_on_different_clips_are_named_with_their_overlap():
    gens, clips, s = _disjoint()
    board = generator_leaderboard({"pa": s, "ia": s}, gens, clips, bootstrap=200)
    # The default mean is still over each generator's own items: new ahead by its easy clips only.
    assert board.generators == ("new", "old") and not board.matched
    assert coverage_notes(board) == ["new and old share 10 of 30 clips: their means are over different items"]
    (cov,) = {(c.clips_a, c.clips_b, c.shared) for c in board.coverage}
    assert cov == (20, 20, 10)
    assert board.to_dict()["coverage_notes"] == coverage_notes(board)


def test_matched_mode_ranks_on_shared_clips_and_identical_generators_tie():
    gens, clips, s = _disjoint()
    board = generator_leaderboard({"pa": s, "ia": s}, gens, clips, bootstrap=200, matched=True)
    new, old = (e.standings["overall"] for e in board.entries)
    # Both means are over clips 10-19, where the two are alike.
    assert new.score.value == pytest.approx(old.score.value)
    assert new.score.value == pytest.approx(BASE[10:20].mean())
    assert new.rank == old.rank == 1
    assert board.matched_clips == {"pa": 10, "ia": 10}
    assert [e.n_items for e in board.entries] == [{"pa": 10, "ia": 10}] * 2
    assert board.pairs()[-1] == ("overall", "new", "old", 0.5)
    assert "clips: PA 10, IA 10" in coverage_notes(board)[0]


def test_rollouts_out_of_proportion_are_named_and_matched_mode_weighs_clips_alike():
    # Alike per clip; new has 3 rollouts of the 15 easy clips and 1 of the hard ones, old 1 of each.
    gens, clips, score = [], [], []
    for c in range(30):
        q = 5.0 if c < 15 else 1.0
        for _ in range(3 if c < 15 else 1):
            gens.append("new"), clips.append(f"c{c}"), score.append(q)
        gens.append("old"), clips.append(f"c{c}"), score.append(q)
    s = np.array(score)
    board = generator_leaderboard({"pa": s, "ia": s}, gens, clips, bootstrap=200)
    assert board.entries[0].standings["overall"].score.value == pytest.approx(4.0)  # (15*3*5 + 15) / 60
    assert coverage_notes(board) == ["new and old share all 30 clips; new has 1-3 and old 1 scored rollouts "
                                     "per clip: their means are over different items"]
    matched = generator_leaderboard({"pa": s, "ia": s}, gens, clips, bootstrap=200, matched=True)
    assert [e.standings["overall"].score.value for e in matched.entries] == pytest.approx([3.0, 3.0])
    assert {e.standings["overall"].rank for e in matched.entries} == {1}


def test_equal_coverage_gives_no_note():
    gens, clips, s = _paired()
    board = generator_leaderboard({"pa": s, "ia": s}, gens, clips, bootstrap=200)
    assert coverage_notes(board) == [] and all(c.matched for c in board.coverage)


def test_no_shared_clip_says_the_comparison_is_unpaired():
    gens, clips, s = _paired(clip_ids=False)
    board = generator_leaderboard({"pa": s, "ia": s}, gens, clips, bootstrap=200)
    assert coverage_notes(board) == ["new and old share none of their 60 clips, so they are compared as "
                                     "independent samples (unpaired)"]
    diff = paired_difference({"pa": s, "ia": s}, gens, "new", "old", clips, bootstrap=200)
    assert diff.n_clips["overall"] == 0 and np.isnan(diff.difference["overall"].value)


def test_paired_difference_recovers_the_planted_gain():
    gens, clips, s = _paired()
    diff = paired_difference({"pa": s, "ia": s}, gens, "new", "old", clips, bootstrap=2000)
    truth = (np.minimum(5, BASE + UP) - BASE).mean()
    assert truth == pytest.approx(1 / 3)  # 10 of the 30 clips are one better
    d = diff.difference["overall"]
    assert d.value == pytest.approx(truth)
    assert d.low < truth < d.high and d.low > 0  # never worse on a clip: clearly ahead
    assert diff.prob["overall"] == pytest.approx(1.0)
    assert diff.n_clips == {"pa": 30, "ia": 30, "overall": 30}
    # By hand: the mean of the per-clip differences over the same clip draws.
    d_clip = np.minimum(5, BASE + UP) - BASE
    from robojudge.meta import ClusterBootstrap
    boot = ClusterBootstrap([f"ep{c:02d}" for c in range(30)], None, 2000)
    reps = boot.counts @ d_clip / boot.counts.sum(axis=1)
    assert (d.low, d.high) == pytest.approx((np.quantile(reps, 0.025), np.quantile(reps, 0.975)))
    # The other way round: the negative, and P(old > new) = 0.
    back = paired_difference({"pa": s, "ia": s}, gens, "old", "new", clips, bootstrap=2000)
    assert back.difference["overall"].value == pytest.approx(-truth) and back.prob["overall"] == 0.0


def test_paired_difference_refuses_an_unknown_generator():
    gens, clips, s = _paired()
    with pytest.raises(ValueError, match="no generator 'neww'.*new, old"):
        paired_difference({"pa": s}, gens, "neww", "old", clips)
    with pytest.raises(ValueError, match="itself"):
        paired_difference({"pa": s}, gens, "old", "old", clips)


def test_all_pairs_carry_non_neighbours():
    # new > mid > old on every clip: the leaderboard's adjacent pairs leave out new against old.
    gens, clips, score = [], [], []
    for c in range(12):
        for g, shift in (("new", 2.0), ("mid", 1.0), ("old", 0.0)):
            gens.append(g), clips.append(f"c{c}"), score.append(c % 4 + shift)
    s = np.array(score)
    board = generator_leaderboard({"pa": s}, gens, clips, bootstrap=200, sort_by="pa")
    assert ("pa", "new", "old", 1.0) in board.pairs()
    assert {"target": "pa", "a": "new", "b": "old", "prob": 1.0} in board.to_dict()["pairs"]
