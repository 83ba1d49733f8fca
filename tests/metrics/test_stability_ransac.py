"""``rbg_stability``'s two-view check where RANSAC finds no model: OpenCV then returns the inlier mask
unwritten (whatever that memory held), which the metric used to count, so its value changed from one
call to the next and from process to process (3.4 and 4.5 on a clip whose value is 0.62, range [0, 1])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from robojudge.metrics.functional import _geometry
from robojudge.metrics.functional._geometry import verified_ratio

# Eight tentative matches from a planted ALOHA rollout (aloha00-kin_severe of the KIVA validation suite):
# no fundamental matrix fits them, a homography keeps 4.
P1 = np.array([[50.0, 64.0], [55.0, 66.0], [55.0, 69.0], [49.0, 70.0], [53.0, 70.0], [86.4, 66.0],
               [79.2, 74.4], [51.84, 69.12]], np.float32)
P2 = np.array([[79.0, 76.0], [79.0, 76.0], [83.0, 76.0], [83.0, 76.0], [79.0, 76.0], [46.8, 63.6],
               [53.0, 70.0], [79.0, 76.0]], np.float32)


def test_an_unwritten_mask_of_a_failed_fit_counts_no_inliers(monkeypatch):
    # OpenCV's failure as it was seen: no matrix, a mask of leftover bytes
    leftover = np.full((8, 1), 208, np.uint8)
    monkeypatch.setattr(_geometry.cv2, "findFundamentalMat", lambda *a: (None, leftover))
    _, mask_h = cv2.findHomography(P1, P2, cv2.RANSAC, 2.0)
    kept = int(np.count_nonzero(mask_h))
    assert 0 < kept < 8
    assert verified_ratio(P1, P2, 2.0) == kept / 8  # the homography's inliers, F having none
    monkeypatch.setattr(_geometry.cv2, "findHomography", lambda *a: (None, np.full((8, 1), 3, np.uint8)))
    assert verified_ratio(P1, P2, 2.0) == 0.0


def test_the_real_failure_gives_one_value_whatever_ran_before():
    assert cv2.findFundamentalMat(P1, P2, cv2.FM_RANSAC, 2.0, 0.999)[0] is None  # the case this covers
    first = verified_ratio(P1, P2, 2.0)
    good = np.random.default_rng(0).uniform(0, 100, (40, 2)).astype(np.float32)
    for _ in range(3):  # fits that succeed leave their masks (ones) in memory
        cv2.findFundamentalMat(good, good + 2.0, cv2.FM_RANSAC, 2.0, 0.999)
        assert verified_ratio(P1, P2, 2.0) == first
    assert first == 0.5


@pytest.mark.parametrize("run", [1, 2])
def test_the_first_call_in_a_fresh_process_agrees(run):
    code = ("import numpy as np, sys; sys.path.insert(0, sys.argv[1]);"
            "from test_stability_ransac import P1, P2;"
            "from robojudge.metrics.functional._geometry import verified_ratio;"
            "print(verified_ratio(P1, P2, 2.0))")
    here = str(Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True, check=True)
    assert float(out.stdout) == 0.5
