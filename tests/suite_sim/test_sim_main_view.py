"""MainView's scores (robojudge.suite.sim._kinematic): pure numpy, no simulator."""

from __future__ import annotations

import numpy as np

from robojudge.suite.sim._kinematic import MIN_VIEW_FRAC, MainView


def _view(seed: int) -> MainView:
    rng = np.random.default_rng(seed)
    T, K, S = 20, 6, 64
    uv = rng.uniform(0, S, size=(T, K, 2))
    uv[:, 5] = uv[:, 4] + 0.5  # two keypoints always too close to read as a link
    visible = rng.random((T, K)) > 0.15
    return MainView(uv, visible, S)


def test_shown_needs_both_ends_visible_and_apart() -> None:
    v = _view(0)
    v.visible[:, :2] = True
    v.uv[:, 0], v.uv[:, 1] = (10.0, 10.0), (40.0, 10.0)
    assert v.shown(0, 20, 0, 1) == 30 / (64 * 2**0.5)
    v.visible[7, 1] = False
    assert v.shown(0, 20, 0, 1) == 0.0 and v.shown(8, 20, 0, 1) > 0
    v.visible[:, 4:6] = True
    assert v.shown(0, 20, 4, 5) == 0.0  # 0.5 px apart: below MIN_VIEW_FRAC of the diagonal
    assert MIN_VIEW_FRAC > 0.5 / (64 * 2**0.5)


def test_best_pair_is_the_best_shown_pair() -> None:
    for seed in range(20):
        v = _view(seed)
        for a, b in ((0, 20), (3, 9), (12, 13)):
            ix = [0, 2, 3, 4, 5]
            want = max((v.shown(a, b, i, j) for i in ix for j in ix if i != j), default=0.0)
            assert v.best_pair(a, b, ix) == want
            want = max(v.shown(a, b, 1, j) for j in (2, 5))
            assert v.best_pair(a, b, [1], [2, 5]) == want


def test_in_picture_keeps_off_the_border() -> None:
    K = np.array([[32.0, 0, 32], [0, 32, 32], [0, 0, 1]])
    v = MainView(np.zeros((1, 1, 2)), np.ones((1, 1), bool), 64, K, np.eye(3)[None], np.zeros((1, 3)))
    pts = np.array([[0, 0, 1.0], [0.9, 0, 1], [0, 0, -1], [0.7, -0.7, 1]])
    # Centre; 3.2 px from the right edge (inside the 6.4 px band); behind the camera; well inside.
    assert v.in_picture(0, pts).tolist() == [True, False, False, True]
    assert MainView(np.zeros((1, 1, 2)), np.ones((1, 1), bool), 64).in_picture(0, pts).all()
