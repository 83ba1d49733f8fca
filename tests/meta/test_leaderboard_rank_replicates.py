"""What the leaderboard's P(rank) and rank ranges rest on (audit aggedge F1) and how generators that share
no clip are resampled (audit aggedge F8)."""

from __future__ import annotations

import csv
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.special import comb

from robojudge.meta import generator_leaderboard
from robojudge.report._leaderboard import leaderboard_markdown, write_leaderboard


def _shared_and_own(n_own: int = 40, each: int = 2, seed: int = 3
                    ) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """Generators a and b on 3 shared clips, and ``n_own`` generators on ``each`` clips of their own, all
    in one source: with 40 x 2, a replicate draws 83 of the 83 clips, so it misses some small generator
    most of the time."""
    rng = np.random.default_rng(seed)
    gens, clips = [], []
    for c in range(3):
        gens += ["a", "b"]
        clips += [f"s{c}", f"s{c}"]
    for k in range(n_own):
        for c in range(each):
            gens.append(f"g{k:02d}")
            clips.append(f"g{k:02d}c{c}")
    n = len(gens)
    scores = {"pa": rng.integers(1, 6, n).astype(float), "ia": rng.integers(1, 6, n).astype(float)}
    return scores, gens, clips


def test_rank_spread_withheld_below_half_of_the_replicates() -> None:
    scores, gens, clips = _shared_and_own()
    board = generator_leaderboard(scores, gens, clips, bootstrap=1000, seed=7)
    # By hand: 83 clips drawn with replacement from 83; the chance that each of the 40 own pairs is hit
    # (inclusion-exclusion over the pairs missed) is about 0.1%, so about 1 of 1000 replicates ranks.
    p_all = sum((-1) ** k * comb(40, k, exact=True) * ((83 - 2 * k) / 83) ** 83 for k in range(41))
    assert 0.0005 < p_all < 0.002
    for e in board.entries:
        s = e.standings["overall"]
        assert s.rank is not None  # ranked, with a mean and (for a and b) an interval...
        assert math.isnan(s.rank_prob) and s.rank_low == s.rank_high == 0  # ...but no rank spread
    n = board.rank_replicates["overall"]
    assert abs(n - 1000 * p_all) <= 5 * math.sqrt(1000 * p_all) + 1
    assert n * 2 < 1000
    notes = board.bootstrap_notes()
    assert any(f"only {n} of 1000 replicates draw every ranked generator" in x and "Overall" in x
               for x in notes)
    md = leaderboard_markdown(board)
    assert f"only {n} of 1000 replicates" in md
    assert board.to_dict()["bootstrap"]["rank_replicates"]["overall"] == n
    # The pairwise shares do not need every generator drawn: they stand.
    a, b = board.generators.index("a"), board.generators.index("b")
    assert not math.isnan(board.outrank["overall"][a, b])


def test_rank_spread_kept_and_counted_when_most_replicates_are_complete() -> None:
    # 3 own generators on 3 clips each: a replicate draws all of them about 6 times in 10.
    scores, gens, clips = _shared_and_own(n_own=3, each=3)
    board = generator_leaderboard(scores, gens, clips, bootstrap=2000, seed=7)
    total = 3 + 3 * 3
    p_all = sum((-1) ** k * comb(3, k, exact=True) * ((total - 3 * k) / total) ** total for k in range(4))
    n = board.rank_replicates["overall"]
    assert 0.5 < p_all < 1 and n < 2000
    assert abs(n - 2000 * p_all) <= 5 * math.sqrt(2000 * p_all * (1 - p_all))
    assert all(not math.isnan(e.standings["overall"].rank_prob) for e in board.entries)
    assert f"rest on the {n} of 2000 replicates that draw every ranked generator" in " ".join(
        board.bootstrap_notes())


def test_leaderboard_csv_says_how_many_replicates_its_rank_columns_rest_on(tmp_path: Path) -> None:
    scores, gens, clips = _shared_and_own(n_own=3, each=3)
    board = generator_leaderboard(scores, gens, clips, bootstrap=2000, seed=7)
    write_leaderboard(board, tmp_path)
    with (tmp_path / "leaderboard.csv").open() as f:
        rows = list(csv.DictReader(f))
    n = board.rank_replicates["overall"]
    assert 0 < n < 2000 and {r["overall_rank_replicates"] for r in rows} == {str(n)}
    assert {r["pa_rank_replicates"] for r in rows} == {str(board.rank_replicates.get("pa", 2000))}
    plain = generator_leaderboard(scores, gens, clips, bootstrap=0)
    write_leaderboard(plain, tmp_path / "plain")
    with (tmp_path / "plain" / "leaderboard.csv").open() as f:
        assert {r["overall_rank_replicates"] for r in csv.DictReader(f)} == {""}


def test_rank_outside_its_range_is_said() -> None:
    scores, gens, clips = _shared_and_own(n_own=4)
    board = generator_leaderboard(scores, gens, clips, bootstrap=200, seed=7)
    first = board.entries[0]
    s = first.standings["overall"]
    moved = replace(first, standings={**first.standings,
                                      "overall": replace(s, rank_low=s.rank + 1, rank_high=s.rank + 2)})
    odd = replace(board, entries=(moved, *board.entries[1:]))
    assert not any("outside its own rank range" in x for x in board.bootstrap_notes())
    assert any(f"{first.generator} Overall rank {s.rank} (range {s.rank + 1}-{s.rank + 2})" in x
               for x in odd.bootstrap_notes())


def test_no_clip_shared_resamples_within_generator() -> None:
    # Audit aggedge F8: 3 generators x 5 items without clip_id (each item its own cluster). Drawn from
    # one pool of 15, a generator's sample size varied; the independent-samples bootstrap the warning
    # names keeps 5 per generator. Hand: the percentile interval of the mean of 5 draws from 1..5.
    gens = [g for g in "uvw" for _ in range(5)]
    pa = np.array([1, 2, 3, 4, 5] * 3, dtype=float)
    clusters = [f"item:{g}{k}" for g in "uvw" for k in range(5)]
    board = generator_leaderboard({"pa": pa, "ia": pa}, gens, clusters, bootstrap=20000, seed=11)
    rng = np.random.default_rng(0)
    hand = rng.choice(np.arange(1, 6, dtype=float), size=(100_000, 5)).mean(axis=1)
    lo, hi = np.percentile(hand, [2.5, 97.5])
    assert (lo, hi) == (pytest.approx(1.8), pytest.approx(4.2))
    for e in board.entries:
        est = e.standings["pa"].score
        assert (est.low, est.high) == (pytest.approx(lo), pytest.approx(hi))
        assert est.se == pytest.approx(hand.std(ddof=1), rel=0.03)  # sqrt(2/5) = 0.632
    assert board.unpaired and board.rank_replicates["overall"] == 20000
    assert "independent samples" in " ".join(board.bootstrap_notes())


def test_shared_clips_keep_one_pool() -> None:
    scores, gens, clips = _shared_and_own(n_own=4)
    assert not generator_leaderboard(scores, gens, clips, bootstrap=50).unpaired
