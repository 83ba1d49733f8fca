"""Agreement statistics and confidence intervals (numpy and scipy only).

Point statistics of a judge against human scores (:mod:`._agreement`), agreement among human raters
(:mod:`._raters`), binary, ranking and band statistics (:mod:`._ranking`), linear-fit agreement of
continuous scores (:mod:`._fit`), and the paired cluster bootstrap report over many judges
(:mod:`._bootstrap`, :mod:`._weighted`, :mod:`._report`), the generator leaderboard
(:mod:`._leaderboard`) and the metric-calibrated ordinal judge (:mod:`._calibrated`). Score tables
read from CSV files (:mod:`._tables`, what ``robojudge meta`` runs; pandas loads only when a file is
read). See ``docs/meta.md``.
"""

from robojudge.meta._agreement import (
    DEFAULT_SCALE,
    AxisStats,
    axis_stats,
    confusion_matrix,
    exact_accuracy,
    kendall,
    mae,
    mean_signed_error,
    mse,
    overall,
    overall_from_axis_values,
    pearson,
    round_to_scale,
    spearman,
    within_one_accuracy,
)
from robojudge.meta._bootstrap import ClusterBootstrap, percentile_interval, summarize_replicates
from robojudge.meta._calibrated import (
    CrossValidated,
    OrdinalLogit,
    cross_validate_ordinal,
    fit_ordinal_logit,
    grouped_folds,
    ordinal_nll,
)
from robojudge.meta._ci import MeanCI, mean_confidence_interval
from robojudge.meta._fit import FitAgreement, fit_agreement
from robojudge.meta._kendall import kendall_interval, weighted_kendall_tau_b
from robojudge.meta._leaderboard import (
    AdjacentPair,
    Leaderboard,
    LeaderboardEntry,
    Standing,
    competition_ranks,
    generator_leaderboard,
)
from robojudge.meta._means import GroupMean, group_means
from robojudge.meta._ranking import (
    BandCalibration,
    apply_bands,
    auroc,
    band_calibration,
    best_youden_threshold,
    pairwise_rank_accuracy,
    youden_j,
)
from robojudge.meta._raters import (
    RaterAgreement,
    krippendorff_alpha_ordinal,
    quadratic_weighted_kappa,
    rater_agreement,
)
from robojudge.meta._report import (
    OVERALL,
    STATISTICS,
    AgreementReport,
    CellReport,
    Estimate,
    agreement_table,
)
from robojudge.meta._segments import (
    VERDICT_LEVELS,
    BandAgreement,
    PooledBands,
    Rho,
    SegmentRho,
    apply_cuts,
    best_cuts,
    group_seed,
    orient,
    pool_bands,
    segment_spans,
    segment_spearman,
    three_band_agreement,
    too_short_reason,
    verdict_levels,
    video_levels,
)
from robojudge.meta._tables import (
    ScoreTableError,
    TableFit,
    agreement_from_csv,
    column_numbers,
    fit_from_csv,
    read_score_csv,
)
from robojudge.meta._weighted import RankCorrelation, moment_columns, stats_from_sums

__all__ = [
    "DEFAULT_SCALE",
    "OVERALL",
    "STATISTICS",
    "VERDICT_LEVELS",
    "AdjacentPair",
    "AgreementReport",
    "AxisStats",
    "BandAgreement",
    "BandCalibration",
    "CellReport",
    "ClusterBootstrap",
    "CrossValidated",
    "Estimate",
    "FitAgreement",
    "GroupMean",
    "Leaderboard",
    "LeaderboardEntry",
    "MeanCI",
    "OrdinalLogit",
    "PooledBands",
    "RankCorrelation",
    "RaterAgreement",
    "Rho",
    "ScoreTableError",
    "SegmentRho",
    "Standing",
    "TableFit",
    "agreement_from_csv",
    "agreement_table",
    "apply_bands",
    "apply_cuts",
    "auroc",
    "axis_stats",
    "band_calibration",
    "best_cuts",
    "best_youden_threshold",
    "column_numbers",
    "competition_ranks",
    "confusion_matrix",
    "cross_validate_ordinal",
    "exact_accuracy",
    "fit_agreement",
    "fit_from_csv",
    "fit_ordinal_logit",
    "generator_leaderboard",
    "group_means",
    "group_seed",
    "grouped_folds",
    "kendall",
    "kendall_interval",
    "krippendorff_alpha_ordinal",
    "mae",
    "mean_confidence_interval",
    "mean_signed_error",
    "moment_columns",
    "mse",
    "ordinal_nll",
    "orient",
    "overall",
    "overall_from_axis_values",
    "pairwise_rank_accuracy",
    "pearson",
    "percentile_interval",
    "pool_bands",
    "quadratic_weighted_kappa",
    "rater_agreement",
    "read_score_csv",
    "round_to_scale",
    "segment_spans",
    "segment_spearman",
    "spearman",
    "stats_from_sums",
    "summarize_replicates",
    "three_band_agreement",
    "too_short_reason",
    "verdict_levels",
    "video_levels",
    "weighted_kendall_tau_b",
    "within_one_accuracy",
    "youden_j",
]
