"""A metric-calibrated judge: ordinal logistic regression from metric values to 1-5 labels.

The model is the cumulative-logit (proportional-odds) model

    P(y <= k | x) = sigmoid(theta_k - z . beta),   k = 1 .. K-1,

on standardized features ``z``, with an L2 penalty ``alpha / 2 * |beta|^2`` on the slopes. The
thresholds are kept ordered by construction: ``theta_1 = t0`` and ``theta_{k+1} = theta_k +
softplus(d_k)``. A very weak ridge (:data:`THRESHOLD_RIDGE`) on ``t0`` and the ``d_k`` keeps the fit
finite when a class is absent from the training labels. The penalised negative log-likelihood is
minimised with L-BFGS-B using its analytic gradient, with BLAS held to one thread (below).

Orienting the features (so that larger means better, or not) is the caller's business; the model
learns signed slopes either way. Missing feature values (NaN) are replaced by the training mean of
the feature, i.e. by 0 after standardization, both when fitting and when predicting.

:func:`cross_validate_ordinal` gives honest held-out predictions: folds are whole groups (clips),
so no clip is in a model's training data and in its test data.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from threadpoolctl import ThreadpoolController

from robojudge.meta._agreement import DEFAULT_SCALE, FloatArray

IntVector = npt.NDArray[np.int64]

#: Ridge weight on the threshold parameters (much weaker than any useful ``alpha``).
THRESHOLD_RIDGE = 1e-4


_FITTING = threading.Lock()


@cache
def _threadpools() -> ThreadpoolController:
    return ThreadpoolController()  # inspects the loaded libraries once (milliseconds)


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS on one thread while L-BFGS-B runs.

    SciPy's L-BFGS-B (C since 1.15) calls LAPACK on matrices of a few rows each iteration; OpenBLAS
    wakes its threads for each, which made a fit 14 times slower on 2 cores (157 ms against 11 ms
    for 2,400 items and 22 features) and the report's judges section 4.7 times slower (scipy issues
    22438, 23191). The limit is lifted on exit. Fits in several threads take turns: each limit saves
    and restores the process-wide thread count, so two overlapping ones left BLAS on one thread for
    good (and a fit is on one thread anyway).
    """
    with _FITTING, _threadpools().limit(limits=1, user_api="blas"):
        yield


def _softplus(x: FloatArray) -> FloatArray:
    return np.logaddexp(0.0, x)


def _inv_softplus(y: FloatArray) -> FloatArray:
    return np.log(np.expm1(y))


def thresholds_from_params(t0: float, gaps: FloatArray) -> FloatArray:
    """Ordered thresholds ``theta`` from the first one and the unconstrained gap parameters."""
    return np.concatenate([[t0], t0 + np.cumsum(_softplus(np.asarray(gaps, dtype=np.float64)))])


def class_probabilities(eta: FloatArray, thresholds: FloatArray) -> FloatArray:
    """``(n, K)`` class probabilities for linear predictors ``eta`` and ``K - 1`` thresholds."""
    cum = expit(thresholds[None, :] - eta[:, None])  # P(y <= k), (n, K-1)
    ones = np.ones((eta.size, 1))
    return np.diff(np.hstack([np.zeros((eta.size, 1)), cum, ones]), axis=1)


def ordinal_nll(beta: FloatArray, thresholds: FloatArray, z: FloatArray, y_index: IntVector) -> float:
    """Negative log-likelihood of the cumulative-logit model (no penalty).

    Args:
        beta: Slopes, one per column of ``z``.
        thresholds: Increasing cut points ``theta_1 < ... < theta_{K-1}``.
        z: ``(n, p)`` features.
        y_index: Class index per row, ``0 .. K-1``.
    """
    p = class_probabilities(z @ beta, thresholds)[np.arange(y_index.size), y_index]
    return float(-np.log(np.maximum(p, 1e-300)).sum())


def _objective(params: FloatArray, z: FloatArray, y_index: IntVector, n_classes: int,
               alpha: float) -> tuple[float, FloatArray]:
    """Penalised NLL and its gradient in ``params = [beta (p), t0, gaps (K-2)]``."""
    p = z.shape[1]
    beta, t0, gaps = params[:p], params[p], params[p + 1:]
    theta = thresholds_from_params(float(t0), gaps)
    eta = z @ beta
    # Upper and lower cut of each row's class interval; +-inf at the ends.
    ext = np.concatenate([[-np.inf], theta, [np.inf]])
    a = ext[y_index + 1] - eta
    b = ext[y_index] - eta
    # log(sigmoid(a) - sigmoid(b)) computed stably: sigmoid(a) * (1 - exp(b - a)) * (1 - sigmoid(b)).
    with np.errstate(invalid="ignore", over="ignore"):
        log_p = (log_expit(a) + log_expit(-b)
                 + np.log1p(-np.exp(np.where(np.isfinite(a) & np.isfinite(b), b - a, -np.inf))))
    value = -float(log_p.sum()) + 0.5 * alpha * float(beta @ beta)
    value += 0.5 * THRESHOLD_RIDGE * float(t0 * t0 + gaps @ gaps)
    # d log p / d a and d log p / d b, with f = F (1 - F) the logistic density.
    p_row = np.exp(log_p)
    fa = np.where(np.isfinite(a), expit(a) * expit(-a), 0.0)
    fb = np.where(np.isfinite(b), expit(b) * expit(-b), 0.0)
    da = fa / np.maximum(p_row, 1e-300)
    db = -fb / np.maximum(p_row, 1e-300)
    # Gradient of -log p: eta enters a and b with sign -1.
    g_beta = z.T @ (da + db) + alpha * beta
    g_theta = np.zeros(n_classes - 1)
    upper = y_index < n_classes - 1  # a uses theta[y]
    lower = y_index > 0  # b uses theta[y - 1]
    np.add.at(g_theta, y_index[upper], -da[upper])
    np.add.at(g_theta, y_index[lower] - 1, -db[lower])
    # theta_k = t0 + sum_{j<k} softplus(gaps_j).
    g_t0 = g_theta.sum() + THRESHOLD_RIDGE * t0
    tail = np.cumsum(g_theta[::-1])[::-1][1:]  # sum_{k > j} g_theta_k
    g_gaps = tail * expit(gaps) + THRESHOLD_RIDGE * gaps
    return value, np.concatenate([g_beta, [g_t0], g_gaps])


@dataclass(frozen=True)
class OrdinalLogit:
    """A fitted cumulative-logit model with its feature standardization.

    Attributes:
        coef: Slopes on the standardized features (positive: larger feature, higher score).
        thresholds: Increasing cut points, ``len(classes) - 1`` of them.
        classes: The score values ``low .. high``.
        center: Training mean of each feature (also the value a missing feature takes).
        scale: Training standard deviation of each feature (1 where it is 0 or undefined).
        alpha: The L2 penalty the model was fitted with.
        converged: Whether the optimizer reported success.
        low, high: The smallest and largest training value of each feature (NaN: none seen). A value
            beyond them is held at the edge before it is standardized: the model is not extrapolated.
            A feature that barely varied in training (a spread of 0.01) otherwise put a held-out value
            hundreds of standard deviations out, and every such item at exactly the top or bottom score.
    """

    coef: FloatArray
    thresholds: FloatArray
    classes: tuple[int, ...]
    center: FloatArray
    scale: FloatArray
    alpha: float
    converged: bool
    low: FloatArray | None = None
    high: FloatArray | None = None

    def standardize(self, x: npt.ArrayLike) -> FloatArray:
        """Standardized features, with missing values at 0 (the training mean) and values beyond the
        training range held at its edge."""
        arr = _as_matrix(x, self.center.size)
        if self.low is not None and self.high is not None:
            lo = np.where(np.isfinite(self.low), self.low, -np.inf)
            hi = np.where(np.isfinite(self.high), self.high, np.inf)
            arr = np.where(np.isfinite(arr), np.clip(arr, lo, hi), arr)
        z = (arr - self.center) / self.scale
        return np.where(np.isfinite(z), z, 0.0)

    def predict_proba(self, x: npt.ArrayLike) -> FloatArray:
        """``(n, K)`` probabilities of each class."""
        return class_probabilities(self.standardize(x) @ self.coef, self.thresholds)

    def predict_expected(self, x: npt.ArrayLike) -> FloatArray:
        """The expected score, a continuous value in ``[low, high]``."""
        return self.predict_proba(x) @ np.asarray(self.classes, dtype=np.float64)

    def predict_class(self, x: npt.ArrayLike) -> IntVector:
        """The most probable score."""
        out: IntVector = np.asarray(self.classes, dtype=np.int64)[self.predict_proba(x).argmax(axis=1)]
        return out


def _as_matrix(x: npt.ArrayLike, p: int | None = None) -> FloatArray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"features must be a 2-D (items, features) array, got shape {arr.shape}")
    if p is not None and arr.shape[1] != p:
        raise ValueError(f"expected {p} feature columns, got {arr.shape[1]}")
    return arr


def fit_ordinal_logit(x: npt.ArrayLike, y: npt.ArrayLike, *, alpha: float = 1.0,
                      scale: tuple[int, int] = DEFAULT_SCALE) -> OrdinalLogit:
    """Fit the L2-penalised cumulative-logit model to integer labels.

    Args:
        x: ``(n, p)`` feature values; NaN marks a missing value.
        y: Integer labels in ``scale`` (NaN rows are dropped).
        alpha: L2 penalty on the slopes of the standardized features (0: none).
        scale: Inclusive label range; every value in it is a class, observed or not.

    Returns:
        The fitted :class:`OrdinalLogit`.
    """
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    arr = _as_matrix(x)
    target = np.asarray(y, dtype=np.float64).reshape(-1)
    if target.size != arr.shape[0]:
        raise ValueError(f"y has {target.size} entries for {arr.shape[0]} feature rows")
    keep = np.isfinite(target)
    arr, target = arr[keep], target[keep]
    lo, hi = scale
    classes = tuple(range(lo, hi + 1))
    if len(classes) < 2:
        raise ValueError(f"scale {scale} must hold at least two classes")
    if target.size == 0:
        raise ValueError("no labelled rows to fit")
    if np.any(target != np.round(target)) or np.any((target < lo) | (target > hi)):
        raise ValueError(f"labels must be integers in {scale}")
    y_index = (target - lo).astype(np.int64)

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing columns
        center = np.nanmean(arr, axis=0)
        spread = np.nanstd(arr, axis=0)
        low, high = np.nanmin(arr, axis=0), np.nanmax(arr, axis=0)
    center = np.where(np.isfinite(center), center, 0.0)
    spread = np.where(np.isfinite(spread) & (spread > 0), spread, 1.0)
    z = np.where(np.isfinite(arr), (arr - center) / spread, 0.0)

    k = len(classes)
    # Start at beta = 0 with thresholds at the smoothed empirical cumulative logits.
    freq = (np.bincount(y_index, minlength=k) + 0.5) / (y_index.size + 0.5 * k)
    cum = np.cumsum(freq)[:-1]
    theta0 = np.log(cum / (1 - cum))
    start = np.concatenate([np.zeros(z.shape[1]), [theta0[0]],
                            _inv_softplus(np.maximum(np.diff(theta0), 1e-3))])
    with _one_blas_thread():
        res = minimize(_objective, start, args=(z, y_index, k, alpha), jac=True, method="L-BFGS-B",
                       options={"maxiter": 1000, "gtol": 1e-7})
    p = z.shape[1]
    theta = thresholds_from_params(float(res.x[p]), res.x[p + 1:])
    return OrdinalLogit(res.x[:p].copy(), theta, classes, center, spread, float(alpha), bool(res.success),
                        low, high)


def grouped_folds(groups: Sequence[object] | npt.ArrayLike, n_folds: int = 5,
                  seed: int | None = 0) -> IntVector:
    """Fold index per item such that all items of a group share a fold.

    Groups are shuffled with ``seed`` and then dealt to the fold with the fewest items so far (ties
    to the lowest fold), which keeps folds of similar size. ``n_folds`` is capped at the number of
    groups.
    """
    if n_folds < 2:
        raise ValueError(f"n_folds must be >= 2, got {n_folds}")
    arr = np.asarray(groups, dtype=object).reshape(-1)
    names, codes = np.unique(arr.astype(str), return_inverse=True)
    k = min(n_folds, names.size)
    sizes = np.bincount(codes, minlength=names.size)
    order = np.random.default_rng(seed).permutation(names.size)
    fold_of_group = np.empty(names.size, dtype=np.int64)
    load = np.zeros(k, dtype=np.int64)
    for g in order:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += sizes[g]
    out: IntVector = fold_of_group[codes.reshape(-1)]
    return out


@dataclass(frozen=True)
class CrossValidated:
    """Out-of-fold predictions of :func:`cross_validate_ordinal`, one per item.

    Attributes:
        expected: Held-out expected score per item (NaN only where no model could be fitted).
        predicted: Held-out most probable class per item (0 where none).
        fold: Fold of each item; the model that predicted it never saw its group.
        n_folds: Number of folds used.
        models: The model fitted for each fold.
    """

    expected: FloatArray
    predicted: IntVector
    fold: IntVector
    n_folds: int
    models: tuple[OrdinalLogit | None, ...]


def cross_validate_ordinal(x: npt.ArrayLike, y: npt.ArrayLike, groups: Sequence[object] | npt.ArrayLike,
                           *, n_folds: int = 5, alpha: float = 1.0, seed: int | None = 0,
                           scale: tuple[int, int] = DEFAULT_SCALE) -> CrossValidated:
    """Grouped K-fold cross-validation of :func:`fit_ordinal_logit`.

    Every item, labelled or not, is predicted by the model of its fold, which was fitted on the
    labelled items of the other folds only. Standardization and the imputation means are taken from
    the training folds. An item without any feature value (every metric failed on it: a broken video)
    is neither trained on nor predicted: its ``expected`` is NaN and its ``predicted`` 0, so it is
    unscored downstream, not given the model's prior (the training mean of every feature).

    Args:
        x: ``(n, p)`` features (NaN = missing).
        y: Labels (NaN = unlabelled: predicted but never trained on).
        groups: Group per item (clip id); a group never spans training and test data.
        n_folds: Number of folds (capped at the number of groups).
        alpha: L2 penalty, see :func:`fit_ordinal_logit`.
        seed: Seed of the fold assignment.
        scale: Inclusive label range.
    """
    arr = _as_matrix(x)
    target = np.asarray(y, dtype=np.float64).reshape(-1)
    n = arr.shape[0]
    if target.size != n or np.asarray(groups, dtype=object).reshape(-1).size != n:
        raise ValueError("x, y and groups must have one entry per item")
    fold = grouped_folds(groups, n_folds, seed)
    k = int(fold.max()) + 1 if n else 0
    expected = np.full(n, np.nan)
    predicted = np.zeros(n, dtype=np.int64)
    models: list[OrdinalLogit | None] = []
    measured = np.isfinite(arr).any(axis=1) if arr.size else np.zeros(n, dtype=bool)
    for f in range(k):
        test = (fold == f) & measured
        train = (fold != f) & measured & np.isfinite(target)
        if not train.any():
            models.append(None)
            continue
        model = fit_ordinal_logit(arr[train], target[train], alpha=alpha, scale=scale)
        if test.any():
            expected[test] = model.predict_expected(arr[test])
            predicted[test] = model.predict_class(arr[test])
        models.append(model)
    return CrossValidated(expected, predicted, fold, k, tuple(models))
