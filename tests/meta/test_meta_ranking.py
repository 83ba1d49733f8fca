import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import (
    apply_bands,
    auroc,
    band_calibration,
    best_youden_threshold,
    pairwise_rank_accuracy,
    youden_j,
)


def test_youden_by_hand():
    # truth 1,1,1,0,0; verdict 1,1,0,0,1: sensitivity 2/3, specificity 1/2 -> J = 1/6
    assert youden_j([1, 1, 0, 0, 1], [1, 1, 1, 0, 0]) == pytest.approx(1 / 6)
    assert math.isnan(youden_j([1, 0], [1, 1]))


def test_best_youden_threshold():
    scores = np.array([0.1, 0.4, 0.35, 0.8, np.nan])
    truth = np.array([0, 0, 1, 1, 1])
    # t = 0.35 calls items 1, 2, 3 positive: sens 1, spec 1/2 -> J 0.5; t = 0.8: sens 1/2, spec 1 -> 0.5
    j, t = best_youden_threshold(scores, truth)
    assert j == pytest.approx(0.5) and t == pytest.approx(0.35)


def test_auroc_equals_mann_whitney():
    rng = np.random.default_rng(1)
    truth = rng.random(80) < 0.4
    scores = np.round(rng.normal(truth * 0.8, 1.0), 1)  # rounding creates ties
    u = stats.mannwhitneyu(scores[truth], scores[~truth]).statistic
    assert auroc(scores, truth) == pytest.approx(u / (truth.sum() * (~truth).sum()))


def test_pairwise_rank_accuracy_by_hand():
    human = [1, 2, 3, 3]
    pred = [0.1, 0.5, 0.5, 0.9]
    # human-ordered pairs (human ties excluded): (0,1) ok, (0,2) ok, (0,3) ok, (1,2) pred tie -> error,
    # (1,3) ok; pair (2,3) is a human tie and not counted -> 4 / 5
    assert pairwise_rank_accuracy(pred, human) == pytest.approx(0.8)
    rng = np.random.default_rng(2)
    h = rng.integers(1, 4, 300)
    p = rng.normal(h, 1.0)
    assert pairwise_rank_accuracy(p, h, block=7) == pytest.approx(pairwise_rank_accuracy(p, h))


def test_apply_bands_both_directions():
    np.testing.assert_array_equal(apply_bands([0.1, 0.5, 0.9], [0.3, 0.6], [1, 2, 3]), [1, 2, 3])
    # lower is better: cuts on the negated score
    np.testing.assert_array_equal(apply_bands([0.1, 0.5, 0.9], [-0.6, -0.3], [1, 2, 3], False), [3, 2, 1])


def test_band_calibration_separable_and_lower_is_better():
    rng = np.random.default_rng(4)
    videos = np.repeat(np.arange(30), 4)  # 30 videos of 4 segments, 10 videos per level
    level = np.repeat(np.arange(30) % 3 + 1, 4)
    score = -(level * 10.0 + rng.normal(0, 1, level.size))  # lower is better, well separated
    res = band_calibration(score, level, videos, per_level=3, draws=50, seed=0, higher_is_better=False)
    assert res.overlap == 1.0 and res.n_draws == 50
    assert res.mean_cuts[0] == pytest.approx(-15, abs=1) and res.mean_cuts[1] == pytest.approx(-25, abs=1)
    noisy = band_calibration(rng.normal(size=level.size), level, videos, draws=20, seed=0)
    assert 0.1 < noisy.overlap < 0.6
    with pytest.raises(ValueError):
        band_calibration(score[:6], level[:6], per_level=3)


def test_band_calibration_counts_an_unmeasured_segment_as_a_miss():
    # Perfectly separated levels; the metric leaves every other segment unmeasured. Dropping those kept
    # the overlap at 100%; counted as misses (as three_band_agreement does) it is about half.
    videos = np.repeat(np.arange(24), 4)
    level = np.repeat(np.arange(24) % 3 + 1, 4).astype(float)
    score = level * 10.0
    half = score.copy()
    half[1::2] = np.nan
    full = band_calibration(score, level, videos, draws=100, seed=0)
    part = band_calibration(half, level, videos, draws=100, seed=0)
    assert full.overlap == 1.0
    assert part.overlap == pytest.approx(0.5)  # each evaluated video: 2 of 4 segments measured, both right
    assert part.mean_cuts == pytest.approx(full.mean_cuts)  # cuts are fitted on the measured segments
    # An unlabelled segment is not evaluated at all.
    unlabelled = level.copy()
    unlabelled[1::2] = np.nan
    assert band_calibration(half, unlabelled, videos, draws=100, seed=0).overlap == 1.0
    # A score that measures nothing has no overlap (not a perfect one).
    none = band_calibration(np.full(level.size, np.nan), level, videos, draws=20, seed=0)
    assert math.isnan(none.overlap) and np.isnan(none.mean_cuts).all()
