"""Average Full Score (eq. 2) and RoboPhyscore (eq. 4) over normalized metric values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robojudge.taxonomy import Taxonomy, load_taxonomy, unknown_metric_message

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
#: How a missing metric (absent key or NaN value) is treated.
#: ``"nan"``: the sub-dimension it belongs to, its level and the AFS become NaN (eq. 2 is defined over
#: the complete set). ``"drop"``: the metric leaves its sub-dimension's mean; a sub-dimension with no
#: metric left leaves its level's mean; a level with no sub-dimension left is NaN and so is the AFS.
Missing = Literal["nan", "drop"]


def _stack(values: Mapping[str, ArrayLike], ids: Sequence[str]) -> tuple[FloatArray, tuple[int, ...]]:
    arrays = {k: np.asarray(v, dtype=float) for k, v in values.items()}
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    rows = [np.broadcast_to(arrays[i], shape) if i in arrays else np.full(shape, np.nan) for i in ids]
    return np.stack(rows) if rows else np.empty((0, *shape)), shape


def _mean(stack: FloatArray, missing: Missing) -> FloatArray:
    if missing == "nan":
        return np.asarray(stack.mean(axis=0), dtype=float)
    if missing != "drop":
        raise ValueError(f"missing must be 'nan' or 'drop', got {missing!r}")
    ok = ~np.isnan(stack)
    n = ok.sum(axis=0)
    total = np.where(ok, stack, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(n > 0, total / np.maximum(n, 1), np.nan), dtype=float)


@dataclass(frozen=True)
class FullScore:
    """AFS with its level and sub-dimension scores, each an array over the input rows.

    ``subdims`` holds S_d (mean of the sub-dimension's metrics) and ``levels`` holds S_l (mean of the
    level's S_d), both in [0, 1]; ``afs`` is the sum of the four S_l, in [0, 4]. The paper's tables
    print sums instead; :meth:`subdim_totals` and :meth:`level_totals` give those. ``subdim_counts``
    and ``level_counts`` count the metrics (sub-dimensions) with a value behind each S_d (S_l): fewer
    than the taxonomy's only under ``missing="drop"``, where a total is then scaled up, not summed.
    """

    afs: FloatArray
    levels: dict[int, FloatArray]
    subdims: dict[str, FloatArray]
    taxonomy: Taxonomy = field(repr=False, compare=False)
    subdim_counts: dict[str, IntArray] = field(default_factory=dict)
    level_counts: dict[int, IntArray] = field(default_factory=dict)

    def subdim_totals(self) -> dict[str, FloatArray]:
        """S_d times the sub-dimension's metric count: the paper's "IQ-1 (/6)" convention. With metrics
        missing (``missing="drop"``) that is the mean of those present times the full count, on the
        paper's scale but no sum: two IQ-1 metrics at 0.5 give 3.0 of 6 (``subdim_counts``: 2)."""
        return {d: s * len(self.taxonomy.metrics_of(d)) for d, s in self.subdims.items()}

    def level_totals(self) -> dict[int, FloatArray]:
        """S_l times the level's sub-dimension count: the paper's "Pixel-Level Fidelity (/5)" convention;
        scaled up in the same way when sub-dimensions are missing (``level_counts``)."""
        return {lv: s * len(self.taxonomy.subdims_of(lv)) for lv, s in self.levels.items()}


def _check_ids(values: Mapping[str, ArrayLike], tax: Taxonomy) -> None:
    for key in values:
        if key not in tax:
            raise KeyError(unknown_metric_message(key, tax.ids))


def average_full_score(
    normalized: Mapping[str, ArrayLike],
    *,
    missing: Missing = "nan",
    taxonomy: Taxonomy | None = None,
) -> FullScore:
    """Eq. 2: AFS = sum over levels of the mean over sub-dimensions of the mean over metrics.

    Args:
        normalized: Metric id -> normalized value(s); scalars and equal-length arrays broadcast.
        missing: Treatment of absent or NaN metrics, see :data:`Missing`.
        taxonomy: Defaults to the packaged one.

    Returns:
        A :class:`FullScore` whose arrays have the broadcast shape of the inputs.

    Raises:
        KeyError: A key is not a taxonomy metric id.
    """
    tax = taxonomy or load_taxonomy()
    _check_ids(normalized, tax)
    subdims: dict[str, FloatArray] = {}
    subdim_counts: dict[str, IntArray] = {}
    for d in tax.subdims:
        stack, _ = _stack(normalized, tax.metrics_of(d))
        subdims[d] = _mean(stack, missing)
        subdim_counts[d] = np.asarray((~np.isnan(stack)).sum(axis=0), dtype=np.int64)
    levels, level_counts = {}, {}
    for lv in tax.levels:
        stack = np.stack([subdims[d] for d in tax.subdims_of(lv)])
        levels[lv] = _mean(stack, missing)
        level_counts[lv] = np.asarray((~np.isnan(stack)).sum(axis=0), dtype=np.int64)
    afs = np.asarray(np.stack(list(levels.values())).sum(axis=0), dtype=float)
    return FullScore(afs=afs, levels=levels, subdims=subdims, taxonomy=tax, subdim_counts=subdim_counts,
                     level_counts=level_counts)


def robophyscore(
    normalized: Mapping[str, ArrayLike],
    selected: Sequence[str] | None = None,
    *,
    missing: Missing = "nan",
    taxonomy: Taxonomy | None = None,
) -> FloatArray:
    """Eq. 4: the mean of the selected normalized metrics.

    Args:
        normalized: Metric id -> normalized value(s).
        selected: Metric ids to average; defaults to the paper's eight (threshold 0.7).
        missing: ``"nan"`` makes the score NaN when a selected metric is absent or NaN; ``"drop"``
            averages the ones present.
        taxonomy: Source of the default set; defaults to the packaged one.

    Returns:
        The score with the broadcast shape of the inputs.

    Raises:
        ValueError: ``selected`` is empty (the paper calls the score undefined then) or names a metric
            twice (eq. 4 averages a set: a repeated id would weigh double).
        KeyError: An id of ``selected`` is not a taxonomy metric id (other keys of ``normalized``, such
            as the task-success targets :func:`select_metrics` correlated with, are left alone).
    """
    tax = taxonomy or load_taxonomy()
    ids = tuple(selected) if selected is not None else tax.robophyscore_default
    if not ids:
        raise ValueError("RoboPhyscore is undefined for an empty metric set")
    for m in ids:
        if m not in tax:
            raise KeyError(unknown_metric_message(m, tax.ids))
    repeated = sorted({m for m in ids if ids.count(m) > 1})
    if repeated:
        raise ValueError(f"the RoboPhyscore set names {', '.join(repeated)} more than once; eq. 4 averages a "
                         "set of metrics, each once")
    stack, _ = _stack(normalized, ids)
    return _mean(stack, missing)
