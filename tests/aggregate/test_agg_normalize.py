import math

import numpy as np
import pytest

from robojudge.aggregate import normalize, normalize_all, percentile_bounds


@pytest.mark.parametrize(("metric", "raw", "expected"), [
    # affine_clip, higher better, IS bounds 2.1041..3.5279: (2.8160 - 2.1041) / 1.4238 = 0.5.
    ("iq1_inception_score", [2.8160, 1.0, 4.0], [0.5, 0.0, 1.0]),
    # affine_clip, lower better, collision count 0..68: (68 - 17) / 68 = 0.75; 80 is past the bound.
    ("cs_collision_count", [17.0, 80.0, 0.0], [0.75, 0.0, 1.0]),
    # eq. 6: 25 / 50 = 0.5, 60 / 50 capped at 1; FVD 1 - 500 / 2000 = 0.75, 3000 -> 0.
    ("iq1_psnr", [25.0, 60.0], [0.5, 1.0]),
    ("iq1_fvd", [500.0, 3000.0], [0.75, 0.0]),
    # eq. 7-10: 1 - 0.2; (4 - 1) / 4; 2 / 3; 0.2 / 0.5 and 0.7 / 0.5 clipped to 1.
    ("iq1_lpips", [0.2], [0.8]),
    ("pla_physical_commonsense", [4.0], [0.75]),
    ("if_four_level_score", [2.0], [2.0 / 3.0]),
    ("sa_scene_adherence", [0.2, 0.7], [0.4, 1.0]),
    ("iq1_musiq", [0.42], [0.42]),
])
def test_table_strategy_by_hand(metric, raw, expected):
    np.testing.assert_allclose(normalize(metric, raw), expected, atol=1e-12)


def test_nan_stays_nan():
    assert math.isnan(normalize("iq1_fvd", [math.nan])[0])


def test_percentile_bounds_by_hand():
    # 0, 1, ..., 100: numpy's linear percentile puts the 1st at 1 and the 99th at 99.
    assert percentile_bounds(np.arange(101.0)) == pytest.approx((1.0, 99.0))
    with pytest.raises(ValueError, match="degenerate"):
        percentile_bounds([3.0, 3.0, 3.0])


def test_percentile_strategy_rebounds_pool_metrics_only():
    pool = np.arange(101.0)
    # Mean trajectory length is lower-better with pool bounds 1..99: (99 - 25) / 98.
    got = normalize("ta_mean_trajectory_length", [25.0], strategy="percentile", pool=pool)
    assert got[0] == pytest.approx(74 / 98)
    # Flow score has upstream (WorldArena) bounds, which the percentile strategy keeps.
    x = [4.0]
    assert normalize("mq_flow_score", x, strategy="percentile", pool=pool) == normalize("mq_flow_score", x)
    # Without a pool the values themselves are the pool: 1..99 of 0..100 again.
    assert normalize("rbg_fidelity", pool, strategy="percentile")[50] == pytest.approx(49 / 98)


def test_normalize_all_and_errors():
    out = normalize_all({"iq1_psnr": [25.0], "iq1_lpips": [0.2]})
    assert out["iq1_psnr"][0] == 0.5 and out["iq1_lpips"][0] == pytest.approx(0.8)
    with pytest.raises(KeyError, match="did you mean"):
        normalize("iq1_psrn", [1.0])
    with pytest.raises(ValueError, match="strategy"):
        normalize("iq1_psnr", [1.0], strategy="minmax")  # type: ignore[arg-type]


def test_raw_hpsv3_rewards_are_pool_normalized_and_refused_by_the_table_strategy():
    rewards = np.arange(101.0) / 10 - 2.0  # raw rewards -2.0 .. 8.0
    # numpy's 1st/99th percentiles of the pool: -1.9 and 7.9; 3.0 -> (3.0 + 1.9) / 9.8 = 0.5.
    got = normalize("aq_hpsv3", [3.0, -5.0, 9.0], strategy="percentile", pool=rewards)
    np.testing.assert_allclose(got, [4.9 / 9.8, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"aq_hpsv3 values outside \[0, 1\] are raw.*--strategy percentile"):
        normalize("aq_hpsv3", rewards)
    # the paper's values (already normalized) pass unchanged, NaN included
    np.testing.assert_array_equal(normalize("aq_hpsv3", [0.2336, np.nan]), [0.2336, np.nan])


def test_percentile_bounds_leave_out_configurations_without_a_value():
    # A configuration with no value (NaN in an export) is left out of the pool, not made its percentile.
    pool = np.linspace(0, 10, 50)
    with_nan = np.r_[pool, np.nan, np.inf]
    assert percentile_bounds(with_nan) == pytest.approx(percentile_bounds(pool))
    assert percentile_bounds(pool) == pytest.approx((np.percentile(pool, 1), np.percentile(pool, 99)))
