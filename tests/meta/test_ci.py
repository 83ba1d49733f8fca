import math

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import mean_confidence_interval


def test_matches_scipy_t_interval():
    x = np.array([2.0, 4.0, 4.0, 5.0, 7.0, 9.0])
    ci = mean_confidence_interval(x, 0.95)
    lo, hi = stats.t.interval(0.95, df=len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert ci.low == pytest.approx(lo) and ci.high == pytest.approx(hi)


def test_by_hand():
    # x = 1, 2, 3: mean 2, s = 1, se = 1/sqrt(3); t_{0.975, 2} = 4.302653 -> half = 2.484138.
    ci = mean_confidence_interval([1.0, 2.0, 3.0])
    assert ci.mean == 2.0 and ci.std == 1.0
    assert ci.high - ci.mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)


def test_nan_dropped_and_degenerate_sizes():
    assert mean_confidence_interval([1.0, math.nan, 3.0]).n == 2
    one = mean_confidence_interval([5.0])
    assert one.mean == 5.0 and math.isnan(one.low)
    none = mean_confidence_interval([])
    assert none.n == 0 and math.isnan(none.mean)
    with pytest.raises(ValueError):
        mean_confidence_interval([1.0, 2.0], level=1.5)
