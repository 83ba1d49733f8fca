"""Metrics: pure functions from an item's files to a :class:`Score`, in one typed registry."""

from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import (
    Family,
    Input,
    MetricSpec,
    NoConfig,
    Provider,
    TaxonomyPlace,
    UnknownMetricError,
    get_metric,
    list_metrics,
    metric,
)
from robojudge.metrics._score import Score
from robojudge.metrics._select import ALL_METRICS, expand_metric_ids, not_run_by_all, not_run_summary

__all__ = [
    "ALL_METRICS",
    "Family",
    "Input",
    "MetricInputError",
    "MetricSpec",
    "NoConfig",
    "Provider",
    "Score",
    "TaxonomyPlace",
    "UnknownMetricError",
    "expand_metric_ids",
    "get_metric",
    "list_metrics",
    "metric",
    "not_run_by_all",
    "not_run_summary",
]
