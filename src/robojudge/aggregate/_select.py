"""RoboPhyscore metric selection by correlation with task success (eq. 3) and its threshold sweep."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from robojudge.meta import MIN_CORRELATION_PAIRS, why_no_correlation
from robojudge.taxonomy import TASK_SUCCESS_SUBDIM, Taxonomy, load_taxonomy

FloatArray = NDArray[np.float64]
#: Eq. 3's threshold: a metric enters RoboPhyscore when its least Pearson r with the task-success
#: measures is strictly above it (RoboPhys-3D eq. 3; App. B.10 adopts 0.7 as the default). The selection,
#: ``robojudge aggregate select`` and the report's RoboPhyscore section all read this one value.
ROBOPHYSCORE_THRESHOLD = 0.7
#: Thresholds of the paper's sensitivity table (Table 16).
DEFAULT_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
_MIN_PAIRS = MIN_CORRELATION_PAIRS
_BOTH = "configurations with both values"


def _why(x: FloatArray, y: FloatArray, names: tuple[str, str]) -> str | None:
    """Why no correlation of ``x`` with ``y`` is defined (robojudge.meta's rule), or None."""
    return why_no_correlation(x, y, (f"values of {names[0]}", f"values of {names[1]}"), _BOTH)


def _pearson(x: FloatArray, y: FloatArray) -> float:
    if why_no_correlation(x, y) is not None:
        return math.nan
    ok = np.isfinite(x) & np.isfinite(y)
    return float(stats.pearsonr(x[ok], y[ok]).statistic)


@dataclass(frozen=True)
class Selection:
    """Outcome of eq. 3 at one threshold.

    Attributes:
        threshold: The strict lower bound on the minimum correlation.
        selected: Kept metric ids, strongest minimum correlation first; ``None`` when nothing passes,
            since RoboPhyscore is then undefined.
        min_r: Candidate -> its minimum Pearson r over the targets (NaN when undefined, e.g. a constant
            column or fewer than three complete pairs; such a metric is never kept).
        r: Candidate -> target -> Pearson r.
        reason: When nothing is kept and that is not the data's verdict but a correlation that cannot
            be computed (fewer than three configurations, a constant target), what it is; else None.
        why: Candidate -> why its minimum r is undefined (fewer than three configurations with both
            values, a constant column), for the candidates whose is.
        n: Candidate -> the fewest configurations its r with a target rests on (those with a value of
            both), over the targets. Each r is over the configurations with both values, so a metric
            measured on few of them can have a high min r by chance.
        configurations: How many configurations there are (the length of the columns).
    """

    threshold: float
    selected: tuple[str, ...] | None
    min_r: dict[str, float]
    r: dict[str, dict[str, float]]
    reason: str | None = None
    why: dict[str, str] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    configurations: int = 0

    def few_configurations(self) -> list[str]:
        """The candidates whose ``n`` is under half the configurations, in ``min_r``'s order."""
        return [m for m in self.min_r if self.n.get(m, 0) < self.configurations / 2]


def undefined_targets(targets: Mapping[str, FloatArray]) -> str | None:
    """Why no Pearson r with the targets can be computed, or None: fewer than three configurations with
    a value, or a target that does not vary (every configuration the same task success)."""
    parts = []
    for t, y in targets.items():
        finite = y[np.isfinite(y)]
        if finite.size < _MIN_PAIRS:
            parts.append(f"{t} has {finite.size} configuration(s) with a value (Pearson r needs "
                         f"{_MIN_PAIRS})")
        elif np.ptp(finite) == 0:
            parts.append(f"{t} is {finite[0]:g} for every configuration, so no r with it is defined")
    return "; ".join(parts) or None


def _resolve_targets(
    values: Mapping[str, ArrayLike], targets: Sequence[str] | Mapping[str, ArrayLike]
) -> dict[str, FloatArray]:
    if isinstance(targets, Mapping):
        out = {k: np.asarray(v, dtype=float).ravel() for k, v in targets.items()}
    else:
        missing = [t for t in targets if t not in values]
        if missing:
            raise KeyError(f"target column(s) not in the table: {', '.join(missing)}")
        out = {t: np.asarray(values[t], dtype=float).ravel() for t in targets}
    if not out:
        raise ValueError("at least one task-success target is needed")
    return out


def select_metrics(
    values: Mapping[str, ArrayLike],
    targets: Sequence[str] | Mapping[str, ArrayLike],
    threshold: float = ROBOPHYSCORE_THRESHOLD,
    *,
    candidates: Iterable[str] | None = None,
    taxonomy: Taxonomy | None = None,
) -> Selection:
    """Eq. 3: keep metric m when min over targets t of Pearson r(m, t) is strictly above ``threshold``.

    Correlations run across configurations (one entry per configuration, e.g. world model x
    reconstruction substrate); rows where either side is NaN are left out pairwise.

    Args:
        values: Metric id -> one value per configuration.
        targets: Names of task-success columns in ``values``, or name -> values.
        threshold: The paper's default, :data:`ROBOPHYSCORE_THRESHOLD` (0.7).
        candidates: Metrics to consider; defaults to every key of ``values`` except the targets and the
            task-success sub-dimension (the paper's "non-task-success metrics").
        taxonomy: Source of the task-success ids; defaults to the packaged one.

    Returns:
        A :class:`Selection`.
    """
    tgt = _resolve_targets(values, targets)
    if candidates is None:
        excluded = set(tgt) | set((taxonomy or load_taxonomy()).metrics_of(TASK_SUCCESS_SUBDIM))
        cands = [k for k in values if k not in excluded]
    else:
        cands = list(candidates)
    r: dict[str, dict[str, float]] = {}
    why: dict[str, str] = {}
    n: dict[str, int] = {}
    size = 0
    for m in cands:
        x = np.asarray(values[m], dtype=float).ravel()
        size = max(size, x.size)
        r[m] = {t: _pearson(x, y) for t, y in tgt.items()}
        n[m] = min(int((np.isfinite(x) & np.isfinite(y)).sum()) for y in tgt.values())
        reasons = [w for t, y in tgt.items() if (w := _why(x, y, (m, t))) is not None]
        if reasons:
            why[m] = "; ".join(dict.fromkeys(reasons))
    min_r = {m: min(rs.values()) if not any(math.isnan(v) for v in rs.values()) else math.nan
             for m, rs in r.items()}
    kept = sorted((m for m, v in min_r.items() if v > threshold), key=lambda m: -min_r[m])
    reason = None if kept else undefined_targets(tgt) or _undefined_candidates(min_r)
    size = max([size, *(y.size for y in tgt.values())])
    return Selection(threshold=threshold, selected=tuple(kept) or None, min_r=min_r, r=r, reason=reason,
                     why=why, n=n, configurations=size)


def _undefined_candidates(min_r: Mapping[str, float]) -> str | None:
    """Why nothing was kept when every candidate's r with some target is undefined (None otherwise): each
    shares fewer than three configurations with a value with a target, or does not vary over them."""
    if not min_r or not all(math.isnan(v) for v in min_r.values()):
        return None
    return (f"no r with every target is defined for any of the {len(min_r)} candidate(s): each has fewer "
            f"than {_MIN_PAIRS} configurations with a value in common with some target, or is constant "
            "over them")


@dataclass(frozen=True)
class Agreement:
    """Agreement of a unified score with a reference, across configurations or samples (App. D).

    Attributes:
        pearson: Pearson r.
        spearman: Spearman rho.
        r2: R^2 of the least-squares line reference ~ a + b * score.
        mae: Mean absolute residual of that line, i.e. the error after the best linear rescaling.
        n: Number of complete pairs (configurations or samples).
        why: Why the four are NaN (fewer than three complete pairs, a constant side); None if they are not.
    """

    pearson: float
    spearman: float
    r2: float
    mae: float
    n: int
    why: str | None = None

    def statistics(self) -> dict[str, float]:
        """The four statistics by attribute name, in the order of :data:`AGREEMENT_STATISTICS`."""
        return {name: float(getattr(self, name)) for name, _, _ in AGREEMENT_STATISTICS}


#: The statistics of an :class:`Agreement`, in the order RoboPhys-3D Tables 16 and 18 print them:
#: (attribute, heading, short heading). ``aggregate select --thresholds`` heads its columns with the
#: second and names its JSON keys with the first; the report's threshold table names a column per
#: reference with the third ("r vs ts_data_engine", "MAE vs label overall").
AGREEMENT_STATISTICS: tuple[tuple[str, str, str], ...] = (
    ("pearson", "pearson r", "r"),
    ("spearman", "spearman rho", "rho"),
    ("r2", "R^2", "R^2"),
    ("mae", "MAE", "MAE"),
)


def agreement(score: ArrayLike, reference: ArrayLike) -> Agreement:
    """Pearson, Spearman, R^2 and MAE of ``reference`` regressed on ``score`` (NaN pairs dropped).

    These definitions reproduce the task-success rows of the paper's Tables 16 and 19.
    """
    x = np.asarray(score, dtype=float).ravel()
    y = np.asarray(reference, dtype=float).ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = int(x.size)
    if (why := why_no_correlation(x, y, ("scores", "reference values"), _BOTH)) is not None:
        return Agreement(math.nan, math.nan, math.nan, math.nan, n, why)
    fit = stats.linregress(x, y)
    resid = y - (fit.intercept + fit.slope * x)
    return Agreement(
        pearson=float(fit.rvalue),
        spearman=float(stats.spearmanr(x, y).statistic),
        r2=float(fit.rvalue**2),
        mae=float(np.mean(np.abs(resid))),
        n=n,
    )


@dataclass(frozen=True)
class SensitivityRow:
    """One threshold of the sensitivity table.

    Attributes:
        threshold: The threshold.
        selected: Kept metrics or ``None`` (RoboPhyscore undefined).
        agreement: Reference name -> agreement of the resulting RoboPhyscore; ``None`` when undefined.
        per_sample: The references whose agreement is over samples (each sample's RoboPhyscore against
            its own reference value, as RoboPhys-3D App. D computes human alignment); the others are
            over configurations.
    """

    threshold: float
    selected: tuple[str, ...] | None
    agreement: dict[str, Agreement] | None
    per_sample: frozenset[str] = frozenset()

    @property
    def n_metrics(self) -> int:
        """Size of the selected set (0 when undefined)."""
        return len(self.selected) if self.selected else 0


def threshold_sensitivity(
    values: Mapping[str, ArrayLike],
    targets: Sequence[str] | Mapping[str, ArrayLike],
    thresholds: Iterable[float] = DEFAULT_THRESHOLDS,
    *,
    candidates: Iterable[str] | None = None,
    references: Mapping[str, ArrayLike] | None = None,
    sample_values: Mapping[str, ArrayLike] | None = None,
    sample_references: Mapping[str, ArrayLike] | None = None,
    taxonomy: Taxonomy | None = None,
) -> list[SensitivityRow]:
    """Table 16: the selected set per threshold and how well its RoboPhyscore tracks each reference.

    Eq. 3 selects across configurations, so the RoboPhyscore compared with ``references`` is the
    per-configuration mean of the kept metrics in ``values``; pass normalized values. RoboPhys-3D
    compares its human scores with RoboPhyscore per sample instead ("at the sample level rather than
    only on model-level averages", App. D): for ``sample_references`` each sample's RoboPhyscore is
    the mean of the kept metrics' values in ``sample_values`` for that sample (eq. 4; a sample without
    a value for one of them has none), against that sample's reference value.

    Args:
        values: Metric id -> one value per configuration.
        targets: Task-success columns for eq. 3 (see :func:`select_metrics`).
        thresholds: Thresholds to sweep.
        candidates: See :func:`select_metrics`.
        references: Name -> one value per configuration to report agreement against. Without it and
            without ``sample_references``, the targets.
        sample_values: Metric id -> one normalized value per sample, for every candidate; needed with
            ``sample_references``.
        sample_references: Name -> one value per sample (human scores), aligned with ``sample_values``.
        taxonomy: Defaults to the packaged one.

    Returns:
        One :class:`SensitivityRow` per threshold, in the given order.

    Raises:
        ValueError: ``sample_references`` without ``sample_values``, or a name in both reference mappings.
        KeyError: ``sample_values`` lacks a kept metric.
    """
    tgt = _resolve_targets(values, targets)
    if references is None and sample_references is None:
        references = tgt
    refs = {k: np.asarray(v, dtype=float).ravel() for k, v in (references or {}).items()}
    per_sample = {k: np.asarray(v, dtype=float).ravel() for k, v in (sample_references or {}).items()}
    if per_sample and sample_values is None:
        raise ValueError("sample_references need sample_values: each sample's value of every candidate")
    if both := sorted(set(refs) & set(per_sample)):
        raise ValueError(f"reference(s) {', '.join(both)} given both per configuration and per sample")
    base = select_metrics(values, tgt, -math.inf, candidates=candidates, taxonomy=taxonomy).min_r
    rows: list[SensitivityRow] = []
    for th in thresholds:
        kept = tuple(sorted((m for m, v in base.items() if v > th), key=lambda m: -base[m]))
        if not kept:
            rows.append(SensitivityRow(th, None, None, frozenset(per_sample)))
            continue
        score = _set_mean(values, kept)
        found = {k: agreement(score, y) for k, y in refs.items()}
        if per_sample:
            assert sample_values is not None  # (checked above)
            sample_score = _set_mean(sample_values, kept)
            found |= {k: agreement(sample_score, y) for k, y in per_sample.items()}
        rows.append(SensitivityRow(th, kept, found, frozenset(per_sample)))
    return rows


def _set_mean(values: Mapping[str, ArrayLike], kept: Sequence[str]) -> FloatArray:
    """Eq. 4 per row: the mean of the ``kept`` columns, NaN where one of them is."""
    missing = [m for m in kept if m not in values]
    if missing:
        raise KeyError(f"no values of kept metric(s) {', '.join(missing)}")
    return np.asarray(np.mean(np.stack([np.asarray(values[m], dtype=float).ravel() for m in kept]), axis=0),
                      dtype=float)
