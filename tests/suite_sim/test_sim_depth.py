"""Rollout depth (robojudge.suite.sim._depth): chunk bounds and the per-chunk failure draws (no simulator)."""

from __future__ import annotations

import numpy as np
import pytest

from robojudge.suite.sim._depth import (
    FULL_AT,
    check_depths,
    chunk_bounds,
    chunk_rate,
    depth_of,
    draw_chunk_failures,
)


def test_chunks_cover_every_frame_once_in_near_equal_parts() -> None:
    assert chunk_bounds(48, 1) == [(0, 48)]
    assert chunk_bounds(48, 3) == [(0, 16), (16, 32), (32, 48)]
    b = chunk_bounds(50, 4)
    assert b[0][0] == 0 and b[-1][1] == 50 and all(x[1] == y[0] for x, y in zip(b[:-1], b[1:], strict=True))
    assert {y - x for x, y in b} <= {12, 13}
    with pytest.raises(ValueError, match="depth 0"):
        chunk_bounds(48, 0)
    with pytest.raises(ValueError, match="depth 9 for 8 frames"):
        chunk_bounds(8, 9)


def test_rate_grows_with_the_chunk_index_until_certain() -> None:
    assert [chunk_rate(i, 1.0) for i in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert FULL_AT == 4
    assert chunk_rate(1, 0.5) == 0.25


def test_draws_follow_the_rates() -> None:
    rng = np.random.default_rng(0)
    bounds = chunk_bounds(48, 4)
    counts = np.zeros(4)
    n = 4000
    kinds = ("bend", "jitter")
    seen = set()
    for _ in range(n):
        for kind, sev, c in draw_chunk_failures(kinds, (0.6, 1.0), 1.0, bounds, rng):
            counts[c] += 1
            seen.add(kind)
            assert 0.6 <= sev <= 1.0
    # Binomial(4000, p): 4 standard deviations is at most 0.032.
    np.testing.assert_allclose(counts / n, [0.25, 0.5, 0.75, 1.0], atol=0.032)
    assert seen == set(kinds)
    # Deeper rollouts get more failures on average: 0.25, 0.75, 1.5, 2.5 for depths 1-4.
    means = []
    for d in (1, 2, 3, 4):
        bounds = chunk_bounds(48, d)
        total = sum(len(draw_chunk_failures(kinds, (0.6, 1.0), 1.0, bounds, rng)) for _ in range(2000))
        means.append(total / 2000)
    np.testing.assert_allclose(means, [0.25, 0.75, 1.5, 2.5], atol=0.08)


def test_depths_are_checked_and_cycled() -> None:
    assert check_depths(None) is None
    assert check_depths(3) == (3,)
    assert check_depths([1, 2, 4]) == (1, 2, 4)
    for bad in (0, [], [1, 0], [1.5], True, "2"):
        with pytest.raises(ValueError, match="rollout_depth"):
            check_depths(bad)  # type: ignore[arg-type]
    assert [depth_of((1, 2, 4), e) for e in range(5)] == [1, 2, 4, 1, 2]
    assert depth_of(3, 7) == 3
