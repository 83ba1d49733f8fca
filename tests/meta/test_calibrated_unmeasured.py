"""An item with no metric value (every metric failed on it) gets no calibrated score (audit combos F1).

It used to be scored with every feature at the training mean, that is the model's prior: `select
best-of-n --by calibrated` picked a truncated video as its clip's best rollout, and `leaderboard
generators --scores calibrated` ranked a generator with no measurement.
"""

import numpy as np

from robojudge.meta import cross_validate_ordinal


def _data(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = np.clip(np.round(3 + 1.2 * x[:, 0] + rng.normal(scale=0.5, size=n)), 1, 5)
    return x, y, [f"c{i // 2}" for i in range(n)]


def test_an_item_without_any_feature_value_is_unscored_and_not_trained_on() -> None:
    x, y, groups = _data()
    plain = cross_validate_ordinal(x, y, groups, seed=0)
    broken = x.copy()
    broken[7] = np.nan  # every metric failed on item 7
    cv = cross_validate_ordinal(broken, y, groups, seed=0)
    assert np.isnan(cv.expected[7]) and cv.predicted[7] == 0
    others = np.arange(len(y)) != 7
    assert np.isfinite(cv.expected[others]).all() and (cv.predicted[others] > 0).all()
    # one value present is enough to be scored
    partial = x.copy()
    partial[7, 1] = np.nan
    assert np.isfinite(cross_validate_ordinal(partial, y, groups, seed=0).expected[7])
    # the broken item trained no model: its fold-mates' scores move only by its absence from training
    assert np.allclose(cv.expected[others], plain.expected[others], atol=0.3)
