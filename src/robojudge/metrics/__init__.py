"""Metrics: pure functions from an item's files to a :class:`Score`, in one typed registry.

:data:`METRICS` (per-item metrics) and :data:`SET_METRICS` (set-level ones) are
:class:`robojudge.registry.Registry` objects; :func:`metric` and :func:`set_metric` register into them.
"""

from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics._flow_cache import flow_readers
from robojudge.metrics._frames import (
    FrameOptions,
    NativeFrames,
    fast_settings,
    frame_option_values,
    prefetch_main_video,
    takes_frame_options,
)
from robojudge.metrics._registry import (
    INPUT_FILE,
    METRICS,
    Family,
    Input,
    MetricSpec,
    NoConfig,
    Provider,
    TaxonomyPlace,
    UnknownMetricError,
    file_fields,
    get_metric,
    list_metrics,
    metric,
)
from robojudge.metrics._score import Score
from robojudge.metrics._select import (
    ALL_METRICS,
    MissingLibrariesError,
    expand_metric_ids,
    how_to_score,
    inapplicable_summary,
    metrics_by_weights,
    missing_inputs,
    missing_libraries,
    not_run_by_all,
    not_run_summary,
)
from robojudge.metrics._sets import (
    SET_METRICS,
    ItemGroup,
    SetOutput,
    SetRow,
    SetScores,
    is_set_metric,
    list_set_metrics,
    score_sets,
    set_metric,
    set_metrics_run_by_all,
    sets_not_run_summary,
    write_set_rows,
)
from robojudge.metrics._texts import missing_texts

__all__ = [
    "ALL_METRICS",
    "METRICS",
    "SET_METRICS",
    "Family",
    "FrameOptions",
    "Input",
    "ItemGroup",
    "MetricInputError",
    "MetricSpec",
    "NativeFrames",
    "NoConfig",
    "Provider",
    "Score",
    "SetOutput",
    "SetRow",
    "SetScores",
    "TaxonomyPlace",
    "UnknownMetricError",
    "Unmeasurable",
    "expand_metric_ids",
    "MissingLibrariesError",
    "missing_libraries",
    "how_to_score",
    "fast_settings",
    "flow_readers",
    "frame_option_values",
    "get_metric",
    "inapplicable_summary",
    "is_set_metric",
    "list_metrics",
    "list_set_metrics",
    "metric",
    "metrics_by_weights",
    "missing_inputs",
    "missing_texts",
    "prefetch_main_video",
    "not_run_by_all",
    "not_run_summary",
    "score_sets",
    "set_metrics_run_by_all",
    "sets_not_run_summary",
    "set_metric",
    "takes_frame_options",
    "write_set_rows",
    "INPUT_FILE",
    "file_fields",
]
