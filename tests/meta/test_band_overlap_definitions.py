"""The two calibrated three-band overlaps of RoboWorM Table D4, each pinned on a hand example.

The paper says only that the cuts are "calibrated on nine videos per embodiment (three per quality
level)". robojudge has two readings (docs/meta.md, "Two band overlaps"): ``band_calibration`` takes a
video's most frequent label and cuts at the midpoints of the level medians; ``three_band_agreement``
(``meta segments``) takes a video's worst segment and the cuts that band the most calibration segments
right. In both examples every video of a level is the same, so every draw fits the same cuts and bands
the same segments: the overlap is exact.
"""

from __future__ import annotations

import numpy as np
import pytest

from robojudge.meta import band_calibration, three_band_agreement


def _videos(kinds: list[tuple[list[int], list[float]]], copies: int = 4
            ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    labels, scores, videos = [], [], []
    for k, (lab, sc) in enumerate(kinds):
        for c in range(copies):
            labels += lab
            scores += sc
            videos += [f"k{k}-v{c}"] * len(lab)
    return np.array(labels), np.array(scores, dtype=float), videos


def test_band_calibration_takes_the_most_frequent_label_and_the_midpoints_of_the_medians() -> None:
    # Labels 1 bad, 2 medium, 3 good; higher scores are better. Four videos of each kind:
    #   kind 0: labels 3 3 1, scores 8 8 3  (most frequent label 3: a good video; its worst segment is bad)
    #   kind 1: labels 2 2 2, scores 5 5 5
    #   kind 2: labels 1 1 1, scores 0 0 0
    labels, scores, videos = _videos([([3, 3, 1], [8, 8, 3]), ([2, 2, 2], [5, 5, 5]), ([1, 1, 1], [0, 0, 0])])
    res = band_calibration(scores, labels, videos, per_level=3, draws=50, seed=0)
    # Calibration: 3 videos of each kind. Medians per label: 1 -> median(0 x9, 3 x3) = 0, 2 -> 5, 3 -> 8;
    # cuts (0 + 5) / 2 = 2.5 and (5 + 8) / 2 = 6.5. (The best split would cut between 3 and 5.)
    assert res.mean_cuts == pytest.approx([2.5, 6.5])
    # Evaluated: one video of each kind. Kind 0's bad segment (3) lands in the medium band; the other 8
    # segments are banded right: 8 / 9 in every draw.
    assert res.overlap == pytest.approx(8 / 9) and res.overlap_std == pytest.approx(0.0)


def test_three_band_agreement_takes_the_worst_segment_and_the_best_split() -> None:
    # Levels 0 Good, 1 Medium, 2 Bad; scores oriented, higher is worse. Four videos of each kind:
    #   kind 0: levels 0 0 0, scores 0 0 0
    #   kind 1: levels 1 1 1, scores 1 5 5
    #   kind 2: levels 0 0 2, scores 0 0 9  (worst segment Bad: a bad video; most frequent level Good)
    levels, scores, videos = _videos([([0, 0, 0], [0, 0, 0]), ([1, 1, 1], [1, 5, 5]), ([0, 0, 2], [0, 0, 9])])
    res = three_band_agreement(scores, levels, videos, per_level=3, draws=50, seed=0)
    assert res.videos_per_level == (4, 4, 4)
    # Calibration segments: level 0 at 0 (15), level 1 at 1 (3) and 5 (6), level 2 at 9 (3). Cuts halfway
    # between distinct scores: 0.5 and 7 band all 27 right, and no other pair does. (The midpoints of the
    # medians, 2.5 and 7, would band the medium segment at 1 as Good.)
    assert res.mean_cuts == pytest.approx((0.5, 7.0))
    assert res.overlap == pytest.approx(1.0) and res.low == res.high == pytest.approx(1.0)


def test_the_two_differ_on_the_same_segments() -> None:
    # The second example as band_calibration reads it (labels 3 - level, scores negated): by the most
    # frequent label kind 2 is a good video, so no video is bad and nothing can be drawn for that level.
    levels, scores, videos = _videos([([0, 0, 0], [0, 0, 0]), ([1, 1, 1], [1, 5, 5]), ([0, 0, 2], [0, 0, 9])])
    with pytest.raises(ValueError, match="level 1 has 0 groups"):
        band_calibration(-scores, 3 - levels, videos, per_level=3, draws=50, seed=0)
    # And the first as three_band_agreement reads it: kind 0 (worst segment bad) leaves no good video.
    labels, scores, videos = _videos([([3, 3, 1], [8, 8, 3]), ([2, 2, 2], [5, 5, 5]), ([1, 1, 1], [0, 0, 0])])
    with pytest.raises(ValueError, match="0 videos have worst verdict Good"):
        three_band_agreement(-scores, 3 - labels, videos, per_level=3, draws=50, seed=0)
