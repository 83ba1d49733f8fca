"""RoboPhys-3D aggregation: taxonomy, normalization, Average Full Score, RoboPhyscore and its selection.

The scores are pure: arrays and mappings in, dataclasses out. :mod:`._tables` reads a metric table
(CSV or Parquet, with pandas, loaded only then) into them: what ``robojudge aggregate`` runs;
:mod:`._bootstrap` adds cluster-bootstrap intervals and paired differences of groups to them. See
docs/aggregate.md.
"""

from robojudge.aggregate._bootstrap import (
    DIFFERENCE_STATISTICS,
    BootstrapScores,
    ScoreDifference,
    bootstrap_scores,
)
from robojudge.aggregate._normalize import (
    POOL_PERCENTILES,
    Strategy,
    affine_clip,
    normalize,
    normalize_all,
    percentile_bounds,
)
from robojudge.aggregate._regimes import MacroAverage, macro_average, retention
from robojudge.aggregate._scores import FullScore, Missing, average_full_score, robophyscore
from robojudge.aggregate._select import (
    AGREEMENT_STATISTICS,
    DEFAULT_THRESHOLDS,
    ROBOPHYSCORE_THRESHOLD,
    Agreement,
    Selection,
    SensitivityRow,
    agreement,
    select_metrics,
    threshold_sensitivity,
)
from robojudge.aggregate._tables import (
    CORRELATION_PARTS,
    AggregateInputError,
    SelectionInput,
    correlations_from_table,
    read_metric_table,
    scores_from_table,
    selection_from_table,
)
from robojudge.taxonomy import (
    POOL_PERCENTILE_SOURCE,
    TASK_SUCCESS_SUBDIM,
    MetricSpec,
    NormalizationKind,
    Taxonomy,
    load_taxonomy,
)

#: The paper's eight RoboPhyscore metrics at threshold 0.7 (Sec. 4.3), in taxonomy order.
DEFAULT_ROBOPHYSCORE_METRICS: tuple[str, ...] = load_taxonomy().robophyscore_default

__all__ = [
    "AGREEMENT_STATISTICS",
    "CORRELATION_PARTS",
    "DIFFERENCE_STATISTICS",
    "DEFAULT_ROBOPHYSCORE_METRICS",
    "DEFAULT_THRESHOLDS",
    "POOL_PERCENTILES",
    "POOL_PERCENTILE_SOURCE",
    "ROBOPHYSCORE_THRESHOLD",
    "TASK_SUCCESS_SUBDIM",
    "AggregateInputError",
    "Agreement",
    "BootstrapScores",
    "FullScore",
    "MacroAverage",
    "MetricSpec",
    "Missing",
    "NormalizationKind",
    "Selection",
    "ScoreDifference",
    "SelectionInput",
    "SensitivityRow",
    "Strategy",
    "Taxonomy",
    "affine_clip",
    "agreement",
    "bootstrap_scores",
    "correlations_from_table",
    "average_full_score",
    "load_taxonomy",
    "macro_average",
    "normalize",
    "normalize_all",
    "percentile_bounds",
    "read_metric_table",
    "retention",
    "robophyscore",
    "scores_from_table",
    "select_metrics",
    "selection_from_table",
    "threshold_sensitivity",
]
