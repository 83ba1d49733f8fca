"""Worker processes run OpenCV on their share of the CPUs, not on all of them each."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _cv_threads import frame_memory_share, opencv_threads

from robojudge.run._executor import LocalProcessExecutor, cv_threads_per_worker


def _reported(ex: LocalProcessExecutor, n: int = 4) -> set[int]:
    try:
        return {r for _, r in ex.map_unordered(opencv_threads, range(n), lambda t, why: -1)}
    finally:
        ex.shutdown()


def test_workers_share_the_cpus_out() -> None:
    want = cv_threads_per_worker(2)
    assert want == max(1, (os.cpu_count() or 1) // 2)
    assert _reported(LocalProcessExecutor(2)) == {want}


def test_workers_share_the_decoded_frame_budget() -> None:
    ex = LocalProcessExecutor(2)
    try:
        assert {r for _, r in ex.map_unordered(frame_memory_share, range(4), lambda t, why: -1.0)} == {0.5}
    finally:
        ex.shutdown()


@pytest.mark.slow
def test_an_explicit_count_and_opencvs_default() -> None:
    assert _reported(LocalProcessExecutor(1, cv_threads=3), 1) == {3}
    # 0 leaves OpenCV alone: what a fresh process of this machine gets
    fresh = subprocess.run([sys.executable, "-c", "import cv2; print(cv2.getNumThreads())"],
                           capture_output=True, text=True, check=True)
    assert _reported(LocalProcessExecutor(1, cv_threads=0), 1) == {int(fresh.stdout)}
    with pytest.raises(ValueError, match="cv_threads"):
        LocalProcessExecutor(2, cv_threads=-1)
