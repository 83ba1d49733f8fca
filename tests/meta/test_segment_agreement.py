"""Segment-level agreement (robojudge.meta._segments): rho against scipy and by hand, the three-band overlap
worked by hand, its seed, and segments too short to score."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import (
    BandAgreement,
    apply_cuts,
    best_cuts,
    orient,
    pool_bands,
    segment_spans,
    segment_spearman,
    three_band_agreement,
    too_short_reason,
    verdict_levels,
)


def test_segment_rho_by_hand_and_against_scipy() -> None:
    # Ranks of x: 1 2 3 4; of y: 1.5 1.5 3 4. Sum of products of deviations 4.5, of squares 5 and 4.5.
    r = segment_spearman([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 2], ["a"] * 4)
    assert r.groups["a"].rho == pytest.approx(4.5 / math.sqrt(5 * 4.5))
    assert r.micro.rho == pytest.approx(4.5 / math.sqrt(5 * 4.5))

    rng = np.random.default_rng(3)
    levels = rng.integers(0, 3, 60)
    scores = levels + rng.normal(0, 1.5, 60)
    scores[[4, 17]] = np.nan
    groups = ["fetch"] * 25 + ["adroit"] * 35
    r = segment_spearman(scores, levels, groups)
    ok = np.isfinite(scores)
    g = np.array(groups)
    for name in ("fetch", "adroit"):
        m = ok & (g == name)
        assert r.groups[name].rho == pytest.approx(stats.spearmanr(scores[m], levels[m]).statistic)
        assert r.groups[name].n == int(m.sum())
    assert r.groups["fetch"].unscored == 2 and r.groups["adroit"].unscored == 0
    assert r.macro == pytest.approx((r.groups["fetch"].rho + r.groups["adroit"].rho) / 2)
    assert r.micro.rho == pytest.approx(stats.spearmanr(scores[ok], levels[ok]).statistic)
    assert r.micro.n == 58 and r.micro.unscored == 2


def test_segment_rho_undefined_for_constant_levels() -> None:
    r = segment_spearman([0.1, 0.5, 0.2, 0.3, 0.4], [0, 0, 1, 2, 2], ["x", "x", "y", "y", "y"])
    assert math.isnan(r.groups["x"].rho)  # both Good: no order to agree with
    assert r.macro == pytest.approx(r.groups["y"].rho)


def test_orient_and_verdicts() -> None:
    assert orient([1.0, -2.0], higher_is_better=True).tolist() == [-1.0, 2.0]
    assert orient([1.0, -2.0], higher_is_better=False).tolist() == [1.0, -2.0]
    assert verdict_levels(["Good", "Bad", "Medium"]).tolist() == [0, 2, 1]
    with pytest.raises(ValueError, match=r"clip7 \[16, 32\): verdict 'Poor'"):
        verdict_levels(["Good", "Poor"], where=["clip7 [0, 16)", "clip7 [16, 32)"])


def test_best_cuts_separable_and_tied() -> None:
    assert best_cuts([0.1, 0.2, 0.5, 0.6, 0.9, 1.0], [0, 0, 1, 1, 2, 2]) == pytest.approx((0.35, 0.75))
    # Both (1.5, 4.5) and (3.5, 4.5) band 4 of 5 right with balanced accuracy 5/6: the lower pair wins.
    assert best_cuts([1, 2, 3, 4, 5], [0, 1, 0, 1, 2]) == (1.5, 4.5)
    # Good scores worst of all: the best is an empty Good band and a cut between Medium and Bad.
    assert best_cuts([5, 1, 3], [0, 1, 2]) == (-math.inf, 2.0)
    # Tied scores are never split between bands.
    c = best_cuts([1, 1, 2], [0, 1, 1])
    assert apply_cuts([1, 1], c)[0] == apply_cuts([1, 1], c)[1]
    assert apply_cuts([0.0, 0.5, 0.9, np.nan], (0.35, 0.75))[:3].tolist() == [0, 1, 2]
    assert math.isnan(apply_cuts([np.nan], (0.35, 0.75))[0])


# Six one-segment videos; worked by hand over the 8 equally likely draws of one video per level: the
# three evaluated videos are banded right 1 of 3 when M1 and B1 calibrate (2 of 8 draws), else 2 of 3,
# so the mean overlap is (2 * 1/3 + 6 * 2/3) / 8 = 7/12.
HAND_SCORES = [0.0, 5.0, 1.0, 2.0, 3.0, 4.0]
HAND_LEVELS = [0, 0, 1, 1, 2, 2]
HAND_VIDEOS = ["G1", "G2", "M1", "M2", "B1", "B2"]


def test_three_band_by_hand() -> None:
    r = three_band_agreement(HAND_SCORES, HAND_LEVELS, HAND_VIDEOS, per_level=1, draws=2000, seed=0)
    assert set(np.round(r.draws * 3).astype(int).tolist()) == {1, 2}
    share_low = float(np.mean(r.draws < 0.5))
    assert share_low == pytest.approx(0.25, abs=0.04)  # M1 and B1 drawn together: 1/2 x 1/2
    assert r.overlap == pytest.approx(2 / 3 - share_low / 3)
    assert r.overlap == pytest.approx(7 / 12, abs=0.015)
    assert (r.low, r.high) == pytest.approx((1 / 3, 2 / 3))
    assert r.evaluated.tolist() == [3] * 2000
    assert r.videos_per_level == (2, 2, 2)


def test_three_band_separable_is_perfect_and_counts_unscored_as_miss() -> None:
    rng = np.random.default_rng(1)
    videos, levels, scores = [], [], []
    for k in range(3):
        for v in range(5):
            for _ in range(3):
                videos.append(f"v{k}{v}")
                levels.append(k)
                scores.append(k + rng.uniform(0, 0.9))
    r = three_band_agreement(scores, levels, videos, draws=200, seed=4)
    assert r.overlap == 1.0 and r.low == 1.0
    assert 0.9 <= r.mean_cuts[0] <= 1.0 and 1.9 <= r.mean_cuts[1] <= 2.0
    scores[0] = math.nan  # one segment of video v00 cannot be scored
    r = three_band_agreement(scores, levels, videos, draws=200, seed=4)
    assert r.evaluated.tolist() == [18] * 200  # 6 videos of 3 segments left after 9 calibrate
    # v00 calibrates in 3 of 5 draws (its NaN is ignored there); otherwise 17 of 18 are right, the miss
    # being the unscored segment.
    assert set(np.round(r.draws * 18).astype(int).tolist()) == {17, 18}
    assert float(np.mean(r.draws < 1)) == pytest.approx(2 / 5, abs=0.12)


def test_three_band_reproducible_from_seed() -> None:
    rng = np.random.default_rng(0)
    videos = [f"v{i // 3}" for i in range(60)]
    levels = np.repeat(np.arange(20) % 3, 3)
    scores = levels + rng.normal(0, 1.0, 60)
    a = three_band_agreement(scores, levels, videos, draws=300, seed=11)
    b = three_band_agreement(scores, levels, videos, draws=300, seed=11)
    c = three_band_agreement(scores, levels, videos, draws=300, seed=12)
    assert np.array_equal(a.draws, b.draws) and a.mean_cuts == b.mean_cuts
    assert not np.array_equal(a.draws, c.draws)
    assert a.low <= a.overlap <= a.high


def test_three_band_needs_enough_videos_per_level() -> None:
    with pytest.raises(ValueError, match="3 videos have worst verdict Bad"):
        three_band_agreement([0, 1, 2] * 4, [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 0, 0],
                             [f"v{i}" for i in range(12)])


def test_video_level_is_its_worst_segment() -> None:
    # v1 has one Bad segment among Good ones: it is a Bad video, so only v2 and v3 are Medium/Good (one
    # video of Good was "1 videos have").
    with pytest.raises(ValueError, match="1 video has worst verdict Good"):
        three_band_agreement([0, 0, 0, 1, 2], [0, 2, 0, 1, 0], ["v1", "v1", "v1", "v2", "v3"], per_level=1)


def test_pool_bands_macro_and_micro() -> None:
    def band(right: list[int], evaluated: list[int]) -> BandAgreement:
        r, e = np.array(right), np.array(evaluated)
        return BandAgreement(0.0, 0.0, 0.0, r / e, r, e, (0.0, 0.0), (4, 4, 4))

    pooled = pool_bands({"a": band([1, 3], [4, 4]), "b": band([6, 6], [12, 6])})
    # Macro per draw: (0.25 + 0.5) / 2, (0.75 + 1) / 2; micro: 7/16, 9/10.
    assert pooled.macro[0] == pytest.approx((0.375 + 0.875) / 2)
    assert pooled.micro[0] == pytest.approx((7 / 16 + 9 / 10) / 2)
    with pytest.raises(ValueError, match="different numbers of draws"):
        pool_bands({"a": band([1], [4]), "b": band([6, 6], [12, 6])})


def test_short_videos_give_a_short_segment_with_a_reason() -> None:
    assert segment_spans(48) == [(0, 16), (16, 32), (32, 48)]
    assert segment_spans(40) == [(0, 16), (16, 32), (32, 40)]
    assert segment_spans(10) == [(0, 10)]  # kept, not dropped
    assert too_short_reason(0, 10, 16) == "segment [0, 10) has 10 frames; scoring needs at least 16"
    assert too_short_reason(0, 16, 16) is None


def test_verdicts_are_read_in_any_case(tmp_path: Path) -> None:
    """robojudge's annotation stores segment verdicts as good/medium/bad; `meta segments` took only
    Good/Medium/Bad and refused its own export."""
    from robojudge.meta import segments_from_csv

    assert verdict_levels(["good", "BAD", "Medium", "mEdIuM"]).tolist() == [0, 2, 1, 1]
    rng = np.random.default_rng(4)
    rows = [(f"c{k % 5}", ("Good", "Medium", "Bad")[k % 3], rng.random()) for k in range(30)]
    tables = {}
    for name, case in (("upper.csv", str), ("lower.csv", str.lower)):
        (tmp_path / name).write_text("clip,verdict,kiva\n" + "".join(f"{c},{case(v)},{x:.4f}\n"
                                                                     for c, v, x in rows))
        tables[name] = segments_from_csv(tmp_path / name, {"kiva": False}, clip="clip", replicates=50)
    assert tables["upper.csv"].verdicts == tables["lower.csv"].verdicts == {
        "all": {"Good": 10, "Medium": 10, "Bad": 10}}
    assert repr(tables["upper.csv"].rho) == repr(tables["lower.csv"].rho)
    with pytest.raises(ValueError, match=r"'Poor' is not one of \['Bad', 'Good', 'Medium'\] \(in any case"):
        verdict_levels(["Poor"])
