import dataclasses
import math

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import check_grad
from scipy.special import expit

from robojudge.meta import cross_validate_ordinal, fit_ordinal_logit, grouped_folds, ordinal_nll
from robojudge.meta._calibrated import _objective


def _planted(n_clips=60, per_clip=3, seed=0):
    """Labels from a monotone latent of two informative features; a third is noise."""
    rng = np.random.default_rng(seed)
    n = n_clips * per_clip
    clip_effect = np.repeat(rng.normal(0, 0.5, n_clips), per_clip)
    x = rng.normal(size=(n, 3))
    latent = 1.5 * x[:, 0] - 1.0 * x[:, 1] + clip_effect + rng.logistic(0, 0.3, n)
    y = np.digitize(latent, [-1.5, -0.5, 0.5, 1.5]) + 1
    x[:, 0] = np.exp(x[:, 0])  # monotone but not linear in the feature
    return x, y, np.repeat([f"c{i}" for i in range(n_clips)], per_clip)


def test_recovers_planted_relation_out_of_fold():
    x, y, groups = _planted()
    x[::7, 1] = np.nan  # imputed from the training folds
    cv = cross_validate_ordinal(x, y, groups, n_folds=5, alpha=1.0, seed=0)
    assert np.isfinite(cv.expected).all() and cv.n_folds == 5
    assert stats.spearmanr(cv.expected, y).statistic > 0.8
    assert set(np.unique(cv.predicted)) <= {1, 2, 3, 4, 5}
    for model in cv.models:
        assert model is not None and model.converged
        assert np.all(np.diff(model.thresholds) > 0)
        assert model.coef[0] > 0 > model.coef[1]


def test_grouped_folds_never_leak():
    groups = np.array([f"g{i % 13}" for i in range(100)])
    folds = grouped_folds(groups, 4, seed=3)
    assert np.array_equal(folds, grouped_folds(groups, 4, seed=3))
    for f in range(4):
        assert not set(groups[folds == f]) & set(groups[folds != f])
    sizes = np.bincount(folds)
    assert sizes.min() > 0 and sizes.max() - sizes.min() <= 8
    assert grouped_folds(["a", "a", "b"], 5).max() == 1  # capped at the number of groups
    x, y, g = _planted(n_clips=12)
    cv = cross_validate_ordinal(x, y, g, n_folds=3)
    for f in range(3):
        assert not set(g[cv.fold == f]) & set(g[cv.fold != f])


def test_l2_shrinks_coefficients():
    x, y, _ = _planted(seed=1)
    norms = [np.linalg.norm(fit_ordinal_logit(x, y, alpha=a).coef) for a in (0.0, 10.0, 1000.0)]
    assert norms[0] > norms[1] > norms[2]
    assert norms[2] < 0.1 * norms[0]


def test_likelihood_matches_hand_computation():
    # Two classes on a 1..3 scale, thresholds (-1, 1), one feature with slope 2.
    z = np.array([[0.0], [0.5], [-1.0]])
    y_index = np.array([0, 1, 2])
    beta, theta = np.array([2.0]), np.array([-1.0, 1.0])
    # Row 1: eta 0, P(y=1) = sigmoid(-1). Row 2: eta 1, P(y=2) = sigmoid(0) - sigmoid(-2).
    # Row 3: eta -2, P(y=3) = 1 - sigmoid(3).
    hand = -(math.log(expit(-1.0)) + math.log(0.5 - expit(-2.0)) + math.log(1 - expit(3.0)))
    assert ordinal_nll(beta, theta, z, y_index) == pytest.approx(hand)
    params = np.array([2.0, -1.0, math.log(math.expm1(2.0))])  # t0 = -1, gap softplus(d) = 2
    value, _ = _objective(params, z, y_index, 3, alpha=0.0)
    assert value == pytest.approx(hand + 0.5 * 1e-4 * (1.0 + params[2] ** 2))


def test_gradient_and_absent_classes():
    rng = np.random.default_rng(2)
    z, y = rng.normal(size=(40, 2)), rng.integers(0, 5, 40)
    p0 = rng.normal(size=6)
    assert check_grad(lambda p: _objective(p, z, y, 5, 0.5)[0], lambda p: _objective(p, z, y, 5, 0.5)[1],
                      p0) < 1e-4
    model = fit_ordinal_logit(rng.normal(size=(30, 1)), rng.choice([2, 3], 30))  # no 1, 4 or 5
    assert np.all(np.isfinite(model.thresholds)) and np.all(np.diff(model.thresholds) > 0)
    exp = model.predict_expected([[model.center[0]], [np.nan]])  # missing = training mean
    assert exp[0] == pytest.approx(exp[1]) and 2 <= exp[0] <= 3
    with pytest.raises(ValueError):
        fit_ordinal_logit([[0.0], [1.0]], [0, 7])


def test_held_out_values_beyond_the_training_range_are_not_extrapolated():
    """A feature that barely varied in training (spread 0.01) put held-out values hundreds of standard
    deviations out: every such item got exactly the top score, and Best-of-N picks were ties. They are
    held at the edge of the training range now; values inside it are predicted as before."""
    rng = np.random.default_rng(0)
    x = 0.5 + rng.normal(0, 0.01, 40)
    y = np.clip(np.round(3 + (x - 0.5) * 200), 1, 5)
    model = fit_ordinal_logit(x, y, alpha=0.1)
    far = model.predict_expected([[0.5 + 6.0], [0.5 - 6.0], [np.nan]])
    edge = model.predict_expected([[x.max()], [x.min()]])
    np.testing.assert_allclose(far[:2], edge)
    assert 1.0 < far[1] < far[0] < 5.0  # not saturated at exactly 1 and 5
    assert far[2] == pytest.approx(model.predict_expected([[x.mean()]])[0])  # missing: the mean
    inside = np.linspace(x.min(), x.max(), 7)[:, None]
    raw = dataclasses.replace(model, low=None, high=None)
    np.testing.assert_allclose(model.predict_expected(inside), raw.predict_expected(inside))
    assert raw.predict_expected([[6.5]])[0] == pytest.approx(5.0)  # what extrapolating gave


def test_the_fit_runs_with_blas_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenBLAS threads made SciPy's L-BFGS-B 14 times slower on 2 cores (scipy issue 22438): the fit
    # holds BLAS to one thread and gives the threads back afterwards.
    from threadpoolctl import threadpool_info

    import robojudge.meta._calibrated as cal

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    with cal._threadpools().limit(limits=2, user_api="blas"):  # as OpenBLAS starts on a 2-core machine
        before = blas_threads()
        seen: list[set[int]] = []
        real = cal.minimize

        def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(blas_threads())
            return real(*args, **kwargs)

        monkeypatch.setattr(cal, "minimize", spy)
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 3))
        model = fit_ordinal_logit(x, np.clip(np.round(3 + x[:, 0] + rng.normal(size=200)), 1, 5))
        assert model.converged and seen == [{1}]
        assert blas_threads() == before == {2}


def test_fits_in_two_threads_take_turns_and_leave_blas_as_found() -> None:
    # Each limit saves and restores the process-wide count: two overlapping ones (A in, B in, A out, B
    # out) left BLAS on one thread for the rest of the process. Fits in threads now take turns.
    import threading

    from threadpoolctl import threadpool_info

    import robojudge.meta._calibrated as cal

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    order: list[str] = []
    a_inside, release_a = threading.Event(), threading.Event()

    def a() -> None:
        with cal._one_blas_thread():
            order.append("A in")
            a_inside.set()
            release_a.wait(10)
            order.append("A out")

    def b() -> None:
        a_inside.wait(10)
        with cal._one_blas_thread():
            order.append("B in")
        order.append("B out")

    with cal._threadpools().limit(limits=2, user_api="blas"):
        threads = [threading.Thread(target=a), threading.Thread(target=b)]
        for t in threads:
            t.start()
        a_inside.wait(10)
        threads[1].join(0.3)  # B is waiting for A, not inside beside it
        release_a.set()
        for t in threads:
            t.join(10)
        assert order == ["A in", "A out", "B in", "B out"]
        assert blas_threads() == {2}
