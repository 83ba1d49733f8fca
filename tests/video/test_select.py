"""The sampling arithmetic on its own, with frame times given directly."""

from __future__ import annotations

import numpy as np
import pytest

from robojudge.video._select import RatePicker, pick_indices, thin_positions, time_tolerance


def test_16fps_clip_at_4fps_takes_every_fourth_frame() -> None:
    # 81 frames at 16 fps: frame i at i/16 s, last at 5.0 s. Targets k/4 for k = 0..20 land
    # exactly on frames 4k, so the picks are 0, 4, ..., 80: 21 frames.
    times = [i / 16 for i in range(81)]
    assert pick_indices(times, 4.0) == list(range(0, 81, 4))


def test_30fps_clip_at_4fps_takes_latest_frame_before_each_target() -> None:
    # 300 frames at 30 fps (last at 299/30 = 9.967 s). Targets k/4 for k = 0..39 (9.75 s is the
    # last one not after 9.967 s). The latest frame at or before k/4 s is floor(7.5 k): 0, 7, 15, 22, ...
    times = [i / 30 for i in range(300)]
    picks = pick_indices(times, 4.0)
    assert len(picks) == 40
    assert picks[:6] == [0, 7, 15, 22, 30, 37]
    assert picks == [int(7.5 * k) for k in range(40)]


def test_frame_after_the_last_target_is_not_picked() -> None:
    # 82 frames at 16 fps: the extra frame 81 (5.0625 s) lies before the next target (5.25 s).
    times = [i / 16 for i in range(82)]
    assert pick_indices(times, 4.0)[-1] == 80


def test_gaps_never_pick_a_frame_twice() -> None:
    # Frames at 0, 0.1, 0.15, 0.5, 0.55, 0.6, 1.0, 1.3 s; targets 0, .25, .5, .75, 1.0, 1.25.
    # Latest frame at/before each target: 0, 2, 3, 5, 6, 6 -> the repeat of 6 is dropped.
    times = [0.0, 0.1, 0.15, 0.5, 0.55, 0.6, 1.0, 1.3]
    assert pick_indices(times, 4.0) == [0, 2, 3, 5, 6]


def test_none_fps_picks_every_frame() -> None:
    assert pick_indices([0.0, 0.5, 0.6], None) == [0, 1, 2]


def test_rounded_timestamps_use_half_tick_tolerance() -> None:
    # 30 fps stored in milliseconds: frame 20 sits at 0.667 s, after the 3 fps target 2/3 s by
    # 0.33 ms. Within half a tick (0.5 ms) it still counts as "at" the target.
    times = [round(i * 1000 / 30) / 1000 for i in range(31)]
    assert pick_indices(times, 3.0, time_tolerance(1 / 1000)) == [0, 10, 20, 30]
    # Without the tolerance frame 19 would be taken instead.
    assert pick_indices(times, 3.0, 1e-9) == [0, 10, 19, 30]


def test_coarse_time_base_half_tick_is_a_later_frame() -> None:
    # AVI stores 10 fps video with a 1/10 s time base. The frame at 0.3 s is exactly half a tick
    # after the target 0.25 s: it is a later frame, so the target takes frame 2 (0.2 s).
    times = [i / 10 for i in range(20)]
    assert pick_indices(times, 4.0, time_tolerance(1 / 10)) == [0, 2, 5, 7, 10, 12, 15, 17]


def test_thinning_keeps_first_and_last() -> None:
    # 40 picks -> 32: positions round(j * 39 / 31), j = 0..31.
    expected = [0, 1, 3, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15, 16, 18, 19,
                20, 21, 23, 24, 25, 26, 28, 29, 30, 31, 33, 34, 35, 36, 38, 39]  # fmt: skip
    assert thin_positions(40, 32).tolist() == expected
    assert thin_positions(21, 32).tolist() == list(range(21))
    assert thin_positions(5, None).tolist() == list(range(5))
    assert thin_positions(100, 1).tolist() == [0]


@pytest.mark.parametrize("n", [33, 50, 81, 1000])
def test_thinning_positions_are_unique_and_sorted(n: int) -> None:
    pos = thin_positions(n, 32)
    assert len(pos) == 32 and pos[0] == 0 and pos[-1] == n - 1
    assert np.all(np.diff(pos) > 0)


def test_streaming_matches_batch() -> None:
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.01, 0.4, 200)).tolist()
    times = [t - times[0] for t in times]
    picker = RatePicker(4.0)
    streamed: list[int] = []
    for i, t in enumerate(times):
        streamed.extend(picker.push(i, t))
    streamed.extend(picker.finish())
    assert streamed == pick_indices(times, 4.0)
    assert len(set(streamed)) == len(streamed)


def test_invalid_fps_rejected() -> None:
    with pytest.raises(ValueError):
        RatePicker(0.0)


def test_middle_spread_agrees_with_the_viclip_frame_rule() -> None:
    # The video layer cannot import models/, so VBench's rule lives in both; they must agree.
    from robojudge.models._viclip import frame_indices

    for n in range(1, 120):
        for k in (1, 4, 8, 16):
            got = thin_positions(n, k, "middle").tolist()
            want = frame_indices(n, k)
            assert got == (want if n >= k else list(range(n))), (n, k)
    with pytest.raises(ValueError, match="spread must be one of"):
        thin_positions(10, 4, "ends")
