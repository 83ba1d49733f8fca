"""Metrics: pure functions from an item's files to a :class:`Score`, in one typed registry."""

from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import (
    Family,
    Input,
    MetricSpec,
    NoConfig,
    UnknownMetricError,
    get_metric,
    list_metrics,
    metric,
)
from robojudge.metrics._score import Score

__all__ = [
    "Family",
    "Input",
    "MetricInputError",
    "MetricSpec",
    "NoConfig",
    "Score",
    "UnknownMetricError",
    "get_metric",
    "list_metrics",
    "metric",
]
